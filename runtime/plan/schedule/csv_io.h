#pragma once
// PyTorch-pipelining-style CSV: one line per rank (stage), comma-separated action strings
// ("0F0,0F1,0B0,..."). Updates use our own cell form "0U0:0-7", which PyTorch does not have.

#include "runtime/plan/schedule/schedule.h"

#include <cstdint>
#include <string>

namespace bs::runtime {

std::string scheduleToCsv(const Schedule& schedule);

/// Reads a CSV written by scheduleToCsv() (or by PyTorch, without U cells: its "compute_only"
/// form, or its "compute_comms" form, whose SEND/RECV/UNSHARD/RESHARD/REDUCE_GRAD cells are
/// skipped; one line per rank, any stage placement). An overlapped pair reads as
/// "(1F6;6B2)OVERLAP_F_B". Micro-batches per
/// batch, async flags and bounds are taken from `params`; stages is taken from the file.
/// Errors name the line, the cell and the reason; the result is validated.
Result<Schedule> scheduleFromCsv(const std::string& text, const ScheduleParams& params);

Status writeScheduleCsv(const Schedule& schedule, const std::string& path);
/// A schedule CSV may not exceed this (a 256-stage, 10^5-micro-batch schedule is ~40 MiB).
inline constexpr std::uint64_t kMaxScheduleCsvBytes = std::uint64_t{256} << 20;

/// IoError naming the file when it cannot be read, is not a regular file or exceeds
/// kMaxScheduleCsvBytes; the parser's errors, with the file in message and context, otherwise.
Result<Schedule> readScheduleCsv(const std::string& path, const ScheduleParams& params);

} // namespace bs::runtime
