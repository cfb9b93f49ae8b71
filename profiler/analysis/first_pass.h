#pragma once
// The first of analyze()'s two walks of a trace, taken as the trace is written. A simulation runs
// it on a second thread right behind the scheduler core (runtime/plan/sim/simulator.cpp), so it reads
// each event from the shared cache a moment after it was written instead of from main memory
// later, and it is off the caller's thread: analyze() is then left with its second walk.

#include "profiler/analysis/report.h"
#include "profiler/trace/trace_event.h"

#include <cstddef>
#include <cstdint>
#include <memory>

namespace bs::profiler {

class TraceSnapshot;

namespace detail {
struct FirstPassState;
}

/// Each lane's facts, the transfers into each lane and the time span, fed the events in the
/// order they are appended. Sized up front: a producer knows its lanes, its micro-batch ids and
/// its stages per lane before it runs. analyze() uses it only if it saw exactly the trace's events
/// and the trace fits those sizes; otherwise analyze() walks the trace itself (same report).
class FirstPass
{
public:
    /// `options` as analyze() will get them; `lanes` the trace's lanes, `maxMicrobatch` the
    /// largest micro-batch id any event may carry, `stagesPerLane` the trace's stages_per_rank (1
    /// when it has none).
    FirstPass(const AnalysisOptions& options, int lanes, std::int32_t maxMicrobatch, int stagesPerLane);
    ~FirstPass();
    FirstPass(FirstPass&&) noexcept;
    FirstPass& operator=(FirstPass&&) noexcept;

    /// The next `count` events of the trace, in append order.
    void add(const TraceEvent* events, std::size_t count);
    /// add() in two halves that two threads may take at once, each over every event in append
    /// order: addFacts() the lanes' facts, the transfers and the time span, addMemory() each
    /// lane's memory and lag (its events' order is addFacts()' to find out: pass 2 tracks the
    /// memory of a lane out of start order afresh).
    void addFacts(const TraceEvent* events, std::size_t count);
    void addMemory(const TraceEvent* events, std::size_t count);
    std::size_t eventsSeen() const;

private:
    friend Report analyze(const TraceSnapshot& trace, const AnalysisOptions& options, FirstPass* firstPass);
    std::unique_ptr<detail::FirstPassState> m_state;
};

} // namespace bs::profiler
