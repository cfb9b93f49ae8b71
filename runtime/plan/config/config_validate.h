#pragma once
// Range and cross-field checks for RunConfig. Every message names the field, the value and what is
// allowed, e.g. "pipeline.microbatches = 0 is out of range; allowed: 1..65536"; the Error's
// context is the field name ("pipeline.microbatches") so a UI can highlight it.

#include "base/result.h"
#include "runtime/plan/config/run_config.h"

#include <string>
#include <vector>

namespace bs::runtime {

/// Every problem found, in section order; empty when the config is valid. Codes: InvalidArgument.
std::vector<Error> validateAll(const RunConfig& config);

/// The first problem validateAll() finds, or ok().
Status validate(const RunConfig& config);

/// The schedule names a config may use, in catalogue order.
const std::vector<std::string>& configScheduleNames();

/// True for schedules without a flush (pipedream, 2bw, async-1f1b, paci).
bool isAsynchronousSchedule(const std::string& name);

} // namespace bs::runtime
