// The thin CUDA layer (built only against a CUDA LibTorch, BS_TORCH_HAS_CUDA): CUDA-event timing
// of actions and the caching allocator's counters. Everything that uses them is torch-free and
// tested on the CPU through the host timer and fake counters; this file only talks to CUDA.
#include "runtime/train/model/device_p.h"
#include "runtime/train/model/torch_devices.h"
#include "runtime/train/model/torch_error.h"

#include <ATen/cuda/CUDAContext.h>
#include <ATen/cuda/CUDAEvent.h>
#include <c10/cuda/CUDACachingAllocator.h>
#include <c10/cuda/CUDAGuard.h>
#include <c10/cuda/CUDAStream.h>

namespace bs::runtime::detail {

namespace {

// torch 2.11 moved the event class to c10 (ATen's header only includes it); earlier 2.x keep it in at::cuda.
#if __has_include(<c10/cuda/CUDAEvent.h>)
using CudaEvent = c10::cuda::CUDAEvent;
#else
using CudaEvent = at::cuda::CUDAEvent;
#endif

// Two events with timing on the stage's current stream. begin() records the start event, end()
// the end event and waits for it alone (cudaEventSynchronize): the measurement's only sync. The
// serial driver runs one action at a time anyway; a threaded stage waits only for its own stream.
class CudaTimer final : public ActionTimer
{
public:
    explicit CudaTimer(int device)
        : m_device(static_cast<c10::DeviceIndex>(device))
        , m_start(cudaEventDefault)
        , m_end(cudaEventDefault)
    {}

    void begin() override
    {
        m_hostBegin = hostNowNs();
        const c10::cuda::CUDAGuard guard(m_device);
        m_start.record(at::cuda::getCurrentCUDAStream(m_device));
    }

    Result<TimeNs> end() override
    {
        try {
            const c10::cuda::CUDAGuard guard(m_device);
            m_end.record(at::cuda::getCurrentCUDAStream(m_device));
            m_end.synchronize();
            const double ms = static_cast<double>(m_start.elapsed_time(m_end));
            return static_cast<TimeNs>(ms * 1e6);
        } catch (const std::exception& e) {
            return makeError(ErrorCode::Internal, std::string("CUDA event timing failed: ") + torchErrorText(e),
                "cuda:" + std::to_string(static_cast<int>(m_device)));
        }
    }

    TimeNs hostBegin() const override { return m_hostBegin; }

private:
    c10::DeviceIndex m_device;
    CudaEvent m_start;
    CudaEvent m_end;
    TimeNs m_hostBegin = 0;
};

class CudaAllocatorStats final : public AllocatorStats
{
public:
    AllocatorSample sample(int device) override
    {
        namespace alloc = c10::cuda::CUDACachingAllocator;
        const auto stats = alloc::getDeviceStats(static_cast<c10::DeviceIndex>(device));
        constexpr auto all = static_cast<std::size_t>(c10::CachingAllocator::StatType::AGGREGATE);
        AllocatorSample s;
        s.allocated = stats.allocated_bytes[all].current;
        s.peakAllocated = stats.allocated_bytes[all].peak;
        s.reserved = stats.reserved_bytes[all].current;
        s.peakReserved = stats.reserved_bytes[all].peak;
        return s;
    }

    void resetPeak(int device) override
    {
        c10::cuda::CUDACachingAllocator::resetPeakStats(static_cast<c10::DeviceIndex>(device));
    }
};

} // namespace

Result<std::unique_ptr<ActionTimer>> makeCudaTimer(int device)
{
    try {
        return std::unique_ptr<ActionTimer>(std::make_unique<CudaTimer>(device));
    } catch (const std::exception& e) {
        return makeError(ErrorCode::Unavailable, std::string("cannot create CUDA events: ") + torchErrorText(e),
            "cuda:" + std::to_string(device));
    }
}

AllocatorStats* cudaAllocatorStats()
{
    static CudaAllocatorStats stats;
    return &stats;
}

torch::Tensor copyToDevice(const torch::Tensor& t, int device)
{
    if (!t.is_cuda() || device < 0 || t.get_device() == device) {
        return t.to(t.options().device(torchDevice(device)), /*non_blocking=*/false, /*copy=*/true);
    }
    const auto from = static_cast<c10::DeviceIndex>(t.get_device());
    const auto to = static_cast<c10::DeviceIndex>(device);
    const c10::cuda::CUDAStream producer = c10::cuda::getCurrentCUDAStream(from);
    const c10::cuda::CUDAStream consumer = c10::cuda::getCurrentCUDAStream(to);
    const c10::cuda::CUDAStream copier = c10::cuda::getStreamFromPool(/*isHighPriority=*/false, to);
    CudaEvent produced;
    produced.record(producer);
    produced.block(copier); // the copy starts once the tensor is complete on its device
    torch::Tensor out;
    {
        const c10::cuda::CUDAStreamGuard onCopier(copier);
        out = t.to(t.options().device(torchDevice(device)), /*non_blocking=*/true, /*copy=*/true);
    }
    CudaEvent copied;
    copied.record(copier);
    copied.block(consumer); // the receiving stage's work waits for the copy, the host does not
    // The caching allocator must not reuse either block before the streams that use it are done.
    c10::cuda::CUDACachingAllocator::recordStream(t.storage().data_ptr(), copier);
    c10::cuda::CUDACachingAllocator::recordStream(out.storage().data_ptr(), consumer);
    return out;
}

} // namespace bs::runtime::detail
