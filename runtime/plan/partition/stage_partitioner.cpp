#include "runtime/plan/partition/stage_partitioner.h"

#include "runtime/plan/schedule/catalogue.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <sstream>

namespace bs::runtime {

namespace {

std::string mib(std::int64_t bytes)
{
    std::ostringstream o;
    o.precision(1);
    o << std::fixed << static_cast<double>(bytes) / (1024.0 * 1024.0) << " MiB";
    return o.str();
}

/// Prefix sums over the units, so a stage's cost is two lookups.
struct Prefix
{
    std::vector<double> ms;
    std::vector<std::int64_t> statics, params, activations;

    explicit Prefix(const std::vector<UnitCost>& units)
        : ms(units.size() + 1, 0.0)
        , statics(units.size() + 1, 0)
        , params(units.size() + 1, 0)
        , activations(units.size() + 1, 0)
    {
        for (std::size_t i = 0; i < units.size(); ++i) {
            ms[i + 1] = ms[i] + units[i].forwardMs + units[i].backwardMs;
            statics[i + 1] = statics[i] + units[i].staticBytes;
            params[i + 1] = params[i] + units[i].paramBytes;
            activations[i + 1] = activations[i] + units[i].activationBytes;
        }
    }
};

int demandAt(const std::vector<int>& v, std::size_t stage)
{
    return stage < v.size() ? std::max(v[stage], 1) : 1;
}

double stageTime(const Prefix& pre, std::size_t begin, std::size_t end)
{
    return pre.ms[end] - pre.ms[begin];
}

std::int64_t stageBytes(
    const Prefix& pre, const StageDemand& demand, std::size_t stage, std::size_t begin, std::size_t end)
{
    const std::int64_t copies = demandAt(demand.weightVersions, stage) - 1;
    return (pre.statics[end] - pre.statics[begin]) + copies * (pre.params[end] - pre.params[begin])
        + static_cast<std::int64_t>(demandAt(demand.inflight, stage)) * (pre.activations[end] - pre.activations[begin]);
}

/// The least budget any contiguous split needs: min over splits of the largest stage's bytes.
std::int64_t leastBudget(const Prefix& pre, const StageDemand& demand, std::size_t n, std::size_t p)
{
    constexpr std::int64_t kInf = std::numeric_limits<std::int64_t>::max();
    std::vector<std::vector<std::int64_t>> best(p + 1, std::vector<std::int64_t>(n + 1, kInf));
    best[0][0] = 0;
    for (std::size_t s = 0; s < p; ++s) {
        for (std::size_t k = s; k < n; ++k) {
            if (best[s][k] == kInf) {
                continue;
            }
            for (std::size_t l = k + 1; l + (p - s - 1) <= n; ++l) {
                best[s + 1][l] = std::min(best[s + 1][l], std::max(best[s][k], stageBytes(pre, demand, s, k, l)));
            }
        }
    }
    return best[p][n];
}

} // namespace

Result<StageDemand> stageDemand(const ScheduleParams& params)
{
    // Enough global batches that an asynchronous schedule reaches its steady depth p − s + k
    // (its bound is capped by the micro-batches generated); a flush schedule's bound is per batch.
    ScheduleParams one = params;
    const int m = std::max(params.microbatches, 1);
    one.batches = std::max(1, (params.stages + params.extraDepth + m - 1) / m);
    auto schedule = makeSchedule(one);
    if (!schedule) {
        return schedule.error();
    }
    StageDemand d;
    d.inflight = schedule->inflightBound;
    d.weightVersions = schedule->weightVersionBound;
    d.inflight.resize(static_cast<std::size_t>(params.stages), 1);
    d.weightVersions.resize(static_cast<std::size_t>(params.stages), 1);
    return d;
}

PartitionPlan evaluatePartition(const PartitionProblem& problem, const std::vector<int>& unitCount)
{
    const Prefix pre(problem.units);
    PartitionPlan plan;
    plan.unitCount = unitCount;
    std::size_t begin = 0;
    double total = 0.0;
    for (std::size_t s = 0; s < unitCount.size(); ++s) {
        const std::size_t end =
            std::min(begin + static_cast<std::size_t>(std::max(unitCount[s], 0)), problem.units.size());
        const double t = stageTime(pre, begin, end);
        plan.stageMs.push_back(t);
        plan.stageBytes.push_back(stageBytes(pre, problem.demand, s, begin, end));
        plan.slowestMs = std::max(plan.slowestMs, t);
        total += t;
        begin = end;
    }
    plan.meanMs = unitCount.empty() ? 0.0 : total / static_cast<double>(unitCount.size());
    return plan;
}

Result<PartitionPlan> partitionStages(const PartitionProblem& problem)
{
    const std::size_t n = problem.units.size();
    if (problem.stages < 1) {
        return makeError(ErrorCode::InvalidArgument, "stages must be at least 1", "pipeline.stages");
    }
    const auto p = static_cast<std::size_t>(problem.stages);
    if (n < p) {
        return makeError(ErrorCode::InvalidArgument,
            "pipeline.stages = " + std::to_string(p) + " exceeds the " + std::to_string(n)
                + " layer units (each stage needs one); allowed: 1.." + std::to_string(n),
            "pipeline.stages");
    }
    const bool sized = (problem.demand.inflight.empty() || problem.demand.inflight.size() == p)
        && (problem.demand.weightVersions.empty() || problem.demand.weightVersions.size() == p);
    if (!sized) {
        return makeError(
            ErrorCode::InvalidArgument, "the schedule's per-stage demand does not match the stages", "pipeline.stages");
    }
    const Prefix pre(problem.units);
    // best[s][l]: (slowest stage, sum of squared stage times) for units [0, l) on stages [0, s).
    using Cost = std::pair<double, double>;
    const Cost inf{std::numeric_limits<double>::infinity(), 0.0};
    std::vector<std::vector<Cost>> best(p + 1, std::vector<Cost>(n + 1, inf));
    std::vector<std::vector<std::size_t>> cut(p + 1, std::vector<std::size_t>(n + 1, 0));
    best[0][0] = {0.0, 0.0};
    for (std::size_t s = 0; s < p; ++s) {
        for (std::size_t k = s; k < n; ++k) {
            if (std::isinf(best[s][k].first)) {
                continue;
            }
            // Stage s takes units [k, l), leaving at least one for each later stage.
            for (std::size_t l = k + 1; l + (p - s - 1) <= n; ++l) {
                if (problem.budgetBytes > 0 && stageBytes(pre, problem.demand, s, k, l) > problem.budgetBytes) {
                    continue;
                }
                const double t = stageTime(pre, k, l);
                const Cost cost{std::max(best[s][k].first, t), best[s][k].second + t * t};
                if (cost < best[s + 1][l]) {
                    best[s + 1][l] = cost;
                    cut[s + 1][l] = k;
                }
            }
        }
    }
    if (std::isinf(best[p][n].first)) {
        return makeError(ErrorCode::InvalidArgument,
            "no split of " + std::to_string(n) + " layer units over " + std::to_string(p)
                + " stages fits the budget of " + mib(problem.budgetBytes) + " per stage; the least any split needs is "
                + mib(leastBudget(pre, problem.demand, n, p)),
            "pipeline.memory_budget_mib");
    }
    std::vector<int> counts(p, 0);
    std::size_t l = n;
    for (std::size_t s = p; s >= 1; --s) {
        counts[s - 1] = static_cast<int>(l - cut[s][l]);
        l = cut[s][l];
    }
    return evaluatePartition(problem, counts);
}

std::vector<UnitCost> unitCostsAt(std::vector<UnitCost> units, int measuredMicroBatch, int microBatch)
{
    if (measuredMicroBatch < 1 || microBatch < 1 || measuredMicroBatch == microBatch) {
        return units;
    }
    const double scale = static_cast<double>(microBatch) / static_cast<double>(measuredMicroBatch);
    for (UnitCost& u : units) {
        u.forwardMs *= scale;
        u.backwardMs *= scale;
        u.activationBytes = static_cast<std::int64_t>(std::llround(static_cast<double>(u.activationBytes) * scale));
    }
    return units;
}

std::vector<UnitCost> flopsUnitCosts(const GptShape& shape, int microBatch)
{
    const double tokens = static_cast<double>(microBatch) * shape.seqLen;
    const auto tok = static_cast<std::int64_t>(tokens);
    const std::int64_t d = shape.dModel;
    const std::int64_t v = shape.vocab;
    constexpr double kFlopsPerMs = 1e9; // 1 TFLOP/s: only the ratios matter
    constexpr std::int64_t kFloat = 4;
    // fp32 weights, gradients and AdamW's two moments: 4 copies of the weights.
    auto unit = [&](double forwardFlops, std::int64_t params, std::int64_t activations) {
        return UnitCost{forwardFlops / kFlopsPerMs, 2.0 * forwardFlops / kFlopsPerMs, 4 * kFloat * params,
            kFloat * params, activations};
    };
    std::vector<UnitCost> units;
    // Embedding: a gather and an add per element (its backward a scatter-add): bandwidth, not matmuls.
    units.push_back(unit(2.0 * tokens * static_cast<double>(d), shape.embeddingParams(), kFloat * tok * d));
    for (int i = 0; i < shape.layers; ++i) {
        units.push_back(
            unit(shape.blockForwardFlops(microBatch), shape.blockParams(), shape.blockActivationBytes(microBatch)));
    }
    units.push_back(
        unit(8.0 * tokens * static_cast<double>(d), 2 * d, kFloat * tok * d)); // LayerNorm: ~8 ops an element
    // Head: the matmul plus softmax / cross-entropy (~5 ops per logit); logits and their softmax kept.
    units.push_back(unit(shape.headForwardFlops(microBatch) + 5.0 * tokens * static_cast<double>(v),
        shape.headParams() - 2 * d, 2 * kFloat * tok * v));
    return units;
}

} // namespace bs::runtime
