#include "runtime/model/memory_tracker.h"

#include <c10/core/Allocator.h>
#include <c10/core/CPUAllocator.h>
#include <torch/version.h>

#include <algorithm>
#include <atomic>
#include <mutex>

namespace bs::runtime {

namespace {

thread_local int t_stage = -1;
thread_local MemoryCategory t_category = MemoryCategory::Other;

constexpr auto kStages = static_cast<std::size_t>(MemoryTracker::kMaxStages);

struct Counters
{
    std::mutex mutex; // allocations are frequent but short; one lock keeps live/peak consistent
    std::array<StageMemory, kStages> stages{};
};

Counters& counters()
{
    static Counters c;
    return c;
}

void account(int stage, MemoryCategory category, std::int64_t delta)
{
    if (stage < 0 || stage >= MemoryTracker::kMaxStages) {
        return;
    }
    Counters& c = counters();
    const std::lock_guard<std::mutex> lock(c.mutex);
    StageMemory& m = c.stages[static_cast<std::size_t>(stage)];
    const auto idx = static_cast<std::size_t>(category);
    m.live[idx] += delta;
    m.peak[idx] = std::max(m.peak[idx], m.live[idx]);
    if (category != MemoryCategory::Other) {
        m.liveTotal += delta;
        m.peakTotal = std::max(m.peakTotal, m.liveTotal);
    }
}

// What the wrapper's DataPtr carries: the real allocation and where it was charged.
struct Allocation
{
    c10::DataPtr inner;
    std::int64_t bytes;
    int stage;
    MemoryCategory category;
};

void releaseAllocation(void* ctx)
{
    auto* a = static_cast<Allocation*>(ctx);
    account(a->stage, a->category, -a->bytes);
    delete a; // frees the real allocation through its own deleter
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
        const c10::Device device = inner.device();
        auto* a = new Allocation{std::move(inner), static_cast<std::int64_t>(n), t_stage, t_category};
        account(a->stage, a->category, a->bytes);
        return {data, a, &releaseAllocation, device};
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
    for (StageMemory& m : c.stages) {
        m.peak = m.live;
        m.peakTotal = m.liveTotal;
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

MemoryScope::MemoryScope(int stage, MemoryCategory category)
    : m_prevStage(t_stage)
    , m_prevCategory(t_category)
{
    t_stage = stage;
    t_category = category;
}

MemoryScope::~MemoryScope()
{
    t_stage = m_prevStage;
    t_category = m_prevCategory;
}

} // namespace bs::runtime
