#include "runtime/train/exec/run_session.h"

#include "runtime/plan/config/config_validate.h"
#include "runtime/plan/schedule/catalogue.h"
#include "runtime/plan/sim/simulator.h"
#include "runtime/train/exec/session_state.h"
#include "runtime/train/exec/stage_transport.h"

#include <nlohmann/json.hpp>

#include <algorithm>

namespace bs::runtime {

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

Result<RunSession> RunSession::create(const RunConfig& requested, const SessionOptions& options)
{
    if (Status valid = validate(requested); !valid) {
        return valid.error();
    }
    if (options.stopAtTarget) {
        if (!requested.training.targetLoss || requested.training.evalInterval <= 0) {
            return makeError(ErrorCode::InvalidArgument,
                "stop at target: the run needs a target validation loss and validation passes",
                !requested.training.targetLoss ? "training.target_loss (--target-loss)"
                                               : "training.eval_interval > 0 (--eval-interval)");
        }
        if (options.transport || (!options.reference && options.executor != ExecutorKind::Serial)) {
            return makeError(ErrorCode::InvalidArgument,
                "stop at target needs the serial executor or --reference (the threaded executor validates at "
                "a chunk's end, a multi-process rank never)",
                "--executor serial");
        }
    }
    std::optional<CheckpointState> resumed;
    if (options.resume) {
        auto state = resumeState(requested, options);
        if (!state) {
            return state.error();
        }
        resumed = std::move(*state);
    }
    RunConfig config = resumed ? resumed->config : requested;
    if (config.optimizer.baseGlobalBatch == 0) { // lr is given for the first m·b: an Apply rescales from it
        config.optimizer.baseGlobalBatch = config.pipeline.microbatches * config.pipeline.microBatchSize;
    }
    const RunConfig& first = resumed ? resumed->initialConfig : config; // the validation set and the trace's analysis
    auto impl = std::make_unique<Impl>();
    DeviceRuntimeOptions deviceOptions;
    deviceOptions.profileKernels = config.profiling.trace && config.profiling.cupti;
    auto device = DeviceRuntime::create(
        config, options.reference ? 1 : modelStages(config), impl->store, std::move(deviceOptions));
    if (!device) {
        return device.error(); // no CUDA device / CPU-only LibTorch: names device.name
    }
    impl->device = std::move(device.value());
    impl->summary.notes = impl->device->notes();
    impl->config = config;
    impl->initialConfig = first;
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
    TokenFn tokens = [source, cursor = impl->cursor](
                         std::int64_t mb) -> Result<TokenBatch> { return toTokenBatch(cursor->batch(*source, mb)); };
    for (int i = 0; i < first.training.evalBatches; ++i) {
        MicroBatch v = source->batch(Split::Validation, i, first.pipeline.microBatchSize);
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
    if (resumed) {
        mo.optimizer.updatesOffset = resumed->updatesOffset; // the LR schedule where the live Applies left it
    }
    impl->device->configure(mo);
    if (options.transport && config.pipeline.partition == "measured") {
        // Each rank would time its own units and could pick another split than its neighbours.
        return makeError(ErrorCode::InvalidArgument,
            "pipeline.partition = \"measured\" is not supported for multi-process runs; allowed: \"flops\" or the "
            "counts `bubblescope-cli partition --measured` prints",
            "pipeline.partition");
    }
    if (!options.reference) {
        auto partition = resolvePartition(config, mo);
        if (!partition) {
            return partition.error();
        }
        impl->summary.partition = std::move(partition.value());
    }
    if (options.transport) { // a rank holds its own stages' weights only (v of them on multi-stage ranks)
        for (int st = 0; st < schedule->stages(); ++st) {
            if (schedule->rankOf(st) == options.transport->rank()) {
                mo.heldStages.push_back(st);
            }
        }
    }
    if (options.reference) {
        auto ref = ReferenceTrainer::create(mo, tokens);
        if (!ref) {
            return ref.error();
        }
        impl->reference.emplace(std::move(ref.value()));
    } else {
        if (!schedule->onePerRank()) {
            impl->rankOfStage = schedule->rankOfStage;
        }
        MemoryTracker::setRanks(impl->rankOfStage); // process-wide: an earlier run's map goes
        auto model = PipelineModel::create(mo, tokens);
        if (!model) {
            return model.error();
        }
        impl->model.emplace(std::move(model.value()));
        impl->model->setTargetsFromTokens(options.transport != nullptr);
        if (resumed) {
            if (Status loaded = impl->model->loadCheckpoint(*options.outDir / kCheckpointDirName, resumed->step);
                !loaded) {
                return loaded.error();
            }
        }
        MemoryTracker::resetPeaks();
    }
    ScheduleParams firstProbe = toScheduleParams(first);
    firstProbe.batches = 1;
    auto firstSchedule = makeSchedule(firstProbe);
    if (!firstSchedule) {
        return firstSchedule.error();
    }
    impl->summary.schedule = options.reference ? "reference" : config.schedule.name;
    impl->summary.reference = options.reference;
    impl->summary.targetLoss = config.training.targetLoss;
    profiler::TraceMeta meta;
    meta.stages = options.reference ? 1 : config.pipeline.stages;
    meta.clock =
        (options.executor == ExecutorKind::Threaded || options.transport) && !options.reference ? "wall" : "virtual";
    const std::string firstName = options.reference ? "reference" : first.schedule.name;
    meta.title = firstName + " p=" + std::to_string(first.pipeline.stages)
        + " m=" + std::to_string(first.pipeline.microbatches) + " a=" + std::to_string(shownWindowOf(first));
    meta.attributes["schedule"] = firstName;
    meta.attributes["weights"] = std::string(weightPolicyName(firstSchedule->weights));
    if (!options.reference && !firstSchedule->onePerRank()) {
        // As the simulator writes them (traceMetaFor): the analysis keeps a slot per (micro-batch,
        // chunk) and the timeline shades each chunk. Without them an opened interleaved run mixed
        // its rank's chunks (one chunk's forward version overwrote the other's: wrong lag).
        const profiler::TraceMeta simulated = traceMetaFor(*firstSchedule);
        meta.stagesPerLane = simulated.stagesPerLane;
        meta.attributes["placement"] = simulated.attributes.at("placement");
    }
    impl->store.setMeta(meta);
    impl->meta = meta;
    if (!options.reference) { // the reference trainer's one lane per batch has no pipeline to analyse
        impl->analysis = analysisOptionsFor(*firstSchedule);
    }
    if (options.outDir) {
        auto writer = resumed ? RunDirWriter::resume(*options.outDir, resumed->step)
                              : RunDirWriter::create(*options.outDir, RunDirOptions{options.overwrite, false});
        if (!writer) {
            return writer.error();
        }
        impl->writer.emplace(std::move(writer.value()));
        if (Status s = impl->writer->writeConfig(config); !s) {
            return s.error();
        }
    }
    impl->setUpCheckpoints();
    if (resumed) {
        if (Status s = impl->restoreSession(*resumed); !s) {
            return s.error();
        }
    }
    return RunSession(std::move(impl));
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
    // With checkpoints every N batches, each pass also ends at the next multiple of N (asynchronous
    // schedules drain there: the checkpoint needs nothing in flight).
    const int target = d.stepsDone + count;
    Status s = ok();
    while (s && d.stepsDone < target && !d.stopAtBoundary && !d.targetReached) {
        s = d.applyPending();
        if (d.stopAtBoundary) {
            d.cut = true; // applyPending() cleared the cut the stop request set
        }
        if (s) {
            int chunk = target - d.stepsDone;
            if (d.checkpointEvery > 0) {
                chunk = std::min(chunk, d.checkpointEvery - d.stepsDone % d.checkpointEvery);
            }
            s = d.reference ? d.runReference(chunk) : d.runPipeline(chunk);
        }
        if (s && d.checkpointEvery > 0 && d.stepsDone % d.checkpointEvery == 0) {
            s = d.writeCheckpoint();
        }
    }
    if (s && d.stopAtBoundary && d.stepsDone < target) { // a stop request, honoured at a batch boundary
        s = d.writeCheckpoint();
        if (s) {
            s = makeError(ErrorCode::Cancelled,
                "run stopped after global batch " + std::to_string(d.stepsDone) + "; checkpoint written",
                "step " + std::to_string(d.stepsDone));
        }
    }
    if (!s) {
        d.broken = true;
        const std::lock_guard<std::mutex> lock(d.mutex);
        // One human line (issue 14): a multi-line message's first line; the CLI puts the whole
        // text in RUN_DIR/error.log.
        Error brief = s.error();
        brief.message = brief.message.substr(0, brief.message.find('\n'));
        d.summary.error = brief.describe();
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
    {
        const std::lock_guard<std::mutex> lock(d.mutex);
        for (const auto& [key, value] : d.meta.attributes) {
            if (key.rfind("cupti", 0) == 0) {
                d.summary.kernelProfiling[key] = value; // dropped records and overhead, in summary.json too
            }
        }
    }
    std::shared_ptr<const profiler::TraceSnapshot> trace = d.store.snapshot();
    const RunSummary s = d.closeSummary(*trace);
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

std::vector<AppliedChange> RunSession::appliedChanges() const
{
    const std::lock_guard<std::mutex> lock(m_impl->mutex);
    return m_impl->changes;
}

void RunSession::requestStop()
{
    if (m_impl->stopsAtBoundary) {
        m_impl->stopAtBoundary = true;
        m_impl->cut = true; // the serial driver ends the schedule at the end of the batch in progress
        return;
    }
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
