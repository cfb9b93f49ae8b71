// A kernel that spins for a given number of GPU clock cycles: known, adjustable GPU work for the
// CUPTI tests and the overhead benchmark (no torch needed).
#include "tests/gpu/busy_kernel.h"

#include <cuda_runtime.h>

namespace {
__global__ void spin(long long cycles, int* sink)
{
    const long long start = clock64();
    while (clock64() - start < cycles) {
    }
    if (threadIdx.x == 0 && sink) {
        *sink = 1;
    }
}
} // namespace

namespace bs::gpu_test {

int launchBusyKernel(void* stream, long long cycles)
{
    spin<<<1, 32, 0, static_cast<cudaStream_t>(stream)>>>(cycles, nullptr);
    return static_cast<int>(cudaGetLastError());
}

} // namespace bs::gpu_test
