#include "runtime/plan/gpu/gpu_probe.h"

#include <dlfcn.h>

#include <array>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <optional>
#include <sstream>

namespace bs::runtime::gpu {

namespace {

// The CUDA driver API, looked up at run time in libcuda.so.1 (the driver's own library, present
// exactly where a GPU driver is installed). Nothing is linked: the GUI and the CLI start on any
// machine, list what is there, and need neither LibTorch nor the CUDA toolkit to do it. Only
// plain-int entry points whose ABI has not changed since CUDA 3.2 are used (no versioned structs).
using CuResult = int;
using CuInit = CuResult (*)(unsigned);
using CuDeviceGetCount = CuResult (*)(int*);
using CuDeviceGet = CuResult (*)(int*, int);
using CuDeviceGetName = CuResult (*)(char*, int, int);
using CuDeviceTotalMem = CuResult (*)(std::size_t*, int);
using CuDeviceGetAttribute = CuResult (*)(int*, int, int);
using CuGetErrorString = CuResult (*)(CuResult, const char**);
constexpr int kAttrComputeMajor = 75; // CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR
constexpr int kAttrComputeMinor = 76;
constexpr CuResult kNoDevice = 100; // CUDA_ERROR_NO_DEVICE

template<typename Fn>
Fn symbol(void* lib, const char* name)
{
    return reinterpret_cast<Fn>(dlsym(lib, name));
}

} // namespace

namespace {

// BS_FAKE_GPUS: "NAME:GiB;NAME:GiB". Malformed entries are skipped.
std::optional<std::vector<GpuDevice>> fakeGpus()
{
    const char* spec = std::getenv("BS_FAKE_GPUS");
    if (spec == nullptr || *spec == '\0') {
        return std::nullopt;
    }
    std::vector<GpuDevice> out;
    std::stringstream all(spec);
    std::string item;
    while (std::getline(all, item, ';')) {
        const std::size_t colon = item.rfind(':');
        if (colon == std::string::npos || colon == 0) {
            continue;
        }
        GpuDevice d;
        d.index = static_cast<int>(out.size());
        d.name = item.substr(0, colon);
        d.totalBytes = std::atoll(item.c_str() + colon + 1) * (std::int64_t{1} << 30);
        d.computeMajor = 9;
        out.push_back(d);
    }
    return out;
}

std::mutex g_checkMutex;
std::function<std::string()> g_cudaModuleCheck;

} // namespace

void setCudaModuleCheck(std::function<std::string()> whyNot)
{
    const std::lock_guard<std::mutex> lock(g_checkMutex);
    g_cudaModuleCheck = std::move(whyNot);
}

std::vector<RunDeviceChoice> runDeviceChoices()
{
    std::vector<RunDeviceChoice> out{{"cpu", "cpu", ""}};
    auto gpus = probeGpus();
    if (!gpus) {
        const std::string why = gpus.error().message.find("libcuda.so.1 not found") != std::string::npos
            ? "no NVIDIA driver (libcuda.so.1 not found)"
            : gpus.error().message;
        out.push_back({"", "GPU: none (" + why + ")", why});
        return out;
    }
    std::string why;
    {
        const std::lock_guard<std::mutex> lock(g_checkMutex);
        why = g_cudaModuleCheck ? g_cudaModuleCheck() : std::string();
    }
    const auto gib = [](std::int64_t bytes) {
        char buf[32];
        std::snprintf(
            buf, sizeof buf, "%.0f GiB", static_cast<double>(bytes) / static_cast<double>(std::int64_t{1} << 30));
        return std::string(buf);
    };
    if (gpus->size() > 1) {
        out.push_back({"cuda", "cuda (all " + std::to_string(gpus->size()) + " GPUs)", why});
    }
    for (const GpuDevice& d : *gpus) {
        const std::string name = "cuda:" + std::to_string(d.index);
        std::string label = name + " " + d.name + " (" + gib(d.totalBytes) + ")";
        if (!why.empty()) {
            label += " - unusable: " + why;
        }
        out.push_back({name, label, why});
    }
    return out;
}

Result<std::vector<GpuDevice>> probeGpus()
{
    if (auto fake = fakeGpus()) {
        if (fake->empty()) {
            return makeError(ErrorCode::Unavailable, "no CUDA GPU available (0 devices)");
        }
        return *fake;
    }
    // Kept open for the process's life: the driver does not like being unloaded.
    static void* lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    if (lib == nullptr) {
        return makeError(ErrorCode::Unavailable, "no CUDA GPU available (no CUDA driver: libcuda.so.1 not found)",
            "dlopen libcuda.so.1");
    }
    const auto init = symbol<CuInit>(lib, "cuInit");
    const auto count = symbol<CuDeviceGetCount>(lib, "cuDeviceGetCount");
    const auto get = symbol<CuDeviceGet>(lib, "cuDeviceGet");
    const auto name = symbol<CuDeviceGetName>(lib, "cuDeviceGetName");
    const auto total = symbol<CuDeviceTotalMem>(lib, "cuDeviceTotalMem_v2");
    const auto attribute = symbol<CuDeviceGetAttribute>(lib, "cuDeviceGetAttribute");
    const auto errorString = symbol<CuGetErrorString>(lib, "cuGetErrorString");
    if (!init || !count || !get || !name || !total || !attribute) {
        return makeError(
            ErrorCode::Unavailable, "no CUDA GPU available (the CUDA driver library lacks cuInit/cuDeviceGet*)");
    }
    if (const CuResult r = init(0); r != 0) {
        const char* text = nullptr;
        if (errorString) {
            errorString(r, &text);
        }
        return makeError(ErrorCode::Unavailable,
            std::string("no CUDA GPU available (")
                + (r == kNoDevice ? "0 devices"
                        : text    ? text
                                  : "cuInit failed")
                + ")",
            "cuInit -> " + std::to_string(r));
    }
    int n = 0;
    if (count(&n) != 0 || n == 0) {
        return makeError(ErrorCode::Unavailable, "no CUDA GPU available (0 devices)");
    }
    std::vector<GpuDevice> devices;
    for (int i = 0; i < n; ++i) {
        int dev = 0;
        if (get(&dev, i) != 0) {
            continue;
        }
        std::array<char, 256> buf{};
        std::size_t bytes = 0;
        GpuDevice d;
        d.index = i;
        if (name(buf.data(), static_cast<int>(buf.size()) - 1, dev) == 0) {
            d.name = buf.data();
        }
        if (total(&bytes, dev) == 0) {
            d.totalBytes = static_cast<std::int64_t>(bytes);
        }
        attribute(&d.computeMajor, kAttrComputeMajor, dev);
        attribute(&d.computeMinor, kAttrComputeMinor, dev);
        devices.push_back(d);
    }
    return devices;
}

std::vector<std::string> deviceChoices()
{
    std::vector<std::string> out{"cpu"};
    auto gpus = probeGpus();
    if (!gpus) {
        return out;
    }
    if (gpus->size() > 1) {
        out.push_back("cuda"); // every GPU, stages placed contiguously
    }
    for (const GpuDevice& d : *gpus) {
        out.push_back("cuda:" + std::to_string(d.index));
    }
    return out;
}

int ncclVersionCode()
{
    // Looked up like the driver: NCCL's ABI-stable ncclGetVersion(int*) -> ncclResult_t (0 = success).
    static void* lib = dlopen("libnccl.so.2", RTLD_NOW | RTLD_LOCAL);
    if (lib == nullptr) {
        return 0;
    }
    using GetVersion = int (*)(int*);
    const auto getVersion = symbol<GetVersion>(lib, "ncclGetVersion");
    int version = 0;
    return getVersion && getVersion(&version) == 0 ? version : 0;
}

} // namespace bs::runtime::gpu
