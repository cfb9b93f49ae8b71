// train_bench ttt-measured [steps] [text file] [synthetic|text] [vocab]: PACI vs 1F1B-flush time to
// target, measured (docs/BENCHMARKS.md).
//
// The deep preset (40 blocks over p = 8, a = m = 8, b = 4) on two token streams (the synthetic
// one and real English text), each under two partitions: "flops" (blocks by FLOPs) and the
// measured one (every layer unit profiled on this CPU, the slowest stage minimised). Each run is
// one session in this process (an asynchronous schedule cannot be advanced batch by batch without
// draining it), and reports batches to several target validation losses (deterministic) and
// virtual time (the serial driver's timeline from measured action durations). Both schedules do
// identical work, so their busy-time ratio is the machine's speed change between the runs; the
// busy-normalised ratios divide it out.
#include "runtime/plan/config/config_presets.h"
#include "runtime/plan/partition/partition_choice.h"
#include "runtime/plan/sim/simulator.h"
#include "runtime/train/exec/run_session.h"
#include "runtime/train/exec/unit_profile.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <numeric>
#include <optional>
#include <string>
#include <vector>

namespace {

using bs::runtime::RunConfig;
using bs::runtime::RunSession;
using bs::runtime::RunSummary;

[[noreturn]] void die(const bs::Error& e)
{
    std::fprintf(stderr, "error: %s\n", e.describe().c_str());
    std::exit(1);
}

struct Arm
{
    std::string schedule;
    std::string partition;
    RunConfig config;
    RunSummary summary;
    std::vector<double> stageBusyS;
};

double stageImbalance(const std::vector<double>& busy)
{
    const double mean = std::accumulate(busy.begin(), busy.end(), 0.0) / static_cast<double>(busy.size());
    return mean > 0 ? *std::max_element(busy.begin(), busy.end()) / mean : 1.0;
}

/// First validation point at or below `target`: (batches trained, virtual seconds), if any.
std::optional<std::pair<int, double>> reach(const RunSummary& s, double target)
{
    for (std::size_t i = 0; i < s.valLosses.size(); ++i) {
        if (s.valLosses[i] <= target) {
            return std::make_pair(s.valSteps[i] + 1, s.valVirtualTimesS[i]);
        }
    }
    return std::nullopt;
}

void runStream(RunConfig base, const std::string& label, const std::string& spec, const std::vector<double>& targets,
    int steps, const std::vector<int>& measured, const std::vector<int>& flopsUnits)
{
    base.data.spec = spec;
    base.training.steps = steps;
    base.training.targetLoss.reset();
    base.training.evalInterval = 4;
    base.training.evalBatches = 8;
    base.profiling.trace = true; // per-stage busy time: the measured stage balance
    // A partition moves layers between stages, not the arithmetic of a synchronous schedule (1f1b's
    // losses are bit-identical, checked below; paci's lag per layer follows its stage); the measured
    // split runs only when it differs.
    std::vector<std::string> partitions{"flops"};
    if (measured != flopsUnits) {
        partitions.push_back("measured");
    }
    std::vector<Arm> arms;
    for (const std::string& partition : partitions) {
        for (const std::string schedule : {"1f1b", "paci"}) {
            Arm a;
            a.schedule = schedule;
            a.partition = partition;
            a.config = base;
            a.config.schedule.name = schedule;
            a.config.pipeline.accum = schedule == "paci" ? base.pipeline.microbatches : 0;
            a.config.pipeline.partition = partition == "flops" ? "flops" : "explicit"; // one measurement for both schedules
            a.config.pipeline.partitionUnits = partition == "flops" ? std::vector<int>{} : measured;
            auto s = RunSession::create(a.config, {});
            if (!s) {
                die(s.error());
            }
            if (auto st = s->run(); !st) {
                die(st.error());
            }
            a.summary = s->summary();
            a.stageBusyS.assign(static_cast<std::size_t>(base.pipeline.stages), 0.0);
            s->trace()->forEach([&a](const bs::profiler::TraceEvent& e) {
                if (e.isCompute() && e.stage < a.stageBusyS.size()) {
                    a.stageBusyS[e.stage] += static_cast<double>(e.duration()) / 1e9;
                }
            });
            arms.push_back(std::move(a));
        }
    }
    std::printf("\n== %s (%s), %d batches, deep preset (vocab %d) p=8 a=m=8 b=4, validation every 4 batches ==\n",
        label.c_str(), spec.c_str(), steps, base.model.shape.vocab);
    std::printf("%-8s %-5s %11s %10s %8s %10s %8s  units per stage\n", "split", "sched", "virt s/bat", "busy s/bat",
        "bubble", "stage max", "val end");
    for (const Arm& a : arms) {
        const RunSummary& s = a.summary;
        std::printf("%-8s %-5s %11.4f %10.4f %8.3f %10.3f %8.4f  ", a.partition.c_str(), a.schedule.c_str(),
            s.virtualTimeS / s.steps, s.busyTimeS / s.steps, s.bubbleFraction, stageImbalance(a.stageBusyS),
            s.valLoss.value_or(-1));
        for (int u : s.partition ? s.partition->unitsPerStage : std::vector<int>{}) {
            std::printf("%d ", u);
        }
        std::printf("\n");
    }
    for (std::size_t i = 0; i + 1 < arms.size(); i += 2) {
        const RunSummary& f = arms[i].summary; // 1f1b
        const RunSummary& p = arms[i + 1].summary; // paci
        const double perBatch = (f.virtualTimeS / f.steps) / (p.virtualTimeS / p.steps);
        const double busy = (f.busyTimeS / f.steps) / (p.busyTimeS / p.steps); // same work: != 1 is machine speed
        std::printf("%s split, 1f1b / paci: virtual time per batch %.3f raw, %.3f busy-normalised (busy ratio %.3f)\n",
            arms[i].partition.c_str(), perBatch, perBatch / busy, busy);
        // Targets: the fixed ones, then 25 / 50 / 75 / 90 % of the way from the first validation
        // loss to the higher of the two last ones (reached by both runs whatever the curve).
        std::vector<double> all = targets;
        if (!f.valLosses.empty() && !p.valLosses.empty()) {
            const double start = std::max(f.valLosses.front(), p.valLosses.front());
            const double end = std::max(f.valLosses.back(), p.valLosses.back());
            for (double frac : {0.25, 0.5, 0.75, 0.9}) {
                all.push_back(start - frac * (start - end));
            }
        }
        for (double target : all) {
            const auto rf = reach(f, target);
            const auto rp = reach(p, target);
            std::printf("  target %.2f: batches 1f1b %s paci %s", target, rf ? std::to_string(rf->first).c_str() : "-",
                rp ? std::to_string(rp->first).c_str() : "-");
            if (rf && rp) {
                std::printf("  (ratio %.3f); time to target 1f1b / paci %.3f raw, %.3f busy-normalised",
                    static_cast<double>(rf->first) / rp->first, rf->second / rp->second, rf->second / rp->second / busy);
            }
            std::printf("\n");
        }
    }
    for (const Arm& a : arms) {
        std::printf("val curve %s %s:", a.partition.c_str(), a.schedule.c_str());
        for (std::size_t i = 0; i < a.summary.valLosses.size(); ++i) {
            std::printf(" %d:%.3f", a.summary.valSteps[i] + 1, a.summary.valLosses[i]);
        }
        std::printf("\n");
    }
    // A synchronous schedule computes the same thing on any split; under PACI a layer's version lag
    // depends on the stage holding it, so another split is another (equally valid) trajectory.
    for (std::size_t i = 2; i < arms.size(); ++i) {
        std::printf("losses bit-identical across the partitions, %s: %s\n", arms[i].schedule.c_str(),
            arms[i].summary.losses == arms[i - 2].summary.losses ? "yes" : "no");
    }
}

} // namespace

// train_bench ttt-replay [steps]: what the stage times alone allow. A short paci run of the deep
// preset gives every stage's mean F, B and U; the cost-model executor replays 1f1b and paci over
// 100 batches with exactly those means. The ratio is the figure without timing noise: the gap
// between it and the measured per-batch ratio is what varying action durations cost.
int replayTimeToTarget(int argc, char** argv)
{
    const int steps = argc > 2 ? std::atoi(argv[2]) : 12;
    RunConfig c = bs::runtime::configPreset("deep").value();
    c.training.steps = steps;
    c.training.evalInterval = 0;
    c.profiling.trace = true;
    c.pipeline.partition = "flops";
    auto session = RunSession::create(c, {});
    if (!session) {
        die(session.error());
    }
    if (auto st = session->run(); !st) {
        die(st.error());
    }
    const auto p = static_cast<std::size_t>(c.pipeline.stages);
    std::vector<double> f(p, 0), b(p, 0), u(p, 0), nf(p, 0), nb(p, 0), nu(p, 0);
    session->trace()->forEach([&](const bs::profiler::TraceEvent& e) {
        if (!e.isCompute() || e.stage >= p) {
            return;
        }
        const double ns = static_cast<double>(e.duration());
        if (e.kind == bs::profiler::EventKind::Forward) {
            f[e.stage] += ns, nf[e.stage] += 1;
        } else if (e.kind == bs::profiler::EventKind::Backward) {
            b[e.stage] += ns, nb[e.stage] += 1;
        } else if (e.kind == bs::profiler::EventKind::Update) {
            u[e.stage] += ns, nu[e.stage] += 1;
        }
    });
    bs::runtime::CostModel costs;
    std::printf("per-stage mean F / B / U ms:");
    for (std::size_t s = 0; s < p; ++s) {
        bs::runtime::StageCost sc;
        sc.forward = static_cast<bs::TimeNs>(f[s] / std::max(1.0, nf[s]));
        sc.backwardInput = static_cast<bs::TimeNs>(b[s] / std::max(1.0, nb[s]));
        sc.update = static_cast<bs::TimeNs>(u[s] / std::max(1.0, nu[s]));
        costs.stages.push_back(sc);
        std::printf(" %.2f/%.2f/%.2f", static_cast<double>(sc.forward) / 1e6, static_cast<double>(sc.backwardInput) / 1e6,
            static_cast<double>(sc.update) / 1e6);
    }
    std::printf("\n");
    double makespan[2] = {0, 0};
    int i = 0;
    for (const std::string name : {"1f1b", "paci"}) {
        c.schedule.name = name;
        c.pipeline.accum = name == "paci" ? c.pipeline.microbatches : 0;
        c.training.steps = 100;
        auto sim = bs::runtime::simulate({bs::runtime::toScheduleParams(c), costs, c.pipeline.microBatchSize});
        if (!sim) {
            die(sim.error());
        }
        makespan[i++] = static_cast<double>(sim->trace->endTime());
        std::printf("%s replay: bubble %.3f\n", name.c_str(), sim->report.bubbleFraction);
    }
    std::printf("cost-model replay over 100 batches with these means: 1f1b / paci time per batch = %.3f (theory (m+p-1)/m = "
                "%.3f)\n",
        makespan[0] / makespan[1],
        static_cast<double>(c.pipeline.microbatches + c.pipeline.stages - 1) / c.pipeline.microbatches);
    return 0;
}

int measuredTimeToTarget(int argc, char** argv)
{
    const int steps = argc > 2 ? std::atoi(argv[2]) : 100;
    const std::string textPath = argc > 3 ? argv[3] : "/usr/share/common-licenses/GPL-3";
    const std::string only = argc > 4 ? argv[4] : ""; // "synthetic" or "text": one stream (two processes in parallel)
    // A larger vocabulary makes the head + loss heavier than its FLOPs say on a CPU, so the measured
    // split differs from the FLOPs one (the head gets a stage of its own at 4096): balancing then matters.
    const int vocab = argc > 5 ? std::atoi(argv[5]) : 0;
    RunConfig probe = bs::runtime::configPreset("deep").value();
    if (vocab > 0) {
        probe.model.shape.vocab = vocab;
        probe.model.preset.clear(); // an explicit shape: the deep preset with another vocabulary
    }
    auto units = bs::runtime::measureLayerUnits(probe);
    if (!units) {
        die(units.error());
    }
    auto choice = bs::runtime::choosePartition(probe, *units);
    if (!choice) {
        die(choice.error());
    }
    RunConfig flops = probe;
    flops.pipeline.partition = "flops";
    auto flopsChoice = bs::runtime::choosePartition(flops, *units);
    std::printf("measured partition (predicted slowest/mean %.3f; the flops split under the same costs %.3f):",
        choice->plan.imbalance(), flopsChoice ? flopsChoice->plan.imbalance() : 0.0);
    for (int u : choice->plan.unitCount) {
        std::printf(" %d", u);
    }
    std::printf("\n");
    const std::vector<int> flopsUnits = flopsChoice ? flopsChoice->plan.unitCount : std::vector<int>{};
    // Synthetic: entropy floor 1.708 nats; English bytes start at ln 256 = 5.5 nats.
    if (only.empty() || only == "synthetic") {
        runStream(probe, "synthetic", "synthetic", {5.0, 4.5}, steps, choice->plan.unitCount, flopsUnits);
    }
    if (only.empty() || only == "text") {
        runStream(probe, "English text", "text:" + textPath, {4.5, 4.0}, steps, choice->plan.unitCount, flopsUnits);
    }
    return 0;
}
