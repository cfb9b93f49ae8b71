#pragma once
// A trace's record of where it repeats itself: a simulation's drive replays its steady state
// (runtime/plan/sim/periodic_replay.h), writing each batch's events as a copy of one recorded batch
// moved in time, micro-batch and weight version. A reader that knows this can take the copies
// in one step instead of event by event (the analysis does: profiler/analysis/periodic_leap.h).
// Only the producer that wrote the copies says so; a trace read from a file or built by hand
// has no TraceRepeat, and everything that reads one gives the same result without it.

#include "profiler/trace/trace_event.h"

#include <cstddef>
#include <cstdint>

namespace bs::profiler {

/// Events [first, first + length) are a period; right after it come `copies` more periods, the
/// k-th (k = 1..copies) event for event the period moved by k · (shift, microbatches, updates):
/// start and end `shift` later, the micro-batch id `microbatches` up (an Update's, which is its
/// index, `updates` up) and the version `updates` up. Every other field is the period's.
struct TraceRepeat
{
    std::size_t first = 0;
    std::size_t length = 0;
    std::size_t copies = 0;
    TimeNs shift = 0;
    std::int32_t microbatches = 0;
    std::int32_t updates = 0;

    /// The event index where period k (0: the recorded one, 1..copies: the copies) begins.
    std::size_t begin(std::size_t k) const { return first + k * length; }
    /// Whether it describes events that a trace of `size` events holds, moving forward in time.
    bool fits(std::size_t size) const
    {
        return length > 0 && copies > 0 && shift > 0 && microbatches >= 0 && updates >= 0 && first <= size
            && (size - first) / length >= copies + 1;
    }
    friend bool operator==(const TraceRepeat&, const TraceRepeat&) = default;
};

} // namespace bs::profiler
