#pragma once
// Suggest: search the accumulation window a and micro-batch size b with the simulator for the
// highest throughput whose weight drift stays within a bound and whose memory fits a budget.
// Torch-free and Qt-free; the GUI's Suggest button and `bubblescope-cli tune` both call it.

#include "base/result.h"
#include "runtime/plan/common/gpt_shape.h"
#include "runtime/plan/partition/stage_partitioner.h"
#include "runtime/plan/sim/cost_fit.h"
#include "runtime/plan/sim/cost_model.h"
#include "runtime/plan/sim/goodput.h"
#include "runtime/plan/sim/simulator.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace bs::runtime {

/// A simulation of the built-in GPT: m = a micro-batches per global batch (PACI's convention,
/// also used for the flush baselines so they compare at the same global batch G = a·b), or where
/// the schedule's rules refuse m = a, the fewest multiple of a they take
/// (ScheduleInfo::microbatchesForWindow: paci-interleaved at p = 4, a = 2 simulates m = 4; a flush
/// schedule's window is then that m).
struct GptScenario
{
    std::string schedule = "paci";
    int stages = 8;
    GptShape shape;
    DeviceProfile device;
    int accum = 8; ///< a
    int microBatchSize = 8; ///< b (sequences)
    int batches = 4; ///< global batches simulated
    /// m for a schedule with an accumulation window (paci): the run's own when it is whole windows
    /// the schedule accepts (an opened run at m = 16, a = 4 is predicted at m = 16, not 4: fill and
    /// drain weigh differently); 0, or one it refuses, = the fewest (microbatchesForWindow). A
    /// schedule without a window updates every m, so its m is a.
    int microbatches = 0;
    int stagesPerRank = 0; ///< v (pipeline.stages_per_rank); 0 = the schedule's own
    bool recompute = false; ///< model.recompute: costs through withRecompute() (recompute_costs.h)
    /// The run's partition in layer units per stage (gpt_shape.h layerUnitCount(); choosePartition()
    /// of its pipeline.partition); empty = blocks split by FLOPs, as costModelFromGpt does.
    std::vector<int> unitsPerStage;
    /// Layer units measured on the run's device (runtime/train/model/unit_profiler.h) at
    /// unitCostsMicroBatch sequences: stage times follow the partition unit by unit
    /// (unit_cost_model.h). Empty = the device profile's FLOP-derived times.
    std::vector<UnitCost> unitCosts;
    int unitCostsMicroBatch = 0;

    int globalBatch() const { return accum * microBatchSize; }
};

/// How many model chunks GPT costs are computed over for `schedule` at `stages` ranks: p·v for the
/// multi-stage placements (one cost per chunk, as the runtime splits the model: a V placement's
/// rank 0 holds the first and the last chunk), else p. makeGptRequest and `simulate --model` use it.
int gptCostChunks(const std::string& schedule, int stages, int stagesPerRank);

/// The SimulationRequest for `scenario`: costs from the GPT shape and device (or the measured unit
/// costs) over its partition, with recompute when asked. Errors name the field.
Result<SimulationRequest> makeGptRequest(const GptScenario& scenario);

/// The version lag bound of `schedule` in updates (not a drift: drift is a weight distance): the
/// larger of the lag the simulation measured and the schedule's stated bound (the catalogue's
/// lagBound: PACI's ⌈(p−1+k)/a⌉ at stage 0, the worst).
int versionLagBound(const Schedule& schedule, const profiler::Report& report);

/// A schedule's steady throughput: samples per second once every batch takes the same time.
struct SteadyThroughput
{
    bool reached = false; ///< false: the simulator found no steady state within the batches allowed
    double samplesPerSecond = 0; ///< reached: global batch / steady batch period
    /// reached: the idle share of one steady batch (over lanes × period), free of the warm-up and
    /// drain; else the bubble of the maxBatches run.
    double bubbleFraction = 0;
    double batchPeriodS = 0;
    int batchesSimulated = 0; ///< the longest simulation taken (K + 2 where reached)
};

/// The steady batch period from simulate()'s own steady state (figuresOnly over maxBatches:
/// three short runs at K, K + 1, K + 2 checked figure for figure, steady_state.h), free of the
/// warm-up and drain a fixed count of batches amortises. Where the simulator could not settle
/// the schedule within maxBatches: reached = false and the throughput of maxBatches plainly.
Result<SteadyThroughput> steadyThroughput(SimulationRequest request, int maxBatches = 256);

/// What Suggest ranks by.
enum class TuneObjective : std::uint8_t
{
    Throughput, ///< steady samples per second
    TimeToTarget, ///< samples to target (GoodputModel) / steady throughput: needs TuneRequest::goodput
};

/// What `tune` and Suggest rank by when the user does not say: time to target wherever a noise
/// scale was measured (without a target loss the times are relative to E_min, which ranks the
/// same), else steady throughput.
constexpr TuneObjective defaultObjective(bool noiseScaleMeasured)
{
    return noiseScaleMeasured ? TuneObjective::TimeToTarget : TuneObjective::Throughput;
}

struct TuneRequest
{
    GptScenario base; ///< schedule, stages, shape, device, batches
    std::vector<int> accumValues{1, 2, 4, 8, 16, 32};
    std::vector<int> microBatchSizes{1, 2, 4, 8, 16};
    int maxLag = 1; ///< keep candidates whose drift bound is <= this (updates)
    std::int64_t memoryBudgetBytes = 0; ///< per stage; 0 = no limit
    int globalBatch = 0; ///< 0 = any; otherwise only a·b == globalBatch
    std::size_t keep = 5; ///< how many top candidates to return
    /// Calibration: action times fitted from measured runs (withFittedTimes at each candidate's b)
    /// replace the device profile's, so the search ranks candidates by what this machine measured,
    /// exactly as the GUI's calibrated what-if predicts them. Unset: the device profile.
    std::optional<CostFit> calibration;
    TuneObjective objective = TuneObjective::Throughput;
    /// Throughput from the steady state (steadyThroughput()). false: from the `base.batches`
    /// simulation, as the GUI's what-if still shows it, so its Suggest table and its what-if agree
    /// until the what-if predicts the steady state too (issue 30, item 5).
    bool steadyState = true;
    /// The statistical model (measured noise scale, fitted staleness). Required for TimeToTarget;
    /// with Throughput it still fills each candidate's efficiency and predicted time.
    std::optional<GoodputModel> goodput;
};

struct TuneCandidate
{
    int accum = 0;
    int microBatchSize = 0;
    double throughputSamplesPerSecond = 0;
    double bubbleFraction = 0; ///< the steady batch's, as the throughput (SteadyThroughput::bubbleFraction)
    std::int64_t peakMemoryBytes = 0; ///< largest over stages
    int lagBound = 0; ///< versionLagBound() of this candidate
    bool steady = false; ///< the throughput is the steady state's (else the longest simulation's)
    long batchPerUpdate = 0; ///< samples behind one update (PipelineSettings::batchPerUpdate)
    /// With TuneRequest::goodput: 1/(1 + B/B_noise), the staleness factor at lagBound, and the
    /// predicted time to target (seconds; in units of E_min samples when the model has no E_min)
    /// with one standard deviation.
    double efficiency = 1;
    double stalenessFactor = 1;
    std::optional<double> timeToTargetS;
    double timeToTargetSpreadS = 0;
};

struct TuneResult
{
    std::vector<TuneCandidate> top; ///< feasible, best throughput first (ties: smaller memory)
    int evaluated = 0;
    int rejectedByMemory = 0;
    int rejectedByLag = 0;
    int rejectedByBatch = 0; ///< a·b != globalBatch, or the schedule refused (a, b) (a = m against its rules)
};

/// Simulates every (a, b) pair and ranks the feasible ones. Deterministic. Errors only when the
/// base scenario itself is invalid (unknown schedule, bad stages); infeasible pairs are counted.
Result<TuneResult> tune(const TuneRequest& request);

} // namespace bs::runtime
