// Training benchmarks (not part of ctest; numbers go to docs/BENCHMARKS.md):
//   train_bench overhead [steps] [rounds]   serial pipeline executor (1f1b through drive()) vs the
//                                           plain reference trainer on identical work, same process
//   train_bench memory [steps]              measured peak bytes per stage for every schedule
//   train_bench ttt [steps] [target]        demo config (tiny GPT, p=8, a=m=8, b=4): virtual time for
//                                           1f1b and paci to reach a validation loss
#include "runtime/config/config_presets.h"
#include "runtime/exec/run_session.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

namespace {

using bs::runtime::RunConfig;
using bs::runtime::RunSession;
using bs::runtime::RunSummary;

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
    return session->summary();
}

int overhead(int steps, int rounds)
{
    RunConfig c = bs::runtime::demoConfig();
    c.schedule.name = "1f1b";
    c.pipeline.accum = 0;
    c.training.steps = steps;
    c.training.evalInterval = 0;
    c.profiling.trace = false;
    std::vector<double> ratios;
    for (int r = 0; r < rounds; ++r) {
        const RunSummary ref = train(c, true);
        const RunSummary pipe = train(c, false);
        const double ratio = pipe.wallTimeS / ref.wallTimeS;
        ratios.push_back(ratio);
        std::printf("round %d: reference %.3f s, 1f1b pipeline %.3f s (busy %.3f s), ratio %.4f; losses %.6f / %.6f\n", r,
                    ref.wallTimeS, pipe.wallTimeS, pipe.busyTimeS, ratio, *ref.finalTrainLoss, *pipe.finalTrainLoss);
    }
    std::sort(ratios.begin(), ratios.end());
    std::printf("median pipeline/reference wall-time ratio over %d rounds: %.4f\n", rounds,
                ratios[ratios.size() / 2]);
    return 0;
}

int timeToTarget(int steps, double target)
{
    RunConfig c = bs::runtime::demoConfig();
    c.training.steps = steps;
    c.training.targetLoss = target;
    c.profiling.trace = false;
    std::vector<RunSummary> results;
    for (const std::string name : {"1f1b", "paci"}) {
        c.schedule.name = name;
        c.pipeline.accum = name == "paci" ? c.pipeline.microbatches : 0;
        results.push_back(train(c, false));
        const RunSummary& s = results.back();
        std::printf("%-5s steps %d  final train %.4f  val %.4f  virtual %.2f s  wall %.2f s  bubble %.3f  "
                    "target %.2f reached at step %s, virtual %s s\n",
                    name.c_str(), s.steps, *s.finalTrainLoss, s.valLoss.value_or(-1), s.virtualTimeS, s.wallTimeS,
                    s.bubbleFraction, target, s.stepToTarget ? std::to_string(*s.stepToTarget).c_str() : "-",
                    s.timeToTargetS ? std::to_string(*s.timeToTargetS).c_str() : "-");
        std::printf("      val curve:");
        for (std::size_t i = 0; i < s.valLosses.size(); ++i) {
            std::printf(" %d:%.3f", s.valSteps[i], s.valLosses[i]);
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
    std::printf("virtual time per step 1f1b / paci = %.3f\n",
                (results[0].virtualTimeS / results[0].steps) / (results[1].virtualTimeS / results[1].steps));
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

int main(int argc, char** argv)
{
    const std::string mode = argc > 1 ? argv[1] : "overhead";
    if (mode == "overhead") {
        return overhead(argc > 2 ? std::atoi(argv[2]) : 10, argc > 3 ? std::atoi(argv[3]) : 3);
    }
    if (mode == "ttt") {
        return timeToTarget(argc > 2 ? std::atoi(argv[2]) : 200, argc > 3 ? std::atof(argv[3]) : 1.9);
    }
    if (mode == "memory") {
        return memory(argc > 2 ? std::atoi(argv[2]) : 2);
    }
    std::fprintf(stderr, "usage: train_bench overhead [steps] [rounds] | ttt [steps] [target]\n");
    return 2;
}
