// The closest settings for engines that have no PACI. Each output opens with a comment saying
// which engine version it targets and what differs from the Bubblescope run.

#include "runtime/plan/export/export.h"
#include "runtime/plan/schedule/catalogue.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <sstream>
#include <string_view>
#include <utility>
#include <vector>

namespace bs::runtime::detail {

namespace {

// What the engine will do differently, in one or two lines. The flush schedule it runs instead is
// the catalogue's counterpart (interleaved 1F1B for paci-interleaved), or 1F1B-flush where the
// engine has no stages per rank beyond one (`virtualStages` false: DeepSpeed).
std::string scheduleNote(const std::string& schedule, const std::string& engine, bool virtualStages = true)
{
    const ScheduleInfo* info = findSchedule(schedule);
    const auto instead = [&]() -> const std::string& {
        const ScheduleInfo& counterpart = flushCounterpartOf(*info);
        return (counterpart.multiStage() && !virtualStages ? defaultBaselineSchedule() : counterpart).displayName;
    };
    switch (info ? info->family : ScheduleFamily::Flush) {
    case ScheduleFamily::LocalAccumulation:
        return info->displayName + " has no equivalent in " + engine
            + ": it flushes every global batch and updates all stages together (" + instead()
            + "); expect the flush bubble that " + info->displayName + " removes.";
    case ScheduleFamily::Asynchronous:
        return "Asynchronous '" + schedule + "' has no equivalent in " + engine + ": it runs " + instead()
            + " instead.";
    case ScheduleFamily::ZeroBubble:
        return "Zero-bubble '" + schedule + "' is approximated by " + engine + "'s closest schedule (see below).";
    case ScheduleFamily::Flush:
        break;
    }
    return "Same schedule (" + schedule + ").";
}

int globalBatch(const RunConfig& c)
{
    return c.pipeline.microbatches * c.pipeline.microBatchSize;
}

// torch.distributed.pipelining's name for the same order as get_schedule_class and torchtitan's
// pipeline_parallel_schedule take it: the catalogue's PyTorch class without its "Schedule" prefix
// ("1F1B", "Interleaved1F1B", "ZBVZeroBubble"), or "" when PyTorch has no class for it.
std::string torchScheduleName(const std::string& schedule)
{
    constexpr std::string_view prefix = "Schedule";
    const ScheduleInfo* info = findSchedule(schedule);
    if (!info || info->pytorchClass.rfind(prefix, 0) != 0) {
        return "";
    }
    return info->pytorchClass.substr(prefix.size());
}

// v: the stages per rank the run uses (the schedule's own when the config says 0).
int stagesPerRank(const RunConfig& c)
{
    const ScheduleInfo* info = findSchedule(c.schedule.name);
    return info ? info->stagesPerRank(c.pipeline.stagesPerRank) : 1;
}

// Layers in one model chunk when p·v chunks split the layers evenly, else 0.
int layersPerChunk(const RunConfig& c)
{
    const int chunks = c.pipeline.stages * stagesPerRank(c);
    return chunks > 0 && c.model.shape.layers % chunks == 0 ? c.model.shape.layers / chunks : 0;
}

std::string decayStyle(const RunConfig& c)
{
    return c.optimizer.decay == "constant" ? "constant" : "cosine";
}

int totalSteps(const RunConfig& c)
{
    return c.optimizer.totalSteps > 0 ? c.optimizer.totalSteps : c.training.steps;
}

// Megatron's virtual pipeline stages run PyTorch's interleaved 1F1B order (the catalogue's trait).
bool isMegatronInterleaved(const std::string& schedule)
{
    const ScheduleInfo* info = findSchedule(schedule);
    return info != nullptr && info->order == ScheduleOrder::Interleaved1F1B;
}

// A TOML float (1 would be read as an integer): six significant digits, always with '.' or 'e'.
std::string tomlFloat(double x)
{
    std::ostringstream out;
    out << x;
    std::string text = out.str();
    return text.find_first_of(".eEn") == std::string::npos ? text + ".0" : text;
}

// The tokenizer lines: GPT-2's BPE for its vocabulary, else Megatron's NullTokenizer (the token
// ids as they are, for pre-tokenised data).
std::string megatronTokenizer(const GptShape& s)
{
    if (s.vocab == 50257) {
        return "  --tokenizer-type GPT2BPETokenizer\n"
               "  --vocab-file \"${VOCAB_FILE:-gpt2-vocab.json}\"\n"
               "  --merge-file \"${MERGE_FILE:-gpt2-merges.txt}\"\n";
    }
    return "  --tokenizer-type NullTokenizer\n  --vocab-size " + std::to_string(s.vocab) + "\n";
}

} // namespace

std::string megatronArgs(const RunConfig& c, const ExportOptions& options)
{
    const auto& s = c.model.shape;
    const int v = stagesPerRank(c);
    const int chunkLayers = layersPerChunk(c);
    const bool virtualStages = v > 1 && chunkLayers > 0;
    const int decayIters = totalSteps(c);
    // Megatron's OptimizerParamScheduler asserts lr_warmup_steps < lr_decay_steps.
    const int warmupIters = std::min(c.optimizer.warmupSteps, std::max(0, decayIters - 1));
    const bool gpu = options.device != "cpu";
    std::ostringstream out;
    out << "#!/usr/bin/env bash\n"
        << "# Generated by `bubblescope-cli export --format megatron` for Megatron-LM (megatron-core 0.16,\n"
        << "# pretrain_gpt.py). Run: MEGATRON_LM=/path/to/Megatron-LM DATA_PATH=/data/prefix bash megatron.sh\n"
        << "# (DATA_PATH: the prefix of a .bin/.idx pair from Megatron's tools/preprocess_data.py). Sourced, it\n"
        << "# only defines MEGATRON_ARGS, DATA_ARGS and LAUNCH_ARGS.\n"
        << "# " << scheduleNote(c.schedule.name, "Megatron-LM") << "\n";
    if (v > 1) {
        out << "# " << v << " stages per rank: Megatron's interleaved 1F1B (virtual pipeline stages) "
            << (isMegatronInterleaved(c.schedule.name) ? "is this schedule"
                                                       : "is the closest; its order differs from " + c.schedule.name)
            << (virtualStages ? "."
                              : ", but " + std::to_string(s.layers) + " layers do not split into "
                           + std::to_string(c.pipeline.stages * v) + " equal chunks, so it is left out.")
            << "\n";
    } else {
        out << "# Megatron runs non-interleaved 1F1B for every pipeline job; GPipe and zero-bubble orders are not\n"
            << "# selectable.\n";
    }
    if (warmupIters != c.optimizer.warmupSteps) {
        out << "# Warm-up: " << c.optimizer.warmupSteps << " steps in the tuned run, " << warmupIters
            << " here: Megatron asserts warm-up < decay (" << decayIters << " iterations).\n";
    }
    out << "# Data-parallel size 1 is assumed (global batch = m * b, WORLD_SIZE = the pipeline size).\n"
        << "MEGATRON_ARGS=(\n"
        << "  --pipeline-model-parallel-size " << c.pipeline.stages << "\n"
        << (virtualStages ? "  --num-layers-per-virtual-pipeline-stage " + std::to_string(chunkLayers) + "\n" : "")
        << "  --tensor-model-parallel-size 1\n"
        << "  --micro-batch-size " << c.pipeline.microBatchSize << "\n"
        << "  --global-batch-size " << globalBatch(c) << "\n"
        << "  --num-layers " << s.layers << "\n"
        << "  --hidden-size " << s.dModel << "\n"
        << "  --num-attention-heads " << s.heads << "\n"
        << "  --seq-length " << s.seqLen << "\n"
        << "  --max-position-embeddings " << s.seqLen << "\n"
        << (s.tiedHead ? "" : "  --untie-embeddings-and-output-weights\n") << "  --hidden-dropout " << s.dropout << "\n"
        << "  --attention-dropout " << s.dropout << "\n"
        << (gpu && c.model.dtype != "fp32" ? "  --bf16\n" : "") << "  --optimizer adam\n"
        << "  --lr " << c.optimizer.lr << "\n"
        << "  --min-lr " << c.optimizer.minLr << "\n"
        << "  --lr-decay-style " << decayStyle(c) << "\n"
        << "  --lr-warmup-iters " << warmupIters << "\n"
        << "  --lr-decay-iters " << decayIters << "\n"
        << "  --train-iters " << c.training.steps << "\n"
        << "  --weight-decay " << c.optimizer.weightDecay << "\n"
        << "  --adam-beta1 " << c.optimizer.beta1 << "\n"
        << "  --adam-beta2 " << c.optimizer.beta2 << "\n"
        << "  --adam-eps " << c.optimizer.eps << "\n"
        << "  --seed " << c.training.seed << "\n"
        << "  --distributed-backend " << (gpu ? "nccl" : "gloo") << "\n"
        << ")\n"
        << "DATA_ARGS=(\n"
        << "  --data-path \"${DATA_PATH:-}\"\n"
        << "  --split 949,50,1\n"
        << megatronTokenizer(s) << ")\n"
        << "NNODES=\"${NNODES:-" << options.nodes << "}\"\n"
        << "LAUNCH_ARGS=(\n"
        << "  --nnodes \"$NNODES\" --node-rank \"${NODE_RANK:-0}\" --nproc-per-node $(( " << c.pipeline.stages
        << " / NNODES ))\n"
        << "  --master-addr \"${MASTER_ADDR:-127.0.0.1}\" --master-port \"${MASTER_PORT:-29500}\"\n"
        << ")\n"
        << "[[ \"${BASH_SOURCE[0]}\" == \"$0\" ]] || return 0\n"
        << "set -euo pipefail\n"
        << ": \"${MEGATRON_LM:?set MEGATRON_LM to a Megatron-LM checkout}\"\n"
        << ": \"${DATA_PATH:?set DATA_PATH to the prefix of a .bin/.idx pair (tools/preprocess_data.py)}\"\n"
        << "exec torchrun \"${LAUNCH_ARGS[@]}\" \"$MEGATRON_LM/pretrain_gpt.py\" \"${MEGATRON_ARGS[@]}\" "
           "\"${DATA_ARGS[@]}\"\n";
    return out.str();
}

std::string deepspeedConfig(const RunConfig& c)
{
    const double minRatio = c.optimizer.lr > 0 ? c.optimizer.minLr / c.optimizer.lr : 0.0;
    nlohmann::json j = {
        {"_comment",
            "Generated by `bubblescope-cli export --format deepspeed` for DeepSpeed 0.19 with "
            "deepspeed.pipe.PipelineModule(num_stages="
                + std::to_string(c.pipeline.stages) + "). "
                + scheduleNote(c.schedule.name, "DeepSpeed", /*virtualStages=*/false)
                + " DeepSpeed's pipeline engine always runs its own 1F1B-style TrainSchedule"
                + (stagesPerRank(c) > 1 ? " with one stage per rank: it has no virtual stages, so the nearest to '"
                            + c.schedule.name + "' (" + std::to_string(stagesPerRank(c))
                            + " stages per rank) is plain 1F1B over the same ranks, with its larger bubble."
                                        : ".")},
        {"train_batch_size", globalBatch(c)},
        {"train_micro_batch_size_per_gpu", c.pipeline.microBatchSize},
        {"gradient_accumulation_steps", c.pipeline.microbatches},
        {"steps_per_print", 10},
        {"bf16", {{"enabled", c.model.dtype != "fp32"}}}, // on GPUs, as Bubblescope's CUDA runs
        {"optimizer",
            {{"type", "AdamW"},
                {"params",
                    {{"lr", c.optimizer.lr}, {"betas", {c.optimizer.beta1, c.optimizer.beta2}},
                        {"eps", c.optimizer.eps}, {"weight_decay", c.optimizer.weightDecay}}}}},
        {"scheduler",
            {{"type", "WarmupCosineLR"},
                {"params",
                    {{"total_num_steps", totalSteps(c)}, {"warmup_num_steps", c.optimizer.warmupSteps},
                        {"cos_min_ratio", c.optimizer.decay == "constant" ? 1.0 : minRatio}}}}},
        {"_bubblescope",
            {{"num_stages", c.pipeline.stages}, {"schedule", c.schedule.name}, {"stages_per_rank", stagesPerRank(c)},
                {"layers_per_stage", c.pipeline.layersPerStage},
                {"partition_method",
                    c.pipeline.layersPerStage.empty() ? "parameters" : "explicit (see layers_per_stage)"},
                // Bubblescope's own split in layer units (embedding, blocks, final norm, head): "flops",
                // "measured" (timed on the run's device at start) or the counts per stage.
                {"partition",
                    c.pipeline.partition == "explicit" ? nlohmann::json(c.pipeline.partitionUnits)
                                                       : nlohmann::json(c.pipeline.partition)}}},
    };
    return j.dump(2) + "\n";
}

std::string torchtitanConfig(const RunConfig& c)
{
    const auto& s = c.model.shape;
    const std::string& name = c.schedule.name;
    std::string schedule = torchScheduleName(name);
    bool csv = false;
    const ScheduleInfo* info = findSchedule(name);
    if (schedule.empty()) {
        // The flush order it follows (paci-interleaved: Interleaved1F1B, whose v the layers per stage
        // below give), else 1F1B.
        schedule = info ? torchScheduleName(flushCounterpartOf(*info).name) : "";
        schedule = schedule.empty() ? "1F1B" : schedule;
        // torchtitan runs arbitrary per-rank orders from a PyTorch-style CSV (zb-h1, zb-h2)
        csv = info && info->family == ScheduleFamily::ZeroBubble;
    }
    const int v = stagesPerRank(c);
    std::ostringstream out;
    out << "# Generated by `bubblescope-cli export --format torchtitan` for torchtitan 0.2.2 (JobConfig TOML:\n"
        << "# `--job.config_file torchtitan.toml`; torchtitan 0.3 replaced TOML files by Python config functions).\n"
        << "# "
        << (csv || torchScheduleName(name).empty() ? scheduleNote(name, "torchtitan")
                                                   : "Same order as torch.distributed.pipelining's Schedule" + schedule
                       + " (tests/runtime/plan/schedule/torch_peer_test checks it).")
        << "\n";
    if (csv) {
        out << "# The zero-bubble order is passed as a CSV (PyTorch has no class for it): write it with\n"
            << "#   bubblescope-cli export --config <this run's toml> --format pytorch-csv > schedule.csv\n";
    }
    // torchtitan builds its own Llama-style models by flavour; a TOML cannot give a shape, so the
    // nearest flavour is named and the difference said.
    const bool big = s.totalParams() > 1'000'000'000;
    out << "# Model: torchtitan's Llama 3 flavour " << (big ? "8B" : "debugmodel (dim 256, 6 layers)")
        << " stands in for Bubblescope's " << s.layers << " layers, dim " << s.dModel << ", " << s.heads
        << " heads, vocab " << s.vocab << " (a GPT-2-style model);\n"
        << "# a custom flavour needs a model args entry in torchtitan. hf_assets_path: the tokenizer directory\n"
        << "# (torchtitan's scripts/download_hf_assets.py).\n\n"
        << "[job]\n"
        << "description = \"bubblescope export: " << name << ", p=" << c.pipeline.stages << "\"\n\n"
        << "[model]\n"
        << "name = \"llama3\"\n"
        << "flavor = \"" << (big ? "8B" : "debugmodel") << "\"\n"
        << "hf_assets_path = \"./assets/hf/Llama-3.1-8B\"\n\n"
        << "[training]\n"
        << "local_batch_size = " << globalBatch(c) << "\n"
        << "seq_len = " << s.seqLen << "\n"
        << "steps = " << c.training.steps << "\n\n"
        << "[debug]\n"
        << "seed = " << c.training.seed << "\n\n"
        << "[optimizer]\n"
        << "name = \"AdamW\"\n"
        << "lr = " << tomlFloat(c.optimizer.lr) << "\n"
        << "beta1 = " << tomlFloat(c.optimizer.beta1) << "\n"
        << "beta2 = " << tomlFloat(c.optimizer.beta2) << "\n"
        << "eps = " << tomlFloat(c.optimizer.eps) << "\n"
        << "weight_decay = " << tomlFloat(c.optimizer.weightDecay) << "\n\n"
        << "[lr_scheduler]\n"
        << "warmup_steps = " << c.optimizer.warmupSteps << "\n"
        << "decay_type = \"" << (c.optimizer.decay == "constant" ? "linear" : "cosine") << "\"\n"
        << "min_lr_factor = "
        << tomlFloat(c.optimizer.decay == "constant" ? 1.0
                   : c.optimizer.lr > 0              ? c.optimizer.minLr / c.optimizer.lr
                                                     : 0.0)
        << "\n\n"
        << "[parallelism]\n"
        << "pipeline_parallel_degree = " << c.pipeline.stages << "\n"
        << "pipeline_parallel_schedule = \"" << schedule << "\"\n";
    if (csv) {
        out << "pipeline_parallel_schedule_csv = \"schedule.csv\"\n";
    }
    if (v > 1 && layersPerChunk(c) > 0) { // torchtitan derives v from the layers each stage holds
        out << "pipeline_parallel_layers_per_stage = " << layersPerChunk(c) << "  # " << v << " stages per rank\n";
    } else if (v > 1) {
        out << "# " << v << " stages per rank: " << s.layers << " layers do not split into " << c.pipeline.stages * v
            << " equal stages; set pipeline_parallel_layers_per_stage by hand\n";
    }
    out << "pipeline_parallel_microbatch_size = " << c.pipeline.microBatchSize << "\n";
    return out.str();
}

} // namespace bs::runtime::detail
