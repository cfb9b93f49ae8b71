#include "runtime/exec/run_session.h"

#include "runtime/config/config_validate.h"
#include "runtime/data/token_source.h"
#include "runtime/exec/device_runtime.h"
#include "runtime/dist/stage_transport.h"
#include "runtime/exec/tensor_executor.h"
#include "runtime/model/pipeline_model.h"
#include "runtime/model/reference_trainer.h"
#include "runtime/rundir/run_dir_writer.h"
#include "runtime/schedule/catalogue.h"
#include "runtime/sim/scheduler_core.h"
#include "runtime/sim/threaded_driver.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <mutex>
#include <nlohmann/json.hpp>

namespace bs::runtime {

namespace {

using Clock = std::chrono::steady_clock;

double seconds(Clock::duration d)
{
    return std::chrono::duration<double>(d).count();
}

/// Micro-batches one update applies, read from the schedule's first update on the last stage.
int updateWindow(const Schedule& schedule)
{
    for (const Action& a : schedule.programs.back()) {
        if (a.kind == ActionKind::Update) {
            return a.lastMb - a.firstMb + 1;
        }
    }
    return schedule.params.microbatches;
}

ModelOptions modelOptions(const RunConfig& c, const Schedule& schedule)
{
    ModelOptions o;
    o.shape = c.model.shape;
    o.stages = c.pipeline.stages;
    o.microBatchSize = c.pipeline.microBatchSize;
    o.layersPerStage = c.pipeline.layersPerStage;
    o.seed = static_cast<std::uint64_t>(c.training.seed);
    o.weights = schedule.weights;
    o.updateEvery = updateWindow(schedule);
    // The config counts warm-up and decay in global batches; a stage may update several times per batch.
    const double updatesPerBatch = static_cast<double>(c.pipeline.microbatches) / static_cast<double>(o.updateEvery);
    const int total = c.optimizer.totalSteps > 0 ? c.optimizer.totalSteps : c.training.steps;
    o.optimizer.lr = c.optimizer.lr;
    o.optimizer.beta1 = c.optimizer.beta1;
    o.optimizer.beta2 = c.optimizer.beta2;
    o.optimizer.eps = c.optimizer.eps;
    o.optimizer.weightDecay = c.optimizer.weightDecay;
    o.optimizer.warmupSteps = static_cast<int>(std::lround(c.optimizer.warmupSteps * updatesPerBatch));
    o.optimizer.totalSteps =
        c.optimizer.decay == "constant" ? 0 : static_cast<int>(std::lround(total * updatesPerBatch));
    o.optimizer.minLrRatio = c.optimizer.lr > 0.0 ? c.optimizer.minLr / c.optimizer.lr : 0.0;
    o.driftSampleEvery = o.updateEvery + 1; // coprime with the window: every position gets sampled
    return o;
}

/// Where the training data is: run-wide micro-batch `firstMicrobatch` and the ones after it take
/// consecutive rows of `batchSize` sequences from sequence `firstSequence` on. Apply moves it (b may
/// change), so a run reads the sequence stream once, in order, whatever its settings. Changed only
/// between two schedules, when no forward runs.
struct DataCursor
{
    std::int64_t firstMicrobatch = 0;
    std::int64_t firstSequence = 0;
    int batchSize = 1;

    MicroBatch batch(const TokenSource& source, std::int64_t mb) const
    {
        const std::int64_t row = firstSequence + (mb - firstMicrobatch) * batchSize;
        if (row % batchSize == 0) {
            return source.batch(Split::Train, row / batchSize, batchSize);
        }
        MicroBatch out; // not aligned to b: gather the rows one by one
        for (int r = 0; r < batchSize; ++r) {
            MicroBatch one = source.batch(Split::Train, row + r, 1);
            out.batchSize += one.batchSize;
            out.seqLen = one.seqLen;
            out.inputs.insert(out.inputs.end(), one.inputs.begin(), one.inputs.end());
            out.targets.insert(out.targets.end(), one.targets.begin(), one.targets.end());
        }
        return out;
    }
};

TokenBatch toTokenBatch(MicroBatch m)
{
    return TokenBatch{m.batchSize, m.seqLen, std::move(m.inputs), std::move(m.targets)};
}

StageMetrics stageMetrics(int s, const StageStats& st)
{
    StageMetrics m;
    m.stage = s;
    m.version = st.version;
    const StageMemory& mem = st.memory;
    m.paramBytes = mem.liveOf(MemoryCategory::Parameters);
    m.gradBytes = mem.liveOf(MemoryCategory::Gradients);
    m.optimizerBytes = mem.liveOf(MemoryCategory::OptimizerState);
    m.stashBytes = mem.liveOf(MemoryCategory::Stash);
    m.activationBytes = mem.liveOf(MemoryCategory::Activations);
    m.peakBytes = mem.peakTotal;
    m.peakActivationBytes = mem.peakOf(MemoryCategory::Activations);
    m.peakStashBytes = mem.peakOf(MemoryCategory::Stash);
    m.peakReservedBytes = mem.peakReserved;
    m.maxLag = st.maxLag;
    m.lagHistogram = st.lagHistogram;
    m.driftSamples = st.driftSamples;
    m.meanDrift = st.meanDrift;
    m.maxDrift = st.maxDrift;
    return m;
}

} // namespace

struct RunSession::Impl
{
    RunConfig config;
    SessionOptions options;
    std::unique_ptr<TokenSource> data;
    std::unique_ptr<DeviceRuntime> device; // before the model: its memory attribution outlives the tensors' frees
    std::optional<PipelineModel> model;
    std::optional<ReferenceTrainer> reference;
    std::vector<TokenBatch> validation;
    profiler::TraceStore store;
    std::optional<RunDirWriter> writer;
    std::atomic<bool> stop{false};

    mutable std::mutex mutex; // guards summary, fresh, pendingApply, changes; config's writes
    RunSummary summary;
    std::vector<BatchMetrics> fresh;

    int stepsDone = 0;
    std::int64_t mbDone = 0; // run-wide micro-batches trained (data index, trace ids)
    std::shared_ptr<DataCursor> cursor; // the token function's position (moved on by Apply)
    profiler::TraceMeta meta;
    // Live Apply: pendingApply and changes are guarded by `mutex`; `cut` tells the driver.
    std::atomic<bool> cut{false};
    std::optional<LiveSettings> pendingApply;
    std::vector<AppliedChange> changes;
    double tokensBefore = 0; // tokens trained before the settings in force (since step settingsStep)
    int settingsStep = 0;
    std::atomic<bool> broken{false};
    std::atomic<bool> finished{false};
    TimeNs virtualNow = 0; // end of the timeline so far
    std::vector<int> versions;
    Clock::duration trainWall{};
    Clock::duration evalWall{};
    TimeNs busy = 0;

    int m() const { return config.pipeline.microbatches; }
    double tokensPerBatch() const
    {
        return static_cast<double>(m()) * config.pipeline.microBatchSize * config.model.shape.seqLen;
    }
    /// Tokens trained in steps [0, steps).
    double tokensUpTo(int steps) const { return tokensBefore + tokensPerBatch() * (steps - settingsStep); }

    bool evaluationDue(int step) const
    {
        const int every = config.training.evalInterval;
        return every > 0 && ((step + 1) % every == 0 || step + 1 == config.training.steps);
    }

    std::optional<double> maybeEvaluate(bool due)
    {
        if (!due || validation.empty()) {
            return std::nullopt;
        }
        const auto t0 = Clock::now();
        Result<double> v = reference ? reference->evaluate(validation) : model->evaluate(validation);
        evalWall += Clock::now() - t0;
        return v ? std::optional<double>(*v) : std::nullopt;
    }

    /// `completedAt`: when the batch completed (default: now). `evaluate`: run the validation
    /// pass if one is due (threaded chunks decide themselves).
    Status recordBatch(int step, double loss, TimeNs virtualEnd, Clock::time_point wallStart,
                       std::optional<Clock::time_point> completedAt = std::nullopt,
                       std::optional<bool> evaluate = std::nullopt)
    {
        BatchMetrics b;
        b.step = step;
        b.trainLoss = loss;
        b.virtualTimeS = toSeconds(virtualEnd);
        const Clock::time_point at = completedAt.value_or(Clock::now());
        const double wall = seconds(trainWall + (at - wallStart)) - seconds(evalWall); // before this batch's eval
        b.valLoss = maybeEvaluate(evaluate.value_or(evaluationDue(step)));
        b.wallTimeS = wall;
        const double tokens = tokensUpTo(step + 1);
        b.tokensPerSVirtual = b.virtualTimeS > 0 ? tokens / b.virtualTimeS : 0.0;
        b.tokensPerSWall = wall > 0 ? tokens / wall : 0.0;
        if (model) {
            for (int s = 0; s < model->stages(); ++s) {
                b.stages.push_back(stageMetrics(s, model->stageStats(s)));
            }
        }
        {
            const std::lock_guard<std::mutex> lock(mutex);
            summary.losses.push_back(loss);
            summary.finalTrainLoss = loss;
            summary.steps = step + 1;
            if (b.valLoss) {
                summary.valLoss = b.valLoss;
                summary.valLosses.push_back(*b.valLoss);
                summary.valSteps.push_back(step);
                summary.valVirtualTimesS.push_back(b.virtualTimeS);
                if (summary.targetLoss && !summary.timeToTargetS && *b.valLoss <= *summary.targetLoss) {
                    summary.timeToTargetS = b.virtualTimeS;
                    summary.stepToTarget = step;
                }
            }
            summary.stages = b.stages;
            fresh.push_back(b);
        }
        if (writer) {
            return writer->appendMetrics(nlohmann::json(b));
        }
        return ok();
    }

    Status runPipeline(int count);
    Status runThreaded(int count, const Schedule& schedule, TensorExecutor& executor);
    Status runRank(int count, const Schedule& schedule, TensorExecutor& executor);
    Status runReference(int count);
    Result<RunConfig> liveConfig(const LiveSettings& settings) const;
    Status applyPending();
};

RunSession::RunSession(std::unique_ptr<Impl> impl)
    : m_impl(std::move(impl))
{}
RunSession::RunSession(RunSession&&) noexcept = default;
RunSession& RunSession::operator=(RunSession&&) noexcept = default;
RunSession::~RunSession() = default;

Status RunSession::warmUp(const RunConfig& config)
{
    RunConfig c = config;
    c.training.steps = 1;
    c.training.evalInterval = 0;
    c.profiling.trace = false;
    auto session = create(c, {});
    if (!session) {
        return session.error();
    }
    return session->runSteps(1);
}

Result<RunSession> RunSession::create(const RunConfig& config, const SessionOptions& options)
{
    if (Status valid = validate(config); !valid) {
        return valid.error();
    }
    auto impl = std::make_unique<Impl>();
    DeviceRuntimeOptions deviceOptions;
    deviceOptions.profileKernels = config.profiling.trace;
    auto device = DeviceRuntime::create(config, options.reference ? 1 : config.pipeline.stages, impl->store,
                                        std::move(deviceOptions));
    if (!device) {
        return device.error(); // no CUDA device / CPU-only LibTorch: names device.name
    }
    impl->device = std::move(device.value());
    impl->summary.notes = impl->device->notes();
    impl->config = config;
    impl->options = options;
    if (config.device.intraOpThreads > 0) {
        setIntraOpThreads(config.device.intraOpThreads);
    }
    auto data = openTokenSource(config.data.spec, config.model.shape.vocab, config.model.shape.seqLen,
        static_cast<std::uint64_t>(config.data.seed), config.data.valFraction);
    if (!data) {
        return data.error();
    }
    impl->data = std::move(data.value());
    const TokenSource* source = impl->data.get();
    const int b = config.pipeline.microBatchSize;
    impl->cursor = std::make_shared<DataCursor>();
    impl->cursor->batchSize = b;
    TokenFn tokens = [source, cursor = impl->cursor](std::int64_t mb) -> Result<TokenBatch> {
        return toTokenBatch(cursor->batch(*source, mb));
    };
    for (int i = 0; i < config.training.evalBatches; ++i) {
        MicroBatch v = source->batch(Split::Validation, i, b);
        if (v.batchSize > 0) {
            impl->validation.push_back(toTokenBatch(std::move(v)));
        }
    }
    ScheduleParams probe = toScheduleParams(config);
    probe.batches = 1;
    auto schedule = makeSchedule(probe);
    if (!schedule) {
        return schedule.error();
    }
    ModelOptions mo = modelOptions(config, *schedule);
    impl->device->configure(mo);
    if (options.transport) {
        mo.onlyStage = options.transport->rank(); // a rank holds its own stage's weights only
    }
    if (options.reference) {
        auto ref = ReferenceTrainer::create(mo, tokens);
        if (!ref) {
            return ref.error();
        }
        impl->reference.emplace(std::move(ref.value()));
    } else {
        auto model = PipelineModel::create(mo, tokens);
        if (!model) {
            return model.error();
        }
        impl->model.emplace(std::move(model.value()));
        impl->model->setTargetsFromTokens(options.transport != nullptr);
        MemoryTracker::resetPeaks();
    }
    impl->summary.schedule = options.reference ? "reference" : config.schedule.name;
    impl->summary.reference = options.reference;
    impl->summary.targetLoss = config.training.targetLoss;
    profiler::TraceMeta meta;
    meta.stages = options.reference ? 1 : config.pipeline.stages;
    meta.clock = (options.executor == ExecutorKind::Threaded || options.transport) && !options.reference ? "wall" : "virtual";
    meta.title = impl->summary.schedule + " p=" + std::to_string(config.pipeline.stages) + " m="
        + std::to_string(config.pipeline.microbatches) + " a=" + std::to_string(config.pipeline.effectiveAccum());
    meta.attributes["schedule"] = impl->summary.schedule;
    meta.attributes["weights"] = std::string(weightPolicyName(schedule->weights));
    impl->store.setMeta(meta);
    impl->meta = meta;
    if (options.outDir) {
        auto writer = RunDirWriter::create(*options.outDir, RunDirOptions{options.overwrite, false});
        if (!writer) {
            return writer.error();
        }
        impl->writer.emplace(std::move(writer.value()));
        if (Status s = impl->writer->writeConfig(config); !s) {
            return s.error();
        }
    }
    return RunSession(std::move(impl));
}

Status RunSession::Impl::runReference(int count)
{
    for (int i = 0; i < count; ++i) {
        if (stop) {
            return makeError(ErrorCode::Cancelled, "run stopped", "step " + std::to_string(stepsDone));
        }
        const auto t0 = Clock::now();
        Result<double> loss = reference->trainBatch(mbDone, m());
        const auto dt = Clock::now() - t0;
        if (!loss) {
            return loss.error();
        }
        const TimeNs ns = std::chrono::duration_cast<std::chrono::nanoseconds>(dt).count();
        profiler::TraceEvent ev;
        ev.start = virtualNow;
        ev.end = virtualNow + ns;
        ev.microbatch = stepsDone;
        ev.kind = profiler::EventKind::Forward; // one event per global batch: forward+backward+update
        store.append(ev);
        virtualNow += ns;
        busy += ns;
        trainWall += dt;
        if (Status s = recordBatch(stepsDone, *loss, virtualNow, Clock::now()); !s) {
            return s;
        }
        stepsDone += 1;
        mbDone += m();
    }
    return ok();
}

Status RunSession::Impl::runPipeline(int count)
{
    ScheduleParams params = toScheduleParams(config);
    params.batches = count;
    auto schedule = makeSchedule(params);
    if (!schedule) {
        return schedule.error();
    }
    const int p = schedule->stages();
    const int firstStep = stepsDone;
    const std::int64_t firstMb = mbDone;
    TensorExecutor executor(*model, firstMb);
    if (Status s = device->attach(executor); !s) {
        return s;
    }
    if (options.transport) {
        return runRank(count, *schedule, executor);
    }
    if (options.executor == ExecutorKind::Threaded) {
        return runThreaded(count, *schedule, executor);
    }
    // A global batch is recorded once EVERY stage has applied the update(s) covering it. Per-stage
    // action orders are static, so the weights at that point (and the validation loss measured on
    // them) do not depend on measured durations: same seed, same metrics.
    const int updatesPerBatch = std::max(1, m() / model->options().updateEvery);
    std::vector<int> updates(static_cast<std::size_t>(p), 0);
    int nextBatch = 0;
    Status callbackStatus = ok();
    const auto wallStart = Clock::now();
    DriveOptions drive;
    drive.stop = &stop;
    drive.timeOrigin = virtualNow;
    drive.initialVersions = versions;
    drive.cut = &cut;
    drive.cutEvery = m();
    drive.microbatchOffset = static_cast<std::int32_t>(firstMb);
    drive.onAction = [&](const Action& a, const profiler::TraceEvent& ev) {
        device->placed(ev); // GPU runs: this action's kernels onto the virtual clock
        if (a.kind != ActionKind::Update) {
            return;
        }
        updates[static_cast<std::size_t>(a.stage)] += 1;
        const int slowest = *std::min_element(updates.begin(), updates.end());
        while (nextBatch < count && slowest >= (nextBatch + 1) * updatesPerBatch) {
            double sum = 0.0;
            for (int i = 0; i < m(); ++i) {
                sum += model->loss(firstMb + static_cast<std::int64_t>(nextBatch) * m() + i).value_or(NAN);
            }
            if (Status s = recordBatch(firstStep + nextBatch, sum / m(), ev.end, wallStart); !s && callbackStatus) {
                callbackStatus = s;
            }
            ++nextBatch;
        }
    };
    auto stats = runtime::drive(*schedule, executor, store, drive);
    trainWall += Clock::now() - wallStart;
    busy += executor.busyTime();
    if (!stats) {
        return stats.error();
    }
    virtualNow += stats->makespan;
    versions = stats->finalVersions;
    const int done = stats->cutAt >= 0 ? stats->cutAt / m() : count; // a cut (Apply) ends at a batch boundary
    stepsDone += done;
    mbDone += static_cast<std::int64_t>(done) * m();
    return callbackStatus;
}

// driveThreaded: onAction runs on the stage threads (one at a time) while other stages keep
// computing, so it only notes when each batch completes; losses, stage statistics and the
// validation pass are read after the drive, when no stage runs.
Status RunSession::Impl::runThreaded(int count, const Schedule& schedule, TensorExecutor& executor)
{
    const int p = schedule.stages();
    const int firstStep = stepsDone;
    // One intra-op thread per stage unless configured: the stages are the parallelism.
    setIntraOpThreads(config.device.intraOpThreads > 0 ? config.device.intraOpThreads : 1);
    std::vector<int> done(static_cast<std::size_t>(count), 0);
    struct Completed
    {
        int batch;
        TimeNs end;
        Clock::time_point at;
    };
    std::vector<Completed> completed;
    const auto wallStart = Clock::now();
    DriveOptions drive;
    drive.stop = &stop;
    drive.timeOrigin = virtualNow;
    drive.initialVersions = versions;
    drive.microbatchOffset = static_cast<std::int32_t>(mbDone);
    drive.onAction = [&](const Action& a, const profiler::TraceEvent& ev) {
        device->placed(ev);
        if (a.kind != ActionKind::Backward && a.kind != ActionKind::BackwardWeight) {
            return;
        }
        const int n = a.microbatch / m();
        if (++done[static_cast<std::size_t>(n)] == m() * p) {
            completed.push_back({n, ev.end, Clock::now()});
        }
    };
    auto stats = driveThreaded(schedule, executor, store, drive);
    const auto wallEnd = Clock::now();
    std::sort(completed.begin(), completed.end(), [](const Completed& x, const Completed& y) { return x.batch < y.batch; });
    bool evalDue = false;
    for (const Completed& c : completed) {
        evalDue = evalDue || evaluationDue(firstStep + c.batch);
    }
    Status recorded = ok();
    const Clock::duration evalBefore = evalWall; // the pass below runs after wallEnd: not in trainWall
    for (std::size_t i = 0; i < completed.size() && recorded; ++i) {
        const Completed& c = completed[i];
        double sum = 0.0;
        for (int k = 0; k < m(); ++k) {
            sum += model->loss(mbDone + static_cast<std::int64_t>(c.batch) * m() + k).value_or(NAN);
        }
        const bool lastOfChunk = i + 1 == completed.size();
        recorded = recordBatch(firstStep + c.batch, sum / m(), c.end, wallStart, c.at, lastOfChunk && evalDue);
    }
    evalWall = evalBefore;
    trainWall += wallEnd - wallStart;
    busy += executor.busyTime();
    if (!stats) {
        return stats.error();
    }
    virtualNow += stats->makespan;
    versions = stats->finalVersions;
    stepsDone += count;
    mbDone += static_cast<std::int64_t>(count) * m();
    return recorded;
}

// Multi-process: this rank performs its own stage's static program in order; before an action
// that needs a neighbour's tensor it receives it (blocking, the transport's timeout), after one
// that produces a tensor for a neighbour it starts sending it. The static order is the one the
// serial driver executes, so the numerics are the same.
Status RunSession::Impl::runRank(int count, const Schedule& schedule, TensorExecutor& executor)
{
    StageTransport& net = *options.transport;
    const int s = net.rank();
    const int last = schedule.stages() - 1;
    const int firstStep = stepsDone;
    const std::int64_t offset = mbDone;
    const std::vector<std::int64_t> shape{config.pipeline.microBatchSize, config.model.shape.seqLen,
                                          config.model.shape.dModel};
    const auto now = [&] {
        return std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now() - options.clockZero).count();
    };
    int version = versions.empty() ? 0 : versions[static_cast<std::size_t>(s)];
    std::vector<int> done(static_cast<std::size_t>(count), 0);
    const auto wallStart = Clock::now();
    Status status = ok();
    TimeNs lastEnd = now();
    for (const Action& a : schedule.programs[static_cast<std::size_t>(s)]) {
        if (stop) {
            status = makeError(ErrorCode::Cancelled, "run stopped", "rank " + std::to_string(s) + " before " + toString(a));
            break;
        }
        const std::int64_t mb = offset + a.microbatch;
        const bool gradientIn = (a.kind == ActionKind::Backward || a.kind == ActionKind::BackwardInput) && s < last;
        if ((a.kind == ActionKind::Forward && s > 0) || gradientIn) {
            const HandOffKind kind = gradientIn ? HandOffKind::Gradient : HandOffKind::Activation;
            Result<HandOff> in = net.recv(kind, gradientIn ? s + 1 : s - 1, mb, shape);
            if (!in) {
                status = in.error();
                break;
            }
            model->putHandOff(kind, s, mb, *in);
        }
        const TimeNs start = now();
        Result<ActionOutcome> outcome = executor.perform(a);
        const TimeNs end = now();
        if (!outcome) {
            Error e = outcome.error();
            e.context = "rank " + std::to_string(s) + ", " + toString(a) + (e.context.empty() ? "" : ": " + e.context);
            status = e;
            break;
        }
        const bool gradientOut = (a.kind == ActionKind::Backward || a.kind == ActionKind::BackwardInput) && s > 0;
        if ((a.kind == ActionKind::Forward && s < last) || gradientOut) {
            const HandOffKind kind = gradientOut ? HandOffKind::Gradient : HandOffKind::Activation;
            const int to = gradientOut ? s - 1 : s + 1;
            std::optional<HandOff> value = model->takeHandOff(kind, to, mb);
            if (!value) {
                status = makeError(ErrorCode::Internal, "the stage produced no tensor to send", toString(a));
                break;
            }
            if (Status sent = net.send(kind, to, mb, std::move(*value)); !sent) {
                status = sent;
                break;
            }
        }
        profiler::TraceEvent event;
        event.start = start;
        event.end = end;
        event.stage = static_cast<std::uint16_t>(s);
        event.kind = toEventKind(a.kind);
        event.microbatch = static_cast<std::int32_t>(mb);
        event.version = version;
        event.bytes = outcome->bytes;
        if (a.kind == ActionKind::Update) {
            event.aux = static_cast<std::uint16_t>(a.lastMb - a.firstMb + 1);
            ++version;
        }
        store.append(event);
        device->placed(event);
        lastEnd = end;
        if (a.kind == ActionKind::Backward || a.kind == ActionKind::BackwardWeight) {
            const int n = a.microbatch / m();
            if (++done[static_cast<std::size_t>(n)] == m()) { // this stage finished batch n
                double sum = 0.0;
                for (int i = 0; i < m(); ++i) {
                    sum += s == last ? model->loss(offset + static_cast<std::int64_t>(n) * m() + i).value_or(NAN)
                                     : NAN;
                }
                // No validation pass: it needs every stage's current weights, and a rank has one.
                if (Status r = recordBatch(firstStep + n, sum / m(), end, wallStart, std::nullopt, false); !r) {
                    status = r;
                    break;
                }
            }
        }
    }
    if (status) {
        status = net.flush();
    }
    trainWall += Clock::now() - wallStart;
    busy += executor.busyTime();
    if (!status) {
        return status;
    }
    virtualNow = lastEnd;
    if (versions.empty()) {
        versions.assign(static_cast<std::size_t>(schedule.stages()), 0);
    }
    versions[static_cast<std::size_t>(s)] = version;
    stepsDone += count;
    mbDone += static_cast<std::int64_t>(count) * m();
    return ok();
}

Status RunSession::runSteps(int count)
{
    Impl& d = *m_impl;
    if (d.broken || d.finished) {
        return makeError(ErrorCode::InvalidArgument, "the run has ended; start a new session",
            "step " + std::to_string(d.stepsDone));
    }
    if (count <= 0) {
        return ok();
    }
    // Each pass trains one schedule; a requested Apply ends it early at a batch boundary and the
    // next pass continues the remaining steps with the new settings.
    const int target = d.stepsDone + count;
    Status s = ok();
    while (s && d.stepsDone < target) {
        s = d.applyPending();
        if (s) {
            s = d.reference ? d.runReference(target - d.stepsDone) : d.runPipeline(target - d.stepsDone);
        }
    }
    if (!s) {
        d.broken = true;
        const std::lock_guard<std::mutex> lock(d.mutex);
        d.summary.error = s.error().describe();
    }
    return s;
}

Status RunSession::run()
{
    Status s = runSteps(m_impl->config.training.steps - m_impl->stepsDone);
    Status f = finish();
    return !s ? s : f;
}

Status RunSession::finish()
{
    Impl& d = *m_impl;
    if (d.finished) {
        return ok();
    }
    d.finished = true;
    Status deviceFinished = d.device->finish(d.meta); // the last kernel lanes, device and cupti.* attributes
    d.store.setMeta(d.meta);
    std::shared_ptr<const profiler::TraceSnapshot> trace = d.store.snapshot();
    RunSummary s;
    {
        const std::lock_guard<std::mutex> lock(d.mutex);
        const int p = d.reference ? 1 : d.config.pipeline.stages;
        d.summary.virtualTimeS = toSeconds(d.virtualNow);
        d.summary.wallTimeS = seconds(d.trainWall) - seconds(d.evalWall);
        d.summary.busyTimeS = toSeconds(d.busy);
        const double tokens = d.tokensUpTo(d.stepsDone);
        d.summary.tokensPerSVirtual = d.summary.virtualTimeS > 0 ? tokens / d.summary.virtualTimeS : 0.0;
        d.summary.tokensPerSWall = d.summary.wallTimeS > 0 ? tokens / d.summary.wallTimeS : 0.0;
        TimeNs computeNs = 0;
        trace->forEach([&](const profiler::TraceEvent& e) {
            if (e.isCompute()) {
                computeNs += e.duration();
            }
        });
        const double capacity = static_cast<double>(p) * static_cast<double>(d.virtualNow);
        d.summary.bubbleFraction = capacity > 0 ? 1.0 - static_cast<double>(computeNs) / capacity : 0.0;
        if (d.model) { // the final state, after the last updates
            d.summary.stages.clear();
            for (int st = 0; st < d.model->stages(); ++st) {
                d.summary.stages.push_back(stageMetrics(st, d.model->stageStats(st)));
            }
        }
        d.summary.device = d.device->plan().description;
        d.summary.dtype = d.device->plan().bf16 ? "bf16" : "fp32";
        s = d.summary;
    }
    if (!deviceFinished) {
        return deviceFinished;
    }
    if (!d.writer) {
        return ok();
    }
    if (d.config.profiling.trace) {
        if (Status st = d.writer->writeTrace(*trace); !st) {
            return st;
        }
    }
    return d.writer->writeSummary(nlohmann::json(s));
}

Result<RunConfig> RunSession::Impl::liveConfig(const LiveSettings& settings) const
{
    if (reference || options.transport || options.executor != ExecutorKind::Serial) {
        return makeError(ErrorCode::Unavailable,
            "Apply needs the serial pipelined executor (not the threaded executor, a multi-process rank or the reference trainer)",
            "executor");
    }
    if (settings.stages && *settings.stages != config.pipeline.stages) {
        return makeError(ErrorCode::InvalidArgument,
            "pipeline.stages cannot change in a live run (" + std::to_string(config.pipeline.stages) + " -> "
                + std::to_string(*settings.stages) + "); start a new run",
            "pipeline.stages");
    }
    if (settings.model && *settings.model != config.model.preset) {
        return makeError(ErrorCode::InvalidArgument,
            "model.preset cannot change in a live run ('" + config.model.preset + "' -> '" + *settings.model
                + "'); start a new run",
            "model.preset");
    }
    if (settings.device && *settings.device != config.device.name) {
        return makeError(ErrorCode::InvalidArgument,
            "device.name cannot change in a live run ('" + config.device.name + "' -> '" + *settings.device
                + "'); start a new run",
            "device.name");
    }
    RunConfig next = config;
    next.schedule.name = settings.schedule;
    next.pipeline.microbatches = settings.microbatches;
    next.pipeline.accum = settings.accum;
    next.pipeline.microBatchSize = settings.microBatchSize;
    if (Status valid = validate(next); !valid) {
        return valid.error();
    }
    ScheduleParams probe = toScheduleParams(next);
    probe.batches = 1;
    if (auto schedule = makeSchedule(probe); !schedule) {
        return schedule.error();
    }
    return next;
}

Status RunSession::Impl::applyPending()
{
    std::optional<LiveSettings> settings;
    {
        const std::lock_guard<std::mutex> lock(mutex);
        settings.swap(pendingApply);
        cut = false;
    }
    if (!settings) {
        return ok();
    }
    auto next = liveConfig(*settings);
    if (!next) {
        return next.error();
    }
    ScheduleParams probe = toScheduleParams(*next);
    probe.batches = 1;
    auto schedule = makeSchedule(probe);
    if (!schedule) {
        return schedule.error();
    }
    ModelOptions mo = modelOptions(*next, *schedule);
    // The LR schedule continues where the training is: `stepsDone` batches of the new window size.
    const double updatesPerBatch = static_cast<double>(next->pipeline.microbatches) / mo.updateEvery;
    mo.optimizer.updatesOffset =
        static_cast<int>(std::lround(stepsDone * updatesPerBatch)) - model->version(0);
    if (Status s = model->reconfigure(mo); !s) {
        return s;
    }
    // The data continues at the next unread sequence, now in micro-batches of the new b.
    cursor->firstSequence += (mbDone - cursor->firstMicrobatch) * cursor->batchSize;
    cursor->firstMicrobatch = mbDone;
    cursor->batchSize = next->pipeline.microBatchSize;
    tokensBefore = tokensUpTo(stepsDone);
    settingsStep = stepsDone;
    {
        const std::lock_guard<std::mutex> lock(mutex); // requestApply() validates against config
        config = *next;
    }

    AppliedChange change;
    change.step = stepsDone;
    change.firstMicrobatch = mbDone;
    change.time = virtualNow;
    change.label = "apply: " + config.schedule.name + " m=" + std::to_string(config.pipeline.microbatches)
        + " a=" + std::to_string(config.pipeline.effectiveAccum()) + " b=" + std::to_string(config.pipeline.microBatchSize);
    change.settings = *settings;
    profiler::TraceEvent marker;
    marker.start = virtualNow;
    marker.end = virtualNow;
    marker.kind = profiler::EventKind::Marker;
    marker.microbatch = stepsDone;
    marker.version = model->version(0);
    meta.attributes["marker." + std::to_string(stepsDone)] = change.label;
    store.setMeta(meta);
    store.append(marker);
    {
        const std::lock_guard<std::mutex> lock(mutex);
        summary.schedule = config.schedule.name;
        changes.push_back(change);
    }
    if (writer) {
        return writer->writeConfig(config); // the settings in force; the markers are the history
    }
    return ok();
}

Status RunSession::requestApply(const LiveSettings& settings)
{
    Impl& d = *m_impl;
    if (d.broken || d.finished) {
        return makeError(ErrorCode::InvalidArgument, "the run has ended; nothing to apply to",
                         "step " + std::to_string(d.stepsDone));
    }
    // config is written under the lock (applyPending(), on the training thread).
    const std::lock_guard<std::mutex> lock(d.mutex);
    auto next = d.liveConfig(settings);
    if (!next) {
        return next.error();
    }
    d.pendingApply = settings;
    d.cut = true;
    return ok();
}

std::vector<AppliedChange> RunSession::appliedChanges() const
{
    const std::lock_guard<std::mutex> lock(m_impl->mutex);
    return m_impl->changes;
}

void RunSession::requestStop()
{
    m_impl->stop = true;
}

std::vector<BatchMetrics> RunSession::pollMetrics()
{
    const std::lock_guard<std::mutex> lock(m_impl->mutex);
    std::vector<BatchMetrics> out;
    out.swap(m_impl->fresh);
    return out;
}

int RunSession::stepsDone() const
{
    return m_impl->stepsDone;
}

RunSummary RunSession::summary() const
{
    const std::lock_guard<std::mutex> lock(m_impl->mutex);
    return m_impl->summary;
}

std::shared_ptr<const profiler::TraceSnapshot> RunSession::trace() const
{
    return m_impl->store.snapshot();
}
const RunConfig& RunSession::config() const
{
    return m_impl->config;
}

} // namespace bs::runtime
