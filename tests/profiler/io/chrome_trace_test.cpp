#include "profiler/io/chrome_trace.h"

#include "tests/support/trace_events.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <random>
#include <regex>

namespace bs::profiler {
namespace {

TraceEvent event(int stage, EventKind kind, Lane lane, TimeNs start, TimeNs end, int mb, int version = 0,
    std::int64_t bytes = 0, std::uint16_t aux = 0)
{
    TraceEvent e = test::ev(stage, kind, mb, start, end, version, aux);
    e.lane = lane;
    e.bytes = bytes;
    return e;
}

/// Every kind on every lane, with field values at awkward edges.
std::vector<TraceEvent> everyKindAndLane()
{
    std::vector<TraceEvent> events;
    TimeNs t = 0;
    for (int k = 0; k < kEventKindCount; ++k) {
        for (int lane = 0; lane < 3; ++lane) {
            const auto kind = static_cast<EventKind>(k);
            const TimeNs dur = kind == EventKind::Marker && lane == 0 ? 0 : 1 + 999 * k + lane;
            events.push_back(event(k % 4, kind, static_cast<Lane>(lane), t, t + dur, 10 * k + lane - 1, k - 2,
                (std::int64_t{1} << 40) + k, static_cast<std::uint16_t>(65535 - lane)));
            t += 1'234'567'891; // seconds apart: ts values need many digits
        }
    }
    events.push_back(event(3, EventKind::Forward, Lane::Compute, -5, 7, 0)); // before the origin
    // Past 2^53 ns (104 days) a double loses nanoseconds; the reader converts the digits instead.
    events.push_back(
        event(1, EventKind::Backward, Lane::Compute, 8'999'999'999'999'999'997, 8'999'999'999'999'999'999, 1));
    return events;
}

TraceMeta sampleMeta()
{
    TraceMeta meta;
    meta.stages = 6; // more stages than events use: must survive
    meta.clock = "virtual";
    meta.title = "paci a=8 \"quoted\"\nline\ttab é";
    meta.attributes = {{"schedule", "paci"}, {"accum", "8"}, {"weird\\key", "v\x01"}};
    return meta;
}

void expectSameEvents(const std::vector<TraceEvent>& a, const std::vector<TraceEvent>& b)
{
    ASSERT_EQ(a.size(), b.size());
    for (std::size_t i = 0; i < a.size(); ++i) {
        SCOPED_TRACE("event " + std::to_string(i));
        EXPECT_EQ(a[i].start, b[i].start);
        EXPECT_EQ(a[i].end, b[i].end);
        EXPECT_EQ(a[i].bytes, b[i].bytes);
        EXPECT_EQ(a[i].microbatch, b[i].microbatch);
        EXPECT_EQ(a[i].version, b[i].version);
        EXPECT_EQ(a[i].stage, b[i].stage);
        EXPECT_EQ(a[i].kind, b[i].kind);
        EXPECT_EQ(a[i].lane, b[i].lane);
        EXPECT_EQ(a[i].aux, b[i].aux);
    }
}

TEST(ChromeTrace, EveryKindAndLaneRoundTripsExactly)
{
    const std::vector<TraceEvent> events = everyKindAndLane();
    const std::string json = toChromeTraceJson(*makeSnapshot(sampleMeta(), events));
    Result<ChromeTrace> back = readChromeTrace(json);
    ASSERT_TRUE(back) << back.error().describe();
    EXPECT_FALSE(back->foreign);
    EXPECT_EQ(back->skippedEvents, 0u);
    expectSameEvents(back->events, events);
    const TraceMeta meta = sampleMeta();
    EXPECT_EQ(back->meta.stages, meta.stages);
    EXPECT_EQ(back->meta.clock, meta.clock);
    EXPECT_EQ(back->meta.title, meta.title);
    EXPECT_EQ(back->meta.attributes, meta.attributes);
}

TEST(ChromeTrace, EmptyTraceIsValidJson)
{
    TraceMeta meta;
    meta.clock = "wall";
    Result<ChromeTrace> back = readChromeTrace(toChromeTraceJson(*makeSnapshot(meta, {})));
    ASSERT_TRUE(back) << back.error().describe();
    EXPECT_TRUE(back->events.empty());
    EXPECT_EQ(back->meta.clock, "wall");
    EXPECT_EQ(back->meta.stages, 0);
}

TEST(ChromeTrace, StagesPerLaneIsATypedBoundedField)
{
    TraceMeta meta;
    meta.stages = 4;
    meta.stagesPerLane = 2;
    const std::string json = toChromeTraceJson(*makeSnapshot(meta, {}));
    EXPECT_NE(json.find("\"stages_per_lane\":2"), std::string::npos);
    Result<ChromeTrace> back = readChromeTrace(json);
    ASSERT_TRUE(back) << back.error().describe();
    EXPECT_EQ(back->meta.stagesPerLane, 2);
    EXPECT_EQ(back->meta.attributes.count("stages_per_rank"), 0U);
    // A file written when it was a string attribute reads the same, once, at the reader.
    const std::string old = R"({"traceEvents":[],"otherData":{"bubblescope":1,"stages":4,"clock":"virtual","title":"",)"
                            R"("attributes":{"stages_per_rank":"2"}}})";
    Result<ChromeTrace> legacy = readChromeTrace(old);
    ASSERT_TRUE(legacy) << legacy.error().describe();
    EXPECT_EQ(legacy->meta.stagesPerLane, 2);
    // Out of range: refused, naming the field (was silently clamped to 64 in the analysis).
    std::string tooMany = json;
    tooMany.replace(tooMany.find("\"stages_per_lane\":2"), 19, "\"stages_per_lane\":99");
    Result<ChromeTrace> refused = readChromeTrace(tooMany);
    ASSERT_FALSE(refused);
    EXPECT_NE(refused.error().describe().find("stages_per_lane"), std::string::npos);
}

TEST(ChromeTrace, WrittenJsonHasTheChromeShape)
{
    const std::vector<TraceEvent> events = {
        event(0, EventKind::Forward, Lane::Compute, 1500, 4000, 3, 0, 1024),
        event(2, EventKind::Update, Lane::Compute, 10'000'000, 10'000'001, 1, 4, 0, 8),
        event(1, EventKind::Send, Lane::Comm, 7, 9, 5, 0, 64, 2),
        event(1, EventKind::Marker, Lane::Compute, 123456, 123456, -1),
    };
    TraceMeta meta;
    meta.stages = 3;
    const std::string json = toChromeTraceJson(*makeSnapshot(meta, events));
    auto has = [&](const std::string& pattern) { return std::regex_search(json, std::regex(pattern)); };
    EXPECT_TRUE(has(R"(\{"ph":"X","name":"PP:0F3","cat":"forward","pid":0,"tid":0,"ts":1\.500,"dur":2\.500,)"
                    R"("args":\{"mb":3,"version":0,"bytes":1024,"aux":0\}\})"))
        << json;
    EXPECT_TRUE(has(R"("name":"PP:2U1","cat":"update","pid":2,"tid":0,"ts":10000\.000,"dur":0\.001,)"
                    R"("args":\{"mb":1,"version":4,"bytes":0,"aux":8\})"));
    EXPECT_TRUE(has(R"("name":"PP:1S5","cat":"send","pid":1,"tid":1,"ts":0\.007,"dur":0\.002)"));
    EXPECT_TRUE(has(R"(\{"ph":"i","s":"t","name":"PP:1M-1","cat":"marker","pid":1,"tid":0,"ts":123\.456,"args")"));
    EXPECT_TRUE(has(R"("name":"process_name","pid":2,"tid":0,"args":\{"name":"stage 2"\})"));
    EXPECT_TRUE(has(R"("name":"thread_name","pid":1,"tid":1,"args":\{"name":"comm"\})"));
    EXPECT_TRUE(has(R"("name":"thread_name","pid":0,"tid":2,"args":\{"name":"kernels"\})"));
    EXPECT_TRUE(has(R"(^\{"otherData":\{"bubblescope":1,"stages":3,"clock":"virtual")"));
    EXPECT_TRUE(has(R"("displayTimeUnit":"ns")"));
    EXPECT_FALSE(has(R"("name":"process_name","pid":3,)")); // exactly meta.stages processes
}

struct Malformed
{
    const char* label;
    std::string json;
    std::string context;
    const char* message; ///< substring
};

void PrintTo(const Malformed& m, std::ostream* os)
{
    *os << m.label;
}

class MalformedTrace : public ::testing::TestWithParam<Malformed>
{};

TEST_P(MalformedTrace, GivesParseErrorWithLocation)
{
    Result<ChromeTrace> t = readChromeTrace(GetParam().json);
    ASSERT_FALSE(t);
    EXPECT_EQ(t.error().code, ErrorCode::ParseError);
    EXPECT_EQ(t.error().context, GetParam().context);
    EXPECT_NE(t.error().message.find(GetParam().message), std::string::npos) << t.error().message;
}

const std::string kOurs = R"({"otherData":{"bubblescope":1,"stages":2,"clock":"virtual","title":"","attributes":{}},)";
const std::string kGood = R"({"ph":"X","name":"PP:0F1","pid":0,"tid":0,"ts":1.000,"dur":2.000,)"
                          R"("args":{"mb":1,"version":0,"bytes":0,"aux":0}})";

std::string ours(const std::string& secondEvent)
{
    return kOurs + R"("traceEvents":[)" + kGood + "," + secondEvent + "]}";
}

// clang-format off
const Malformed kMalformed[] = {
    // nlohmann reports the end of input as one past the last byte.
    {"truncated", kOurs + R"("traceEvents":[)" + kGood,
     "byte " + std::to_string((kOurs + R"("traceEvents":[)" + kGood).size() + 1), "unexpected end of input"},
    {"garbage", "{\"traceEvents\":[}", "byte 17", "syntax error"},
    {"empty", "", "byte 1", "malformed trace JSON"},
    {"noEvents", R"({"foo":1})", "traceEvents", "not a Chrome trace"},
    {"eventsNotArray", R"({"traceEvents":3})", "traceEvents", "not a Chrome trace"},
    {"durString", ours(R"({"ph":"X","name":"PP:1B1","pid":1,"tid":0,"ts":1,"dur":"2","args":{"mb":1,"version":0,"bytes":0,"aux":0}})"),
     "traceEvents[1].dur", "not a number of microseconds"},
    {"durMissing", ours(R"({"ph":"X","name":"PP:1B1","pid":1,"tid":0,"ts":1,"args":{"mb":1,"version":0,"bytes":0,"aux":0}})"),
     "traceEvents[1].dur", "missing"},
    {"tsMissing", ours(R"({"ph":"X","name":"PP:1B1","pid":1,"tid":0,"dur":1,"args":{"mb":1,"version":0,"bytes":0,"aux":0}})"),
     "traceEvents[1].ts", "missing"},
    {"pidMismatch", ours(R"({"ph":"X","name":"PP:1B1","pid":0,"tid":0,"ts":1,"dur":1,"args":{"mb":1,"version":0,"bytes":0,"aux":0}})"),
     "traceEvents[1].pid", "disagrees with the stage"},
    {"tidRange", ours(R"({"ph":"X","name":"PP:1B1","pid":1,"tid":7,"ts":1,"dur":1,"args":{"mb":1,"version":0,"bytes":0,"aux":0}})"),
     "traceEvents[1].tid", "= 7 is out of range 0..2"},
    {"auxRange", ours(R"({"ph":"X","name":"PP:1B1","pid":1,"tid":0,"ts":1,"dur":1,"args":{"mb":1,"version":0,"bytes":0,"aux":70000}})"),
     "traceEvents[1].args.aux", "out of range 0..65535"},
    {"versionType", ours(R"({"ph":"X","name":"PP:1B1","pid":1,"tid":0,"ts":1,"dur":1,"args":{"mb":1,"version":1.5,"bytes":0,"aux":0}})"),
     "traceEvents[1].args.version", "must be an integer"},
    {"argsMissing", ours(R"({"ph":"X","name":"PP:1B1","pid":1,"tid":0,"ts":1,"dur":1})"),
     "traceEvents[1].args", "is missing"},
    {"mbMismatch", ours(R"({"ph":"X","name":"PP:1B1","pid":1,"tid":0,"ts":1,"dur":1,"args":{"mb":2,"version":0,"bytes":0,"aux":0}})"),
     "traceEvents[1].args.mb", "disagrees"},
    {"badName", ours(R"({"ph":"X","name":"matmul","pid":1,"tid":0,"ts":1,"dur":1,"args":{}})"),
     "traceEvents[1].name", "PP:<stage><letter><microbatch>"},
    {"badPhase", ours(R"({"ph":"B","name":"PP:1F1","pid":1,"tid":0,"ts":1})"),
     "traceEvents[1].ph", "unsupported phase 'B'"},
    {"notObject", ours("42"), "traceEvents[1]", "is not an object"},
    {"metaType", R"({"otherData":{"bubblescope":1,"stages":"2","clock":"v","title":"","attributes":{}},"traceEvents":[]})",
     "otherData.stages", "must be an integer"},
};
// clang-format on

INSTANTIATE_TEST_SUITE_P(ChromeTrace, MalformedTrace, ::testing::ValuesIn(kMalformed),
    [](const ::testing::TestParamInfo<Malformed>& p) { return std::string(p.param.label); });

TEST(ChromeTrace, ForeignTraceKeepsPPEventsAndCountsTheRest)
{
    // A PyTorch-profiler-like trace: OS pids/tids, other phases and names, PP: ranges to keep.
    const std::string json = R"({"schemaVersion":1,"traceEvents":[
        {"ph":"X","cat":"cpu_op","name":"aten::mm","pid":4242,"tid":4243,"ts":10.5,"dur":3},
        {"ph":"X","cat":"user_annotation","name":"PP:1F7","pid":4242,"tid":4243,"ts":20.25,"dur":5.5},
        {"ph":"B","name":"PP:1B7","pid":4242,"tid":4243,"ts":30},
        {"ph":"X","name":"PP:0W2","pid":4242,"tid":1,"ts":40,"dur":1,"args":{"version":3,"bytes":12}},
        {"ph":"f","name":"flow","id":1,"pid":4242,"tid":4243,"ts":41},
        {"ph":"X","name":"PP:0F1","pid":1,"tid":1}
    ]})";
    Result<ChromeTrace> t = readChromeTrace(json);
    ASSERT_TRUE(t) << t.error().describe();
    EXPECT_TRUE(t->foreign);
    EXPECT_EQ(t->skippedEvents, 4u); // aten::mm, the B event, the flow event, the one without ts
    ASSERT_EQ(t->events.size(), 2u);
    EXPECT_EQ(t->events[0].stage, 1);
    EXPECT_EQ(t->events[0].kind, EventKind::Forward);
    EXPECT_EQ(t->events[0].microbatch, 7);
    EXPECT_EQ(t->events[0].start, 20250);
    EXPECT_EQ(t->events[0].end, 25750);
    EXPECT_EQ(t->events[1].kind, EventKind::BackwardWeight);
    EXPECT_EQ(t->events[1].version, 3);
    EXPECT_EQ(t->events[1].bytes, 12);
    EXPECT_EQ(t->meta.stages, 2);
    EXPECT_EQ(t->meta.clock, "wall");
}

TEST(ChromeTrace, ForeignArrayFormatIsAccepted)
{
    Result<ChromeTrace> t = readChromeTrace(R"([{"ph":"X","name":"PP:2B4","pid":9,"tid":9,"ts":1,"dur":2}, 5])");
    ASSERT_TRUE(t) << t.error().describe();
    ASSERT_EQ(t->events.size(), 1u);
    EXPECT_EQ(t->events[0].kind, EventKind::Backward);
    EXPECT_EQ(t->skippedEvents, 1u);
}

TEST(ChromeTrace, FileRoundTripAndMissingFile)
{
    const auto path = std::filesystem::temp_directory_path() / "bs_trace_io_test.json";
    const std::vector<TraceEvent> events = everyKindAndLane();
    {
        std::ofstream out(path, std::ios::binary);
        ASSERT_TRUE(writeChromeTrace(out, *makeSnapshot(sampleMeta(), events)));
    }
    Result<ChromeTrace> back = readChromeTraceFile(path);
    std::filesystem::remove(path);
    ASSERT_TRUE(back) << back.error().describe();
    expectSameEvents(back->events, events);

    Result<ChromeTrace> missing = readChromeTraceFile(path);
    ASSERT_FALSE(missing);
    EXPECT_EQ(missing.error().code, ErrorCode::IoError);

    Result<ChromeTrace> directory = readChromeTraceFile(std::filesystem::temp_directory_path());
    ASSERT_FALSE(directory);
    EXPECT_EQ(directory.error().code, ErrorCode::IoError);

    std::ofstream(path).close(); // empty file: malformed JSON, reported with the path
    Result<ChromeTrace> empty = readChromeTraceFile(path);
    std::filesystem::remove(path);
    ASSERT_FALSE(empty);
    EXPECT_EQ(empty.error().code, ErrorCode::ParseError);
    EXPECT_EQ(empty.error().context, path.string() + ": byte 1");
}

TEST(ChromeTrace, WriteToFailedStreamIsIoError)
{
    std::ofstream out("/nonexistent-dir/x.json");
    const Status s = writeChromeTrace(out, *makeSnapshot({}, everyKindAndLane()));
    ASSERT_FALSE(s);
    EXPECT_EQ(s.error().code, ErrorCode::IoError);
}

} // namespace
} // namespace bs::profiler

namespace bs::profiler {
namespace {

TEST(ChromeTrace, MutatedInputNeverCrashesAndErrorsCarryALocation)
{
    // Robustness: flipped, deleted and truncated bytes must give a value or an Error with a
    // context, never a crash (run under ASan/UBSan in the sanitizer preset).
    const std::string json = toChromeTraceJson(*makeSnapshot(sampleMeta(), everyKindAndLane()));
    std::mt19937_64 rng(7);
    int errors = 0;
    for (int i = 0; i < 400; ++i) {
        std::string bad = json;
        const auto pos = static_cast<std::size_t>(rng() % bad.size());
        switch (i % 3) {
        case 0:
            bad[pos] = static_cast<char>(rng() % 128);
            break;
        case 1:
            bad.erase(pos, 1 + rng() % 8);
            break;
        default:
            bad.resize(pos);
            break;
        }
        Result<ChromeTrace> t = readChromeTrace(bad);
        if (!t) {
            ++errors;
            EXPECT_FALSE(t.error().context.empty()) << t.error().message;
        }
    }
    EXPECT_GT(errors, 100); // most mutations of a strict format are caught
}

} // namespace
} // namespace bs::profiler
