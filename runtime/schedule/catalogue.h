#pragma once
// Every schedule Bubblescope knows, generated as data for the requested (p, m, a, N, k).

#include "runtime/schedule/schedule.h"

#include <string>
#include <vector>

namespace bs::runtime {

struct ScheduleInfo
{
    std::string name;
    std::string summary; ///< one line for `bubblescope-cli schedules` and the GUI's tooltip
    bool asynchronous = false;
};

/// gpipe, 1f1b, zb-h1, zb-h2, pipedream, 2bw, async-1f1b, paci, in that order.
const std::vector<ScheduleInfo>& scheduleCatalogue();
bool isKnownSchedule(const std::string& name);

/// Generates and validates the named schedule. Bad parameters give ErrorCode::InvalidArgument
/// whose context names the field and the allowed values.
Result<Schedule> makeSchedule(const ScheduleParams& params);

/// PACI's drift bound: the most updates a micro-batch can cross at stage s,
/// ⌈(p − s − 1 + k) / a⌉.
int paciLagBound(int stages, int stage, int accum, int extraDepth = 0);

} // namespace bs::runtime
