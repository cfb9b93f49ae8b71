#pragma once
// Finds and loads the training runtime module for a run's device (runtime_module_api.h). Torch-free.
//
// Device → module: "cpu" → libbubblescope-runtime-cpu.so, else the CUDA module (it runs CPU
// stages as well); "cuda", "cuda:N" → libbubblescope-runtime-cuda.so only.
// Search path, first hit wins: $BS_RUNTIME_MODULE_DIR alone when set (tests, relocated installs);
// else the executable's directory, <exe>/../lib/bubblescope (an installed tree), the build tree's
// module directory, CMAKE_INSTALL_FULL_LIBDIR/bubblescope.

#include "base/result.h"
#include "runtime/train/module/runtime_module_api.h"

#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

namespace bs::runtime {

/// The directories searched, in order.
std::vector<std::filesystem::path> runtimeModuleSearchPath();

/// "" when the CUDA runtime module is in the search path, else why CUDA runs cannot start here
/// (what the GUI's "Run on" says beside each GPU; gpu::setCudaModuleCheck).
std::string cudaModuleMissing();

/// The module file names that can serve `deviceName`, preferred first.
std::vector<std::string> runtimeModuleNames(std::string_view deviceName);

/// Loads (once per file, thread-safe) the module serving `deviceName`. Errors, one line each:
/// InvalidArgument naming device.name when no module for it is found (a CUDA device without the
/// CUDA module: "this LibTorch build is CPU-only (no CUDA runtime module …)"); Unavailable when a module is found but
/// cannot be loaded (dlerror's words: a missing libtorch, a module from another build).
Result<const RuntimeModuleApi*> loadRuntimeModule(std::string_view deviceName);

} // namespace bs::runtime
