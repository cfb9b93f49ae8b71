#include "profiler/import/attribution_export.h"

#include <cinttypes>
#include <cstdio>
#include <ostream>
#include <string>

namespace bs::profiler::kineto {

namespace {

/// µs with 3 decimals: exact nanoseconds.
std::string micros(TimeNs ns)
{
    char buf[48];
    const char* sign = ns < 0 ? "-" : "";
    const std::int64_t a = ns < 0 ? -ns : ns;
    std::snprintf(buf, sizeof buf, "%s%" PRId64 ".%03" PRId64, sign, a / 1000, a % 1000);
    return buf;
}

std::string actionName(const RecoveredAction& a)
{
    std::string name = std::to_string(a.stage);
    name += eventLetter(a.kind);
    name += std::to_string(a.microbatch);
    return name;
}

class Writer
{
public:
    explicit Writer(std::ostream& out)
        : m_out(out)
    {
    }
    void slice(int pid, int tid, const char* cat, const std::string& name, TimeNs start, TimeNs end,
        const std::string& args = {})
    {
        begin();
        m_out << R"({"ph":"X","cat":")" << cat << R"(","pid":)" << pid << R"(,"tid":)" << tid << R"(,"name":")" << name
              << R"(","ts":)" << micros(start) << R"(,"dur":)" << micros(std::max<TimeNs>(0, end - start));
        if (!args.empty()) {
            m_out << R"(,"args":{)" << args << "}";
        }
        m_out << "}";
    }
    /// One async slice (a 'b'/'e' pair): its own track under the thread, keyed by (cat, id), so the
    /// sends and receives of overlapping transfers never break the nesting of the thread's slices.
    void asyncSlice(int pid, int tid, const char* cat, int id, const std::string& name, TimeNs start, TimeNs end,
        const std::string& args)
    {
        for (const char ph : {'b', 'e'}) {
            begin();
            m_out << R"({"ph":")" << ph << R"(","cat":")" << cat << R"(","id":)" << id << R"(,"pid":)" << pid
                  << R"(,"tid":)" << tid << R"(,"name":")" << name << R"(","ts":)"
                  << micros(ph == 'b' ? start : std::max(start, end));
            if (ph == 'b') {
                m_out << R"(,"args":{)" << args << "}";
            }
            m_out << "}";
        }
    }
    void flow(char ph, int id, int pid, int tid, TimeNs at)
    {
        begin();
        m_out << R"({"ph":")" << ph << R"(","cat":"transfer","name":"transfer","id":)" << id << R"(,"pid":)" << pid
              << R"(,"tid":)" << tid << R"(,"ts":)" << micros(at) << (ph == 'f' ? R"(,"bp":"e"})" : "}");
    }
    void meta(int pid, int tid, const char* what, const std::string& name)
    {
        begin();
        m_out << R"({"ph":"M","cat":"__metadata","pid":)" << pid << R"(,"tid":)" << tid << R"(,"name":")" << what
              << R"(","args":{"name":")" << name << R"("}})";
    }

private:
    void begin()
    {
        m_out << (m_first ? "\n" : ",\n");
        m_first = false;
    }
    std::ostream& m_out;
    bool m_first = true;
};

constexpr int kComputeTid = 0, kBubbleTid = 1, kRecvTid = 2, kSendTid = 3;

} // namespace

Status writeAttributionTrace(std::ostream& out, const ImportedJob& job, const JobBubbles& bubbles)
{
    out << R"({"displayTimeUnit":"ms","otherData":{"source":"bubblescope analyze","schedule":")" << job.pytorchSchedule
        << R"(","bubble_fraction":)" << bubbles.bubbleFraction << R"(},"traceEvents":[)";
    Writer w(out);
    for (const auto& r : job.ranks) {
        std::string stages;
        for (int s : r.stages) {
            stages += (stages.empty() ? "" : ",") + std::to_string(s);
        }
        w.meta(r.pipelineRank, 0, "process_name", "rank " + std::to_string(r.globalRank) + " (stages " + stages + ")");
        w.meta(r.pipelineRank, kComputeTid, "thread_name", "compute");
        w.meta(r.pipelineRank, kBubbleTid, "thread_name", "bubbles");
        w.meta(r.pipelineRank, kRecvTid, "thread_name", "recv");
        w.meta(r.pipelineRank, kSendTid, "thread_name", "send");
    }
    for (std::size_t r = 0; r < job.actions.size(); ++r) {
        for (const auto& a : job.actions[r]) {
            w.slice(static_cast<int>(r), kComputeTid, "compute",
                a.kind == EventKind::Update ? "U" + std::to_string(a.microbatch) : actionName(a), a.start, a.end,
                R"("stage":)" + std::to_string(a.stage) + R"(,"mb":)" + std::to_string(a.microbatch));
        }
    }
    for (const auto& span : bubbles.spans) {
        w.slice(span.stage, kBubbleTid, "bubble", std::string(bubbleCauseName(span.cause)), span.start, span.end);
    }
    int id = 0;
    for (const Transfer& t : job.transfers) {
        const std::string what = std::string(t.direction == Direction::Activation ? "activation " : "gradient ") + std::to_string(t.microbatch);
        const std::string args = R"("from_stage":)" + std::to_string(t.srcStage) + R"(,"to_stage":)" + std::to_string(t.dstStage)
                                 + R"(,"bytes":)" + std::to_string(t.bytes);
        const TimeNs both = std::max(t.sendPosted, t.recvPosted);
        // Async: a rank posts the next receive before the last one arrived, so as complete slices on
        // one thread these overlapped partially (the Trace Event format's nesting rule forbids it).
        // Each phase is an async slice with ids of its own: 4 per transfer.
        if (t.recvWaiting() > 0) {
            w.asyncSlice(t.dstRank, kRecvTid, "recv", 4 * id, "wait for sender: " + what, t.recvPosted, both, args);
        }
        w.asyncSlice(
            t.dstRank, kRecvTid, "recv", 4 * id + 1, "transfer: " + what, both, std::max(both, t.arrived), args);
        if (t.sendWaiting() > 0) {
            w.asyncSlice(
                t.srcRank, kSendTid, "send", 4 * id + 2, "wait for receiver: " + what, t.sendPosted, both, args);
        }
        w.asyncSlice(t.srcRank, kSendTid, "send", 4 * id + 3, "send: " + what, both, std::max(both, t.arrived), args);
        w.flow('s', id, t.srcRank, kSendTid, both);
        w.flow('f', id, t.dstRank, kRecvTid, std::max(both, t.arrived));
        ++id;
    }
    out << "\n]}\n";
    if (!out) {
        return makeError(ErrorCode::IoError, "cannot write the attribution trace");
    }
    return ok();
}

} // namespace bs::profiler::kineto
