#pragma once
// Inside the importer (job_import.cpp): a job put together from its ranks' recovered actions, the
// bounds on the numbers labels name, and the per-step jobs of a profile of several steps.

#include "profiler/import/job_import.h"

#include <string>
#include <vector>

namespace bs::profiler::kineto {

/// The stage and micro-batch numbers a rank's labels name, against the bounds (kineto_trace.h),
/// before anything is sized by them; and the steps x micro-batches the global numbering needs.
/// ParseError naming `file` and the allowed range.
Status checkLabelNumbers(const RankActions& rank, const std::string& file);

/// Numbers, transfers, clocks and the snapshot of a job whose ranks' actions are recovered
/// (`job` holds the rank summaries, by pipeline rank as `recovered` and `rankTrace`).
Result<ImportedJob> assembleJob(
    ImportedJob job, std::vector<RankActions> recovered, const std::vector<const RankTrace*>& rankTrace);

/// A profile of several `ProfilerStep#N` ranges (torch.profiler's schedule): each step every rank
/// recorded becomes one job of `whole.steps`, assembled from the actions and transfers that started
/// inside it. Fewer than two such steps: nothing added.
Status importProfilerSteps(
    ImportedJob& whole, const std::vector<RankActions>& recovered, const std::vector<const RankTrace*>& rankTrace);

} // namespace bs::profiler::kineto
