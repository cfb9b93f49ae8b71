#include "runtime/plan/rundir/run_dir_schema.h"

#include <cmath>
#include <cstdint>
#include <limits>
#include <string>

namespace bs::runtime {

namespace {

using json = nlohmann::json;

enum class Kind : std::uint8_t
{
    Real, ///< finite number, or null (the writer turns NaN/inf into null)
    NonNegative, ///< finite number >= 0, or null
    Count, ///< integer in [0, 2^31)
    CountOrNull,
    Bytes, ///< integer in [0, 2^63)
    Text,
    Flag,
};

const char* allowed(Kind k)
{
    switch (k) {
    case Kind::Real:
        return "a finite number or null";
    case Kind::NonNegative:
        return "a finite number >= 0 or null";
    case Kind::Count:
        return "an integer in 0..2147483647";
    case Kind::CountOrNull:
        return "an integer in 0..2147483647 or null";
    case Kind::Bytes:
        return "an integer in 0..9223372036854775807";
    case Kind::Text:
        return "a string";
    case Kind::Flag:
        return "true or false";
    }
    return "";
}

bool integerIn(const json& v, std::uint64_t max)
{
    if (v.is_number_unsigned()) {
        return v.get<std::uint64_t>() <= max;
    }
    if (v.is_number_integer()) {
        const auto i = v.get<std::int64_t>();
        return i >= 0 && static_cast<std::uint64_t>(i) <= max;
    }
    return false;
}

bool fits(const json& v, Kind k)
{
    const bool number = v.is_number() && std::isfinite(v.get<double>());
    switch (k) {
    case Kind::Real:
        return v.is_null() || number;
    case Kind::NonNegative:
        return v.is_null() || (number && v.get<double>() >= 0.0);
    case Kind::Count:
        return integerIn(v, std::numeric_limits<std::int32_t>::max());
    case Kind::CountOrNull:
        return v.is_null() || integerIn(v, std::numeric_limits<std::int32_t>::max());
    case Kind::Bytes:
        return integerIn(v, std::numeric_limits<std::int64_t>::max());
    case Kind::Text:
        return v.is_string();
    case Kind::Flag:
        return v.is_boolean();
    }
    return false;
}

std::string typeName(const json& v)
{
    if (v.is_number()) {
        return "the number " + v.dump();
    }
    if (v.is_string()) {
        const std::string s = v.get<std::string>();
        return "the string \"" + (s.size() > 40 ? s.substr(0, 40) + "..." : s) + "\"";
    }
    return std::string("of type ") + v.type_name();
}

Error fieldError(std::string_view where, const std::string& field, const std::string& problem, const char* allowedText)
{
    return makeError(ErrorCode::ParseError,
        std::string(where) + ": " + field + " is " + problem + "; allowed: " + allowedText,
        std::string(where) + ": " + field);
}

/// Checks `object[key]` when present.
Status field(const json& object, const char* key, Kind k, std::string_view where, const std::string& prefix)
{
    const auto it = object.find(key);
    if (it == object.end() || fits(*it, k)) {
        return ok();
    }
    return fieldError(where, prefix + key, typeName(*it), allowed(k));
}

/// `object[key]`, when present, is an array whose every element is of kind `k`.
Status arrayField(const json& object, const char* key, Kind k, std::string_view where, const std::string& prefix)
{
    const auto it = object.find(key);
    if (it == object.end()) {
        return ok();
    }
    if (!it->is_array()) {
        return fieldError(where, prefix + key, typeName(*it), (std::string("an array of ") + allowed(k)).c_str());
    }
    for (std::size_t i = 0; i < it->size(); ++i) {
        if (!fits((*it)[i], k)) {
            return fieldError(where, prefix + key + "[" + std::to_string(i) + "]", typeName((*it)[i]), allowed(k));
        }
    }
    return ok();
}

Status checkStage(const json& stage, std::string_view where, const std::string& prefix)
{
    if (!stage.is_object()) {
        return fieldError(where, prefix.substr(0, prefix.size() - 1), typeName(stage), "an object");
    }
    for (const char* key : {"stage", "version", "max_version_lag", "max_recompute_lag"}) {
        if (Status s = field(stage, key, Kind::Count, where, prefix); !s) {
            return s;
        }
    }
    for (const char* key : {"peak_memory_bytes", "peak_activation_bytes", "peak_stash_bytes", "peak_reserved_bytes",
             "drift_samples", "recomputes", "recomputes_on_newer_weights"}) {
        if (Status s = field(stage, key, Kind::Bytes, where, prefix); !s) {
            return s;
        }
    }
    for (const char* key : {"mean_drift", "max_drift"}) {
        if (Status s = field(stage, key, Kind::NonNegative, where, prefix); !s) {
            return s;
        }
    }
    if (Status s = arrayField(stage, "version_lag_histogram", Kind::Bytes, where, prefix); !s) {
        return s;
    }
    if (const auto it = stage.find("memory_bytes"); it != stage.end()) {
        if (!it->is_object()) {
            return fieldError(where, prefix + "memory_bytes", typeName(*it), "an object of byte counts");
        }
        for (const auto& [key, value] : it->items()) {
            if (!fits(value, Kind::Bytes)) {
                return fieldError(where, prefix + "memory_bytes." + key, typeName(value), allowed(Kind::Bytes));
            }
        }
    }
    return ok();
}

Status checkStages(const json& object, std::string_view where)
{
    const auto it = object.find("per_stage");
    if (it == object.end()) {
        return ok();
    }
    if (!it->is_array()) {
        return fieldError(where, "per_stage", typeName(*it), "an array of objects");
    }
    for (std::size_t i = 0; i < it->size(); ++i) {
        if (Status s = checkStage((*it)[i], where, "per_stage[" + std::to_string(i) + "]."); !s) {
            return s;
        }
    }
    return ok();
}

struct Rule
{
    const char* key;
    Kind kind;
};

/// The noise-scale figures of `object` (the estimate or one of its per_stage entries).
Status checkNoiseFigures(const json& object, std::string_view where, const std::string& prefix)
{
    if (!object.is_object()) {
        return fieldError(where, prefix.substr(0, prefix.size() - 1), typeName(object), "an object");
    }
    for (const Rule& r : {Rule{"stage", Kind::Count}, Rule{"grad_sq_norm", Kind::Real}, Rule{"trace_sigma", Kind::Real},
             Rule{"b_simple", Kind::NonNegative}, Rule{"b_small", Kind::NonNegative}, Rule{"b_big", Kind::NonNegative},
             Rule{"updates", Kind::Count}}) {
        if (Status s = field(object, r.key, r.kind, where, prefix); !s) {
            return s;
        }
    }
    return ok();
}

/// `object[key]`, when present and not null: a NoiseScaleEstimate (run_metrics.h).
Status checkNoise(const json& object, const char* key, std::string_view where)
{
    const auto it = object.find(key);
    if (it == object.end() || it->is_null()) {
        return ok();
    }
    const std::string prefix = std::string(key) + ".";
    if (Status s = checkNoiseFigures(*it, where, prefix); !s) {
        return s;
    }
    const auto stages = it->find("per_stage");
    if (stages == it->end()) {
        return ok();
    }
    if (!stages->is_array()) {
        return fieldError(where, prefix + "per_stage", typeName(*stages), "an array of objects");
    }
    for (std::size_t i = 0; i < stages->size(); ++i) {
        if (Status s = checkNoiseFigures((*stages)[i], where, prefix + "per_stage[" + std::to_string(i) + "]."); !s) {
            return s;
        }
    }
    return ok();
}

Status checkRules(const json& object, std::initializer_list<Rule> rules, std::string_view where)
{
    for (const Rule& r : rules) {
        if (Status s = field(object, r.key, r.kind, where, ""); !s) {
            return s;
        }
    }
    return ok();
}

} // namespace

Status checkMetricsRecord(const json& record, std::string_view where)
{
    if (!record.is_object()) {
        return makeError(ErrorCode::ParseError, "metrics record is not a JSON object", std::string(where));
    }
    if (Status s = checkRules(record,
            {{"step", Kind::Count}, {"train_loss", Kind::Real}, {"val_loss", Kind::Real},
                {"virtual_time_s", Kind::NonNegative}, {"wall_time_s", Kind::NonNegative},
                {"tokens_per_s_virtual", Kind::NonNegative}, {"tokens_per_s_wall", Kind::NonNegative}},
            where);
        !s) {
        return s;
    }
    if (Status s = checkNoise(record, "noise", where); !s) {
        return s;
    }
    return checkStages(record, where);
}

Status checkSummary(const json& summary, std::string_view where)
{
    if (!summary.is_object()) {
        return makeError(ErrorCode::ParseError, "summary is not a JSON object", std::string(where));
    }
    if (Status s = checkRules(summary,
            {{"schedule", Kind::Text}, {"reference", Kind::Flag}, {"steps", Kind::Count},
                {"final_train_loss", Kind::Real}, {"val_loss", Kind::Real}, {"virtual_time_s", Kind::NonNegative},
                {"wall_time_s", Kind::NonNegative}, {"busy_time_s", Kind::NonNegative},
                {"tokens_per_s_virtual", Kind::NonNegative}, {"tokens_per_s_wall", Kind::NonNegative},
                {"bubble_fraction", Kind::Real}, {"gpu_bubble_fraction", Kind::Real}, {"target_loss", Kind::Real},
                {"time_to_target_s", Kind::NonNegative}, {"step_to_target", Kind::CountOrNull}, {"error", Kind::Text},
                {"stopped", Kind::Text}, {"device", Kind::Text}, {"dtype", Kind::Text}, {"checkpoints", Kind::Count},
                {"checkpoint_wall_s", Kind::NonNegative}, {"checkpoint_bytes", Kind::Bytes}},
            where);
        !s) {
        return s;
    }
    for (const Rule& r : {Rule{"losses", Kind::Real}, Rule{"val_losses", Kind::Real}, Rule{"val_steps", Kind::Count},
             Rule{"val_virtual_times_s", Kind::NonNegative}, Rule{"notes", Kind::Text}}) {
        if (Status s = arrayField(summary, r.key, r.kind, where, ""); !s) {
            return s;
        }
    }
    // GPU runs: the trace's cupti.* attributes, each a string.
    if (const auto it = summary.find("kernel_profiling"); it != summary.end()) {
        if (!it->is_object()) {
            return fieldError(where, "kernel_profiling", typeName(*it), "an object of strings");
        }
        for (const auto& [key, value] : it->items()) {
            if (!fits(value, Kind::Text)) {
                return fieldError(where, "kernel_profiling." + key, typeName(value), allowed(Kind::Text));
            }
        }
    }
    if (const auto it = summary.find("per_rank"); it != summary.end()) { // multi-stage ranks
        if (!it->is_array()) {
            return fieldError(where, "per_rank", typeName(*it), "an array of objects");
        }
        for (std::size_t i = 0; i < it->size(); ++i) {
            const json& rank = (*it)[i];
            const std::string prefix = "per_rank[" + std::to_string(i) + "].";
            if (!rank.is_object()) {
                return fieldError(where, prefix.substr(0, prefix.size() - 1), typeName(rank), "an object");
            }
            for (const Rule& r : {Rule{"rank", Kind::Count}, Rule{"peak_memory_bytes", Kind::Bytes},
                     Rule{"peak_activation_bytes", Kind::Bytes}}) {
                if (Status s = field(rank, r.key, r.kind, where, prefix); !s) {
                    return s;
                }
            }
            if (Status s = arrayField(rank, "stages", Kind::Count, where, prefix); !s) {
                return s;
            }
        }
    }
    if (Status s = checkNoise(summary, "noise_scale", where); !s) {
        return s;
    }
    return checkStages(summary, where);
}

} // namespace bs::runtime
