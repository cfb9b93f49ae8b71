#include "profiler/analysis/first_pass.h"

#include "profiler/analysis/lane_sweep.h"

#include <algorithm>

namespace bs::profiler {

namespace detail {

FirstPassState::FirstPassState(
    const AnalysisOptions& options, int laneCount, std::int32_t maxMicrobatch, int chunkCount)
    : batches(options)
    , memoryOptions(options)
    , lanes(std::max(0, laneCount))
    , chunks(std::max(1, chunkCount))
    , facts(static_cast<std::size_t>(lanes))
{
    transfers.mbs = static_cast<std::size_t>(std::max(0, maxMicrobatch)) + 1;
    transfers.slots = 2 * static_cast<std::size_t>(chunks); // an activation and a gradient per chunk
    const auto laneCountU = static_cast<std::size_t>(lanes);
    // Not zeroed: a (lane, micro-batch)'s slots are read only up to its count.
    transfers.in = RecycledBuffer<Interval>(laneCountU * transfers.mbs * transfers.slots);
    // Recycled storage comes with huge pages advised (base/recycled_storage.h): plain assigns.
    transfers.count.assign(laneCountU * transfers.mbs, std::uint8_t{0});
    slots.assign(laneCountU * slotsPerLane(), MemorySlot{});
    memory.reserve(laneCountU);
    for (int lane = 0; lane < lanes; ++lane) {
        memory.emplace_back(
            lane, memoryOptions, slots.data() + static_cast<std::size_t>(lane) * slotsPerLane(), chunks);
    }
}

LaneMemory& FirstPassState::restartMemory(std::size_t lane)
{
    MemorySlot* laneSlots = slots.data() + lane * slotsPerLane();
    std::fill(laneSlots, laneSlots + slotsPerLane(), MemorySlot{});
    memory[lane] = LaneMemory(static_cast<int>(lane), memoryOptions, laneSlots, chunks);
    return memory[lane];
}

void FirstPassState::markResumePoint()
{
    if (!resumable) {
        return;
    }
    for (const LaneFacts& lane : facts) {
        resumePoints.push_back({lane.count(), lane.lastEnd()});
    }
}

bool FirstPassState::matches(
    const AnalysisOptions& options, int laneCount, std::int32_t maxMicrobatch, int chunkCount, std::size_t events) const
{
    return fits && seen == events && lanes == laneCount && chunks == chunkCount
        && transfers.mbs >= static_cast<std::size_t>(std::max(0, maxMicrobatch)) + 1
        && batches == BatchSegments(options) && memoryOptions == MemoryOptions(options);
}

} // namespace detail

FirstPass::FirstPass(const AnalysisOptions& options, int lanes, std::int32_t maxMicrobatch, int stagesPerLane)
    : m_state(std::make_unique<detail::FirstPassState>(options, lanes, maxMicrobatch, stagesPerLane))
{}

FirstPass::~FirstPass() = default;
FirstPass::FirstPass(FirstPass&&) noexcept = default;
FirstPass& FirstPass::operator=(FirstPass&&) noexcept = default;

void FirstPass::add(const TraceEvent* events, std::size_t count)
{
    detail::FirstPassState& state = *m_state;
    for (std::size_t i = 0; i < count; ++i) {
        state.add(events[i]);
    }
}

void FirstPass::addFacts(const TraceEvent* events, std::size_t count)
{
    detail::FirstPassState& state = *m_state;
    for (std::size_t i = 0; i < count; ++i) {
        state.addFacts(events[i]);
    }
}

void FirstPass::addMemory(const TraceEvent* events, std::size_t count)
{
    const detail::FirstPassState::MemoryWalk walk = m_state->memoryWalk();
    for (std::size_t i = 0; i < count; ++i) {
        walk(events[i]);
    }
}

std::size_t FirstPass::eventsSeen() const
{
    return m_state ? m_state->seen : 0;
}

} // namespace bs::profiler
