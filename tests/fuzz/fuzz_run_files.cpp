// libFuzzer harness: a run directory's JSON files: metrics.jsonl lines (with their field checks)
// and summary.json (parsed as readRunDir does, then checked), then read by the GUI's metric reader
// path (the fields it takes must never throw once checked).
#include "runtime/rundir/run_dir_reader.h"
#include "runtime/rundir/run_dir_schema.h"

#include <nlohmann/json.hpp>

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <string_view>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size)
{
    const std::string_view text(reinterpret_cast<const char*>(data), size);
    auto log = bs::runtime::parseMetricsJsonl(text, "fuzz.jsonl");
    if (log) {
        for (const nlohmann::json& record : log->records) {
            // Checked records hold numbers where the GUI reads numbers: these must not throw.
            if (const auto it = record.find("step"); it != record.end() && !it->is_null()) {
                (void)it->get<std::int64_t>();
            }
            if (const auto it = record.find("per_stage"); it != record.end()) {
                for (const auto& stage : *it) {
                    if (const auto d = stage.find("mean_drift"); d != stage.end() && !d->is_null()) {
                        (void)std::isfinite(d->get<double>());
                    }
                }
            }
        }
    }
    const nlohmann::json summary = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
    if (!summary.is_discarded()) {
        (void)bs::runtime::checkSummary(summary, "fuzz.json");
    }
    return 0;
}
