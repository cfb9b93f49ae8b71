#include "app/cli/simulate_command.h"

#include "app/cli/cli_common.h"
#include "app/cli/goodput_runs.h"
#include "app/cli/measured_compare.h"
#include "app/cli/option_checks.h"
#include "app/cli/table.h"
#include "base/atomic_file.h"
#include "profiler/analysis/report_json.h"
#include "profiler/io/chrome_trace.h"
#include "runtime/plan/config/config_validate.h"
#include "runtime/plan/schedule/catalogue.h"
#include "runtime/plan/schedule/csv_io.h"
#include "runtime/plan/sim/cost_model.h"
#include "runtime/plan/sim/tuner.h"

#include <algorithm>
#include <filesystem>
#include <iostream>
#include <memory>
#include <optional>
#include <sstream>

namespace bs::cli {

namespace {

using profiler::BubbleCause;

bool takesWindow(const std::string& schedule)
{
    const runtime::ScheduleInfo* info = runtime::findSchedule(schedule);
    return info && info->takesAccumWindow();
}

nlohmann::json simulationJson(const runtime::SimulationResult& r, int microBatchSize, bool bytesKnown)
{
    const auto& p = r.schedule.params;
    nlohmann::json out = profiler::toJson(r.report);
    out["schedule"] = p.name;
    out["stages"] = p.stages;
    out["microbatches"] = p.microbatches;
    out["accum"] = p.accum;
    out["batches"] = p.batches;
    out["extra_depth"] = p.extraDepth;
    out["stages_per_rank"] = r.schedule.stagesPerRank();
    out["placement"] = std::string(runtime::placementName(r.schedule.placement));
    out["micro_batch_size"] = microBatchSize;
    out["time_unit"] = "s";
    out["memory_unit"] = bytesKnown ? "bytes" : "micro-batches";
    out["throughput_samples_per_s"] = r.throughputSamplesPerSecond;
    out["weights"] = std::string(runtime::weightPolicyName(r.schedule.weights));
    return out;
}

double ms(TimeNs t) { return toMillis(t); }

std::string causeMs(const profiler::StageReport& s, BubbleCause c)
{
    return fixed(ms(s.idleByCause[static_cast<std::size_t>(c)]), 3);
}

void printSimulation(const runtime::SimulationResult& r, bool bytesKnown, std::ostream& out)
{
    const auto& p = r.schedule.params;
    const auto& rep = r.report;
    const std::string shape = r.schedule.onePerRank()
                                  ? std::to_string(p.stages) + " stages"
                                  : std::to_string(r.schedule.ranks()) + " ranks holding " + std::to_string(r.schedule.stages())
                                        + " stages";
    out << p.name << ": " << shape << ", " << p.microbatches << " micro-batches per batch, " << p.batches
        << (p.batches == 1 ? " batch" : " batches") << (takesWindow(p.name) ? ", a = " + std::to_string(p.accum) : "")
        << (p.extraDepth > 0 ? ", extra depth " + std::to_string(p.extraDepth) : "")
        << (r.schedule.onePerRank() ? ""
                                    : ", " + std::to_string(r.schedule.stagesPerRank()) + " stages per rank ("
                                          + std::string(runtime::placementName(r.schedule.placement)) + ")")
        << "\n";
    out << "makespan " << fixed(ms(rep.makespan), 3) << " ms   bubble " << percent(rep.bubbleFraction)
        << "   steady bubble " << percent(rep.steadyBubbleFraction) << "   per-stage-span bubble "
        << percent(rep.spanBubbleFraction) << "   utilization " << percent(rep.utilization)
        << "   throughput " << fixed(r.throughputSamplesPerSecond, 1) << " samples/s\n\n";
    Table table({r.schedule.onePerRank() ? "stage" : "rank", "busy ms", "idle ms", "bubble", "warm-up", "drain", "flush", "dep", "comm", "in-flight",
                 "memory", "max lag", "lag histogram", "versions"});
    for (const auto& s : rep.perStage) {
        std::string hist;
        for (const auto& [lag, count] : s.versionLagHistogram) {
            hist += (hist.empty() ? "" : " ") + std::to_string(lag) + ":" + std::to_string(count);
        }
        table.addRow({std::to_string(s.stage), fixed(ms(s.busy), 3), fixed(ms(s.idle), 3), percent(s.bubbleFraction),
                      causeMs(s, BubbleCause::WarmUp), causeMs(s, BubbleCause::Drain), causeMs(s, BubbleCause::Flush),
                      causeMs(s, BubbleCause::Dependency), causeMs(s, BubbleCause::Comm),
                      std::to_string(s.peakInflight), bytesOrUnits(s.peakMemoryBytes, bytesKnown),
                      std::to_string(s.maxVersionLag), hist, std::to_string(s.peakWeightVersions)});
    }
    out << table.render();
    out << "(idle by cause in ms; memory is "
        << (bytesKnown ? (r.schedule.onePerRank() ? "peak bytes per stage" : "peak bytes per rank, all its stages")
                       : (r.schedule.onePerRank() ? "peak in-flight micro-batches"
                                                  : "peak in-flight stage-micro-batches per rank, all its stages"))
        << ")\n";
}

// PyTorch's form at `path` (compute actions only: PyTorch's _load_csv has no optimizer steps, its
// step() is one global batch); a schedule whose updates are its own (per stage, inside the stream)
// also gets Bubblescope's form with the U cells beside it, `STEM.bubblescope.csv`, which
// --schedule-csv reads back exactly. Flush schedules need no second file: reading the first puts
// their one update per stage per batch back.
Status writePyTorchCsv(const runtime::Schedule& schedule, const std::string& path)
{
    runtime::Schedule computeOnly = schedule;
    for (auto& program : computeOnly.programs) {
        std::erase_if(program, [](const runtime::Action& a) { return a.kind == runtime::ActionKind::Update; });
    }
    if (Status s = runtime::writeScheduleCsv(computeOnly, path); !s) {
        return s;
    }
    if (!runtime::isAsynchronousSchedule(schedule.params.name)) {
        return ok();
    }
    const std::filesystem::path p(path);
    const std::string full = (p.parent_path() / (p.stem().string() + ".bubblescope.csv")).string();
    if (Status s = runtime::writeScheduleCsv(schedule, full); !s) {
        return s;
    }
    std::cerr << "wrote " << path << " (PyTorch's form, no updates) and " << full
              << " (with this schedule's per-stage updates)\n";
    return ok();
}

struct SimulateCommand
{
    SimulationOptions sim;
    bool json = false;
    std::string csvOut;
    std::string csvIn;
    std::string traceOut;
    std::vector<std::string> calibrateFrom; ///< --calibrate: the runs `tune --calibrate` fits
    int importedMicroBatchSize = 1;

    Status writeCsv(const runtime::Schedule& schedule) const { return writePyTorchCsv(schedule, csvOut); }

    int run() const
    {
        // A CSV without --schedule is its own schedule, checked against the bounds it reaches
        // itself; before, it was read as the default 1f1b's (a GPipe CSV failed "3 micro-batches
        // in flight, bound is 2", and zb-v / dualpipev CSVs were reported under "1f1b").
        const bool named = sim.scheduleOption && sim.scheduleOption->count() > 0;
        const std::string name =
            csvIn.empty() || named ? sim.schedule : std::filesystem::path(csvIn).filename().string();
        auto request = sim.request(name);
        if (!request) {
            return reportError(request.error());
        }
        std::string calibration;
        if (!calibrateFrom.empty()) { // the same fit as tune's, at this b (tune_command.cpp)
            auto fit = calibrationFromRuns(calibrateFrom, sim.schedule, importedMicroBatchSize);
            if (!fit) {
                return reportError(fit.error());
            }
            request->costs = runtime::withFittedTimes(std::move(request->costs), *fit, request->microBatchSize);
            calibration = fit->describe();
        }
        // The steady state's throughput, as tune ranks by (a generated schedule only).
        std::optional<runtime::SteadyThroughput> steady;
        if (csvIn.empty()) {
            if (auto st = runtime::steadyThroughput(*request)) {
                steady = *st;
            }
        }
        Result<runtime::SimulationResult> result = makeError(ErrorCode::Internal, "not run");
        if (!csvIn.empty()) {
            auto schedule = runtime::readScheduleCsv(csvIn, request->schedule);
            if (!schedule && named && schedule.error().message.find(", bound is ") != std::string::npos) {
                Error e = schedule.error();
                e.message += "; the file was checked against --schedule " + sim.schedule
                    + "'s bounds: name the schedule it holds, or leave --schedule out to take the file's own";
                return reportError(e);
            }
            if (schedule) {
                result = runtime::simulateSchedule(std::move(*schedule), request->costs, request->microBatchSize);
            }
            const Error* bad = !schedule ? &schedule.error() : !result ? &result.error() : nullptr;
            if (bad && bad->code == ErrorCode::Deadlock) { // the file's order cannot run: bad input (exit 2)
                Error e = *bad;
                e.code = ErrorCode::InvalidArgument;
                if (e.message.find(csvIn) == std::string::npos) {
                    e.message = "schedule CSV '" + csvIn + "': " + e.message;
                }
                return reportError(e);
            }
            if (!schedule) {
                return reportError(schedule.error());
            }
        } else {
            request->figuresOnly = csvOut.empty() && traceOut.empty(); // a long run's figures from its steady state
            result = runtime::simulate(*request);
        }
        if (!result) {
            return reportError(result.error());
        }
        if (!csvOut.empty()) {
            if (auto status = writeCsv(result->schedule); !status) {
                return reportError(status.error());
            }
        }
        if (!traceOut.empty()) {
            if (auto status = writeTrace(*result); !status) {
                return reportError(status.error());
            }
        }
        auto profile = runtime::deviceProfile(sim.deviceProfile);
        if (json) {
            nlohmann::json out = simulationJson(*result, sim.microBatchSize, request->costs.bytesKnown);
            if (!sim.model.empty() && profile) { // costs came from the profile: say where its numbers come from
                out["device_profile"] = {
                    {"name", profile->name}, {"source", calibration.empty() ? profile->source : calibration}};
            }
            if (steady) {
                out["steady_reached"] = steady->reached;
                out["steady_throughput_samples_per_s"] = steady->samplesPerSecond;
            }
            if (!calibration.empty()) {
                out["calibration"] = calibration;
            }
            std::cout << out.dump(2) << '\n';
        } else {
            printSimulation(*result, request->costs.bytesKnown, std::cout);
            if (steady) {
                std::cout << (steady->reached ? "steady throughput " + fixed(steady->samplesPerSecond, 1) + " samples/s"
                                              : "no steady state within " + std::to_string(steady->batchesSimulated)
                            + " batches (" + fixed(steady->samplesPerSecond, 1) + " samples/s over them)")
                          << '\n';
            }
            if (!calibration.empty()) {
                std::cout << calibration << '\n';
            }
            if (!sim.model.empty() && profile) {
                std::cout << "device profile " << profile->name << ": " << profile->source << '\n';
            }
        }
        return kExitOk;
    }

    Status writeTrace(const runtime::SimulationResult& result) const
    {
        return writeFileAtomic(traceOut,
                                        [&](std::ostream& out) { return profiler::writeChromeTrace(out, *result.trace); });
    }
};

struct CompareCommand
{
    SimulationOptions sim;
    std::vector<std::string> schedules;
    bool json = false;
    bool train = false;
    std::optional<double> targetLoss;
    std::string configPath;
    std::optional<std::string> device, dtype; ///< --train: where and in which precision
    std::string outDir; ///< --train: each schedule's run directory under it
    std::vector<std::string> runDirs; ///< --runs: run directories to compare as measured
    TrainComparison runTraining;

    template<typename T>
    static std::optional<T> given(const CLI::App& app, const char* option, T value)
    {
        return app.count(option) > 0 ? std::optional<T>(value) : std::nullopt;
    }

    int trainForReal(const CLI::App& app, std::vector<std::string> names) const
    {
        if (!runTraining) {
            return reportError(makeError(ErrorCode::Unavailable, "compare --train needs the LibTorch runtime",
                                         "this bubblescope-cli was built with BS_WITH_TORCH=OFF"));
        }
        TrainArgs args; // options not given keep the config file's (or the demo's) values
        args.stages = given(app, "--stages", sim.stages);
        args.microbatches = given(app, "--microbatches", sim.microbatches);
        args.accum = given(app, "--accum", sim.accum);
        args.microBatchSize = given(app, "--micro-batch-size", sim.microBatchSize);
        args.steps = given(app, "--batches", sim.batches);
        args.model = given(app, "--model", sim.model);
        // --stages-per-rank shapes the loop-placement rows (as the simulated compare reads it).
        args.stagesPerRank = given(app, "--stages-per-rank", sim.stagesPerRank);
        args.outDir = outDir;
        args.recompute = sim.recompute;
        args.targetLoss = targetLoss;
        args.configPath = configPath;
        args.device = device;
        args.dtype = dtype;
        args.json = json;
        return runTraining(args, names);
    }

    int run(const CLI::App& app) const
    {
        if (!runDirs.empty()) {
            return compareRunDirs(runDirs, json);
        }
        std::vector<std::string> names = schedules;
        if (names.empty()) {
            for (const auto& info : runtime::scheduleCatalogue()) {
                // Training them all takes long: by default the baseline and the windowed schedule.
                // The multi-stage ones have their own micro-batch rules: name them with -s.
                if (info.multiStage()) {
                    continue;
                }
                if (!train || info.defaultBaseline || info.takesAccumWindow()) {
                    names.push_back(info.name);
                }
            }
        }
        if (train) {
            return trainForReal(app, std::move(names));
        }
        std::vector<runtime::SimulationResult> results;
        bool bytesKnown = false;
        for (const auto& name : names) {
            auto request = sim.request(name, /*comparing=*/true);
            if (!request) {
                return reportError(request.error());
            }
            bytesKnown = request->costs.bytesKnown;
            request->figuresOnly = true; // a table of figures: a long run's from its steady state
            auto result = runtime::simulate(*request);
            if (!result) {
                return reportError(result.error());
            }
            results.push_back(std::move(*result));
        }
        if (json) {
            nlohmann::json out = nlohmann::json::array();
            for (const auto& r : results) {
                out.push_back(simulationJson(r, sim.microBatchSize, bytesKnown));
            }
            std::cout << out.dump(2) << '\n';
            return kExitOk;
        }
        Table table({"schedule", "m", "a", "makespan ms", "bubble", "steady bubble", "samples/s", "speed-up",
                     "peak in-flight", "peak memory", "max lag", "versions"});
        const double base = results.front().throughputSamplesPerSecond;
        for (const auto& r : results) {
            int inflight = 0, lag = 0, versions = 0;
            long long memory = 0;
            for (const auto& s : r.report.perStage) {
                inflight = std::max(inflight, s.peakInflight);
                lag = std::max(lag, s.maxVersionLag);
                versions = std::max(versions, s.peakWeightVersions);
                memory = std::max<long long>(memory, s.peakMemoryBytes);
            }
            const auto& p = r.schedule.params;
            table.addRow({p.name, std::to_string(p.microbatches), std::to_string(p.accum), fixed(ms(r.report.makespan), 3),
                          percent(r.report.bubbleFraction), percent(r.report.steadyBubbleFraction),
                          fixed(r.throughputSamplesPerSecond, 1),
                          fixed(base > 0 ? r.throughputSamplesPerSecond / base : 0.0, 3) + "x", std::to_string(inflight),
                          bytesOrUnits(memory, bytesKnown), std::to_string(lag), std::to_string(versions)});
        }
        std::cout << table.render() << "(speed-up: throughput relative to " << results.front().schedule.params.name
                  << "; in-flight, memory, lag and versions: worst stage)\n";
        return kExitOk;
    }
};

} // namespace

void addSimulationCommands(CLI::App& app, int& exitCode, TrainComparison train)
{
    auto* list = app.add_subcommand("schedules", "List the schedules, one line each");
    list->callback([&exitCode] {
        for (const auto& info : runtime::scheduleCatalogue()) {
            std::printf("%-16s %s %s\n", info.name.c_str(), info.asynchronous ? "async" : "sync ", info.summary.c_str());
        }
        exitCode = kExitOk;
    });

    auto simulate = std::make_shared<SimulateCommand>();
    auto* sim = app.add_subcommand("simulate", "Simulate one schedule with a cost model (virtual time)");
    simulate->sim.addTo(*sim, /*withSchedule=*/true);
    sim->add_flag("--json", simulate->json, "Print one JSON object instead of a table");
    sim->add_option("--csv", simulate->csvOut,
        "Write the schedule as PyTorch's per-rank CSV (_load_csv reads it; one step() per batch: use "
        "--batches 1 for PyTorch); asynchronous schedules also get STEM.bubblescope.csv with their updates");
    sim->add_option("--schedule-csv", simulate->csvIn, "Simulate the schedule in this CSV instead of generating one");
    sim->add_option("--trace", simulate->traceOut, "Write a Chrome/Perfetto trace JSON");
    sim->add_option("--calibrate", simulate->calibrateFrom,
           "Run directories or rank-trace folders whose measured action times replace the device profile's: "
           "the calibration `tune --calibrate` uses")
        ->delimiter(',')
        ->check(CLI::ExistingDirectory);
    sim->add_option("--calibrate-micro-batch-size", simulate->importedMicroBatchSize,
           "Micro-batch size the imported job of --calibrate ran with")
        ->check(integerIn(1, 1 << 20));
    sim->callback([simulate, &exitCode] { exitCode = simulate->run(); });

    auto compare = std::make_shared<CompareCommand>();
    auto* cmp = app.add_subcommand("compare", "Simulate several schedules on the same settings, side by side");
    compare->sim.addTo(*cmp, /*withSchedule=*/false);
    cmp->add_option("-s,--schedules", compare->schedules, "Schedules to compare (default: all)")->delimiter(',');
    cmp->add_flag("--json", compare->json, "Print a JSON array instead of a table");
    cmp->add_flag("--train", compare->train,
                  "Train each schedule for real (LibTorch; --batches global batches) and compare time to target loss "
                  "(default schedules: 1f1b, paci)");
    cmp->add_option("--target-loss", compare->targetLoss, "With --train: validation loss that counts as reached")
        ->check(finiteIn(0, 1e6));
    cmp->add_option("--config", compare->configPath, "With --train: base run config (TOML); default the demo");
    cmp->add_option("--device", compare->device, "With --train: cpu, cuda or cuda:N (device.name)");
    cmp->add_option("--dtype", compare->dtype, "With --train: fp32 or bf16 (model.dtype)");
    cmp->add_option("--out", compare->outDir, "With --train: write each schedule's run directory to DIR/<schedule>");
    cmp->add_option("--runs", compare->runDirs,
           "Compare these run directories as measured (bubble from their traces; lag and weight drift from "
           "their tensors, per model stage and chunk) instead of simulating")
        ->delimiter(',')
        ->excludes("--train")
        ->excludes("--schedules");
    compare->runTraining = std::move(train);
    cmp->callback([compare, cmp, &exitCode] { exitCode = compare->run(*cmp); });
}

} // namespace bs::cli
