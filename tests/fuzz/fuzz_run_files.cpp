// libFuzzer harness: a run directory's JSON files: metrics.jsonl lines (with their field checks)
// and summary.json (parsed as readRunDir does, then checked), then read as loadRun() reads them:
// a record or summary the checks passed must convert (BatchMetrics, RunSummary) without throwing,
// so an exception escaping here is a finding, not a crash loadRun() would have to catch.
#include "runtime/plan/rundir/run_dir_reader.h"
#include "runtime/plan/rundir/run_dir_schema.h"
#include "runtime/plan/rundir/run_metrics.h"

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
            if (record.is_object() && record.contains("train_loss")) {
                (void)record.get<bs::runtime::BatchMetrics>(); // as loadRun() converts it
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
        if (bs::runtime::checkSummary(summary, "fuzz.json")) {
            (void)summary.get<bs::runtime::RunSummary>(); // as loadRun() converts it
        }
    }
    return 0;
}
