#pragma once
// The profiler's own event vocabulary. It knows nothing of the runtime: the runtime (simulator,
// training executors, CUPTI collector) translates its actions into these events.

#include <cstdint>
#include <string_view>

namespace bs::profiler {

using TimeNs = std::int64_t;

/// Most model stages one lane (a rank) may hold: a trace's stages per lane (TraceMeta) and the
/// runtime's pipeline.stages_per_rank share this bound.
inline constexpr int kMaxStagesPerLane = 16;

/// What a compute event did. Letters match PyTorch pipelining (F, B, I, W) plus U for updates.
enum class EventKind : std::uint8_t {
    Forward,
    Backward,
    BackwardInput,
    BackwardWeight,
    Update,
    Send,   ///< communication lane: activation or gradient leaving the stage
    Kernel, ///< GPU kernel record (CUPTI), tagged with the action that launched it
    Marker, ///< instant: a settings change applied at a batch boundary, a note
};

/// Sub-lane of a stage's row in the timeline.
enum class Lane : std::uint8_t {
    Compute,
    Comm,
    Kernel,
};

constexpr int kEventKindCount = 8;

char eventLetter(EventKind kind);
std::string_view eventKindName(EventKind kind);
std::string_view laneName(Lane lane);

/// One closed interval of work on one stage's lane. 40 bytes, so 10^6 events are 40 MB.
struct TraceEvent
{
    TimeNs start = 0; ///< ns since the run's origin (virtual or wall clock, see TraceMeta)
    TimeNs end = 0;
    std::int64_t bytes = 0;      ///< activation bytes created (F), message size (Send), 0 otherwise
    std::int32_t microbatch = -1;///< global micro-batch id; Update: the update index; Marker: its id (a live Apply: the first step it governs)
    std::int32_t version = 0;    ///< the stage's weight version when the event started
    std::uint16_t stage = 0;
    EventKind kind = EventKind::Forward;
    Lane lane = Lane::Compute;
    std::uint16_t aux = 0;       ///< Send: destination stage; Update: micro-batches applied

    TimeNs duration() const { return end - start; }
    bool isCompute() const { return lane == Lane::Compute; }
};

} // namespace bs::profiler
