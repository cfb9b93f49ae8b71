// CUPTI's kernel lanes in a run, wired end to end on the CPU: a real pipeline (tiny GPT, 1F1B, the
// serial virtual-time driver) whose executor pushes action tags into GpuTrace, with a fake
// collector standing in for CUPTI: it "records" one kernel per action inside the action's host
// time span and delivers them in buffers, late, as CUPTI's timed flush does. Also the device
// runtime's GPU branch (plan, timers, CUPTI unavailable) with fakes, and the timer interface.
#include "runtime/train/exec/gpu_trace.h"

#include "runtime/plan/schedule/catalogue.h"
#include "runtime/plan/sim/scheduler_core.h"
#include "runtime/train/exec/device_runtime.h"
#include "runtime/train/exec/tensor_executor.h"
#include "runtime/train/model/device_memory.h"
#include "runtime/train/model/torch_devices.h"
#include "tests/runtime/train/model/test_tokens.h"

#include <gtest/gtest.h>

#include <map>
#include <string>
#include <thread>

namespace bs::runtime {
namespace {

namespace cupti = profiler::cupti;

// Records the pushed tags on a stack (CUPTI's is per thread; the executor pushes a Send tag inside
// an action's tag around a hand-off copy); at pop, a kernel in the middle of the span since the
// push, or for a Send tag the copy as the correlator makes it (a comm-lane Send, aux = receiver);
// hands them to the staging store only every `buffer` pops (and at stop), like CUPTI's buffers.
class FakeCupti final : public KernelCollector
{
public:
    FakeCupti(profiler::TraceStore& staging, TimeNs origin, int buffer)
        : m_staging(staging)
        , m_origin(origin)
        , m_buffer(buffer)
    {}
    Status push(const cupti::ActionTag& tag) override
    {
        m_stack.push_back({tag, hostNowNs()});
        ++m_stats.records.externalCorrelations;
        return ok();
    }
    Status pop() override
    {
        const auto [tag, pushed] = m_stack.back();
        m_stack.pop_back();
        const TimeNs d = hostNowNs() - pushed;
        profiler::TraceEvent k;
        k.start = pushed - m_origin + d / 10;
        k.end = pushed - m_origin + d / 3;
        k.stage = static_cast<std::uint16_t>(tag.stage);
        k.microbatch = tag.microbatch;
        if (tag.kind == profiler::EventKind::Send) {
            k.lane = profiler::Lane::Comm;
            k.kind = profiler::EventKind::Send;
            k.aux = static_cast<std::uint16_t>(tag.version);
            k.bytes = 4096;
            ++m_stats.records.memcpys;
        } else {
            k.lane = profiler::Lane::Kernel;
            k.kind = profiler::EventKind::Kernel;
            k.aux = static_cast<std::uint16_t>(tag.kind);
            k.version = tag.version;
            ++m_stats.records.kernels;
        }
        m_buffered.push_back(k);
        if (static_cast<int>(m_buffered.size()) >= m_buffer) {
            return flush();
        }
        return ok();
    }
    Status flush() override
    {
        m_staging.append(m_buffered.data(), m_buffered.size());
        m_buffered.clear();
        ++m_stats.flushes;
        return ok();
    }
    Status stop() override
    {
        m_stats.records.droppedRecords = 3;
        return flush();
    }
    cupti::CollectorStats stats() const override { return m_stats; }

private:
    profiler::TraceStore& m_staging;
    TimeNs m_origin;
    int m_buffer;
    std::vector<std::pair<cupti::ActionTag, TimeNs>> m_stack;
    std::vector<profiler::TraceEvent> m_buffered;
    cupti::CollectorStats m_stats;
};

KernelCollectorFactory fakeCupti(int buffer)
{
    return [buffer](profiler::TraceStore& staging, TimeNs origin) -> Result<std::unique_ptr<KernelCollector>> {
        return std::unique_ptr<KernelCollector>(std::make_unique<FakeCupti>(staging, origin, buffer));
    };
}

// fakeCupti(1000) that also tells the test its staging store and host origin, for kernels the
// test delivers itself at chosen times.
KernelCollectorFactory fakeCuptiSeen(profiler::TraceStore*& staging, TimeNs& origin)
{
    return [&staging, &origin](profiler::TraceStore& s, TimeNs o) -> Result<std::unique_ptr<KernelCollector>> {
        staging = &s;
        origin = o;
        return std::unique_ptr<KernelCollector>(std::make_unique<FakeCupti>(s, o, 1000));
    };
}

constexpr int kP = 2;
constexpr int kM = 4;

Result<Schedule> oneF1B(int batches)
{
    ScheduleParams p;
    p.name = "1f1b";
    p.stages = kP;
    p.microbatches = kM;
    p.batches = batches;
    return makeSchedule(p);
}

TEST(GpuTrace, EveryActionsKernelsLandInsideItsBlockOnTheVirtualTimeline)
{
    const ModelOptions o = test::tinyModelOptions(kP, kM, WeightPolicy::Flush);
    auto model = PipelineModel::create(o, test::patternTokens(o.shape, o.microBatchSize));
    ASSERT_TRUE(model) << model.error().describe();
    profiler::TraceStore trace;
    auto gpu = GpuTrace::start(trace, fakeCupti(5));
    ASSERT_TRUE(gpu) << gpu.error().describe();
    TensorExecutor executor(*model);
    std::vector<std::unique_ptr<ActionTimer>> timers;
    for (int s = 0; s < kP; ++s) {
        timers.push_back(makeHostTimer());
    }
    ASSERT_TRUE(executor.useDevices(std::move(timers), std::vector<int>(kP, -1), gpu->get()));
    auto schedule = oneF1B(2);
    ASSERT_TRUE(schedule);
    DriveOptions drive;
    drive.timeOrigin = 1'000'000'000; // a virtual clock far from the host's: the mapping must shift
    std::size_t liveKernels = 0;
    drive.onAction = [&](const Action&, const profiler::TraceEvent& ev) {
        (*gpu)->placed(ev);
        (*gpu)->drain();
        liveKernels = (*gpu)->kernelEventsAppended();
    };
    auto stats = runtime::drive(*schedule, executor, trace, drive);
    ASSERT_TRUE(stats) << stats.error().describe();
    EXPECT_GT(liveKernels, 0u) << "kernels reach the trace while the run goes (the timed flush)";
    profiler::TraceMeta meta;
    ASSERT_TRUE((*gpu)->finish(meta));

    const auto events = trace.snapshot()->toVector();
    std::map<std::uint64_t, profiler::TraceEvent> actions;
    std::vector<profiler::TraceEvent> kernels;
    std::vector<profiler::TraceEvent> copies;
    for (const profiler::TraceEvent& e : events) {
        if (e.lane == profiler::Lane::Kernel) {
            kernels.push_back(e);
        } else if (e.lane == profiler::Lane::Comm) {
            copies.push_back(e);
        } else if (e.lane == profiler::Lane::Compute) {
            actions[*cupti::packTag({e.stage, e.kind, e.microbatch, e.version})] = e;
        }
    }
    const std::size_t expected =
        static_cast<std::size_t>(2 * kM * 2 * kP + 2 * kP); // F and B per mb and stage, U per batch
    ASSERT_EQ(actions.size(), expected);
    ASSERT_EQ(kernels.size(), expected) << "one kernel per action, none lost or doubled";
    for (const profiler::TraceEvent& k : kernels) {
        const auto tag = cupti::packTag({k.stage, static_cast<profiler::EventKind>(k.aux), k.microbatch, k.version});
        ASSERT_TRUE(tag);
        auto it = actions.find(*tag);
        ASSERT_NE(it, actions.end()) << "kernel of stage " << k.stage << " mb " << k.microbatch << " has no action";
        EXPECT_EQ(k.stage, it->second.stage);
        EXPECT_GE(k.start, it->second.start);
        EXPECT_LE(k.end, it->second.end) << "inside its action's block on the virtual clock";
    }
    // The hand-off copies (CPU clones here): one per activation and gradient, each on its sender's
    // comm lane inside the receiving action's block (F of stage 1, B of stage 0).
    const std::size_t transfers = static_cast<std::size_t>(2 * kM * 2 * (kP - 1));
    ASSERT_EQ(copies.size(), transfers);
    for (const profiler::TraceEvent& c : copies) {
        EXPECT_EQ(c.kind, profiler::EventKind::Send);
        EXPECT_EQ(c.aux, 1 - c.stage) << "to the other stage";
        const auto receiving = c.aux > c.stage ? profiler::EventKind::Forward : profiler::EventKind::Backward;
        bool inside = false;
        for (const auto& [key, a] : actions) {
            inside = inside
                || (a.stage == c.aux && a.kind == receiving && a.microbatch == c.microbatch && a.start <= c.start
                    && c.end <= a.end);
        }
        EXPECT_TRUE(inside) << "copy of mb " << c.microbatch << " from stage " << c.stage;
    }
    EXPECT_EQ(meta.attributes["cupti"], "on");
    EXPECT_EQ(meta.attributes["cupti.kernels"], std::to_string(expected));
    EXPECT_EQ(meta.attributes["cupti.memcpys"], std::to_string(transfers));
    EXPECT_EQ(meta.attributes["cupti.events_in_trace"], std::to_string(expected + transfers));
    EXPECT_EQ(meta.attributes["cupti.dropped_records"], "3");
    EXPECT_GT(std::stoll(meta.attributes["cupti.host_overhead_ns"]), 0);
}

TEST(GpuTrace, UntaggedKernelsTakeTheirStagesLastOffsetAndLateOnesWait)
{
    profiler::TraceStore trace;
    profiler::TraceStore* staging = nullptr;
    TimeNs origin = 0;
    auto gpu = GpuTrace::start(trace, fakeCuptiSeen(staging, origin));
    ASSERT_TRUE(gpu);
    const cupti::ActionTag tag{1, profiler::EventKind::Forward, 7, 0};
    (*gpu)->actionBegin(tag, origin + 5'000); // host: 5 µs after the origin
    (*gpu)->actionEnd(tag, origin + 10'000);
    profiler::TraceEvent k; // a kernel 1 µs into the action, delivered before the action is placed
    k.start = 6'000;
    k.end = 7'000;
    k.stage = 1;
    k.lane = profiler::Lane::Kernel;
    k.kind = profiler::EventKind::Kernel;
    k.aux = static_cast<std::uint16_t>(profiler::EventKind::Forward);
    k.microbatch = 7;
    staging->append(k);
    profiler::TraceEvent untagged = k;
    untagged.aux = cupti::kUntagged;
    untagged.microbatch = -1;
    untagged.start = 8'000;
    untagged.end = 9'000;
    staging->append(untagged);
    (*gpu)->drain();
    EXPECT_EQ(trace.size(), 0u) << "nothing can be placed before its action is";
    profiler::TraceEvent action;
    action.stage = 1;
    action.kind = profiler::EventKind::Forward;
    action.microbatch = 7;
    action.start = 100'000; // virtual
    action.end = 110'000;
    (*gpu)->placed(action);
    (*gpu)->drain();
    const auto events = trace.snapshot()->toVector();
    ASSERT_EQ(events.size(), 2u);
    EXPECT_EQ(events[0].start, 101'000);
    EXPECT_EQ(events[0].end, 102'000);
    EXPECT_EQ(events[1].start, 103'000); // by the stage's last offset
}

// Autograd launches backward kernels from its device thread, where CUPTI sees no pushed tag; the
// stage's stream still names the stage (the correlator), and the action is the stage's action
// whose host window holds the kernel: here F's, though B was placed last (by "the stage's last
// offset" the F kernel would land in B's block). A kernel under F's tag inside B's window is
// placed in B and counted as a disagreement.
TEST(GpuTrace, UntaggedKernelsGoToTheActionWhoseWindowHoldsThem)
{
    profiler::TraceStore trace;
    profiler::TraceStore* staging = nullptr;
    TimeNs origin = 0;
    auto gpu = GpuTrace::start(trace, fakeCuptiSeen(staging, origin));
    ASSERT_TRUE(gpu);
    const cupti::ActionTag f{0, profiler::EventKind::Forward, 3, 0};
    const cupti::ActionTag b{0, profiler::EventKind::Backward, 3, 0};
    (*gpu)->actionBegin(f, origin + 1'000);
    (*gpu)->actionEnd(f, origin + 2'000);
    (*gpu)->actionBegin(b, origin + 3'000);
    (*gpu)->actionEnd(b, origin + 4'000);
    profiler::TraceEvent k;
    k.stage = 0;
    k.lane = profiler::Lane::Kernel;
    k.kind = profiler::EventKind::Kernel;
    k.aux = cupti::kUntagged;
    k.microbatch = -1;
    k.start = 1'400;
    k.end = 1'600;
    staging->append(k);
    profiler::TraceEvent stale = k;
    stale.aux = static_cast<std::uint16_t>(profiler::EventKind::Forward);
    stale.microbatch = 3;
    stale.start = 3'500;
    stale.end = 3'700;
    staging->append(stale);
    for (const auto& [tag, at] : {std::pair{f, TimeNs{10'000}}, std::pair{b, TimeNs{20'000}}}) {
        profiler::TraceEvent action;
        action.stage = 0;
        action.kind = tag.kind;
        action.microbatch = 3;
        action.start = at;
        action.end = at + 1'000;
        (*gpu)->placed(action);
    }
    (*gpu)->drain();
    const auto events = trace.snapshot()->toVector();
    ASSERT_EQ(events.size(), 2u);
    EXPECT_EQ(events[0].start, 10'400); // F's block, not B's (20'400)
    EXPECT_EQ(events[0].aux, static_cast<std::uint16_t>(profiler::EventKind::Forward));
    EXPECT_EQ(events[0].microbatch, 3) << "the window gives an untagged kernel its action";
    EXPECT_EQ(events[1].start, 20'500);
    EXPECT_EQ(events[1].aux, static_cast<std::uint16_t>(profiler::EventKind::Backward));
    EXPECT_EQ((*gpu)->placedByWindow(), 2u);
    EXPECT_EQ((*gpu)->tagDisagreements(), 1u);
}

// Interleaved and V placements: the scheduler core writes an action's event under its rank, so the
// executor tags kernels with the rank too (setTraceStages), or no kernel would meet its action.
TEST(GpuTrace, KernelTagsCarryTheTraceStageOfMultiStageRanks)
{
    const ModelOptions o = test::tinyModelOptions(4, 1, WeightPolicy::Flush);
    auto model = PipelineModel::create(o, test::patternTokens(o.shape, o.microBatchSize));
    ASSERT_TRUE(model) << model.error().describe();
    struct Tags final : KernelTagSink
    {
        std::vector<int> stages;
        void actionBegin(const cupti::ActionTag& tag, TimeNs) override { stages.push_back(tag.stage); }
        void actionEnd(const cupti::ActionTag&, TimeNs) override {}
    } tags;
    TensorExecutor executor(*model);
    executor.setTraceStages({0, 1, 1, 0}); // V: rank r holds stages r and 2p - 1 - r
    std::vector<std::unique_ptr<ActionTimer>> timers;
    for (int s = 0; s < 4; ++s) {
        timers.push_back(makeHostTimer());
    }
    ASSERT_TRUE(executor.useDevices(std::move(timers), std::vector<int>(4, -1), &tags));
    for (int s = 0; s < 4; ++s) {
        ASSERT_TRUE(executor.perform(Action{s, ActionKind::Forward, 0}));
    }
    EXPECT_EQ(tags.stages, (std::vector<int>{0, 1, 1, 0}));
}

// A hand-off copy is the sender's transfer, made by the receiver inside its action: the executor
// pushes a Send tag (sender's trace stage, receiver's in the version field, the micro-batch)
// around every copy the model makes (here the CPU clones a one-process run makes; between two GPUs
// the device-to-device copy), nested in the receiving action's tag.
TEST(GpuTrace, HandOffCopiesAreTaggedAsTheSendersTransfer)
{
    const ModelOptions o = test::tinyModelOptions(3, 1, WeightPolicy::Flush);
    auto model = PipelineModel::create(o, test::patternTokens(o.shape, o.microBatchSize));
    ASSERT_TRUE(model) << model.error().describe();
    struct Tags final : KernelTagSink
    {
        std::vector<std::string> log;
        static std::string name(const cupti::ActionTag& t)
        {
            return std::string(1, profiler::eventLetter(t.kind)) + std::to_string(t.stage) + ">"
                + std::to_string(t.version) + "/" + std::to_string(t.microbatch);
        }
        void actionBegin(const cupti::ActionTag& tag, TimeNs) override { log.push_back("begin " + name(tag)); }
        void actionEnd(const cupti::ActionTag& tag, TimeNs) override { log.push_back("end " + name(tag)); }
        void transferBegin(const cupti::ActionTag& tag) override { log.push_back("copy " + name(tag)); }
        void transferEnd(const cupti::ActionTag& tag) override { log.push_back("copied " + name(tag)); }
    } tags;
    {
        TensorExecutor executor(*model, /*microbatchOffset=*/5);
        executor.setTraceStages({0, 1, 2});
        std::vector<std::unique_ptr<ActionTimer>> timers;
        for (int s = 0; s < 3; ++s) {
            timers.push_back(makeHostTimer());
        }
        ASSERT_TRUE(executor.useDevices(std::move(timers), std::vector<int>(3, -1), &tags));
        ASSERT_TRUE(executor.perform(Action{0, ActionKind::Forward, 0}));
        ASSERT_TRUE(executor.perform(Action{1, ActionKind::Forward, 0}));
        ASSERT_TRUE(executor.perform(Action{2, ActionKind::Forward, 0}));
        ASSERT_TRUE(executor.perform(Action{2, ActionKind::Backward, 0}));
    }
    const std::vector<std::string> expected = {"begin F0>0/5", "end F0>0/5", //
        "begin F1>0/5", "copy S0>1/5", "copied S0>1/5", "end F1>0/5", //
        "begin F2>0/5", "copy S1>2/5", "copied S1>2/5", "end F2>0/5", //
        "begin B2>0/5", "end B2>0/5"}; // the last stage's gradient waits in the mailbox: no copy yet
    EXPECT_EQ(tags.log, expected);
    // The executor is gone: the model no longer tells it (a later run's copies reach nobody).
    ASSERT_TRUE(model->backward(1, 5));
}

// What the collector makes of such a copy (a MEMCPY2 record under the Send tag: a comm-lane Send
// on the sender's stage, aux = receiver) lands in the receiving action's block: the receiver
// copied at the start of that action, so the copy moves with it on the virtual timeline.
TEST(GpuTrace, SendCopiesMoveWithTheReceivingAction)
{
    profiler::TraceStore trace;
    profiler::TraceStore* staging = nullptr;
    TimeNs origin = 0;
    auto gpu = GpuTrace::start(trace, fakeCuptiSeen(staging, origin));
    ASSERT_TRUE(gpu);
    const cupti::ActionTag f0{0, profiler::EventKind::Forward, 3, 0};
    const cupti::ActionTag f1{1, profiler::EventKind::Forward, 3, 0};
    const cupti::ActionTag send{0, profiler::EventKind::Send, 3, 1};
    (*gpu)->actionBegin(f0, origin + 1'000);
    (*gpu)->actionEnd(f0, origin + 2'000);
    (*gpu)->actionBegin(f1, origin + 3'000);
    (*gpu)->transferBegin(send);
    (*gpu)->transferEnd(send);
    (*gpu)->actionEnd(f1, origin + 5'000);
    profiler::TraceEvent copy;
    copy.stage = 0;
    copy.lane = profiler::Lane::Comm;
    copy.kind = profiler::EventKind::Send;
    copy.aux = 1; // the receiver
    copy.microbatch = 3;
    copy.bytes = 4096;
    copy.start = 3'100;
    copy.end = 3'300;
    staging->append(copy);
    profiler::TraceEvent a0;
    a0.stage = 0;
    a0.kind = profiler::EventKind::Forward;
    a0.microbatch = 3;
    a0.start = 10'000;
    a0.end = 11'000;
    (*gpu)->placed(a0);
    (*gpu)->drain();
    EXPECT_EQ(trace.size(), 0u) << "the receiving action is not placed yet: the copy waits for it";
    profiler::TraceEvent a1 = a0;
    a1.stage = 1;
    a1.start = 50'000; // the receiver's virtual clock
    a1.end = 52'000;
    (*gpu)->placed(a1);
    (*gpu)->drain();
    const auto events = trace.snapshot()->toVector();
    ASSERT_EQ(events.size(), 1u);
    EXPECT_EQ(events[0].lane, profiler::Lane::Comm);
    EXPECT_EQ(events[0].kind, profiler::EventKind::Send);
    EXPECT_EQ(events[0].stage, 0) << "the sender's comm lane";
    EXPECT_EQ(events[0].aux, 1) << "to the receiver";
    EXPECT_EQ(events[0].start, 50'100) << "inside the receiving forward's block";
    EXPECT_EQ(events[0].end, 50'300);
    EXPECT_EQ(events[0].bytes, 4096);
}

TEST(GpuTrace, BubbleFractionComesFromTheKernelLanesUnion)
{
    profiler::TraceStore trace;
    auto kernel = [&](int stage, TimeNs start, TimeNs end) {
        profiler::TraceEvent k;
        k.stage = static_cast<std::uint16_t>(stage);
        k.lane = profiler::Lane::Kernel;
        k.kind = profiler::EventKind::Kernel;
        k.aux = static_cast<std::uint16_t>(profiler::EventKind::Forward);
        k.microbatch = 0;
        k.start = start;
        k.end = end;
        trace.append(k);
    };
    profiler::TraceEvent action; // host-timed compute events do not count: only GPU activity
    action.start = 0;
    action.end = 100;
    trace.append(action);
    EXPECT_FALSE(gpuBubbleFraction(*trace.snapshot(), 2, 100)) << "no kernels: no GPU figure";
    kernel(0, 0, 30);
    kernel(0, 20, 40); // concurrent with the first: counted once
    kernel(1, 50, 60);
    const auto f = gpuBubbleFraction(*trace.snapshot(), 2, 100);
    ASSERT_TRUE(f);
    EXPECT_DOUBLE_EQ(*f, 1.0 - 50.0 / 200.0);
}

class FakeAllocator final : public AllocatorStats
{
public:
    AllocatorSample sample(int) override { return {}; }
    void resetPeak(int) override {}
};

TEST(DeviceRuntime, WhenCuptiCannotStartTheRunGoesOnAndSaysWhyOnce)
{
    RunConfig config;
    config.pipeline.stages = kP;
    config.device.name = "cuda";
    FakeAllocator allocator;
    DeviceRuntimeOptions options;
    options.torchHasCuda = true;
    options.cudaDevices = 1;
    options.allocator = &allocator;
    options.timers = [](int) { return Result<std::unique_ptr<ActionTimer>>(makeHostTimer()); };
    options.collectors = [](profiler::TraceStore&, TimeNs) -> Result<std::unique_ptr<KernelCollector>> {
        return makeError(ErrorCode::Unavailable, "CUPTI is in use by another profiler (Nsight Systems?)");
    };
    profiler::TraceStore trace;
    auto rt = DeviceRuntime::create(config, kP, trace, options);
    ASSERT_TRUE(rt) << rt.error().describe();
    EXPECT_TRUE((*rt)->plan().cuda);
    EXPECT_TRUE((*rt)->plan().bf16);
    EXPECT_FALSE((*rt)->kernelLanes());
    ASSERT_EQ((*rt)->notes().size(), 1u);
    EXPECT_NE((*rt)->notes()[0].find("another profiler"), std::string::npos) << (*rt)->notes()[0];
    EXPECT_EQ(installedDeviceMemory() != nullptr, true) << "CUDA memory attribution is on";

    ModelOptions o = test::tinyModelOptions(kP, kM, WeightPolicy::Flush);
    (*rt)->configure(o);
    EXPECT_EQ(o.stageDevice, std::vector<int>(kP, 0));
    EXPECT_TRUE(o.bf16);
    o.stageDevice.clear(); // the CPU does the work; the executor still gets the GPU wiring
    o.bf16 = false;
    auto model = PipelineModel::create(o, test::patternTokens(o.shape, o.microBatchSize));
    ASSERT_TRUE(model);
    TensorExecutor executor(*model);
    ASSERT_TRUE((*rt)->attach(executor));
    auto schedule = oneF1B(1);
    ASSERT_TRUE(schedule);
    DriveOptions drive;
    drive.onAction = [&](const Action&, const profiler::TraceEvent& ev) { (*rt)->placed(ev); };
    ASSERT_TRUE(runtime::drive(*schedule, executor, trace, drive));
    profiler::TraceMeta meta;
    ASSERT_TRUE((*rt)->finish(meta));
    EXPECT_EQ(meta.attributes["device"], "cuda:0 (2 stages)");
    EXPECT_EQ(meta.attributes["dtype"], "bf16");
    EXPECT_EQ(meta.attributes["timing"], "cuda-events");
    EXPECT_EQ(meta.attributes["cupti"].rfind("unavailable: ", 0), 0u) << meta.attributes["cupti"];
    rt->reset();
    EXPECT_EQ(installedDeviceMemory(), nullptr);
}

TEST(DeviceRuntime, CpuRunsStartNothing)
{
    RunConfig config;
    profiler::TraceStore trace;
    DeviceRuntimeOptions options;
    options.collectors = [](profiler::TraceStore&, TimeNs) -> Result<std::unique_ptr<KernelCollector>> {
        ADD_FAILURE() << "CUPTI must not start on the CPU";
        return makeError(ErrorCode::Unavailable, "no");
    };
    auto rt = DeviceRuntime::create(config, 8, trace, options);
    ASSERT_TRUE(rt);
    EXPECT_FALSE((*rt)->plan().cuda);
    EXPECT_TRUE((*rt)->notes().empty());
    EXPECT_EQ(installedDeviceMemory(), nullptr);
}

TEST(DeviceRuntime, NoGpuHereIsAUsageErrorNamingTheDevice)
{
    RunConfig config;
    config.device.name = "cuda";
    profiler::TraceStore trace;
    auto rt = DeviceRuntime::create(config, 8, trace, {}); // this machine's real answer
    if (torchHasCuda() && torchCudaDeviceCount() > 0) {
        GTEST_SKIP() << "a GPU is present";
    }
    ASSERT_FALSE(rt);
    EXPECT_EQ(rt.error().code, ErrorCode::InvalidArgument);
    EXPECT_EQ(rt.error().context, "device.name");
    const std::string expected = torchHasCuda() ? "no CUDA device is present" : "this LibTorch build is CPU-only";
    EXPECT_NE(rt.error().message.find(expected), std::string::npos) << rt.error().message;
}

TEST(ActionTimer, HostTimerMeasuresTheActionOnTheSteadyClock)
{
    auto timer = makeHostTimer();
    timer->begin();
    const TimeNs began = timer->hostBegin();
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
    auto d = timer->end();
    ASSERT_TRUE(d);
    EXPECT_GE(*d, 5'000'000);
    EXPECT_LT(*d, 5'000'000'000);
    EXPECT_LE(began, hostNowNs());
    auto cpu = makeStageTimer(-1);
    ASSERT_TRUE(cpu);
    if (!torchHasCuda()) {
        auto gpu = makeStageTimer(0);
        ASSERT_FALSE(gpu);
        EXPECT_EQ(gpu.error().code, ErrorCode::Unavailable);
    }
}

} // namespace
} // namespace bs::runtime
