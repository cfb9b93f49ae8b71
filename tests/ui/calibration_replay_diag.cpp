// Where a calibrated prediction's error comes from (issue 13): trains tst_trusted_tuner's two
// runs (tiny GPT, 4 stages, m = 4, 3 steps: PACI b = 2, then 1F1B b = 4, in this one process),
// then replays each run's schedule through the scheduler core with durations taken from its
// trace in several ways, and prints the makespans beside the calibrated prediction's. Replaying
// each action's exact duration reproduces the measured makespan, so the difference between two
// replays is what the duration policy between them leaves out. Not a test (real timings).
//
//   calibration_replay_diag OUT_DIR [--warm-up]     (--warm-up: RunSession::warmUp first)
//   chrt -f 50 calibration_replay_diag ...          (no preemption by other processes)
#include "runtime/plan/rundir/run_loader.h"
#include "runtime/plan/schedule/catalogue.h"
#include "runtime/plan/sim/scheduler_core.h"
#include "runtime/train/exec/run_session.h"
#include "tests/support/tiny_run_config.h"
#include "ui/tuning/calibration.h"
#include "ui/tuning/what_if.h"

#include <cstdio>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <tuple>
#include <vector>

using namespace bs;
using namespace bs::runtime;

namespace {

using Duration = std::function<TimeNs(const Action&)>;

class ReplayExecutor final : public ActionExecutor
{
public:
    explicit ReplayExecutor(Duration duration)
        : m_duration(std::move(duration))
    {}
    Result<ActionOutcome> perform(const Action& action) override
    {
        ActionOutcome out;
        out.duration = m_duration(action);
        return out;
    }
    TimeNs commTime(int, int, std::int64_t) const override { return 0; } // the serial driver has none

private:
    Duration m_duration;
};

double replayMs(const Schedule& schedule, Duration duration)
{
    ReplayExecutor executor(std::move(duration));
    profiler::TraceStore store;
    auto stats = drive(schedule, executor, store);
    return stats ? static_cast<double>(stats->makespan) / 1e6 : -1.0;
}

struct Run
{
    std::string schedule;
    int microBatchSize = 0;
};

} // namespace

int main(int argc, char** argv)
{
    if (argc < 2) {
        std::fprintf(stderr, "usage: calibration_replay_diag OUT_DIR [--warm-up]\n");
        return 2;
    }
    const std::string root = argv[1];
    const std::vector<Run> runs = {{"paci", 2}, {"1f1b", 4}};
    if (argc > 2 && std::string(argv[2]) == "--warm-up") {
        if (Status warm = RunSession::warmUp(test::tinyRunConfig("paci", 1)); !warm) {
            std::fprintf(stderr, "warm-up: %s\n", warm.error().describe().c_str());
            return 1;
        }
    }
    for (const Run& run : runs) {
        auto config = test::tinyRunConfig(run.schedule, 3);
        config.pipeline.microBatchSize = run.microBatchSize;
        config.profiling.trace = true;
        SessionOptions options;
        options.outDir = root + "/" + run.schedule;
        options.overwrite = true;
        auto session = RunSession::create(config, options);
        Status ran = session ? session->run() : Status(session.error());
        if (!ran) {
            std::fprintf(stderr, "%s: %s\n", run.schedule.c_str(), ran.error().describe().c_str());
            return 1;
        }
    }
    std::vector<CostSample> samples;
    for (const Run& run : runs) {
        auto loaded = loadRun(root + "/" + run.schedule);
        auto schedule = loaded ? makeSchedule(toScheduleParams(loaded->config)) : Result<Schedule>(loaded.error());
        if (!schedule || !loaded->trace) {
            std::fprintf(stderr, "%s: cannot read the run back\n", run.schedule.c_str());
            return 1;
        }
        // Per (stage, kind): every duration by micro-batch, and the earliest one kept apart.
        using Key = std::pair<int, int>;
        std::map<std::tuple<int, int, int>, TimeNs> exact;
        struct First
        {
            TimeNs start = 0;
            TimeNs duration = 0;
            int microbatch = 0;
        };
        std::map<Key, First> first;
        std::map<Key, std::pair<TimeNs, int>> all, rest; // sum, count
        loaded->trace->forEach([&](const profiler::TraceEvent& e) {
            if (!e.isCompute() || e.kind == profiler::EventKind::Marker) {
                return;
            }
            const Key key{e.stage, static_cast<int>(e.kind)};
            exact[{e.stage, static_cast<int>(e.kind), e.microbatch}] = e.duration();
            all[key].first += e.duration();
            ++all[key].second;
            if (!first.count(key) || e.start < first[key].start) {
                first[key] = {e.start, e.duration(), e.microbatch};
            }
        });
        for (const auto& [key, sum] : all) {
            rest[key] = {sum.first - first[key].duration, sum.second - 1};
        }
        const auto keyOf = [](const Action& a) { return Key{a.stage, static_cast<int>(toEventKind(a.kind))}; };
        const auto exactOf = [&](const Action& a) { return exact.at({a.stage, keyOf(a).second, a.microbatch}); };
        const auto meanOf = [&](const Action& a) { return all.at(keyOf(a)).first / all.at(keyOf(a)).second; };
        const auto steadyOf = [&](const Action& a) {
            const auto& r = rest.at(keyOf(a));
            return r.second > 0 ? r.first / r.second : exactOf(a);
        };
        const auto isFirst = [&](const Action& a) { return first.at(keyOf(a)).microbatch == a.microbatch; };
        const Schedule& s = *schedule;
        std::printf("== %s b=%d (ms)\n", run.schedule.c_str(), run.microBatchSize);
        std::printf("  exact durations:                  %.3f\n", replayMs(s, exactOf));
        std::printf("  per-(stage, kind) means:          %.3f\n", replayMs(s, meanOf));
        std::printf("  means, updates exact:             %.3f\n",
            replayMs(s, [&](const Action& a) { return a.kind == ActionKind::Update ? exactOf(a) : meanOf(a); }));
        std::printf("  means but the firsts, firsts exact: %.3f\n",
            replayMs(s, [&](const Action& a) { return isFirst(a) ? exactOf(a) : steadyOf(a); }));
        std::printf("  means but the firsts, alone:      %.3f\n", replayMs(s, steadyOf));
        std::printf("  stage 0's first forward %.1f us, its steady mean %.1f us\n",
            static_cast<double>(first.at({0, 0}).duration) / 1e3,
            static_cast<double>(rest.at({0, 0}).first) / std::max(1, rest.at({0, 0}).second) / 1e3);
        if (auto sample = ui::costSampleFromTrace(
                *loaded->trace, s.stages(), run.microBatchSize, run.schedule, run.schedule)) {
            samples.push_back(std::move(sample).value());
        }
    }
    auto calibration = ui::calibrationFromSamples(samples);
    if (!calibration) {
        std::fprintf(stderr, "calibration: %s\n", calibration.error().describe().c_str());
        return 1;
    }
    for (const Run& run : runs) {
        auto loaded = loadRun(root + "/" + run.schedule);
        ui::WhatIfConfig own;
        own.run = loaded->config;
        own.baseline.clear();
        own.batches = loaded->config.training.steps;
        own.calibration = *calibration;
        auto predicted = ui::predictRun(own, run.schedule);
        std::printf("%s calibrated prediction: %.3f ms (%s)\n", run.schedule.c_str(),
            predicted ? static_cast<double>(predicted->result.report.makespan) / 1e6 : -1.0,
            (*calibration)->sourceFor(run.schedule).c_str());
    }
    // What the start-up costs add to a slider move: the default 8-stage settings, calibrated.
    auto steady = std::make_shared<ui::Calibration>(**calibration);
    for (auto* fit : {&steady->pooled, &steady->bySchedule["paci"], &steady->bySchedule["1f1b"]}) {
        for (auto& stage : fit->stages) {
            stage.cold = {};
        }
    }
    const ui::CalibrationPtr withStartUp = *calibration;
    for (const ui::CalibrationPtr& c : {withStartUp, ui::CalibrationPtr(steady), withStartUp, ui::CalibrationPtr(steady)}) {
        ui::WhatIfConfig slider;
        slider.calibration = c;
        constexpr int kCalls = 200;
        double ms = 0;
        for (int i = 0; i < kCalls; ++i) {
            auto prediction = ui::predict(slider);
            ms += prediction ? (*prediction)->computeMs : 0.0;
        }
        std::printf("predict() of the default settings, %s start-up costs: %.3f ms (mean of %d)\n",
            c == *calibration ? "with" : "without", ms / kCalls, kCalls);
    }
    return 0;
}
