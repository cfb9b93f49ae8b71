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

#include <map>
#include <mutex>
#include <optional>
#include <utility>

namespace bs::runtime::detail {

namespace {

// One stream per (device, stage), created on first use and kept for the life of the process (a
// stream handed to PyTorch through getStreamFromExternal must outlive every use). Created
// blocking (cudaStreamDefault): work on the legacy default stream (the parameters' initialisation,
// evaluation) is ordered before it without an explicit wait.
c10::cuda::CUDAStream stageCudaStream(int device, int stage)
{
    static std::mutex mutex;
    static std::map<std::pair<int, int>, cudaStream_t> streams;
    const std::lock_guard<std::mutex> lock(mutex);
    cudaStream_t& stream = streams[{device, stage}];
    if (stream == nullptr) {
        const c10::cuda::CUDAGuard guard(static_cast<c10::DeviceIndex>(device));
        C10_CUDA_CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamDefault));
    }
    return c10::cuda::getStreamFromExternal(stream, static_cast<c10::DeviceIndex>(device));
}

// torch 2.11 moved the event class to c10 (ATen's header only includes it); earlier 2.x keep it in at::cuda.
#if __has_include(<c10/cuda/CUDAEvent.h>)
using CudaEvent = c10::cuda::CUDAEvent;
#else
using CudaEvent = at::cuda::CUDAEvent;
#endif

// Two events with timing on the stage's own stream (stage −1: the device's current stream at
// begin()). begin() records the start event, end() the end event and waits for it alone
// (cudaEventSynchronize). Why the host waits, once per action: the drivers place each action on
// its stage's clock when it returns (its duration decides where the stage's next action and the
// receiver's hand-off start, and the serial driver's virtual timeline is built from it), and
// GpuTrace's time windows rely on every kernel of the action having run inside the host interval
// [actionBegin, actionEnd]; a threaded stage waits only for its own stream. What it costs: no host
// run-ahead across actions. The GPU idles from the action's last kernel until the host has
// launched the next action's first kernel (the event wait's wake-up, the executor and driver
// bookkeeping, the next action's launch path): expected to be tens of microseconds per action,
// not yet measured on a GPU; tests/gpu/run.sh's runtime-overhead and throughput steps measure the
// whole cost (pipeline vs plain LibTorch and vs --reference, target >= 0.95x). Removing it needs
// deferred event reads and a driver that places actions once their durations arrive; the host
// clock would then no longer bound the kernels.
class CudaTimer final : public ActionTimer
{
public:
    CudaTimer(int device, int stage)
        : m_device(static_cast<c10::DeviceIndex>(device))
        , m_stage(stage)
        , m_start(cudaEventDefault)
        , m_end(cudaEventDefault)
    {}

    void begin() override
    {
        m_hostBegin = hostNowNs();
        const c10::cuda::CUDAGuard guard(m_device);
        m_stream = m_stage >= 0 ? stageCudaStream(m_device, m_stage) : at::cuda::getCurrentCUDAStream(m_device);
        m_start.record(*m_stream);
    }

    Result<TimeNs> end() override
    {
        try {
            const c10::cuda::CUDAGuard guard(m_device);
            m_end.record(m_stream.value_or(at::cuda::getCurrentCUDAStream(m_device)));
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
    int m_stage;
    std::optional<c10::cuda::CUDAStream> m_stream;
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

Result<std::unique_ptr<ActionTimer>> makeCudaTimer(int device, int stage)
{
    try {
        return std::unique_ptr<ActionTimer>(std::make_unique<CudaTimer>(device, stage));
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

torch::Tensor stagedForCopy(const torch::Tensor& host, int device)
{
    return device >= 0 ? host.pin_memory() : host;
}

std::optional<c10::Stream> stageStream(int device, int stage)
{
    if (device < 0 || stage < 0) {
        return std::nullopt;
    }
    return stageCudaStream(device, stage).unwrap();
}

torch::Tensor copyToDevice(const torch::Tensor& t, int device, int fromStage, int toStage)
{
    if (!t.is_cuda() || device < 0 || t.get_device() == device) {
        return t.to(t.options().device(torchDevice(device)), /*non_blocking=*/false, /*copy=*/true);
    }
    const auto from = static_cast<c10::DeviceIndex>(t.get_device());
    const auto to = static_cast<c10::DeviceIndex>(device);
    // The producing stage's stream, not the source device's current one (this thread runs the
    // receiving stage: its current stream on the source device is the default stream).
    const c10::cuda::CUDAStream producer =
        fromStage >= 0 ? stageCudaStream(from, fromStage) : c10::cuda::getCurrentCUDAStream(from);
    const c10::cuda::CUDAStream consumer =
        toStage >= 0 ? stageCudaStream(to, toStage) : c10::cuda::getCurrentCUDAStream(to);
    // PyTorch copies between two devices on the source device's current stream and makes the
    // destination's current stream wait for it (Copy.cu, copy_device_to_device): both are pool
    // streams here, so the copy runs on neither stage's compute stream, nor on the legacy default
    // stream (which would wait for, and hold up, every blocking stream of the device).
    const c10::cuda::CUDAStream copier = c10::cuda::getStreamFromPool(/*isHighPriority=*/false, from);
    const c10::cuda::CUDAStream landing = c10::cuda::getStreamFromPool(/*isHighPriority=*/false, to);
    CudaEvent produced;
    produced.record(producer);
    produced.block(copier); // the copy starts once the tensor is complete on its device
    torch::Tensor out;
    {
        const c10::cuda::CUDAMultiStreamGuard onCopyStreams({copier, landing});
        out = t.to(t.options().device(torchDevice(device)), /*non_blocking=*/true, /*copy=*/true);
    }
    CudaEvent copied;
    copied.record(copier);
    copied.block(consumer); // the receiving stage's work waits for the copy, the host does not
    // The caching allocator must not reuse either block before the streams that use it are done
    // (`out` was allocated on `landing`, which PyTorch made wait for the copy).
    c10::cuda::CUDACachingAllocator::recordStream(t.storage().data_ptr(), copier);
    c10::cuda::CUDACachingAllocator::recordStream(out.storage().data_ptr(), consumer);
    return out;
}

} // namespace bs::runtime::detail

namespace bs::runtime {

void* stageStreamHandle(int device, int stage)
{
    if (device < 0 || stage < 0) {
        return nullptr;
    }
    return static_cast<void*>(detail::stageCudaStream(device, stage).stream());
}

} // namespace bs::runtime
