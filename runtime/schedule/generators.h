#pragma once
// Internal: one generator per schedule family. Each receives validated parameters and returns
// per-stage programs plus the stated bounds; makeSchedule() validates the result.

#include "runtime/schedule/schedule.h"

namespace bs::runtime::detail {

Schedule makeGpipe(const ScheduleParams& params);
Schedule makeOneFOneB(const ScheduleParams& params);
/// Async 1F1B without flush. `updateEvery` backward passes per update; `policy` says how the
/// backward sees weights (Stash, TwoVersions, InPlace).
Schedule makeAsyncOneFOneB(const ScheduleParams& params, int updateEvery, WeightPolicy policy);
/// Zero-bubble handcrafted schedules (Qi et al. 2023): ZB-H1 keeps 1F1B's in-flight bound,
/// ZB-H2 allows 2(p − s) − 1.
Schedule makeZeroBubble(const ScheduleParams& params, bool h2);

} // namespace bs::runtime::detail
