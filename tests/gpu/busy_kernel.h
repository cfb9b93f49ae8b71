#pragma once
// Host-callable launcher for a spin kernel (busy_kernel.cu); keeps CUDA C++ out of the tests.

namespace bs::gpu_test {

/// Launches one block that spins `cycles` GPU clock cycles on `stream` (a cudaStream_t, or
/// nullptr for the default stream). Returns the cudaError_t of the launch (0 = success).
int launchBusyKernel(void* stream, long long cycles);

} // namespace bs::gpu_test
