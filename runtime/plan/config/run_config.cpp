#include "runtime/plan/config/run_config.h"

#include "runtime/plan/schedule/catalogue.h"

namespace bs::runtime {

bool operator==(const ModelConfig& a, const ModelConfig& b)
{
    const GptShape& x = a.shape;
    const GptShape& y = b.shape;
    return a.preset == b.preset && a.dtype == b.dtype && a.recompute == b.recompute && x.layers == y.layers
        && x.dModel == y.dModel && x.heads == y.heads && x.seqLen == y.seqLen && x.vocab == y.vocab
        && x.tiedHead == y.tiedHead && x.dropout == y.dropout;
}

std::string effectiveDtype(const RunConfig& config)
{
    if (!config.model.dtype.empty()) {
        return config.model.dtype;
    }
    return parseDeviceName(config.device.name).cuda ? "bf16" : "fp32";
}

DeviceSpec parseDeviceName(const std::string& name)
{
    DeviceSpec spec;
    if (name.rfind("cuda", 0) != 0) {
        return spec;
    }
    spec.cuda = true;
    if (name.size() > 5 && name[4] == ':') {
        int index = 0;
        for (std::size_t i = 5; i < name.size(); ++i) {
            if (name[i] < '0' || name[i] > '9' || index > 100000) {
                return DeviceSpec{};
            }
            index = index * 10 + (name[i] - '0');
        }
        spec.index = index;
    } else if (name.size() != 4) {
        return DeviceSpec{};
    }
    return spec;
}

ScheduleParams toScheduleParams(const RunConfig& config)
{
    ScheduleParams params;
    params.name = config.schedule.name;
    params.stages = config.pipeline.stages;
    params.microbatches = config.pipeline.microbatches;
    params.accum = config.pipeline.accum;
    params.batches = config.training.steps;
    params.extraDepth = config.pipeline.extraDepth;
    params.stagesPerRank = config.pipeline.stagesPerRank;
    params.placement = placementFromName(config.pipeline.placement); // empty (or invalid, refused by validate) = own
    return params;
}

Result<PipelineSettings> resolvedPipeline(const RunConfig& config)
{
    const PipelineConfig& p = config.pipeline;
    return resolvePipeline(config.schedule.name, p.stages, p.microbatches, p.accum, p.stagesPerRank, p.extraDepth);
}

int shownWindowOf(const RunConfig& config)
{
    const auto pipeline = resolvedPipeline(config);
    return pipeline ? pipeline->shownWindow() : config.pipeline.microbatches;
}

int stagesPerRankOf(const RunConfig& config)
{
    const ScheduleInfo* info = findSchedule(config.schedule.name);
    return info ? info->stagesPerRank(config.pipeline.stagesPerRank) : 1;
}

int modelStages(const RunConfig& config)
{
    return config.pipeline.stages * stagesPerRankOf(config);
}

} // namespace bs::runtime
