// Dumps everything simulate() returns for ~6 000 configurations (every catalogue schedule, p 2-8,
// m 1-16, N 1-100, four cost models, shuffled and partly reversed traces, later settings) plus the
// validator's verdicts on ~12 000 broken schedules, one text file. Not a test: a tool for
// optimising the simulator without changing its output. Run it before and after and diff:
//   ./build/ci/tests/bench/simulate_golden_dump before.txt   # ... change, rebuild ...
//   ./build/ci/tests/bench/simulate_golden_dump after.txt && cmp before.txt after.txt
#include "profiler/analysis/analyze.h"
#include "runtime/plan/schedule/catalogue.h"
#include "runtime/plan/schedule/validate.h"
#include "runtime/plan/sim/simulator.h"

#include <algorithm>
#include <cstdio>
#include <random>
using namespace bs;
static unsigned long long h = 1469598103934665603ull;
static void mix(long long v) { h ^= static_cast<unsigned long long>(v); h *= 1099511628211ull; }
static void dumpReport(FILE* f, const profiler::Report& r) {
    fprintf(f, "stages %d makespan %lld idle %lld bf %.17g sbf %.17g span %.17g util %.17g mbs %d steady %lld %lld\n",
            r.stages, (long long)r.makespan, (long long)r.totalIdle, r.bubbleFraction, r.steadyBubbleFraction,
            r.spanBubbleFraction, r.utilization, r.microbatches, (long long)r.steadyStart, (long long)r.steadyEnd);
    for (auto c : r.idleByCause) fprintf(f, " %lld", (long long)c);
    fprintf(f, "\n");
    for (const auto& s : r.perStage) {
        fprintf(f, "  st %d busy %lld idle %lld span %lld bf %.17g inflight %d wv %d mem %lld lag %d |", s.stage,
                (long long)s.busy, (long long)s.idle, (long long)s.span, s.bubbleFraction, s.peakInflight,
                s.peakWeightVersions, (long long)s.peakMemoryBytes, s.maxVersionLag);
        for (auto c : s.idleByCause) fprintf(f, " %lld", (long long)c);
        fprintf(f, " |");
        for (auto c : s.busyByKind) fprintf(f, " %lld", (long long)c);
        fprintf(f, " | hist");
        for (auto [k, v] : s.versionLagHistogram) fprintf(f, " %d:%d", k, v);
        fprintf(f, "\n");
    }
    unsigned long long save = h; h = 1469598103934665603ull;
    for (const auto& b : r.bubbles) { mix(b.start); mix(b.end); mix(b.stage); mix((int)b.cause); }
    fprintf(f, "  bubbles %zu hash %llx\n", r.bubbles.size(), h);
    h = save;
}
static void dumpTrace(FILE* f, const profiler::TraceSnapshot& t) {
    unsigned long long save = h; h = 1469598103934665603ull;
    t.forEach([](const profiler::TraceEvent& e) { mix(e.start); mix(e.end); mix(e.bytes); mix(e.microbatch); mix(e.version);
        mix(e.stage); mix((int)e.kind); mix((int)e.lane); mix(e.aux); });
    fprintf(f, "  trace %zu hash %llx title %s\n", t.size(), h, t.meta().title.c_str());
    h = save;
}
static void dumpSchedule(FILE* f, const runtime::Schedule& s) {
    unsigned long long save = h; h = 1469598103934665603ull;
    for (const auto& p : s.programs) { mix(-7); for (const auto& a : p) { mix(a.stage); mix((int)a.kind); mix(a.microbatch); mix(a.firstMb); mix(a.lastMb); mix(a.pairStage); mix(a.pairMicrobatch);} }
    for (int v : s.inflightBound) mix(v);
    for (int v : s.activationBound) mix(v);
    for (int v : s.weightVersionBound) mix(v);
    for (int v : s.rankOfStage) mix(v);
    for (int v : s.lagBound) mix(v);
    fprintf(f, "  schedule hash %llx actions %zu\n", h, s.actionCount());
    h = save;
}
int main(int argc, char** argv) {
    if (argc != 2) { fprintf(stderr, "usage: simulate_golden_dump OUT.txt\n"); return 2; }
    FILE* f = fopen(argv[1], "w");
    if (!f) { fprintf(stderr, "cannot write %s\n", argv[1]); return 2; }
    std::mt19937 rng(42);
    int cases = 0;
    for (const auto& info : runtime::scheduleCatalogue()) {
        for (int p : {2, 3, 4, 8}) for (int m : {1, 2, 4, 6, 8, 16}) for (int n : {1, 2, 3, 7, 100}) for (int k : {0, 1, 2})
        for (int costKind : {0, 1, 2, 3}) for (int v : {0, 3}) {
            if (k > 0 && !info.asynchronous) continue;
            if (v == 3 && info.maxStagesPerRank < 3) continue;
            if (costKind > 0 && (n == 3 || k == 2 || m == 6)) continue;
            if (n == 100 && (p != 8 || m != 16 || v != 0 || k > 1)) continue;
            runtime::ScheduleParams sp{.name = info.name, .stages = p, .microbatches = m, .accum = 0, .batches = n, .extraDepth = k};
            sp.stagesPerRank = v;
            if (info.takesAccumWindow() && m % 2 == 0 && costKind == 1) sp.accum = m / 2;
            runtime::CostModel costs;
            if (costKind == 0) costs = runtime::CostModel::uniform(p, 1'000'000, 1'000'000, 1'000'000, 0, 100'000);
            else if (costKind == 1) costs = runtime::CostModel::uniform(p, 1000, 1000, 1000, 0, 0);
            else {
                costs = runtime::CostModel::uniform(p, 1000, 2000, 700, 300, 0);
                for (int s = 0; s < p; ++s) { auto& c = costs.stages[s]; c.forward = 900 + 137 * s; c.backwardInput = 1500 + 71 * ((s * 5) % p);
                    c.backwardWeight = 500 + 33 * s; c.update = 250; c.forwardBackward = costKind == 3 ? 2000 + 11 * s : 0;
                    c.activationBytes = 1000 + s; c.sendBytes = 4096; c.paramBytes = 77777 + s; c.recomputeBytes = costKind == 3 ? 5 : 0; }
                costs.commLatency = costKind == 2 ? 123 : 0; costs.commBytesPerSecond = costKind == 3 ? 1e9 : 0; costs.bytesKnown = costKind == 3;
            }
            runtime::SimulationRequest req{sp, costs, 2};
            auto res = runtime::simulate(req);
            fprintf(f, "CASE %s p%d m%d n%d k%d c%d v%d\n", info.name.c_str(), p, m, n, k, costKind, v);
            ++cases;
            if (!res) { fprintf(f, "  error %s | %s\n", res.error().message.c_str(), res.error().context.c_str()); continue; }
            dumpSchedule(f, res->schedule);
            dumpTrace(f, *res->trace);
            fprintf(f, "  tput %.17g\n", res->throughputSamplesPerSecond);
            dumpReport(f, res->report);
            // Shuffled trace (unsorted stages) and later settings: the analysis's general path.
            if (p == 4 && n == 2 && costKind != 1) {
                auto events = res->trace->toVector();
                std::shuffle(events.begin(), events.end(), rng);
                auto opts = runtime::analysisOptionsFor(res->schedule, &costs);
                auto shuffled = profiler::makeSnapshot(res->trace->meta(), events);
                fprintf(f, " shuffled\n"); dumpReport(f, profiler::analyze(*shuffled, opts));
                // Partly shuffled: only one lane's events moved.
                events = res->trace->toVector();
                std::vector<profiler::TraceEvent> lane1, rest;
                for (auto& e : events) (e.stage == 1 && e.isCompute() ? lane1 : rest).push_back(e);
                std::reverse(lane1.begin(), lane1.end());
                rest.insert(rest.begin() + rest.size() / 2, lane1.begin(), lane1.end());
                fprintf(f, " lane1 reversed\n"); dumpReport(f, profiler::analyze(*profiler::makeSnapshot(res->trace->meta(), rest), opts));
                opts.laterSettings.push_back({m, std::max(1, m / 2), false});
                opts.laterSettings.push_back({m + std::max(1, m / 2) * 2, m, true});
                fprintf(f, " later\n"); dumpReport(f, profiler::analyze(*res->trace, opts));
                opts = runtime::analysisOptionsFor(res->schedule, nullptr);
                opts.synchronous = !opts.synchronous; opts.stashesWeights = !opts.stashesWeights;
                fprintf(f, " flipped\n"); dumpReport(f, profiler::analyze(*res->trace, opts));
            }
        }
    }
    // A few invalid schedules: the validator's messages.
    for (const auto& info : runtime::scheduleCatalogue()) {
        for (int p : {2, 4}) {
            runtime::ScheduleParams sp{.name = info.name, .stages = p, .microbatches = 2 * p, .accum = 0, .batches = 2};
            auto s = runtime::makeSchedule(sp);
            if (!s) continue;
            for (int r = 0; r < s->ranks(); ++r) {
                auto& prog = s->programs[r];
                for (std::size_t i = 0; i + 1 < prog.size(); i += std::max<std::size_t>(1, prog.size() / 5)) {
                    auto bad = *s; std::swap(bad.programs[r][i], bad.programs[r][i + 1]);
                    auto st = runtime::validate(bad);
                    fprintf(f, "INVALID %s p%d r%d i%zu: %s | %s\n", info.name.c_str(), p, r, i, st ? "ok" : st.error().message.c_str(), st ? "" : st.error().context.c_str());
                    auto bad2 = *s; bad2.programs[r].erase(bad2.programs[r].begin() + i);
                    st = runtime::validate(bad2);
                    fprintf(f, "MISSING %s p%d r%d i%zu: %s\n", info.name.c_str(), p, r, i, st ? "ok" : st.error().message.c_str());
                }
            }
        }
    }
    // Random swaps and moves in every program of every schedule: the channel-order verdicts.
    for (const auto& info : runtime::scheduleCatalogue()) {
        for (int p : {2, 3, 4}) {
            runtime::ScheduleParams sp{.name = info.name, .stages = p, .microbatches = 2 * p, .accum = 0, .batches = 2};
            auto s = runtime::makeSchedule(sp);
            if (!s) continue;
            for (int t = 0; t < 300; ++t) {
                auto bad = *s;
                int r = rng() % bad.ranks();
                auto& prog = bad.programs[r];
                std::size_t i = rng() % prog.size(), j = rng() % prog.size();
                if (t % 2) std::swap(prog[i], prog[j]);
                else { auto a = prog[i]; prog.erase(prog.begin() + i); prog.insert(prog.begin() + std::min(j, prog.size()), a); }
                auto st = runtime::validate(bad);
                fprintf(f, "RANDOM %s p%d t%d: %s\n", info.name.c_str(), p, t, st ? "ok" : st.error().message.c_str());
            }
        }
    }
    fprintf(f, "cases %d\n", cases);
    fclose(f);
    printf("cases %d\n", cases);
}
