#include "runtime/train/model/memory_tracker.h"

#include "runtime/train/model/device_memory.h"

#include <c10/core/Allocator.h>
#include <c10/core/CPUAllocator.h>
#include <torch/version.h>

#include <algorithm>
#include <atomic>
#include <mutex>
#include <unordered_map>

namespace bs::runtime {

namespace {

thread_local int t_stage = -1;
thread_local MemoryCategory t_category = MemoryCategory::Other;

constexpr auto kStages = static_cast<std::size_t>(MemoryTracker::kMaxStages);

// What the wrapper keeps per live allocation: the real allocation and where it was charged.
struct Allocation
{
    c10::DataPtr inner;
    std::int64_t bytes;
    int stage;
    MemoryCategory category;
};

struct Counters
{
    std::mutex mutex; // allocations are frequent but short; one lock keeps live/peak consistent
    std::array<StageMemory, kStages> stages{};
    std::array<int, kStages> rankOf{}; // setRanks(): −1 = the stage is on no multi-stage rank
    std::array<StageMemory, kStages> ranks{};
    Counters() { rankOf.fill(-1); }
    // data pointer -> allocation. The DataPtr handed out has context == data, as
    // c10::Allocator::raw_allocate() requires (oneDNN's bf16 kernels allocate their scratch that
    // way); so the bookkeeping lives here, not in the context.
    std::unordered_map<void*, Allocation> live;
};

Counters& counters()
{
    static Counters c;
    return c;
}

void bookLocked(StageMemory& m, MemoryCategory category, std::int64_t delta)
{
    const auto idx = static_cast<std::size_t>(category);
    m.live[idx] += delta;
    m.peak[idx] = std::max(m.peak[idx], m.live[idx]);
    if (category != MemoryCategory::Other) {
        m.liveTotal += delta;
        m.peakTotal = std::max(m.peakTotal, m.liveTotal);
    }
}

void accountLocked(Counters& c, int stage, MemoryCategory category, std::int64_t delta)
{
    if (stage < 0 || stage >= MemoryTracker::kMaxStages) {
        return;
    }
    bookLocked(c.stages[static_cast<std::size_t>(stage)], category, delta);
    if (const int r = c.rankOf[static_cast<std::size_t>(stage)]; r >= 0) {
        bookLocked(c.ranks[static_cast<std::size_t>(r)], category, delta);
    }
}

void releaseAllocation(void* data)
{
    Counters& c = counters();
    c10::DataPtr inner;
    {
        const std::lock_guard<std::mutex> lock(c.mutex);
        auto it = c.live.find(data);
        if (it == c.live.end()) {
            return; // not ours (cannot happen: every pointer we hand out is in the table)
        }
        accountLocked(c, it->second.stage, it->second.category, -it->second.bytes);
        inner = std::move(it->second.inner);
        c.live.erase(it);
    }
    // `inner` frees the real allocation through its own deleter, outside the lock.
}

class TrackingAllocator final : public c10::Allocator
{
public:
    explicit TrackingAllocator(c10::Allocator* inner)
        : m_inner(inner)
    {}

#if TORCH_VERSION_MAJOR >= 2
    // LibTorch 2.x: allocate() is non-const and copy_data() is pure virtual.
    c10::DataPtr allocate(size_t n) override
#else
    c10::DataPtr allocate(size_t n) const override
#endif
    {
        c10::DataPtr inner = m_inner->allocate(n);
        void* data = inner.get();
        if (data == nullptr) {
            return inner; // zero bytes: nothing to track
        }
        const c10::Device device = inner.device();
        Counters& c = counters();
        {
            const std::lock_guard<std::mutex> lock(c.mutex);
            accountLocked(c, t_stage, t_category, static_cast<std::int64_t>(n));
            c.live.insert_or_assign(
                data, Allocation{std::move(inner), static_cast<std::int64_t>(n), t_stage, t_category});
        }
        return {data, data, &releaseAllocation, device};
    }

    c10::DeleterFnPtr raw_deleter() const override
    {
        return &releaseAllocation;
    }

#if TORCH_VERSION_MAJOR >= 2
    void copy_data(void* dest, const void* src, std::size_t count) const override
    {
        m_inner->copy_data(dest, src, count);
    }
#endif

private:
    c10::Allocator* m_inner;
};

std::atomic<bool> g_installed{false};

} // namespace

std::string_view memoryCategoryName(MemoryCategory category)
{
    switch (category) {
    case MemoryCategory::Parameters:
        return "params";
    case MemoryCategory::Gradients:
        return "grads";
    case MemoryCategory::OptimizerState:
        return "optimizer";
    case MemoryCategory::Stash:
        return "stash";
    case MemoryCategory::Activations:
        return "activations";
    case MemoryCategory::Other:
        return "other";
    }
    return "?";
}

void MemoryTracker::install()
{
    static std::once_flag once;
    std::call_once(once, [] {
        // Intentionally leaked: tensors freed at process exit still call into it.
        static auto* wrapper = new TrackingAllocator(c10::GetCPUAllocator());
        c10::SetCPUAllocator(wrapper, /*priority=*/100);
        g_installed = true;
    });
}

bool MemoryTracker::installed()
{
    return g_installed;
}

void MemoryTracker::resetPeaks()
{
    Counters& c = counters();
    const std::lock_guard<std::mutex> lock(c.mutex);
    for (auto* books : {&c.stages, &c.ranks}) {
        for (StageMemory& m : *books) {
            m.peak = m.live;
            m.peakTotal = m.liveTotal;
        }
    }
    // CUDA stages' books too, so a CPU run's and a GPU run's peaks start at the same moment (a run
    // resets them once its model is built: construction temporaries are nobody's peak).
    if (DeviceMemoryAttributor* device = installedDeviceMemory()) {
        device->resetPeaks();
    }
}

StageMemory MemoryTracker::stage(int stage)
{
    if (stage < 0 || stage >= kMaxStages) {
        return {};
    }
    Counters& c = counters();
    const std::lock_guard<std::mutex> lock(c.mutex);
    return c.stages[static_cast<std::size_t>(stage)];
}

void MemoryTracker::setRanks(const std::vector<int>& rankOfStage)
{
    Counters& c = counters();
    const std::lock_guard<std::mutex> lock(c.mutex);
    c.rankOf.fill(-1);
    c.ranks.fill(StageMemory{});
    for (std::size_t s = 0; s < rankOfStage.size() && s < kStages; ++s) {
        const int r = rankOfStage[s];
        if (r < 0 || r >= kMaxStages) {
            continue;
        }
        c.rankOf[s] = r;
        StageMemory& books = c.ranks[static_cast<std::size_t>(r)];
        const StageMemory& now = c.stages[s]; // what the stage already holds counts for its rank
        for (std::size_t k = 0; k < books.live.size(); ++k) {
            books.live[k] += now.live[k];
            books.peak[k] = std::max(books.peak[k], books.live[k]);
        }
        books.liveTotal += now.liveTotal;
        books.peakTotal = std::max(books.peakTotal, books.liveTotal);
    }
}

StageMemory MemoryTracker::rank(int rank)
{
    if (rank < 0 || rank >= kMaxStages) {
        return {};
    }
    Counters& c = counters();
    const std::lock_guard<std::mutex> lock(c.mutex);
    return c.ranks[static_cast<std::size_t>(rank)];
}

MemoryScope::MemoryScope(int stage, MemoryCategory category)
    : m_prevStage(t_stage)
    , m_prevCategory(t_category)
{
    t_stage = stage;
    t_category = category;
    if (DeviceMemoryAttributor* device = installedDeviceMemory()) {
        device->enter(stage, category);
    }
}

MemoryScope::~MemoryScope()
{
    if (DeviceMemoryAttributor* device = installedDeviceMemory()) {
        device->leave();
    }
    t_stage = m_prevStage;
    t_category = m_prevCategory;
}

} // namespace bs::runtime
