#include "runtime/plan/config/config_validate.h"

#include "runtime/plan/schedule/catalogue.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <limits>
#include <numeric>
#include <sstream>

namespace bs::runtime {

namespace {

// Upper limits are sanity bounds: far above anything that runs, low enough to catch typos and to
// keep products like m*b*T inside 64-bit arithmetic.
constexpr int kMaxLayers = 1024;
constexpr int kMaxWidth = 65536;
constexpr int kMaxHeads = 1024;
constexpr int kMaxSeqLen = 65536;
constexpr int kMaxVocab = 1 << 24;
constexpr int kMaxStages = limits::kMaxStages; // the pipeline's limits are the catalogue's (limits.h)
constexpr int kMaxMicrobatches = limits::kMaxMicrobatches;
constexpr int kMaxSteps = 1'000'000'000;
constexpr int kMaxThreads = 1024;

std::string num(double v)
{
    std::ostringstream o;
    o << v;
    return o.str();
}

std::string quoted(const std::string& s)
{
    return "\"" + s + "\"";
}

std::string joinQuoted(const std::vector<std::string>& names)
{
    std::string out;
    for (const std::string& n : names) {
        out += (out.empty() ? "" : ", ") + n;
    }
    return out;
}

class Checker
{
public:
    void fail(const std::string& field, const std::string& message)
    {
        errors.push_back(makeError(ErrorCode::InvalidArgument, message, field));
    }

    void intRange(const std::string& field, std::int64_t v, std::int64_t lo, std::int64_t hi)
    {
        if (v < lo || v > hi) {
            fail(field,
                field + " = " + std::to_string(v) + " is out of range; allowed: " + std::to_string(lo) + ".."
                    + std::to_string(hi));
        }
    }

    /// [lo, hi] with optional open ends, written in interval notation in the message.
    void realRange(const std::string& field, double v, double lo, double hi, bool openLo = false, bool openHi = false)
    {
        const bool okLo = openLo ? v > lo : v >= lo;
        const bool okHi = openHi ? v < hi : v <= hi;
        if (!std::isfinite(v) || !okLo || !okHi) {
            fail(field,
                field + " = " + num(v) + " is out of range; allowed: " + (openLo ? "(" : "[") + num(lo) + ", " + num(hi)
                    + (openHi ? ")" : "]"));
        }
    }

    void oneOf(const std::string& field, const std::string& v, const std::vector<std::string>& allowed)
    {
        if (std::find(allowed.begin(), allowed.end(), v) == allowed.end()) {
            fail(field, field + " = " + quoted(v) + " is not allowed; allowed values: " + joinQuoted(allowed));
        }
    }

    std::vector<Error> errors;
};

void checkModel(Checker& c, const ModelConfig& model)
{
    std::vector<std::string> presets = gptPresetNames();
    if (!model.preset.empty()) {
        c.oneOf("model.preset", model.preset, presets);
    }
    const GptShape& s = model.shape;
    c.intRange("model.layers", s.layers, 1, kMaxLayers);
    c.intRange("model.d_model", s.dModel, 1, kMaxWidth);
    c.intRange("model.heads", s.heads, 1, kMaxHeads);
    if (s.heads >= 1 && s.dModel >= 1 && s.dModel % s.heads != 0) {
        c.fail("model.heads",
            "model.heads = " + std::to_string(s.heads) + " must divide model.d_model = " + std::to_string(s.dModel));
    }
    c.intRange("model.seq_len", s.seqLen, 1, kMaxSeqLen);
    c.intRange("model.vocab", s.vocab, 2, kMaxVocab);
    c.realRange("model.dropout", s.dropout, 0.0, 1.0, false, true);
    if (!model.dtype.empty() && model.dtype != "fp32" && model.dtype != "bf16") {
        c.fail("model.dtype",
            "model.dtype = " + quoted(model.dtype)
                + " is not allowed; allowed: \"fp32\", \"bf16\" (or leave it out: bf16 on CUDA, fp32 on the CPU)");
    }
}

/// pipeline.partition and pipeline.memory_budget_mib. Returns true when the partition is in layer
/// units (measured or explicit), so the block-count checks below do not apply.
bool checkUnitPartition(Checker& c, const RunConfig& cfg)
{
    const PipelineConfig& p = cfg.pipeline;
    c.realRange("pipeline.memory_budget_mib", p.memoryBudgetMiB, 0.0, 1e9);
    if (p.partition != "flops" && p.partition != "measured" && p.partition != "explicit") {
        c.fail("pipeline.partition",
            "pipeline.partition = " + quoted(p.partition)
                + " is not allowed; allowed values: \"flops\", \"measured\" or an array of "
                  "layer units per stage");
        return false;
    }
    if (p.partition == "flops") {
        if (!p.partitionUnits.empty()) {
            c.fail(
                "pipeline.partition", "pipeline.partition is \"flops\" but lists layer units; allowed: the list alone");
        }
        return false;
    }
    if (!p.layersPerStage.empty()) {
        c.fail("pipeline.partition",
            "pipeline.partition = " + (p.partition == "explicit" ? std::string("[...]") : quoted(p.partition))
                + " and pipeline.layers_per_stage are both set; allowed: one of them");
    }
    const int units = layerUnitCount(cfg.model.shape);
    if (p.partition == "measured") {
        if (!p.partitionUnits.empty()) {
            c.fail("pipeline.partition",
                "pipeline.partition is \"measured\" but lists layer units; allowed: the list alone");
        }
        if (p.stages > units) {
            c.fail("pipeline.stages",
                "pipeline.stages = " + std::to_string(p.stages) + " exceeds the layer units, model.layers + 3 = "
                    + std::to_string(units) + "; allowed: 1.." + std::to_string(units));
        }
        return true;
    }
    if (auto part = partitionFromUnits(cfg.model.shape, modelStages(cfg), p.partitionUnits); !part) {
        c.fail("pipeline.partition", part.error().message);
    }
    return true;
}

// pipeline.stages_per_rank and pipeline.placement against the schedule's traits (catalogue.h).
void checkPlacement(Checker& c, const RunConfig& cfg, const ScheduleInfo* info)
{
    const PipelineConfig& p = cfg.pipeline;
    c.intRange("pipeline.stages_per_rank", p.stagesPerRank, 0, kMaxStagesPerRank);
    if (!p.placement.empty()) {
        c.oneOf("pipeline.placement", p.placement, {"one-per-rank", "loop", "v"});
    }
    if (!info) {
        return;
    }
    const std::string own(placementName(info->placement));
    if (!p.placement.empty() && placementFromName(p.placement) && p.placement != own) {
        c.fail("pipeline.placement",
            "pipeline.placement = \"" + p.placement + "\" does not fit " + info->name + "; allowed for " + info->name
                + ": \"" + own + "\" or \"\"");
    }
    const int least = info->placement == Placement::Loop ? 2 : info->defaultStagesPerRank;
    if (p.stagesPerRank > 0 && p.stagesPerRank <= kMaxStagesPerRank
        && (p.stagesPerRank < least || p.stagesPerRank > info->maxStagesPerRank)) {
        c.fail("pipeline.stages_per_rank",
            "pipeline.stages_per_rank = " + std::to_string(p.stagesPerRank) + " does not fit " + info->name
                + "; allowed: 0 or "
                + (least == info->maxStagesPerRank
                        ? std::to_string(least)
                        : std::to_string(least) + ".." + std::to_string(info->maxStagesPerRank)));
    }
    if (info->needsMicrobatchesMultipleOfRanks && p.stages >= 1 && p.microbatches % p.stages != 0) {
        c.fail("pipeline.microbatches",
            "pipeline.microbatches = " + std::to_string(p.microbatches) + " for " + info->name
                + " must be a multiple of pipeline.stages = " + std::to_string(p.stages));
    }
    const int v = info->stagesPerRank(p.stagesPerRank);
    const int layers = cfg.model.shape.layers;
    if (v > 1 && v >= least && v <= info->maxStagesPerRank && p.stages >= 1 && p.stages * v > layers) {
        c.fail("pipeline.stages_per_rank",
            "pipeline.stages x pipeline.stages_per_rank = " + std::to_string(p.stages * v) + " model chunks for "
                + info->name + " exceed model.layers = " + std::to_string(layers) + "; allowed: at most "
                + std::to_string(layers) + " chunks (each needs a block)");
    }
    if (info->minMicrobatchesPerRank > 0 && p.microbatches < info->minMicrobatchesPerRank * p.stages) {
        c.fail("pipeline.microbatches",
            "pipeline.microbatches = " + std::to_string(p.microbatches) + " is too few for " + info->name
                + "; allowed: >= " + std::to_string(info->minMicrobatchesPerRank)
                + " x pipeline.stages = " + std::to_string(info->minMicrobatchesPerRank * p.stages));
    }
}

void checkLayerSplit(Checker& c, const RunConfig& cfg)
{
    const PipelineConfig& p = cfg.pipeline;
    const int layers = cfg.model.shape.layers;
    if (checkUnitPartition(c, cfg)) {
        return;
    }
    if (p.layersPerStage.empty()) {
        if (p.stages > layers && layers >= 1) {
            c.fail("pipeline.stages",
                "pipeline.stages = " + std::to_string(p.stages) + " exceeds model.layers = " + std::to_string(layers)
                    + "; allowed: 1.." + std::to_string(layers)
                    + " (each stage needs a block; list pipeline.layers_per_stage to leave "
                      "the first or last stage with embeddings or head only)");
        }
        return;
    }
    const auto& counts = p.layersPerStage;
    const int chunks = modelStages(cfg); // one block per model stage: p · v
    if (static_cast<int>(counts.size()) != chunks) {
        c.fail("pipeline.layers_per_stage",
            "pipeline.layers_per_stage has " + std::to_string(counts.size()) + " entries; allowed: exactly "
                + (chunks == p.stages ? "pipeline.stages = " + std::to_string(p.stages)
                                      : "pipeline.stages x stages per rank = " + std::to_string(chunks)));
        return;
    }
    const long long sum = std::accumulate(counts.begin(), counts.end(), 0LL);
    if (sum != layers) {
        c.fail("pipeline.layers_per_stage",
            "pipeline.layers_per_stage sums to " + std::to_string(sum)
                + "; allowed: a sum equal to model.layers = " + std::to_string(layers));
    }
    for (std::size_t s = 0; s < counts.size(); ++s) {
        const bool edge = s == 0 || s + 1 == counts.size();
        if (counts[s] < 0 || (counts[s] == 0 && !edge)) {
            c.fail("pipeline.layers_per_stage",
                "pipeline.layers_per_stage[" + std::to_string(s) + "] = " + std::to_string(counts[s])
                    + "; allowed: >= 1 (" + "0 only on the first and last stage)");
        }
    }
}

void checkPipeline(Checker& c, const RunConfig& cfg)
{
    const PipelineConfig& p = cfg.pipeline;
    const std::string& schedule = cfg.schedule.name;
    c.oneOf("schedule.name", schedule, configScheduleNames());
    const ScheduleInfo* info = findSchedule(schedule);
    const bool window = info && info->takesAccumWindow();
    c.intRange("pipeline.stages", p.stages, 1, kMaxStages);
    c.intRange("pipeline.microbatches", p.microbatches, 1, kMaxMicrobatches);
    c.intRange("pipeline.accum", p.accum, 0, kMaxMicrobatches);
    if (info && !window && p.accum != 0 && p.accum != p.microbatches) {
        c.fail("pipeline.accum",
            "pipeline.accum = " + std::to_string(p.accum) + " is only used by "
                + scheduleNamesWhere([](const ScheduleInfo& i) { return i.takesAccumWindow(); }) + "; allowed for "
                + schedule + ": 0 or pipeline.microbatches = " + std::to_string(p.microbatches));
    }
    if (window && p.accum > 0 && p.microbatches >= 1 && p.microbatches % p.accum != 0) {
        c.fail("pipeline.accum",
            "pipeline.accum = " + std::to_string(p.accum) + " must divide pipeline.microbatches = "
                + std::to_string(p.microbatches) + " so every update applies whole windows");
    }
    c.intRange("pipeline.micro_batch_size", p.microBatchSize, 1, kMaxMicrobatches);
    c.intRange("pipeline.extra_depth", p.extraDepth, 0, kMaxStages);
    if (p.extraDepth != 0 && (!isAsynchronousSchedule(schedule) || (info && info->fixedDepth))) {
        c.fail("pipeline.extra_depth",
            "pipeline.extra_depth = " + std::to_string(p.extraDepth) + " is only used by asynchronous schedules ("
                + scheduleNamesWhere([](const ScheduleInfo& i) { return i.asynchronous && !i.fixedDepth; })
                + "); allowed for " + schedule + ": 0");
    }
    if (info && p.extraDepth >= 0 && p.microbatches >= 1
        && p.microbatches < info->minMicrobatches(p.stages, p.extraDepth)) {
        c.fail("pipeline.microbatches",
            "pipeline.microbatches = " + std::to_string(p.microbatches) + " is too few for " + schedule
                + ": two weight versions need every backward before the second update after its forward; allowed: >= "
                  "pipeline.stages + pipeline.extra_depth - 1 = "
                + std::to_string(info->minMicrobatches(p.stages, p.extraDepth)));
    }
    checkPlacement(c, cfg, info);
    if (p.stages >= 1 && p.stages <= kMaxStages) {
        checkLayerSplit(c, cfg);
    }
}

void checkOptimizer(Checker& c, const OptimizerConfig& o)
{
    c.realRange("optimizer.lr", o.lr, 0.0, 10.0, true);
    c.realRange("optimizer.beta1", o.beta1, 0.0, 1.0, false, true);
    c.realRange("optimizer.beta2", o.beta2, 0.0, 1.0, false, true);
    c.realRange("optimizer.eps", o.eps, 0.0, 1.0, true);
    c.realRange("optimizer.weight_decay", o.weightDecay, 0.0, 10.0);
    c.intRange("optimizer.warmup_steps", o.warmupSteps, 0, kMaxSteps);
    c.intRange("optimizer.total_steps", o.totalSteps, 0, kMaxSteps);
    if (std::isfinite(o.lr) && o.lr > 0.0) { // min_lr is bounded by a valid lr only
        c.realRange("optimizer.min_lr", o.minLr, 0.0, o.lr);
    }
    c.oneOf("optimizer.decay", o.decay, {"cosine", "constant"});
    c.oneOf("optimizer.lr_scaling", o.lrScaling, {"sqrt", "linear", "none"});
    c.intRange("optimizer.base_global_batch", o.baseGlobalBatch, 0, std::numeric_limits<int>::max());
}

bool startsWith(const std::string& s, std::string_view prefix)
{
    return s.rfind(prefix, 0) == 0;
}

void checkData(Checker& c, const RunConfig& cfg)
{
    const DataConfig& d = cfg.data;
    const bool file = startsWith(d.spec, "text:") || startsWith(d.spec, "bin:");
    if (d.spec != "synthetic" && !file) {
        c.fail("data.spec",
            "data.spec = " + quoted(d.spec)
                + " is not allowed; allowed: \"synthetic\", "
                  "\"text:PATH\" or \"bin:PATH\"");
    } else if (file && d.spec.substr(d.spec.find(':') + 1).empty()) {
        c.fail("data.spec",
            "data.spec = " + quoted(d.spec) + " has an empty path; allowed: \"text:PATH\" or \"bin:PATH\"");
    }
    c.realRange("data.val_fraction", d.valFraction, 0.0, 1.0, false, true);
    c.intRange("data.seed", d.seed, 0, std::numeric_limits<std::int64_t>::max());
    if (startsWith(d.spec, "text:") && cfg.model.shape.vocab < 256) {
        c.fail("model.vocab",
            "model.vocab = " + std::to_string(cfg.model.shape.vocab)
                + " is too small for byte-level text data; allowed: >= 256");
    }
    if (file && d.valFraction == 0.0 && cfg.training.evalInterval > 0) {
        c.fail("data.val_fraction",
            "data.val_fraction = 0 leaves no validation tokens but training.eval_interval = "
                + std::to_string(cfg.training.evalInterval)
                + "; allowed: (0, 1), or "
                  "training.eval_interval = 0");
    }
}

void checkTraining(Checker& c, const TrainingConfig& t)
{
    c.intRange("training.steps", t.steps, 1, kMaxSteps);
    c.intRange("training.seed", t.seed, 0, std::numeric_limits<std::int64_t>::max());
    c.intRange("training.eval_interval", t.evalInterval, 0, kMaxSteps);
    c.intRange("training.eval_batches", t.evalBatches, 1, kMaxMicrobatches);
    c.intRange("training.checkpoint_every", t.checkpointEvery, 0, kMaxSteps);
    if (t.targetLoss) {
        c.realRange("training.target_loss", *t.targetLoss, 0.0, 1e6, true);
    }
}

bool isCudaName(const std::string& name)
{
    if (name == "cuda") {
        return true;
    }
    if (!startsWith(name, "cuda:") || name.size() == 5 || name.size() > 9) {
        return false;
    }
    int index = -1;
    const char* first = name.data() + 5;
    const char* last = name.data() + name.size();
    const auto res = std::from_chars(first, last, index);
    return res.ec == std::errc() && res.ptr == last && index >= 0 && index < 1024;
}

void checkDevice(Checker& c, const DeviceConfig& d)
{
    if (d.name != "cpu" && !isCudaName(d.name)) {
        c.fail("device.name",
            "device.name = " + quoted(d.name)
                + " is not allowed; allowed: \"cpu\", \"cuda\" or "
                  "\"cuda:N\" (N in 0..1023)");
    }
    c.intRange("device.intra_op_threads", d.intraOpThreads, 0, kMaxThreads);
}

} // namespace

const std::vector<std::string>& configScheduleNames()
{
    static const std::vector<std::string> names = [] {
        std::vector<std::string> out;
        for (const auto& info : scheduleCatalogue()) {
            out.push_back(info.name);
        }
        return out;
    }();
    return names;
}

bool isAsynchronousSchedule(const std::string& name)
{
    const ScheduleInfo* info = findSchedule(name);
    return info && info->asynchronous;
}

std::vector<Error> validateAll(const RunConfig& config)
{
    Checker c;
    checkModel(c, config.model);
    checkPipeline(c, config);
    checkOptimizer(c, config.optimizer);
    checkData(c, config);
    checkTraining(c, config.training);
    checkDevice(c, config.device);
    return std::move(c.errors);
}

Status validate(const RunConfig& config)
{
    std::vector<Error> errors = validateAll(config);
    if (errors.empty()) {
        return ok();
    }
    return errors.front();
}

} // namespace bs::runtime
