#pragma once
// Internal: one generator per schedule family. Each receives validated parameters and returns
// per-stage programs plus the stated bounds; makeSchedule() validates the result.

#include "runtime/plan/schedule/catalogue.h"
#include "runtime/plan/schedule/schedule.h"

namespace bs::runtime::detail {

Schedule makeGpipe(const ScheduleParams& params);
Schedule makeOneFOneB(const ScheduleParams& params);
/// Async 1F1B without flush. `updateEvery` backward passes per update; `policy` says how the
/// backward sees weights (Stash, TwoVersions, InPlace).
Schedule makeAsyncOneFOneB(const ScheduleParams& params, int updateEvery, WeightPolicy policy);
/// Zero-bubble handcrafted schedules (Qi et al. 2023): ZB-H1 keeps 1F1B's in-flight bound,
/// ZB-H2 allows 2(p − s) − 1 (a list scheduler).
Schedule makeZeroBubble(const ScheduleParams& params, bool h2);
/// Schedules with several stages per rank (`order`: Interleaved1F1B, LoopedBfs,
/// InterleavedZeroBubble, ZeroBubbleV, DualPipeV), in torch.distributed.pipelining's compute order.
Schedule makeMultiStage(const ScheduleParams& params, ScheduleOrder order);
/// One batch of rank `rank`'s order under PyTorch's ScheduleInterleavedZeroBubble (ZB1P) with v
/// stages per rank on a loop placement; v = 1 is ZB-H1.
std::vector<Action> interleavedZeroBubbleOrder(int rank, int p, int v, int m);
/// One batch of rank `rank`'s order under PyTorch's ScheduleInterleaved1F1B, v stages per rank,
/// m micro-batches (a multiple of p).
std::vector<Action> interleavedOneFOneBOrder(int rank, int p, int v, int m);
/// PACI on a loop placement (paci-interleaved): one interleaved-1F1B stream over every global
/// batch, each stage updating after every `updateEvery` of its backwards (generators_paci_interleaved.cpp).
Schedule makePaciInterleaved(const ScheduleParams& params, int updateEvery);

} // namespace bs::runtime::detail
