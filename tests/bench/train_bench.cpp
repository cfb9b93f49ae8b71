// Training benchmarks (not part of ctest; numbers go to docs/BENCHMARKS.md):
//   train_bench overhead [steps] [rounds]   serial pipeline executor (1f1b through drive()) vs the
//                                           plain reference trainer on identical work, interleaved in one process
//   train_bench memory [steps]              measured peak bytes per stage for every schedule
//   train_bench ttt [steps] [target]        demo config (tiny GPT, p=8, a=m=8, b=4): virtual time for
//                                           1f1b and paci to reach a validation loss
//   train_bench ttt-measured [steps] [text file] [synthetic|text] [vocab]
//                                           deep preset, 1f1b vs paci, flops vs measured partition, on the
//                                           synthetic stream and English text (train_bench_ttt.cpp)
//   train_bench ttt-replay [steps]          deep preset: cost-model replay of 1f1b and paci with one
//                                           paci run's per-stage mean F/B/U (the figure without noise)
#include "runtime/plan/config/config_presets.h"
#include "runtime/plan/sim/simulator.h"
#include "runtime/train/exec/run_session.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

namespace {

using bs::runtime::RunConfig;
using bs::runtime::RunSession;
using bs::runtime::RunSummary;

struct StageTimes
{
    double busyS = 0, forwardMs = 0, backwardMs = 0, updateMs = 0;
    int forwards = 0, backwards = 0, updates = 0;
};
std::vector<StageTimes> g_lastStageTimes;

RunSummary train(const RunConfig& config, bool reference)
{
    bs::runtime::SessionOptions o;
    o.reference = reference;
    auto session = RunSession::create(config, o);
    if (!session) {
        std::fprintf(stderr, "error: %s\n", session.error().describe().c_str());
        std::exit(1);
    }
    if (auto s = session->run(); !s) {
        std::fprintf(stderr, "error: %s\n", s.error().describe().c_str());
        std::exit(1);
    }
    g_lastStageTimes.assign(static_cast<std::size_t>(config.pipeline.stages), StageTimes{});
    session->trace()->forEach([](const bs::profiler::TraceEvent& e) {
        if (!e.isCompute() || e.stage >= g_lastStageTimes.size()) {
            return;
        }
        StageTimes& t = g_lastStageTimes[e.stage];
        const double ms = static_cast<double>(e.duration()) / 1e6;
        t.busyS += ms / 1e3;
        if (e.kind == bs::profiler::EventKind::Forward) {
            t.forwardMs += ms;
            t.forwards += 1;
        } else if (e.kind == bs::profiler::EventKind::Backward) {
            t.backwardMs += ms;
            t.backwards += 1;
        } else if (e.kind == bs::profiler::EventKind::Update) {
            t.updateMs += ms;
            t.updates += 1;
        }
    });
    return session->summary();
}

// Reference and 1f1b sessions advance one global batch at a time, alternately (and alternating
// which goes first), so the machine's speed changes hit both equally; the sums give the ratio.
int overhead(int steps, int rounds)
{
    RunConfig c = bs::runtime::demoConfig();
    c.schedule.name = "1f1b";
    c.pipeline.accum = 0;
    c.training.steps = steps * rounds;
    c.training.evalInterval = 0;
    c.device.intraOpThreads = 1;
    c.profiling.trace = false;
    auto make = [&](bool reference) {
        bs::runtime::SessionOptions o;
        o.reference = reference;
        auto s = RunSession::create(c, o);
        if (!s) {
            std::fprintf(stderr, "error: %s\n", s.error().describe().c_str());
            std::exit(1);
        }
        return std::move(s.value());
    };
    RunSession ref = make(true);
    RunSession pipe = make(false);
    using Clock = std::chrono::steady_clock;
    Clock::duration refTime{}, pipeTime{};
    auto step = [](RunSession& s, Clock::duration& total) {
        const auto t0 = Clock::now();
        if (auto st = s.runSteps(1); !st) {
            std::fprintf(stderr, "error: %s\n", st.error().describe().c_str());
            std::exit(1);
        }
        total += Clock::now() - t0;
    };
    for (int i = 0; i < steps * rounds; ++i) {
        if (i % 2 == 0) {
            step(ref, refTime);
            step(pipe, pipeTime);
        } else {
            step(pipe, pipeTime);
            step(ref, refTime);
        }
    }
    (void)pipe.finish();
    (void)ref.finish();
    const RunSummary ps = pipe.summary();
    const RunSummary rs = ref.summary();
    const double r = std::chrono::duration<double>(refTime).count();
    const double p = std::chrono::duration<double>(pipeTime).count();
    double maxRel = 0.0;
    for (std::size_t i = 0; i < ps.losses.size(); ++i) {
        maxRel = std::max(maxRel, std::abs(ps.losses[i] - rs.losses[i]) / std::abs(rs.losses[i]));
    }
    std::printf("%d global batches each (p=%d, m=%d, b=%d, tiny GPT, 1 intra-op thread), interleaved\n", steps * rounds,
        c.pipeline.stages, c.pipeline.microbatches, c.pipeline.microBatchSize);
    std::printf("reference %.3f s, 1f1b serial pipeline %.3f s (of which inside actions %.3f s)\n", r, p, ps.busyTimeS);
    std::printf("pipeline / reference wall ratio %.4f; scheduler-core + executor share of pipeline time %.4f\n", p / r,
        (p - ps.busyTimeS) / p);
    std::printf("max relative loss difference %.2e over %zu steps\n", maxRel, ps.losses.size());
    return 0;
}

int timeToTarget(int steps, double target)
{
    RunConfig c = bs::runtime::demoConfig();
    c.training.steps = steps;
    c.training.targetLoss = target;
    c.training.evalInterval = 5;
    c.device.intraOpThreads = 1; // one stage runs at a time; OpenMP spinning on shared cores adds noise
    c.profiling.trace = false;
    std::vector<RunSummary> results;
    std::vector<double> busy; // sum of measured action durations: the same work in both runs
    for (const std::string name : {"1f1b", "paci"}) {
        c.schedule.name = name;
        c.pipeline.accum = name == "paci" ? c.pipeline.microbatches : 0;
        results.push_back(train(c, false));
        const RunSummary& s = results.back();
        busy.push_back(s.busyTimeS);
        std::printf("%-5s steps %d  final train %.4f  val %.4f  virtual %.2f s  wall %.2f s  bubble %.3f  "
                    "target %.2f reached at step %s, virtual %s s\n",
            name.c_str(), s.steps, *s.finalTrainLoss, s.valLoss.value_or(-1), s.virtualTimeS, s.wallTimeS,
            s.bubbleFraction, target, s.stepToTarget ? std::to_string(*s.stepToTarget).c_str() : "-",
            s.timeToTargetS ? std::to_string(*s.timeToTargetS).c_str() : "-");
        std::printf("      val curve:");
        for (std::size_t i = 0; i < s.valLosses.size(); ++i) {
            std::printf(" %d:%.3f@%.2fs", s.valSteps[i], s.valLosses[i], s.valVirtualTimesS[i]);
        }
        std::printf("\n      per stage busy s / mean F ms / mean B ms:");
        for (const StageTimes& t : g_lastStageTimes) {
            std::printf(" %.2f/%.2f/%.2f", t.busyS, t.forwardMs / std::max(1, t.forwards),
                t.backwardMs / std::max(1, t.backwards));
        }
        std::printf("\n      max lag per stage:");
        for (const auto& st : s.stages) {
            std::printf(" %d", st.maxLag);
        }
        std::printf("\n");
    }
    if (results[0].timeToTargetS && results[1].timeToTargetS) {
        std::printf("virtual time-to-target 1f1b / paci = %.3f (theory (m+p-1)/m = %.3f)\n",
            *results[0].timeToTargetS / *results[1].timeToTargetS,
            static_cast<double>(c.pipeline.microbatches + c.pipeline.stages - 1) / c.pipeline.microbatches);
    }
    // The same two schedules under the cost-model executor with paci's measured per-stage means:
    // what the stage imbalance alone allows, without timing noise.
    bs::runtime::CostModel costs;
    for (const StageTimes& t : g_lastStageTimes) {
        bs::runtime::StageCost sc;
        sc.forward = static_cast<bs::TimeNs>(1e6 * t.forwardMs / std::max(1, t.forwards));
        sc.backwardInput = static_cast<bs::TimeNs>(1e6 * t.backwardMs / std::max(1, t.backwards));
        sc.update = static_cast<bs::TimeNs>(1e6 * t.updateMs / std::max(1, t.updates));
        costs.stages.push_back(sc);
    }
    double simulated[2] = {0, 0};
    int idx = 0;
    for (const std::string name : {"1f1b", "paci"}) {
        c.schedule.name = name;
        c.pipeline.accum = name == "paci" ? c.pipeline.microbatches : 0;
        auto sim = bs::runtime::simulate({bs::runtime::toScheduleParams(c), costs, c.pipeline.microBatchSize});
        simulated[idx++] = sim ? static_cast<double>(sim->trace->endTime()) : 0.0;
    }
    std::printf("cost-model replay with paci's measured per-stage means: 1f1b / paci makespan = %.3f\n",
        simulated[1] > 0 ? simulated[0] / simulated[1] : 0.0);
    const double perStep = (results[0].virtualTimeS / results[0].steps) / (results[1].virtualTimeS / results[1].steps);
    // Both runs do identical compute; a busy-time ratio != 1 is the machine's speed changing
    // between the runs (shared cores). Dividing it out gives the schedule's own effect.
    const double speed = busy[0] / busy[1];
    std::printf("virtual time per step 1f1b / paci = %.3f raw, %.3f normalised by busy time (busy ratio %.3f)\n",
        perStep, perStep / speed, speed);
    if (results[0].timeToTargetS && results[1].timeToTargetS) {
        std::printf("virtual time-to-target 1f1b / paci normalised by busy time = %.3f\n",
            *results[0].timeToTargetS / *results[1].timeToTargetS / speed);
    }
    return 0;
}

int memory(int steps)
{
    RunConfig c = bs::runtime::demoConfig();
    c.training.steps = steps;
    c.training.evalInterval = 0;
    c.profiling.trace = false;
    std::printf("peak measured bytes per stage (demo shape, p=%d, m=%d, b=%d, %d steps)\n", c.pipeline.stages,
        c.pipeline.microbatches, c.pipeline.microBatchSize, steps);
    for (const std::string name : {"gpipe", "1f1b", "zb-h1", "zb-h2", "paci", "async-1f1b", "2bw", "pipedream"}) {
        c.schedule.name = name;
        c.pipeline.accum = name == "paci" ? c.pipeline.microbatches : 0;
        const RunSummary s = train(c, false);
        std::printf("%-10s", name.c_str());
        for (const auto& st : s.stages) {
            std::printf(" %8.1fK", static_cast<double>(st.peakBytes) / 1024.0);
        }
        std::printf("   stash(s0) %.1fK  max lag(s0) %d\n", static_cast<double>(s.stages[0].peakStashBytes) / 1024.0,
            s.stages[0].maxLag);
    }
    return 0;
}

} // namespace

int measuredTimeToTarget(int argc, char** argv); // train_bench_ttt.cpp
int replayTimeToTarget(int argc, char** argv);

int main(int argc, char** argv)
{
    const std::string mode = argc > 1 ? argv[1] : "overhead";
    if (mode == "overhead") {
        return overhead(argc > 2 ? std::atoi(argv[2]) : 10, argc > 3 ? std::atoi(argv[3]) : 3);
    }
    if (mode == "ttt") {
        return timeToTarget(argc > 2 ? std::atoi(argv[2]) : 200, argc > 3 ? std::atof(argv[3]) : 1.9);
    }
    if (mode == "ttt-measured") {
        return measuredTimeToTarget(argc, argv);
    }
    if (mode == "ttt-replay") {
        return replayTimeToTarget(argc, argv);
    }
    if (mode == "memory") {
        return memory(argc > 2 ? std::atoi(argv[2]) : 2);
    }
    std::fprintf(stderr,
        "usage: train_bench overhead [steps] [rounds] | ttt [steps] [target] | memory [steps] | ttt-measured [steps] "
        "[text file] [synthetic|text] [vocab] | ttt-replay [steps]\n");
    return 2;
}
