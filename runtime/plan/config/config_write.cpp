// toToml: hand-written so the layout, comments and float formatting are fixed and exact.
#include "runtime/plan/config/config_toml.h"

#include <charconv>
#include <cstdio>
#include <sstream>

namespace bs::runtime {

namespace {

std::string tomlString(std::string_view s)
{
    std::string out = "\"";
    for (const char c : s) {
        switch (c) {
        case '"':
            out += "\\\"";
            break;
        case '\\':
            out += "\\\\";
            break;
        case '\n':
            out += "\\n";
            break;
        case '\t':
            out += "\\t";
            break;
        case '\r':
            out += "\\r";
            break;
        default:
            if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) {
                char buf[8];
                std::snprintf(buf, sizeof buf, "\\u%04x", static_cast<unsigned>(static_cast<unsigned char>(c)));
                out += buf;
            } else {
                out += c;
            }
        }
    }
    return out + "\"";
}

/// Shortest text that reads back to the same double, always in TOML float syntax.
std::string tomlFloat(double v)
{
    char buf[64];
    const auto res = std::to_chars(buf, buf + sizeof buf, v);
    std::string s(buf, res.ptr);
    if (s.find_first_of(".eEn") == std::string::npos) { // "n": inf / nan
        s += ".0";
    }
    return s;
}

std::string tomlIntList(const std::vector<int>& values)
{
    std::string out = "[";
    for (std::size_t i = 0; i < values.size(); ++i) {
        out += (i ? ", " : "") + std::to_string(values[i]);
    }
    return out + "]";
}

std::string tomlBool(bool b)
{
    return b ? "true" : "false";
}

} // namespace

std::string toToml(const RunConfig& c)
{
    std::ostringstream o;
    const GptShape& m = c.model.shape;
    o << "# Bubblescope run configuration\n\n";
    o << "[model]\n"
      << "preset = " << tomlString(c.model.preset) << "  # tiny, small, deep, gpt2-medium; keys below override it\n"
      << "layers = " << m.layers << "\n"
      << "d_model = " << m.dModel << "\n"
      << "heads = " << m.heads << "\n"
      << "seq_len = " << m.seqLen << "\n"
      << "vocab = " << m.vocab << "\n"
      << "dropout = " << tomlFloat(m.dropout) << "\n"
      << "tied_head = " << tomlBool(m.tiedHead) << "\n"
      << "recompute = " << tomlBool(c.model.recompute) << "  # activation recompute: keep stage inputs only\n";
    if (!c.model.dtype.empty()) {
        o << "dtype = " << tomlString(c.model.dtype) << "  # fp32 or bf16 (mixed precision, fp32 master weights)\n";
    } else {
        o << "# dtype = \"bf16\"  # fp32 or bf16; left out = bf16 on CUDA, fp32 on the CPU\n";
    }
    o << "\n";
    const PipelineConfig& p = c.pipeline;
    o << "[pipeline]\n"
      << "stages = " << p.stages << "\n"
      << "microbatches = " << p.microbatches << "\n"
      << "accum = " << p.accum << "  # 0 = microbatches\n"
      << "micro_batch_size = " << p.microBatchSize << "\n"
      << "extra_depth = " << p.extraDepth << "\n";
    if (p.stagesPerRank != 0 || !p.placement.empty()) { // written only when set: older files stay byte-equal
        o << "stages_per_rank = " << p.stagesPerRank << "  # 0 = the schedule's own\n"
          << "placement = " << tomlString(p.placement) << "  # one-per-rank, loop, v; \"\" = the schedule's own\n";
    }
    o << "layers_per_stage = " << tomlIntList(p.layersPerStage) << "  # [] = balanced by cost\n"
      << "partition = " << (p.partition == "explicit" ? tomlIntList(p.partitionUnits) : tomlString(p.partition))
      << "  # \"flops\", \"measured\" or layer units per stage (embedding, blocks, final norm, head)\n"
      << "memory_budget_mib = " << tomlFloat(p.memoryBudgetMiB) << "  # per stage, measured partition; 0 = none\n\n";
    o << "[schedule]\n"
      << "name = " << tomlString(c.schedule.name) << "\n\n";
    const OptimizerConfig& opt = c.optimizer;
    o << "[optimizer]  # AdamW per stage\n"
      << "lr = " << tomlFloat(opt.lr) << "\n"
      << "beta1 = " << tomlFloat(opt.beta1) << "\n"
      << "beta2 = " << tomlFloat(opt.beta2) << "\n"
      << "eps = " << tomlFloat(opt.eps) << "\n"
      << "weight_decay = " << tomlFloat(opt.weightDecay) << "\n"
      << "warmup_steps = " << opt.warmupSteps << "\n"
      << "total_steps = " << opt.totalSteps << "  # 0 = training.steps\n"
      << "min_lr = " << tomlFloat(opt.minLr) << "\n"
      << "decay = " << tomlString(opt.decay) << "  # cosine or constant\n"
      << "lr_scaling = " << tomlString(opt.lrScaling)
      << "  # sqrt, linear, none: lr and steps follow m*b vs base_global_batch\n"
      << "base_global_batch = " << opt.baseGlobalBatch << "  # sequences; 0 = the run's first m*b\n\n";
    o << "[data]\n"
      << "spec = " << tomlString(c.data.spec) << "  # synthetic, text:PATH, bin:PATH\n"
      << "val_fraction = " << tomlFloat(c.data.valFraction) << "\n"
      << "seed = " << c.data.seed << "\n\n";
    const TrainingConfig& t = c.training;
    o << "[training]\n"
      << "steps = " << t.steps << "  # global batches\n"
      << "seed = " << t.seed << "\n"
      << "eval_interval = " << t.evalInterval << "\n"
      << "eval_batches = " << t.evalBatches << "\n"
      << "checkpoint_every = " << t.checkpointEvery << "  # global batches; 0 = no checkpoints\n";
    if (t.targetLoss) {
        o << "target_loss = " << tomlFloat(*t.targetLoss) << "\n";
    }
    o << "\n[device]\n"
      << "name = " << tomlString(c.device.name) << "  # cpu, cuda, cuda:N\n"
      << "intra_op_threads = " << c.device.intraOpThreads << "  # 0 = library default\n\n";
    o << "[profiling]\n"
      << "trace = " << tomlBool(c.profiling.trace) << "\n"
      << "cupti = " << tomlBool(c.profiling.cupti) << "\n";
    return o.str();
}

} // namespace bs::runtime
