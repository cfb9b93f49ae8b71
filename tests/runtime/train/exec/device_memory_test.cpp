// CUDA memory per stage by the active stage (device_memory.h), driven by fake allocator counters:
// the same MemoryScopes the model opens, with the bytes a CUDA caching allocator would report.
#include "runtime/train/model/device_memory.h"

#include <gtest/gtest.h>

#include <map>

namespace bs::runtime {
namespace {

// A device whose allocated bytes the test moves; the peak follows like CUDACachingAllocator's.
class FakeAllocator final : public AllocatorStats
{
public:
    AllocatorSample sample(int device) override { return m_dev[device]; }
    void resetPeak(int device) override
    {
        m_dev[device].peakAllocated = m_dev[device].allocated;
        m_dev[device].peakReserved = m_dev[device].reserved;
    }
    void allocate(int device, std::int64_t bytes)
    {
        AllocatorSample& d = m_dev[device];
        d.allocated += bytes;
        d.peakAllocated = std::max(d.peakAllocated, d.allocated);
        d.reserved = std::max(d.reserved, (d.allocated + 1023) / 1024 * 1024);
        d.peakReserved = std::max(d.peakReserved, d.reserved);
    }
    void free(int device, std::int64_t bytes) { m_dev[device].allocated -= bytes; }

private:
    std::map<int, AllocatorSample> m_dev;
};

struct Installed
{
    explicit Installed(DeviceMemoryAttributor& a) { installDeviceMemory(&a); }
    ~Installed() { installDeviceMemory(nullptr); }
};

TEST(DeviceMemory, ChargesEachScopeToItsStageAndKind)
{
    FakeAllocator gpu;
    DeviceMemoryAttributor memory(gpu, {0, 0}); // two stages sharing cuda:0
    const Installed on(memory);
    {
        const MemoryScope scope(0, MemoryCategory::Parameters);
        gpu.allocate(0, 1000);
    }
    {
        const MemoryScope scope(1, MemoryCategory::Parameters);
        gpu.allocate(0, 500);
    }
    {
        const MemoryScope scope(0, MemoryCategory::Activations);
        gpu.allocate(0, 300); // a temporary...
        gpu.free(0, 300);
        gpu.allocate(0, 200); // ...and what the forward keeps
    }
    const StageMemory s0 = memory.stage(0);
    const StageMemory s1 = memory.stage(1);
    EXPECT_EQ(s0.liveOf(MemoryCategory::Parameters), 1000);
    EXPECT_EQ(s0.liveOf(MemoryCategory::Activations), 200);
    EXPECT_EQ(s0.peakOf(MemoryCategory::Activations), 300); // the temporary counted in the peak
    EXPECT_EQ(s0.liveTotal, 1200);
    EXPECT_EQ(s0.peakTotal, 1300);
    EXPECT_EQ(s1.liveOf(MemoryCategory::Parameters), 500);
    EXPECT_EQ(s1.liveTotal, 500);
    EXPECT_EQ(s0.peakReserved, 2048); // the shared device's reserve while stage 0 ran
}

TEST(DeviceMemory, NestedScopesChargeTheInnermostAndInstrumentationNobody)
{
    FakeAllocator gpu;
    DeviceMemoryAttributor memory(gpu, {0, 1});
    const Installed on(memory);
    {
        const MemoryScope outer(1, MemoryCategory::Activations);
        gpu.allocate(1, 10);
        {
            const MemoryScope inner(1, MemoryCategory::Stash);
            gpu.allocate(1, 100);
        }
        {
            const MemoryScope drift(-1, MemoryCategory::Other); // instrumentation: not a stage's
            gpu.allocate(1, 5000);
            gpu.free(1, 5000);
        }
        gpu.allocate(1, 20);
        gpu.free(1, 30); // frees count for the stage that frees
    }
    const StageMemory s1 = memory.stage(1);
    EXPECT_EQ(s1.liveOf(MemoryCategory::Activations), 0);
    EXPECT_EQ(s1.liveOf(MemoryCategory::Stash), 100);
    EXPECT_EQ(s1.peakOf(MemoryCategory::Activations), 30);
    EXPECT_EQ(s1.peakTotal, 130);
    EXPECT_EQ(memory.stage(0).liveTotal, 0); // stage 0 is on another device and did nothing
}

TEST(DeviceMemory, CpuStagesAreLeftToTheCpuTracker)
{
    FakeAllocator gpu;
    DeviceMemoryAttributor memory(gpu, {-1, 0});
    const Installed on(memory);
    {
        const MemoryScope scope(0, MemoryCategory::Parameters);
        gpu.allocate(0, 64);
    }
    EXPECT_EQ(memory.stage(0).liveTotal, 0);
    EXPECT_EQ(memory.deviceOf(0), -1);
    EXPECT_EQ(memory.deviceOf(1), 0);
}

TEST(DeviceMemory, ResetPeaksKeepsLiveBytes)
{
    FakeAllocator gpu;
    DeviceMemoryAttributor memory(gpu, {0});
    const Installed on(memory);
    {
        const MemoryScope scope(0, MemoryCategory::Activations);
        gpu.allocate(0, 400);
        gpu.free(0, 300);
    }
    memory.resetPeaks();
    const StageMemory s = memory.stage(0);
    EXPECT_EQ(s.peakTotal, 100);
    EXPECT_EQ(s.liveTotal, 100);
}

} // namespace
} // namespace bs::runtime

namespace bs::runtime {
namespace {

// A zero-copy hand-off on one GPU: stage 0's forward allocates the activation, stage 1 uses the
// same buffer. Whichever drops it last frees it; the free must land on stage 0's books either way,
// so both stages end at zero activations (without shareBuffer the freeing stage would go negative).
TEST(DeviceMemory, SharedHandOffBufferIsFreedOnItsOwnersBooksWhoeverDropsItLast)
{
    for (const int lastHolder : {0, 1}) {
        FakeAllocator gpu;
        DeviceMemoryAttributor memory(gpu, {0, 0});
        const Installed on(memory);
        bool held = true;
        {
            const MemoryScope scope(0, MemoryCategory::Activations);
            gpu.allocate(0, 4096); // stage 0's output, handed to stage 1
        }
        memory.shareBuffer(0, MemoryCategory::Activations, 4096, [&held] { return held; });
        {
            const MemoryScope scope(1 - lastHolder, MemoryCategory::Activations); // the first to drop it: no free
            gpu.allocate(0, 100);
            gpu.free(0, 100);
        }
        EXPECT_EQ(memory.sharedBuffers(), 1U);
        {
            const MemoryScope scope(lastHolder, MemoryCategory::Activations);
            gpu.free(0, 4096);
            held = false;
        }
        EXPECT_EQ(memory.sharedBuffers(), 0U) << "last holder " << lastHolder;
        for (int s : {0, 1}) {
            EXPECT_EQ(memory.stage(s).liveOf(MemoryCategory::Activations), 0)
                << "stage " << s << ", last holder " << lastHolder;
            EXPECT_EQ(memory.stage(s).liveTotal, 0) << "stage " << s << ", last holder " << lastHolder;
        }
        // Stage 0 held its output (and, when stage 1 drops the buffer last, a temporary beside it).
        EXPECT_EQ(memory.stage(0).peakOf(MemoryCategory::Activations), lastHolder == 1 ? 4196 : 4096);
    }
}

// A buffer shared on another device is settled only by that device's segments.
TEST(DeviceMemory, SharedBufferIsSettledOnlyByItsOwnDevice)
{
    FakeAllocator gpus;
    DeviceMemoryAttributor memory(gpus, {0, 1});
    const Installed on(memory);
    {
        const MemoryScope scope(0, MemoryCategory::Activations);
        gpus.allocate(0, 512);
    }
    memory.shareBuffer(0, MemoryCategory::Activations, 512, [] { return false; });
    {
        const MemoryScope scope(1, MemoryCategory::Activations); // cuda:1 cannot have freed it
    }
    EXPECT_EQ(memory.sharedBuffers(), 1U);
    {
        const MemoryScope scope(0, MemoryCategory::Activations);
        gpus.free(0, 512);
    }
    EXPECT_EQ(memory.sharedBuffers(), 0U);
    EXPECT_EQ(memory.stage(0).liveOf(MemoryCategory::Activations), 0);
    EXPECT_EQ(memory.stage(1).liveOf(MemoryCategory::Activations), 0);
}

} // namespace
} // namespace bs::runtime

namespace bs::runtime {
namespace {

// A run resets peaks once its model is built (run_session.cpp): the CPU tracker's and the CUDA
// attributor's together, so the CUDA memory panel does not keep construction temporaries as peaks
// that the CPU panel dropped.
TEST(DeviceMemory, TrackerPeakResetAlsoResetsTheCudaBooks)
{
    FakeAllocator gpu;
    DeviceMemoryAttributor memory(gpu, {0, 0});
    const Installed on(memory);
    {
        const MemoryScope scope(1, MemoryCategory::Parameters);
        gpu.allocate(0, 6000); // an initialisation temporary...
        gpu.free(0, 6000);
        gpu.allocate(0, 2000); // ...and the weights
    }
    EXPECT_EQ(memory.stage(1).peakTotal, 6000);
    EXPECT_GT(memory.stage(1).peakReserved, 0);
    MemoryTracker::resetPeaks();
    const StageMemory s1 = memory.stage(1);
    EXPECT_EQ(s1.peakTotal, 2000);
    EXPECT_EQ(s1.peakOf(MemoryCategory::Parameters), 2000);
    EXPECT_EQ(s1.peakReserved, 0); // reserved peaks restart with the stage's next segment
    {
        const MemoryScope scope(1, MemoryCategory::Activations);
        gpu.allocate(0, 100);
    }
    EXPECT_EQ(memory.stage(1).peakTotal, 2100);
    EXPECT_EQ(memory.stage(1).peakReserved, 6144); // the device's reserve (the fake never returns blocks)
}

} // namespace
} // namespace bs::runtime
