#include "runtime/train/model/device_memory.h"

#include <algorithm>
#include <atomic>

namespace bs::runtime {

namespace {

std::atomic<DeviceMemoryAttributor*> g_installed{nullptr};

} // namespace

DeviceMemoryAttributor::DeviceMemoryAttributor(AllocatorStats& stats, std::vector<int> deviceOfStage)
    : m_stats(stats)
    , m_device(std::move(deviceOfStage))
    , m_memory(m_device.size())
{}

int DeviceMemoryAttributor::deviceOf(int stage) const
{
    return stage >= 0 && stage < static_cast<int>(m_device.size()) ? m_device[static_cast<std::size_t>(stage)] : -1;
}

namespace {
// One stack per thread of its open scopes (innermost last) and the allocated bytes when each
// segment (re)opened. Only the thread that opened a scope closes it: no lock needed here.
thread_local std::vector<std::pair<int, int>> t_stack; // (stage, category)
thread_local std::vector<std::int64_t> t_start;
} // namespace

void DeviceMemoryAttributor::open(Segment& seg)
{
    if (seg.device < 0) {
        return;
    }
    seg.start = m_stats.sample(seg.device).allocated;
    m_stats.resetPeak(seg.device);
}

void DeviceMemoryAttributor::close(const Segment& seg)
{
    if (seg.device < 0) {
        return;
    }
    const AllocatorSample now = m_stats.sample(seg.device);
    const std::int64_t delta = now.allocated - seg.start;
    const std::int64_t excess = std::max<std::int64_t>(now.peakAllocated - seg.start, delta);
    const auto k = static_cast<std::size_t>(seg.category);
    const std::lock_guard<std::mutex> lock(m_mutex);
    StageMemory& m = m_memory[static_cast<std::size_t>(seg.stage)];
    m.peak[k] = std::max(m.peak[k], m.live[k] + std::max<std::int64_t>(excess, 0));
    if (seg.category != MemoryCategory::Other) {
        m.peakTotal = std::max(m.peakTotal, m.liveTotal + std::max<std::int64_t>(excess, 0));
        m.liveTotal += delta;
    }
    m.live[k] += delta;
    m.peakReserved = std::max(m.peakReserved, now.peakReserved);
    settleShared(seg);
}

void DeviceMemoryAttributor::settleShared(const Segment& seg)
{
    for (auto it = m_shared.begin(); it != m_shared.end();) {
        if (it->device != seg.device || it->alive()) {
            ++it;
            continue;
        }
        // The segment's delta holds −bytes for this free: give them back to it, take them from the owner.
        if (it->owner != seg.stage || it->category != seg.category) {
            StageMemory& freer = m_memory[static_cast<std::size_t>(seg.stage)];
            StageMemory& owner = m_memory[static_cast<std::size_t>(it->owner)];
            freer.live[static_cast<std::size_t>(seg.category)] += it->bytes;
            owner.live[static_cast<std::size_t>(it->category)] -= it->bytes;
            if (seg.category != MemoryCategory::Other) {
                freer.liveTotal += it->bytes;
            }
            if (it->category != MemoryCategory::Other) {
                owner.liveTotal -= it->bytes;
            }
        }
        it = m_shared.erase(it);
    }
}

void DeviceMemoryAttributor::shareBuffer(
    int owner, MemoryCategory category, std::int64_t bytes, std::function<bool()> alive)
{
    const int device = deviceOf(owner);
    if (device < 0 || bytes <= 0 || !alive) {
        return;
    }
    const std::lock_guard<std::mutex> lock(m_mutex);
    m_shared.push_back(Shared{owner, category, device, bytes, std::move(alive)});
}

std::size_t DeviceMemoryAttributor::sharedBuffers() const
{
    const std::lock_guard<std::mutex> lock(m_mutex);
    return m_shared.size();
}

void DeviceMemoryAttributor::enter(int stage, MemoryCategory category)
{
    if (!t_stack.empty()) { // the outer scope's segment ends here; it reopens when this one ends
        const auto [s, c] = t_stack.back();
        close(Segment{s, static_cast<MemoryCategory>(c), deviceOf(s), t_start.back()});
    }
    Segment seg{stage, category, deviceOf(stage), 0};
    open(seg);
    t_stack.emplace_back(stage, static_cast<int>(category));
    t_start.push_back(seg.start);
}

void DeviceMemoryAttributor::leave()
{
    if (t_stack.empty()) {
        return;
    }
    const auto [s, c] = t_stack.back();
    close(Segment{s, static_cast<MemoryCategory>(c), deviceOf(s), t_start.back()});
    t_stack.pop_back();
    t_start.pop_back();
    if (!t_stack.empty()) {
        const auto [os, oc] = t_stack.back();
        Segment outer{os, static_cast<MemoryCategory>(oc), deviceOf(os), 0};
        open(outer);
        t_start.back() = outer.start;
    }
}

StageMemory DeviceMemoryAttributor::stage(int stage) const
{
    const std::lock_guard<std::mutex> lock(m_mutex);
    if (stage < 0 || stage >= static_cast<int>(m_memory.size())) {
        return {};
    }
    return m_memory[static_cast<std::size_t>(stage)];
}

void DeviceMemoryAttributor::resetPeaks()
{
    const std::lock_guard<std::mutex> lock(m_mutex);
    for (StageMemory& m : m_memory) {
        m.peak = m.live;
        m.peakTotal = m.liveTotal;
        m.peakReserved = 0;
    }
}

void installDeviceMemory(DeviceMemoryAttributor* attributor)
{
    g_installed.store(attributor);
}

DeviceMemoryAttributor* installedDeviceMemory()
{
    return g_installed.load();
}

} // namespace bs::runtime
