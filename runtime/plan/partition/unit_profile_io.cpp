// Unit profiles on disk (unit_profile_io.h).
#include "runtime/plan/partition/unit_profile_io.h"

#include "base/bounded_read.h"
#include "runtime/plan/common/gpt_shape.h"

#include <nlohmann/json.hpp>

#include <cmath>
#include <limits>

namespace bs::runtime {

namespace {

constexpr double kMaxUnitMs = 1e6; // as cost_model.h's kMaxActionMs: 1000 s per unit at most
constexpr std::uint64_t kMaxProfileBytes = 16 * kMiB;

Error bad(const std::string& field, const std::string& allowed)
{
    return Error{
        ErrorCode::ParseError, field + " is missing or out of range", "unit_costs: " + field + ": allowed " + allowed};
}

bool readMs(const nlohmann::json& o, const char* key, double& out)
{
    const auto it = o.find(key);
    if (it == o.end() || !it->is_number()) {
        return false;
    }
    out = it->get<double>();
    return std::isfinite(out) && out >= 0.0 && out <= kMaxUnitMs;
}

bool readBytes(const nlohmann::json& o, const char* key, std::int64_t& out)
{
    const auto it = o.find(key);
    if (it == o.end() || !(it->is_number_integer() || it->is_number_unsigned())) {
        return false;
    }
    if (it->is_number_unsigned()
        && it->get<std::uint64_t>() > static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max() / 1024)) {
        return false;
    }
    out = it->get<std::int64_t>();
    return out >= 0 && out <= std::numeric_limits<std::int64_t>::max() / 1024; // room to sum thousands of units
}

bool readCount(const nlohmann::json& o, const char* key, int& out)
{
    const auto it = o.find(key);
    if (it == o.end() || !it->is_number_integer() || it->get<long long>() < 1 || it->get<long long>() > (1 << 24)) {
        return false;
    }
    out = it->get<int>();
    return true;
}

} // namespace

std::string shapeText(const GptShape& s)
{
    return "layers " + std::to_string(s.layers) + ", d_model " + std::to_string(s.dModel) + ", heads "
        + std::to_string(s.heads) + ", seq_len " + std::to_string(s.seqLen) + ", vocab " + std::to_string(s.vocab);
}

nlohmann::json shapeJson(const GptShape& s)
{
    return {{"layers", s.layers}, {"d_model", s.dModel}, {"heads", s.heads}, {"seq_len", s.seqLen}, {"vocab", s.vocab}};
}

Result<UnitProfile> unitProfileFromJson(const nlohmann::json& j)
{
    if (!j.is_object()) {
        return Error{ErrorCode::ParseError, "a unit profile is a JSON object",
            "unit_costs: allowed: the output of partition --measured --json"};
    }
    if (const auto costs = j.find("costs"); costs != j.end() && *costs != "measured") {
        // partition --json without --measured: FLOP-proportional figures, not times to simulate with
        return Error{ErrorCode::ParseError, "the profile holds FLOP estimates, not measured times",
            "unit_costs: costs: allowed \"measured\" (bubblescope-cli partition --measured --json)"};
    }
    UnitProfile profile;
    const auto b = j.find("micro_batch_size");
    if (b == j.end() || !b->is_number_integer() || b->get<long long>() < 1 || b->get<long long>() > (1 << 20)) {
        return bad("micro_batch_size", "an integer in 1..1048576");
    }
    profile.microBatchSize = b->get<int>();
    if (const auto model = j.find("model"); model != j.end()) {
        GptShape shape;
        if (!model->is_object() || !readCount(*model, "layers", shape.layers)
            || !readCount(*model, "d_model", shape.dModel) || !readCount(*model, "heads", shape.heads)
            || !readCount(*model, "seq_len", shape.seqLen) || !readCount(*model, "vocab", shape.vocab)) {
            return bad("model", "an object of positive integers layers, d_model, heads, seq_len, vocab");
        }
        profile.shape = shape;
    }
    const auto list = j.find("unit_costs");
    if (list == j.end() || !list->is_array() || list->empty() || list->size() > 100'000) {
        return bad("unit_costs", "an array of 1..100000 layer units");
    }
    for (std::size_t i = 0; i < list->size(); ++i) {
        const nlohmann::json& o = (*list)[i];
        const std::string at = "unit_costs[" + std::to_string(i) + "]";
        if (!o.is_object()) {
            return bad(at, "an object");
        }
        UnitCost u;
        if (!readMs(o, "forward_ms", u.forwardMs)) {
            return bad(at + ".forward_ms", "a number in [0, 1e+06] ms");
        }
        if (!readMs(o, "backward_ms", u.backwardMs)) {
            return bad(at + ".backward_ms", "a number in [0, 1e+06] ms");
        }
        if (!readBytes(o, "static_bytes", u.staticBytes)) {
            return bad(at + ".static_bytes", "an integer >= 0");
        }
        if (!readBytes(o, "activation_bytes", u.activationBytes)) {
            return bad(at + ".activation_bytes", "an integer >= 0");
        }
        if (o.contains("param_bytes")) {
            if (!readBytes(o, "param_bytes", u.paramBytes)) {
                return bad(at + ".param_bytes", "an integer >= 0");
            }
        } else {
            u.paramBytes = u.staticBytes / 4; // fp32 weights, gradients and AdamW's two moments
        }
        profile.units.push_back(u);
    }
    return profile;
}

Result<UnitProfile> readUnitProfile(const std::filesystem::path& path)
{
    auto text = readBoundedFile(path, kMaxProfileBytes, "unit profile");
    if (!text) {
        return text.error();
    }
    nlohmann::json j;
    try {
        j = nlohmann::json::parse(*text, nullptr, /*allow_exceptions=*/false);
    } catch (const nlohmann::json::exception&) { // a number past double's range
        j = nlohmann::json(nlohmann::json::value_t::discarded);
    }
    if (j.is_discarded()) {
        return Error{ErrorCode::ParseError, "the unit profile is not valid JSON", path.string()};
    }
    auto profile = unitProfileFromJson(j);
    if (!profile) {
        Error e = profile.error();
        e.message = path.string() + ": " + e.message;
        return e;
    }
    return profile;
}

} // namespace bs::runtime
