#pragma once
// A unit profile on disk: the layer units measured on a device (`bubblescope-cli partition
// --measured --json` writes one: "unit_costs" and "micro_batch_size"), read back so the CLI's
// what-if (`simulate`/`compare`/`tune --unit-costs FILE`) predicts, and balances over, what was
// measured, before a run trains. Torch-free; every field checked, nothing thrown.

#include "base/result.h"
#include "runtime/plan/common/gpt_shape.h"
#include "runtime/plan/partition/stage_partitioner.h"

#include <nlohmann/json_fwd.hpp>

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace bs::runtime {

struct UnitProfile
{
    std::vector<UnitCost> units; ///< one per layer unit, in order
    int microBatchSize = 0; ///< sequences per micro-batch the units were timed at
    /// The model measured ("model": layers, d_model, heads, seq_len, vocab), when the file says:
    /// a profile of another shape may have as many units and still not fit.
    std::optional<GptShape> shape;
};

/// "layers 40, d_model 64, heads 4, seq_len 64, vocab 256": for messages.
std::string shapeText(const GptShape& shape);
/// {"layers", "d_model", "heads", "seq_len", "vocab"}: what a profile records of its model.
nlohmann::json shapeJson(const GptShape& shape);

/// From a JSON object {"micro_batch_size": B, "model": {...} (optional), "unit_costs":
/// [{"forward_ms", "backward_ms", "static_bytes", "param_bytes" (optional: static / 4),
/// "activation_bytes"}, ...]}. Errors
/// (ParseError) name the field and the allowed values.
Result<UnitProfile> unitProfileFromJson(const nlohmann::json& j);

/// readBoundedFile (16 MiB) + unitProfileFromJson; the path is in every error's context.
Result<UnitProfile> readUnitProfile(const std::filesystem::path& path);

} // namespace bs::runtime
