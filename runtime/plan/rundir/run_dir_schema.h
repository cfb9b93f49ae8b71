#pragma once
// What the fields of metrics.jsonl records and summary.json may hold. A run directory can come
// from anywhere (another version, a hand edit, a damaged disk): its readers check every field
// they know before anyone uses it, so a string where a number belongs or a number past its range
// is one ParseError naming the field and what is allowed, never an exception in the GUI.
// Unknown fields are allowed (newer writers add some); absent fields are allowed (older ones).

#include "base/result.h"

#include <nlohmann/json.hpp>

#include <string_view>

namespace bs::runtime {

/// ok, or ParseError with context "where: field" (e.g. "metrics.jsonl:3: per_stage[1].mean_drift").
Status checkMetricsRecord(const nlohmann::json& record, std::string_view where);
Status checkSummary(const nlohmann::json& summary, std::string_view where);

} // namespace bs::runtime
