#include "app/cli/train_command.h"

#include "app/cli/cli_common.h"
#include "app/cli/option_checks.h"
#include "app/cli/partition_option.h"
#include "app/cli/stop_signals.h"
#include "base/atomic_file.h"
#include "runtime/plan/common/stage_drift.h"
#include "runtime/plan/config/config_presets.h"
#include "runtime/plan/config/config_toml.h"
#include "runtime/plan/config/config_validate.h"
#include "runtime/plan/rundir/checkpoint_state.h"
#include "runtime/plan/schedule/catalogue.h"
#include "runtime/plan/sim/run_preflight.h"
#include "runtime/train/dist/dist_train.h"
#include "runtime/train/exec/run_session.h"

#include <nlohmann/json.hpp>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <thread>

namespace bs::cli {

namespace {

int printError(const Error& error) { return reportError(error); }

/// summary.json says which signal stopped the run, as launch's does (`"stopped": "SIGTERM"`): the
/// session wrote it with the figures of the batches it finished, knowing nothing of signals.
void markStopped(const std::string& outDir, const std::string& signal)
{
    const std::filesystem::path path = std::filesystem::path(outDir) / "summary.json";
    std::ifstream in(path);
    nlohmann::json summary = nlohmann::json::parse(in, nullptr, /*allow_exceptions=*/false);
    if (outDir.empty() || !summary.is_object()) {
        return; // no run directory, or the stop came before the summary: nothing to mark
    }
    summary["stopped"] = signal;
    if (Status written = writeFileAtomic(path, summary.dump(1) + "\n"); !written) {
        std::cerr << "warning: " << written.error().describe() << '\n';
    }
}

/// A run a signal stopped is no failure: it says so, where its files are, and exits 128 + signal.
/// Another error shows its first line; a LibTorch error's stack trace (31 frames for an
/// allocation failure) goes to error.log in the run directory instead of the terminal.
int stoppedOrError(const Error& error, const std::string& outDir)
{
    if (error.code != ErrorCode::Cancelled || !stopRequested()) {
        const std::size_t newline = error.message.find('\n');
        if (newline == std::string::npos) {
            return printError(error);
        }
        Error brief = error;
        brief.message = error.message.substr(0, newline);
        if (!outDir.empty()) {
            const std::filesystem::path log = std::filesystem::path(outDir) / "error.log";
            if (writeFileAtomic(log, error.describe() + "\n")) {
                brief.message += " (the full error, with its stack trace: " + log.string() + ")";
            }
        }
        return printError(brief);
    }
    const std::string signal = stopSignal() == SIGTERM ? "SIGTERM" : "SIGINT";
    std::cerr << "stopped by " << signal << (outDir.empty() ? std::string() : "; what ran is kept in " + outDir)
              << '\n';
    markStopped(outDir, signal);
    if (!outDir.empty() && error.message.find("checkpoint written") != std::string::npos) {
        std::cerr << error.message << "; continue with: bubblescope-cli train --resume " << outDir << '\n';
    }
    return stoppedExitCode();
}

// --resume DIR: the checkpoint's settings; only how long, how often to checkpoint and the thread
// count may be given (anything else would make the continued run another run).
Result<runtime::RunConfig> resumeConfig(const TrainArgs& a)
{
    const bool other = !a.configPath.empty() || a.schedule || a.stages || a.stagesPerRank || a.microbatches || a.accum
        || a.microBatchSize || a.evalInterval || a.model || a.seed || a.data || a.targetLoss || a.device || a.dtype
        || a.reference || a.recompute || a.lrScaling || a.partition || !a.outDir.empty() || a.overwrite || a.distributed
        || a.stopAtTarget;
    if (other) {
        return makeError(ErrorCode::InvalidArgument,
                         "--resume continues the run with its checkpoint's settings; only --steps, --checkpoint-every, "
                         "--threads, --executor and --json may be given with it",
                         "--resume");
    }
    auto state = runtime::readCheckpointState(std::filesystem::path(a.resumeDir) / runtime::kCheckpointDirName);
    if (!state) {
        return state.error();
    }
    runtime::RunConfig c = state->config;
    if (a.steps) {
        c.training.steps = *a.steps;
    }
    if (a.checkpointEvery) {
        c.training.checkpointEvery = *a.checkpointEvery;
    }
    if (a.threads) {
        c.device.intraOpThreads = *a.threads;
    }
    return c;
}

Result<runtime::RunConfig> buildConfig(const TrainArgs& a)
{
    if (!a.resumeDir.empty()) {
        return resumeConfig(a);
    }
    runtime::RunConfig c = runtime::demoConfig();
    if (!a.configPath.empty()) {
        auto loaded = runtime::loadRunConfig(a.configPath);
        if (!loaded) {
            return loaded.error();
        }
        c = *loaded;
    }
    if (a.model) {
        auto shape = gptPreset(*a.model);
        if (!shape) {
            return shape.error();
        }
        c.model.preset = *a.model;
        c.model.shape = *shape;
    }
    if (a.schedule) {
        c.schedule.name = *a.schedule;
    }
    if (a.stages) {
        c.pipeline.stages = *a.stages;
    }
    if (a.stagesPerRank) {
        c.pipeline.stagesPerRank = *a.stagesPerRank;
    }
    if (a.microbatches) {
        c.pipeline.microbatches = *a.microbatches;
        c.pipeline.accum = 0; // paci: a = m unless --accum says otherwise
    }
    if (a.accum) {
        c.pipeline.accum = *a.accum;
    }
    const runtime::ScheduleInfo* info = runtime::findSchedule(c.schedule.name);
    const bool window = info && info->takesAccumWindow();
    if (a.accum && *a.accum != 0 && info && !window) { // simulate refuses it too
        const std::string windowed = runtime::scheduleNamesWhere([](const runtime::ScheduleInfo& i) { return i.takesAccumWindow(); });
        return makeError(ErrorCode::InvalidArgument,
            "accum: --accum " + std::to_string(*a.accum) + " applies only to the " + windowed + " schedules, not "
                + c.schedule.name,
            "allowed: --accum 0 or --schedule one of " + windowed);
    }
    if (info && !window) {
        c.pipeline.accum = 0; // only a windowed schedule (paci) has its own window
    }
    if (a.microBatchSize) {
        c.pipeline.microBatchSize = *a.microBatchSize;
    }
    if (a.steps) {
        c.training.steps = *a.steps;
    }
    if (a.seed) {
        c.training.seed = *a.seed;
        c.data.seed = *a.seed;
    }
    if (a.data) {
        c.data.spec = *a.data;
    }
    if (a.threads) {
        c.device.intraOpThreads = *a.threads;
    }
    if (a.evalInterval) {
        c.training.evalInterval = *a.evalInterval;
    }
    if (a.targetLoss) {
        c.training.targetLoss = *a.targetLoss;
    }
    if (a.device) {
        c.device.name = *a.device;
    }
    if (a.dtype) {
        c.model.dtype = *a.dtype;
    }
    if (a.checkpointEvery) {
        c.training.checkpointEvery = *a.checkpointEvery;
    }
    if (a.recompute) {
        c.model.recompute = true;
    }
    if (a.lrScaling) {
        c.optimizer.lrScaling = *a.lrScaling;
    }
    if (a.partition) {
        if (*a.partition == "flops" || *a.partition == "measured") {
            c.pipeline.partition = *a.partition;
            c.pipeline.partitionUnits.clear();
        } else { // counts: partitionSpec() checked the syntax, validate() the sum and the stages
            c.pipeline.partition = "explicit";
            c.pipeline.partitionUnits = partitionCounts(*a.partition);
        }
        c.pipeline.layersPerStage.clear(); // the partition says which layers each stage holds
    }
    return c;
}

/// Pre-flight (runtime/plan/sim/run_preflight.h): the simulator's memory estimate against host RAM or
/// each GPU's memory, before anything is allocated.
Status preflight(const runtime::RunConfig& c, const TrainArgs& a)
{
    runtime::PreflightScope scope;
    scope.reference = a.reference;
    return runtime::preflightRun(c, runtime::probeMemoryCapacity(), scope);
}

std::string optionalText(const std::optional<double>& v, int precision = 4)
{
    if (!v) {
        return "-";
    }
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.*f", precision, *v);
    return buf;
}

void printProgress(const std::string& name, const runtime::BatchMetrics& b, int steps)
{
    std::fprintf(stderr, "\r[%s] step %d/%d  loss %.4f  val %s  virtual %.2fs  %.0f tok/s (virtual)   ", name.c_str(),
                 b.step + 1, steps, b.trainLoss, optionalText(b.valLoss).c_str(), b.virtualTimeS, b.tokensPerSVirtual);
    std::fflush(stderr);
}

// Runs the session on a worker thread; this thread shows progress and forwards Ctrl-C.
Result<runtime::RunSummary> trainOne(const runtime::RunConfig& config, const TrainArgs& a, bool progress)
{
    if (a.executor != "serial" && a.executor != "threaded") {
        return makeError(ErrorCode::InvalidArgument, "unknown executor '" + a.executor + "' (serial or threaded)",
                         "--executor");
    }
    runtime::SessionOptions options;
    options.reference = a.reference;
    options.overwrite = a.overwrite;
    options.stopAtTarget = a.stopAtTarget;
    options.resume = !a.resumeDir.empty();
    options.executor = a.executor == "threaded" ? runtime::ExecutorKind::Threaded : runtime::ExecutorKind::Serial;
    if (!a.outDir.empty() || options.resume) {
        options.outDir = options.resume ? a.resumeDir : a.outDir;
    }
    auto session = runtime::RunSession::create(config, options);
    if (!session) {
        return session.error();
    }
    for (const std::string& note : session->summary().notes) {
        std::cerr << "note: " << note << '\n'; // once per run (e.g. why CUPTI kernel lanes are off)
    }
    const std::string name = a.reference ? "reference" : config.schedule.name;
    Status result = ok();
    std::atomic<bool> done{false};
    std::thread worker([&] {
        result = session->run();
        done = true;
    });
    while (!done) {
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
        if (stopRequested()) { // SIGINT or SIGTERM: stop after the current action (with checkpoints: the
                               // current batch), keep the files
            session->requestStop();
        }
        for (const runtime::BatchMetrics& b : session->pollMetrics()) {
            if (progress) {
                printProgress(name, b, config.training.steps);
            }
        }
    }
    worker.join();
    if (progress) {
        std::fputc('\n', stderr);
    }
    if (!result) {
        return result.error();
    }
    return session->summary();
}

void printSummary(const runtime::RunSummary& s)
{
    std::cout << "schedule         " << s.schedule << '\n'
              << "device           " << s.device << ", " << s.dtype << '\n'
              << "steps            " << s.steps << '\n'
              << "final train loss " << optionalText(s.finalTrainLoss) << '\n'
              << "val loss         " << optionalText(s.valLoss) << '\n'
              << "virtual time     " << optionalText(s.virtualTimeS, 3) << " s\n"
              << "wall time        " << optionalText(s.wallTimeS, 3) << " s\n"
              << "tokens/s         " << optionalText(s.tokensPerSVirtual, 0) << " (virtual), "
              << optionalText(s.tokensPerSWall, 0) << " (wall)\n"
              << "bubble fraction  " << optionalText(s.bubbleFraction, 3) << '\n'
              << "time to target   " << optionalText(s.timeToTargetS, 3) << " s (virtual)\n";
    // One row per model stage; where ranks hold several (per_rank), with the rank and chunk.
    std::vector<int> rankOfStage(s.stages.size(), -1);
    for (const runtime::RankMemory& rank : s.ranks) {
        for (int stage : rank.stages) {
            if (stage >= 0 && static_cast<std::size_t>(stage) < rankOfStage.size()) {
                rankOfStage[static_cast<std::size_t>(stage)] = rank.rank;
            }
        }
    }
    const runtime::RunDrift drift = runtime::runDrift(s.stages, s.ranks.empty() ? std::vector<int>{} : rankOfStage);
    std::cout << (s.ranks.empty() ? "stage" : "stage  rank  chunk") << "  peak MiB  max lag  mean drift   max drift\n";
    for (std::size_t i = 0; i < s.stages.size(); ++i) {
        const runtime::StageMetrics& st = s.stages[i];
        if (!s.ranks.empty()) {
            std::printf("%5d  %4d  %5d", st.stage, drift.stages[i].rank, drift.stages[i].chunk);
        } else {
            std::printf("%5d", st.stage);
        }
        std::printf("  %8.2f  %7d  %10.2e  %10.2e\n", static_cast<double>(st.peakBytes) / (1024.0 * 1024.0), st.maxLag,
                    st.meanDrift, st.maxDrift);
    }
}

} // namespace

void addTrainOptions(CLI::App& sub, TrainArgs& a)
{
    sub.add_option("--config", a.configPath, "Run configuration (TOML); default: the embedded demo");
    // The list comes from the catalogue, so a new schedule appears here without an edit.
    sub.add_option("--schedule", a.schedule,
        runtime::scheduleNamesWhere([](const runtime::ScheduleInfo&) { return true; })
            + " (`bubblescope-cli schedules` describes them)");
    sub.add_option("--stages", a.stages, "Pipeline stages p (ranks)");
    sub.add_option("--stages-per-rank", a.stagesPerRank,
        "v: model chunks per rank for interleaved and V schedules (0 = the schedule's own: 2)");
    sub.add_option("--microbatches", a.microbatches, "Micro-batches per global batch m");
    sub.add_option("--accum", a.accum, "paci: backward passes per local update a (0 = m)");
    sub.add_option("--micro-batch-size", a.microBatchSize, "Sequences per micro-batch b");
    sub.add_option("--model", a.model, "GPT preset: tiny, small, deep, gpt2-medium");
    sub.add_option("--steps", a.steps, "Global batches to train");
    sub.add_option("--seed", a.seed, "Seed of the weights and the data");
    sub.add_option("--data", a.data, "synthetic, text:PATH or bin:PATH");
    sub.add_option("--threads", a.threads, "LibTorch intra-op threads");
    sub.add_option("--eval-interval", a.evalInterval, "Global batches between validation passes (0 = never)");
    sub.add_option("--target-loss", a.targetLoss, "Validation loss that counts as reached")
        ->check(finiteIn(0, 1e6));
    sub.add_flag("--stop-at-target", a.stopAtTarget,
        "End the run at the global-batch boundary after the validation loss first reaches the target "
        "loss (needs --target-loss or training.target_loss and validation passes; the serial executor "
        "or --reference); --steps stays the most it trains. summary.json: time_to_target_s, steps");
    sub.add_option("--device", a.device,
                   "cpu, cuda (every GPU, stages in contiguous blocks) or cuda:N; overrides device.name "
                   "(e.g. the gpt2-medium preset's cuda: --device cpu trains it on the CPU, slowly)");
    sub.add_option("--dtype", a.dtype, "fp32 or bf16 (mixed precision, fp32 master weights); default bf16 on CUDA, fp32 on the CPU");
    sub.add_option("--backend", a.backend,
                   "--distributed: nccl or gloo (default nccl on CUDA, gloo on the CPU)");
    sub.add_flag("--reference", a.reference, "Plain non-pipelined training with gradient accumulation");
    sub.add_option("--out", a.outDir, "Run directory (config.toml, metrics.jsonl, trace.json, summary.json)");
    sub.add_flag("--overwrite", a.overwrite, "Replace the files of an existing run directory");
    sub.add_flag("--json", a.json, "Print the summary as one JSON object");
    sub.add_option("--executor", a.executor,
                   "serial: one thread, virtual timeline; threaded: one thread per stage, wall-clock timeline "
                   "(--threads intra-op threads per stage, default 1)")
        ->check(CLI::IsMember({"serial", "threaded"}));
    sub.add_flag("--distributed", a.distributed,
                 "Run as one rank of a multi-process run (one rank per stage; RANK, WORLD_SIZE, LOCAL_RANK, "
                 "MASTER_ADDR, MASTER_PORT as torchrun sets them; Gloo on the CPU)");
    sub.add_option("--checkpoint-every", a.checkpointEvery,
                   "Checkpoint every N global batches into the run directory's checkpoint/ (and at a clean stop: "
                   "SIGINT/SIGTERM then end the batch in progress); 0 = none")
        ->check(CLI::Range(0, 1000000000));
    sub.add_flag("--recompute", a.recompute,
                 "Activation recompute (model.recompute): forwards keep only each stage's input, the backward "
                 "runs the forward again (under paci possibly on newer weights: counted per stage)");
    sub.add_option("--lr-scaling", a.lrScaling,
           "How lr and the schedule's step counts follow the global batch m*b against "
           "optimizer.base_global_batch: sqrt (lr x sqrt(G/G0), the PACI authors' rule), linear (x G/G0) or "
           "none")
        ->check(oneOf({"sqrt", "linear", "none"}, "optimizer.lr_scaling"));
    sub.add_option("--partition", a.partition,
           "Stage split (pipeline.partition): flops (blocks by FLOPs), measured (time every layer unit on the "
           "device first, then the memory-bounded optimum) or layer units per stage, e.g. 3,3,3,2")
        ->check(trainPartitionSpec());
    sub.add_option("--resume", a.resumeDir,
                   "Continue the run in DIR from its checkpoint (metrics appended, trace continued); with --steps N "
                   "to train to N batches in all");
    sub.add_option("--timeout", a.timeoutS,
                   "--distributed: seconds any wait for another rank may take before the run fails naming it")
        ->check(finiteIn(0.001, kMaxSeconds, "s"));
}

void addTrainCommand(CLI::App& app, int& exitCode)
{
    auto args = std::make_shared<TrainArgs>();
    CLI::App* sub = app.add_subcommand("train", "Train the built-in GPT under a schedule, for real (LibTorch)");
    addTrainOptions(*sub, *args);
    sub->callback([args, &exitCode] { exitCode = runTrain(*args); });
}

namespace {

// One rank of `train --distributed`. A failure ends the process at once (std::_Exit): the c10d
// group may still wait on a dead peer, and no destructor may keep this rank alive.
int runDistributed(const TrainArgs& args)
{
    if (args.stopAtTarget) { // a rank runs no validation pass (SessionOptions::transport)
        return printError(makeError(ErrorCode::InvalidArgument,
            "--stop-at-target needs validation passes, which a multi-process rank does not run", "--stop-at-target"));
    }
    auto env = runtime::readDistEnv();
    if (!env) {
        return printError(env.error()); // before any work
    }
    auto config = buildConfig(args);
    if (!config) {
        return printError(config.error());
    }
    if (Status s = runtime::checkDistEnv(*env, *config); !s) {
        return printError(s.error());
    }
    if (auto backend = runtime::distBackend(args.backend, *config); !backend) {
        return printError(backend.error()); // before any rendezvous
    }
    runtime::PreflightScope scope; // this rank's stage against its GPU, or the host's RAM
    scope.distributed = true;
    scope.localRank = env->localRank;
    scope.ranksOnThisHost = env->worldSize;
    if (const char* local = std::getenv("LOCAL_WORLD_SIZE"); local && std::atoi(local) > 0) {
        scope.ranksOnThisHost = std::atoi(local);
    }
    if (Status fits = runtime::preflightRun(*config, runtime::probeMemoryCapacity(), scope); !fits) {
        return printError(fits.error()); // before the rendezvous: the others name this rank
    }
    runtime::DistRunOptions options;
    if (!args.outDir.empty()) {
        options.outDir = args.outDir;
    }
    options.overwrite = args.overwrite;
    options.backend = args.backend;
    options.timeout = std::chrono::milliseconds(static_cast<std::int64_t>(args.timeoutS * 1000.0));
    auto summary = runtime::trainDistributed(*config, *env, options);
    if (!summary) {
        std::cerr << "rank " << env->rank << ": ";
        const int code = printError(summary.error());
        std::cerr.flush();
        std::fflush(nullptr);
        std::_Exit(code);
    }
    if (args.json) {
        std::cout << summary->dump(2) << '\n';
    } else {
        std::cout << "rank " << env->rank << " of " << env->worldSize << ": " << summary->value("steps", 0)
                  << " steps, final train loss "
                  << (summary->contains("final_train_loss") && (*summary)["final_train_loss"].is_number()
                          ? std::to_string((*summary)["final_train_loss"].get<double>())
                          : std::string("-"))
                  << '\n';
    }
    return kExitOk;
}

} // namespace

int runTrain(const TrainArgs& args)
{
    if (args.distributed) {
        return runDistributed(args); // a rank takes the default action; launch forwards signals
    }
    if (!args.backend.empty()) {
        return printError(makeError(ErrorCode::InvalidArgument, "--backend is for --distributed runs (one process per stage)",
                                    "--backend"));
    }
    const StopScope stoppable; // from here on SIGINT/SIGTERM stop the run cleanly
    auto config = buildConfig(args);
    if (!config) {
        return printError(config.error());
    }
    if (Status fits = preflight(*config, args); !fits) {
        return printError(fits.error()); // before anything is allocated
    }
    auto summary = trainOne(*config, args, isatty(STDERR_FILENO) != 0 && !args.json);
    if (!summary) {
        return stoppedOrError(summary.error(), args.resumeDir.empty() ? args.outDir : args.resumeDir);
    }
    if (args.json) {
        std::cout << nlohmann::json(*summary).dump(2) << '\n';
    } else {
        printSummary(*summary);
    }
    return kExitOk;
}

int runTrainComparison(const TrainArgs& args, const std::vector<std::string>& schedules)
{
    std::vector<runtime::RunSummary> results;
    const StopScope stoppable;
    for (const std::string& name : schedules) {
        TrainArgs one = args;
        one.schedule = name;
        // compare's --accum is the window of the schedules that take one (as the simulated compare
        // reads it); the flush baselines beside them train without it. `train` alone still refuses it.
        const runtime::ScheduleInfo* info = runtime::findSchedule(name);
        if (info && !info->takesAccumWindow()) {
            one.accum.reset();
        }
        if (info && info->placement != runtime::Placement::Loop) {
            one.stagesPerRank.reset(); // and --stages-per-rank the loop-placement ones (v = 1 / V's 2 elsewhere)
        }
        one.outDir = args.outDir.empty() ? "" : args.outDir + "/" + name;
        auto config = buildConfig(one);
        if (!config) {
            return printError(config.error());
        }
        if (results.empty()) { // the first run must not pay the process's start-up costs alone
            if (Status warm = runtime::RunSession::warmUp(*config); !warm) {
                return printError(warm.error());
            }
        }
        if (stopRequested()) {
            return stoppedOrError(makeError(ErrorCode::Cancelled, "run stopped"), one.outDir);
        }
        auto summary = trainOne(*config, one, isatty(STDERR_FILENO) != 0 && !args.json);
        if (!summary) {
            return stoppedOrError(summary.error(), one.outDir);
        }
        results.push_back(*summary);
    }
    if (args.json) {
        std::cout << nlohmann::json(results).dump(2) << '\n';
        return kExitOk;
    }
    std::optional<double> slowest;
    for (const auto& r : results) {
        if (r.timeToTargetS && (!slowest || *r.timeToTargetS > *slowest)) {
            slowest = r.timeToTargetS;
        }
    }
    std::printf("%-16s %10s %10s %12s %14s %8s %8s %7s %10s %10s\n", "schedule", "train loss", "val loss", "virtual s",
                "to target s", "speedup", "bubble", "max lag", "mean drift", "max drift");
    for (const auto& r : results) {
        const std::optional<double> speedup
            = slowest && r.timeToTargetS ? std::optional<double>(*slowest / *r.timeToTargetS) : std::nullopt;
        // Per model stage (chunk) as measured; the rank each stage is on does not matter for the
        // run's figures (compare --runs DIR shows them per stage, rank and chunk).
        const runtime::RunDrift drift = runtime::runDrift(r.stages, {});
        std::printf("%-16s %10s %10s %12.3f %14s %8s %8.3f %7d %10.2e %10.2e\n", r.schedule.c_str(),
                    optionalText(r.finalTrainLoss).c_str(), optionalText(r.valLoss).c_str(), r.virtualTimeS,
                    optionalText(r.timeToTargetS, 3).c_str(), optionalText(speedup, 2).c_str(), r.bubbleFraction,
                    drift.maxLag, drift.meanDrift, drift.maxDrift);
    }
    if (!args.outDir.empty()) {
        std::printf("(per model stage and chunk: bubblescope-cli compare --runs %s/<schedule>,...)\n", args.outDir.c_str());
    }
    return kExitOk;
}

} // namespace bs::cli
