// Batch bookkeeping: what a completed global batch reports (metrics.jsonl, the summary's
// series, pollMetrics()), and the validation passes due on the way.
#include "runtime/train/exec/session_state.h"

#include <nlohmann/json.hpp>

#include <cmath>

namespace bs::runtime {

std::vector<StageMetrics> RunSession::Impl::stageMetricsNow() const
{
    std::vector<StageMetrics> out;
    for (int s = 0; model && s < model->stages(); ++s) {
        out.push_back(model->stageMetrics(s));
    }
    return out;
}

std::optional<NoiseScaleEstimate> RunSession::Impl::noiseScaleNow() const
{
    std::vector<StageNoiseScale> stages;
    for (int s = 0; model && s < model->stages(); ++s) {
        if (!model->options().holds(s)) {
            continue; // another rank's: the merge puts the stages together (rank_merge.h)
        }
        std::optional<StageNoiseScale> stage = model->noiseScale(s);
        if (!stage) {
            return std::nullopt; // a sum without some stage would be no model's figure
        }
        stages.push_back(*stage);
    }
    if (stages.empty()) {
        return std::nullopt;
    }
    return combineStages(std::move(stages));
}

Result<double> RunSession::Impl::batchLoss(std::int64_t firstMb) const
{
    double sum = 0.0;
    const std::vector<std::optional<double>> losses = model->readLosses(firstMb, m());
    for (std::size_t i = 0; i < losses.size(); ++i) {
        if (losses[i] && !std::isfinite(*losses[i])) {
            return makeError(ErrorCode::Diverged, "training diverged: the loss is " + std::to_string(*losses[i]),
                "microbatch " + std::to_string(firstMb + static_cast<std::int64_t>(i)));
        }
        sum += losses[i].value_or(NAN);
    }
    return sum / m();
}

bool RunSession::Impl::evaluationDue(int step) const
{
    const int every = config.training.evalInterval;
    return every > 0 && ((step + 1) % every == 0 || step + 1 == config.training.steps);
}

std::optional<double> RunSession::Impl::maybeEvaluate(bool due)
{
    if (!due || validation.empty()) {
        return std::nullopt;
    }
    const auto t0 = Clock::now();
    Result<double> v = reference ? reference->evaluate(validation) : model->evaluate(validation);
    evalWall += Clock::now() - t0;
    return v ? std::optional<double>(*v) : std::nullopt;
}

Status RunSession::Impl::recordBatch(int step, double loss, TimeNs virtualEnd, Clock::time_point wallStart,
    std::optional<Clock::time_point> completedAt, std::optional<bool> evaluate)
{
    BatchMetrics b;
    b.step = step;
    b.trainLoss = loss;
    b.virtualTimeS = toSeconds(virtualEnd);
    const Clock::time_point at = completedAt.value_or(Clock::now());
    const double wall = seconds(trainWall + (at - wallStart)) - seconds(evalWall); // before this batch's eval
    b.valLoss = maybeEvaluate(evaluate.value_or(evaluationDue(step)));
    b.wallTimeS = wall;
    const double tokens = tokensUpTo(step + 1);
    b.tokensPerSVirtual = b.virtualTimeS > 0 ? tokens / b.virtualTimeS : 0.0;
    b.tokensPerSWall = wall > 0 ? tokens / wall : 0.0;
    b.stages = stageMetricsNow();
    b.noise = noiseScaleNow();
    {
        const std::lock_guard<std::mutex> lock(mutex);
        summary.losses.push_back(loss);
        summary.finalTrainLoss = loss;
        summary.steps = step + 1;
        recordedVirtualS = b.virtualTimeS;
        recordedWallS = wall;
        if (b.valLoss) {
            summary.valLoss = b.valLoss;
            summary.valLosses.push_back(*b.valLoss);
            summary.valSteps.push_back(step);
            summary.valVirtualTimesS.push_back(b.virtualTimeS);
            if (summary.targetLoss && !summary.timeToTargetS && *b.valLoss <= *summary.targetLoss) {
                summary.timeToTargetS = b.virtualTimeS;
                summary.stepToTarget = step;
                if (options.stopAtTarget) {
                    // The serial driver ends its schedule at the end of the batch in progress (a
                    // cut, as a live Apply's); runSteps() then starts no further pass.
                    targetReached = true;
                    cut = true;
                    summary.notes.push_back("--stop-at-target: the validation loss reached the target at global batch "
                        + std::to_string(step + 1) + "; the run ended with the batches then in progress");
                }
            }
        }
        summary.stages = b.stages;
        summary.noiseScale = b.noise;
        fresh.push_back(b);
    }
    if (writer) {
        // A killed run keeps its trace up to this batch, and every record it kept has its events
        // (the record was appended first: a rank stopped between the two had a batch too few).
        const std::shared_ptr<const profiler::TraceSnapshot> trace =
            config.profiling.trace ? store.snapshot() : nullptr;
        return writer->appendBatch(nlohmann::json(b), trace.get());
    }
    return ok();
}

} // namespace bs::runtime
