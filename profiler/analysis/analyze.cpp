#include "profiler/analysis/analyze.h"

#include <algorithm>
#include <charconv>
#include <map>

namespace bs::profiler {

std::string_view bubbleCauseName(BubbleCause cause)
{
    switch (cause) {
    case BubbleCause::WarmUp: return "warm-up";
    case BubbleCause::Drain: return "drain";
    case BubbleCause::Flush: return "flush";
    case BubbleCause::Dependency: return "dependency";
    case BubbleCause::Comm: return "comm";
    }
    return "unknown";
}

namespace {

bool isBackwardLike(EventKind k) { return k == EventKind::Backward || k == EventKind::BackwardInput; }

int kindIndex(EventKind k)
{
    switch (k) {
    case EventKind::Forward: return 0;
    case EventKind::Backward: return 1;
    case EventKind::BackwardInput: return 2;
    case EventKind::BackwardWeight: return 3;
    case EventKind::Update: return 4;
    default: return -1;
    }
}

template<typename T>
T at(const std::vector<T>& v, int stage, T fallback)
{
    return stage < static_cast<int>(v.size()) ? v[static_cast<std::size_t>(stage)] : fallback;
}

struct Interval
{
    TimeNs start = 0, end = 0;
};

TimeNs overlap(TimeNs a0, TimeNs a1, TimeNs b0, TimeNs b1) { return std::max<TimeNs>(0, std::min(a1, b1) - std::max(a0, b0)); }

// One stage's compute events as indices into the snapshot: 4 bytes an event instead of a
// 40-byte copy, which keeps a simulate() call free of megabyte-sized temporary buffers.
class StageEvents
{
public:
    class Iterator
    {
    public:
        Iterator(const TraceSnapshot* trace, const std::uint32_t* at)
            : m_trace(trace)
            , m_at(at)
        {
        }
        const TraceEvent& operator*() const { return (*m_trace)[*m_at]; }
        Iterator& operator++()
        {
            ++m_at;
            return *this;
        }
        bool operator!=(const Iterator& other) const { return m_at != other.m_at; }

    private:
        const TraceSnapshot* m_trace;
        const std::uint32_t* m_at;
    };

    explicit StageEvents(const TraceSnapshot& trace)
        : m_trace(&trace)
    {
    }
    void push(std::size_t index) { m_index.push_back(static_cast<std::uint32_t>(index)); }
    void reserve(std::size_t n) { m_index.reserve(n); }
    bool empty() const { return m_index.empty(); }
    const TraceEvent& front() const { return (*m_trace)[m_index.front()]; }
    Iterator begin() const { return {m_trace, m_index.data()}; }
    Iterator end() const { return {m_trace, m_index.data() + m_index.size()}; }
    /// Producers append each stage's events in start order; sort only if one did not.
    void sortByStart()
    {
        auto byStart = [this](std::uint32_t a, std::uint32_t b) { return (*m_trace)[a].start < (*m_trace)[b].start; };
        if (!std::is_sorted(m_index.begin(), m_index.end(), byStart)) {
            std::stable_sort(m_index.begin(), m_index.end(), byStart);
        }
    }

private:
    const TraceSnapshot* m_trace;
    std::vector<std::uint32_t> m_index;
};

class Analyzer
{
public:
    Analyzer(const TraceSnapshot& trace, const AnalysisOptions& options)
        : m_options(options)
    {
        // Batch numbering across settings: segment k starts at batch firstBatch.
        m_segments.push_back({0, 0, std::max(1, options.microbatchesPerBatch), options.synchronous});
        for (const auto& later : options.laterSettings) {
            const BatchSegment& prev = m_segments.back();
            const int span = std::max(0, later.firstMicrobatch - prev.firstMicrobatch);
            m_segments.push_back({later.firstMicrobatch, prev.firstBatch + (span + prev.m - 1) / prev.m,
                                  std::max(1, later.microbatchesPerBatch), later.synchronous});
        }
        int stages = trace.meta().stages;
        int maxMb = 0;
        trace.forEach([&](const TraceEvent& e) {
            stages = std::max(stages, e.stage + 1);
            maxMb = std::max(maxMb, e.microbatch);
        });
        // Stages per lane, from the trace's own metadata (the simulator writes it; other traces
        // have one stage per lane). Bounded: a hand-edited file cannot make the slots explode.
        if (const auto it = trace.meta().attributes.find("stages_per_rank"); it != trace.meta().attributes.end()) {
            int v = 1;
            const auto [ptr, ec] = std::from_chars(it->second.data(), it->second.data() + it->second.size(), v);
            m_chunks = ec == std::errc() && ptr == it->second.data() + it->second.size() ? std::clamp(v, 1, 64) : 1;
        }
        m_mbs = static_cast<std::size_t>(maxMb) + 1;
        m_compute.assign(static_cast<std::size_t>(stages), StageEvents(trace));
        for (auto& events : m_compute) {
            events.reserve(trace.size() / static_cast<std::size_t>(stages) + 1);
        }
        // Transfers into each stage, by micro-batch: [to][mb] for activations (from to−1) and
        // gradients (from to+1). Dense arrays: this runs under a slider.
        m_activationIn.assign(static_cast<std::size_t>(stages) * m_mbs, Interval{});
        m_gradientIn.assign(static_cast<std::size_t>(stages) * m_mbs, Interval{});
        for (std::size_t i = 0; i < trace.size(); ++i) {
            const TraceEvent& e = trace[i];
            if (e.isCompute() && kindIndex(e.kind) >= 0) {
                m_compute[e.stage].push(i);
            } else if (e.kind == EventKind::Send && e.microbatch >= 0 && e.aux < stages) {
                auto& in = e.aux > e.stage ? m_activationIn : m_gradientIn;
                in[e.aux * m_mbs + static_cast<std::size_t>(e.microbatch)] = {e.start, e.end};
            }
        }
        for (auto& events : m_compute) {
            events.sortByStart();
        }
    }

    Report run()
    {
        Report report;
        m_spans = &report.bubbles; // every idle span, as run() attributes it
        report.stages = static_cast<int>(m_compute.size());
        bool any = false;
        for (const auto& events : m_compute) {
            for (const auto& e : events) {
                m_t0 = any ? std::min(m_t0, e.start) : e.start;
                m_t1 = any ? std::max(m_t1, e.end) : e.end;
                any = true;
            }
        }
        if (!any) {
            return report;
        }
        report.makespan = m_t1 - m_t0;
        for (int s = 0; s < report.stages; ++s) {
            report.perStage.push_back(analyzeStage(s, report.makespan));
            const auto& st = report.perStage.back();
            report.totalIdle += st.idle;
            for (int c = 0; c < kBubbleCauseCount; ++c) {
                report.idleByCause[static_cast<std::size_t>(c)] += st.idleByCause[static_cast<std::size_t>(c)];
            }
        }
        const double capacity = static_cast<double>(report.stages) * static_cast<double>(report.makespan);
        report.bubbleFraction = capacity > 0 ? static_cast<double>(report.totalIdle) / capacity : 0.0;
        report.utilization = 1.0 - report.bubbleFraction;
        // The zero-bubble authors' bubble rate: (cost − busy) / cost with cost the longest
        // per-stage span, so a stage's late start and early finish do not count.
        TimeNs longest = 0, busy = 0;
        for (const auto& st : report.perStage) {
            longest = std::max(longest, st.span);
            busy += st.busy;
        }
        const double meanBusy = static_cast<double>(busy) / static_cast<double>(report.stages);
        report.spanBubbleFraction = longest > 0 ? 1.0 - meanBusy / static_cast<double>(longest) : 0.0;
        steadyWindow(report);
        return report;
    }

private:
    void countMicrobatches(Report& report, int& batches) const
    {
        int maxMb = -1;
        for (const auto& e : m_compute.front()) {
            if (e.kind == EventKind::Forward) {
                ++report.microbatches;
                maxMb = std::max(maxMb, e.microbatch);
            }
        }
        batches = maxMb < 0 ? 0 : batchOf(maxMb) + 1;
    }

    // The steady window starts at stage 0's first forward of the first global batch it begins
    // after its own first backward (the pipeline is full from then on: batch 1 when m >= p) and
    // ends at stage 0's first forward of the last batch. It spans whole batches, so for a flush
    // schedule its bubble is exactly the per-batch bubble; the fill and the drain are excluded.
    void steadyWindow(Report& report) const
    {
        int batches = 0;
        countMicrobatches(report, batches);
        report.steadyStart = m_t0;
        report.steadyEnd = m_t1;
        report.steadyBubbleFraction = report.bubbleFraction;
        const auto& stage0 = m_compute.front();
        TimeNs firstBackwardEnd = -1;
        std::map<int, TimeNs> batchStart; // batch -> stage 0's first forward start
        for (const auto& e : stage0) {
            if (firstBackwardEnd < 0 && isBackwardLike(e.kind)) {
                firstBackwardEnd = e.end;
            }
            if (e.kind == EventKind::Forward && startsBatch(e.microbatch)) {
                batchStart.try_emplace(batchOf(e.microbatch), e.start);
            }
        }
        if (batches < 3 || firstBackwardEnd < 0 || !batchStart.count(batches - 1)) {
            return;
        }
        const TimeNs end = batchStart.at(batches - 1);
        TimeNs start = end;
        for (const auto& [batch, t] : batchStart) {
            if (batch >= 1 && t >= firstBackwardEnd) {
                start = t;
                break;
            }
        }
        if (end <= start) {
            return;
        }
        TimeNs busy = 0;
        for (const auto& events : m_compute) {
            for (const auto& e : events) {
                busy += overlap(e.start, e.end, start, end);
            }
        }
        const double capacity = static_cast<double>(m_compute.size()) * static_cast<double>(end - start);
        report.steadyStart = start;
        report.steadyEnd = end;
        report.steadyBubbleFraction = 1.0 - static_cast<double>(busy) / capacity;
    }

    struct BatchSegment
    {
        int firstMicrobatch = 0;
        int firstBatch = 0;
        int m = 1;
        bool synchronous = true;
    };

    const BatchSegment& segmentOf(int mb) const
    {
        std::size_t k = 0;
        while (k + 1 < m_segments.size() && m_segments[k + 1].firstMicrobatch <= mb) {
            ++k;
        }
        return m_segments[k];
    }
    int batchOf(int mb) const
    {
        const BatchSegment& seg = segmentOf(mb);
        return seg.firstBatch + (mb - seg.firstMicrobatch) / seg.m;
    }
    bool startsBatch(int mb) const
    {
        const BatchSegment& seg = segmentOf(mb);
        return (mb - seg.firstMicrobatch) % seg.m == 0;
    }

    // Flush windows of one stage: from its last forward of batch n to its first forward of n+1,
    // where batch n belongs to a synchronous schedule (only those flush).
    std::vector<Interval> flushWindows(const StageEvents& events) const
    {
        struct Span
        {
            Interval forwards; ///< [first F start, last F end]
            bool synchronous = true;
        };
        std::map<int, Span> forwardSpan; // batch -> its forwards
        for (const auto& e : events) {
            if (e.kind != EventKind::Forward) {
                continue;
            }
            const BatchSegment& seg = segmentOf(e.microbatch);
            const int batch = seg.firstBatch + (e.microbatch - seg.firstMicrobatch) / seg.m;
            auto [it, inserted] = forwardSpan.try_emplace(batch, Span{{e.start, e.end}, seg.synchronous});
            if (!inserted) {
                it->second.forwards.start = std::min(it->second.forwards.start, e.start);
                it->second.forwards.end = std::max(it->second.forwards.end, e.end);
            }
        }
        std::vector<Interval> windows;
        for (auto it = forwardSpan.begin(); it != forwardSpan.end(); ++it) {
            auto next = std::next(it);
            if (next != forwardSpan.end() && it->second.synchronous) {
                windows.push_back({it->second.forwards.end, next->second.forwards.start});
            }
        }
        return windows;
    }

    TimeNs lastForwardEnd(const StageEvents& events) const
    {
        TimeNs end = m_t0;
        for (const auto& e : events) {
            if (e.kind == EventKind::Forward) {
                end = std::max(end, e.end);
            }
        }
        return end;
    }

    // Splits the gap [from, to) that ends when `next` starts into spans by cause, in priority
    // order: a flush window (synchronous schedules), the stage's drain (after its last forward),
    // the transfer of `next`'s input (comm), the rest (dependency). Adjacent pieces of one cause
    // are merged. `emit(cause, start, end)` is called in time order.
    template<typename Emit>
    void attributeGap(TimeNs from, TimeNs to, const TraceEvent& next, const std::vector<Interval>& flush,
                      TimeNs drainFrom, Emit&& emit) const
    {
        const Interval* transfer = nullptr;
        if (next.microbatch >= 0) {
            const std::size_t slot = next.stage * m_mbs + static_cast<std::size_t>(next.microbatch);
            if (next.kind == EventKind::Forward) {
                transfer = &m_activationIn[slot];
            } else if (isBackwardLike(next.kind)) {
                transfer = &m_gradientIn[slot];
            }
        }
        // Flush windows are disjoint and sorted: the first that can overlap ends after `from`.
        auto window = std::lower_bound(flush.begin(), flush.end(), from,
                                       [](const Interval& w, TimeNs t) { return w.end <= t; });
        auto causeAt = [&](TimeNs t) {
            if (window != flush.end() && window->start <= t && t < window->end) {
                return BubbleCause::Flush;
            }
            if (t >= drainFrom) {
                return BubbleCause::Drain;
            }
            if (transfer && transfer->start <= t && t < transfer->end) {
                return BubbleCause::Comm;
            }
            return BubbleCause::Dependency;
        };
        // The cause changes only at these times.
        auto nextChange = [&](TimeNs t) {
            TimeNs change = to;
            auto consider = [&](TimeNs edge) {
                if (edge > t && edge < change) {
                    change = edge;
                }
            };
            if (window != flush.end()) {
                consider(window->start);
                consider(window->end);
            }
            consider(drainFrom);
            if (transfer) {
                consider(transfer->start);
                consider(transfer->end);
            }
            return change;
        };
        TimeNs pieceStart = from;
        BubbleCause pieceCause = causeAt(from);
        for (TimeNs t = from; t < to;) {
            while (window != flush.end() && window->end <= t) {
                ++window;
            }
            const BubbleCause cause = causeAt(t);
            if (cause != pieceCause) {
                emit(pieceCause, pieceStart, t);
                pieceStart = t;
                pieceCause = cause;
            }
            t = nextChange(t);
        }
        emit(pieceCause, pieceStart, to);
    }

    StageReport analyzeStage(int s, TimeNs makespan) const
    {
        StageReport st;
        st.stage = s;
        // Every idle span goes through here: the report's totals and its bubbles agree by construction.
        auto emit = [&](BubbleCause cause, TimeNs start, TimeNs end) {
            if (end <= start) {
                return;
            }
            st.idleByCause[static_cast<std::size_t>(cause)] += end - start;
            if (m_spans) {
                m_spans->push_back({start, end, s, cause});
            }
        };
        const auto& events = m_compute[static_cast<std::size_t>(s)];
        if (events.empty()) {
            emit(BubbleCause::WarmUp, m_t0, m_t1);
            st.idle = makespan;
            st.bubbleFraction = 1.0;
            return st;
        }
        const auto flush = flushWindows(events);
        const TimeNs drainFrom = lastForwardEnd(events);
        emit(BubbleCause::WarmUp, m_t0, events.front().start);
        TimeNs cursor = events.front().start;
        for (const auto& e : events) {
            if (e.start > cursor) {
                attributeGap(cursor, e.start, e, flush, drainFrom, emit);
            }
            cursor = std::max(cursor, e.end);
            st.busy += e.duration();
            st.busyByKind[static_cast<std::size_t>(kindIndex(e.kind))] += e.duration();
        }
        emit(BubbleCause::Drain, cursor, m_t1);
        st.span = cursor - events.front().start;
        st.idle = makespan - st.busy;
        st.bubbleFraction = makespan > 0 ? static_cast<double>(st.idle) / static_cast<double>(makespan) : 0.0;
        inflightAndMemory(st, events);
        return st;
    }

    // Sweeps the stage's events in order: in-flight count, activation bytes, lag, weight versions.
    void inflightAndMemory(StageReport& st, const StageEvents& events) const
    {
        const int s = st.stage;
        const std::int64_t unitBytes = at(m_options.activationBytes, s, std::int64_t{1});
        constexpr int kNone = -1;
        const std::size_t slots = m_mbs * static_cast<std::size_t>(m_chunks);
        std::vector<int> forwardVersion(slots, kNone); // slot -> version its forward saw
        std::vector<std::int64_t> heldBytes(slots, 0); // slot -> activation bytes still held
        std::map<int, int> liveVersions;               // stashed version -> micro-batches using it
        constexpr int kMaxLagTracked = 4096; // lags beyond this are counted in the last bucket
        std::vector<int> lagCounts(kMaxLagTracked + 1, 0);
        int inflight = 0, current = 0;
        std::int64_t activation = 0, peakActivation = 0;
        auto held = [&](int mb) -> std::int64_t& { return heldBytes[static_cast<std::size_t>(mb)]; };
        auto release = [&](int mb, std::int64_t bytes) {
            const std::int64_t freed = std::min(bytes, held(mb));
            held(mb) -= freed;
            activation -= freed;
        };
        auto dropVersion = [&](int mb) {
            const int v = forwardVersion[static_cast<std::size_t>(mb)];
            if (m_options.stashesWeights && v != kNone) {
                if (--liveVersions[v] == 0) {
                    liveVersions.erase(v);
                }
            }
        };
        for (const auto& e : events) {
            current = std::max(current, e.version);
            if (e.microbatch < 0) {
                continue;
            }
            // One slot per (micro-batch, chunk): a rank with several stages holds each chunk's
            // activations of a micro-batch separately (aux = the chunk on compute events).
            const int chunk = e.kind != EventKind::Update && e.aux < m_chunks ? e.aux : 0;
            const int slot = e.microbatch * m_chunks + chunk;
            switch (e.kind) {
            case EventKind::Forward: {
                ++inflight;
                st.peakInflight = std::max(st.peakInflight, inflight);
                const std::int64_t bytes = e.bytes > 0 ? e.bytes : unitBytes;
                held(slot) += bytes;
                activation += bytes;
                peakActivation = std::max(peakActivation, activation);
                forwardVersion[static_cast<std::size_t>(slot)] = e.version;
                if (m_options.stashesWeights) {
                    ++liveVersions[e.version];
                }
                break;
            }
            case EventKind::Backward:
            case EventKind::BackwardInput: {
                --inflight;
                const int fv = forwardVersion[static_cast<std::size_t>(slot)];
                if (fv != kNone) {
                    const int lag = e.version - fv;
                    ++lagCounts[static_cast<std::size_t>(std::max(0, std::min(lag, kMaxLagTracked)))];
                    st.maxVersionLag = std::max(st.maxVersionLag, lag);
                }
                // A split backward keeps what the weight gradient needs (about half) until W.
                if (e.kind == EventKind::Backward) {
                    release(slot, held(slot));
                    dropVersion(slot);
                } else {
                    release(slot, held(slot) / 2);
                }
                break;
            }
            case EventKind::BackwardWeight:
                release(slot, held(slot));
                dropVersion(slot);
                break;
            case EventKind::Update: current = e.version + 1; break;
            default: break;
            }
            if (m_options.stashesWeights) {
                const bool currentLive = liveVersions.count(current) > 0;
                st.peakWeightVersions = std::max(st.peakWeightVersions,
                                                 static_cast<int>(liveVersions.size()) + (currentLive ? 0 : 1));
            }
        }
        for (std::size_t lag = 0; lag < lagCounts.size(); ++lag) {
            if (lagCounts[lag] > 0) {
                st.versionLagHistogram[static_cast<int>(lag)] = lagCounts[lag];
            }
        }
        const std::int64_t staticBytes = at(m_options.staticBytes, s, std::int64_t{0});
        const std::int64_t paramBytes = at(m_options.paramBytes, s, std::int64_t{0});
        st.peakMemoryBytes = staticBytes + paramBytes * (st.peakWeightVersions - 1) + peakActivation;
    }

    const AnalysisOptions& m_options;
    std::vector<BatchSegment> m_segments; ///< the settings in force from each micro-batch on
    std::vector<BubbleSpan>* m_spans = nullptr; ///< the report's bubbles, while run() fills them
    std::vector<StageEvents> m_compute;
    std::size_t m_mbs = 1;
    int m_chunks = 1; ///< stages per lane (1 + the largest chunk in a compute event's aux)
    std::vector<Interval> m_activationIn;
    std::vector<Interval> m_gradientIn;
    TimeNs m_t0 = 0, m_t1 = 0;
};

} // namespace

Report analyze(const TraceSnapshot& trace, const AnalysisOptions& options)
{
    return Analyzer(trace, options).run();
}

} // namespace bs::profiler
