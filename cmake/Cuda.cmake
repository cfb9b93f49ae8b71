# GPU features: CUPTI collector (profiler/cupti), NCCL detection, CUDA LibTorch detection.
# Included from the root CMakeLists.txt after the other packages. Never links CUDA::cuda_driver:
# its stub makes binaries fail to start on machines without a driver (toolchain.md §2).
find_package(CUDAToolkit QUIET)
set(_bs_cupti_default OFF)
if(CUDAToolkit_FOUND AND TARGET CUDA::cupti AND TARGET CUDA::cudart)
    set(_bs_cupti_default ON)
endif()
option(BS_WITH_CUPTI "Build the CUPTI kernel-timeline collector (needs the CUDA toolkit)" ${_bs_cupti_default})
if(BS_WITH_CUPTI AND NOT _bs_cupti_default)
    message(WARNING "BS_WITH_CUPTI=ON but the CUDA toolkit / CUPTI was not found: building the stub collector")
    set(BS_WITH_CUPTI OFF CACHE BOOL "" FORCE)
endif()

# NCCL: no CMake config ships with it, so find_library (used by the runtime's NCCL transport).
set(BS_NCCL_FOUND OFF)
if(CUDAToolkit_FOUND)
    find_library(NCCL_LIBRARY nccl HINTS ${CUDAToolkit_LIBRARY_DIR})
    find_path(NCCL_INCLUDE_DIR nccl.h HINTS ${CUDAToolkit_INCLUDE_DIRS})
    if(NCCL_LIBRARY AND NCCL_INCLUDE_DIR AND NOT TARGET nccl::nccl)
        add_library(nccl::nccl SHARED IMPORTED GLOBAL)
        set_target_properties(nccl::nccl PROPERTIES IMPORTED_LOCATION ${NCCL_LIBRARY}
                              INTERFACE_INCLUDE_DIRECTORIES ${NCCL_INCLUDE_DIR})
        set(BS_NCCL_FOUND ON)
    endif()
endif()

# LibTorch with CUDA: detected by looking for libc10_cuda next to the TorchConfig.cmake that
# CMAKE_PREFIX_PATH / Torch_DIR / the system would find. Not find_package(Torch): the runtime
# does that in its own scope and a second import of the `torch` target would clash.
set(BS_TORCH_CUDA OFF)
find_path(BS_TORCH_CONFIG_DIR TorchConfig.cmake
    HINTS ${Torch_DIR}
    PATH_SUFFIXES Torch share/cmake/Torch lib/cmake/Torch lib/x86_64-linux-gnu/cmake/Torch)
if(BS_TORCH_CONFIG_DIR)
    file(GLOB _bs_c10_cuda "${BS_TORCH_CONFIG_DIR}/../../../lib/libc10_cuda.so*"
                           "${BS_TORCH_CONFIG_DIR}/../../libc10_cuda.so*")
    if(_bs_c10_cuda)
        set(BS_TORCH_CUDA ON)
    endif()
endif()

if(CUDAToolkit_FOUND)
    message(STATUS "GPU: CUDA toolkit ${CUDAToolkit_VERSION} at ${CUDAToolkit_LIBRARY_DIR}")
else()
    message(STATUS "GPU: CUDA toolkit not found")
endif()
message(STATUS "GPU: CUPTI collector ${BS_WITH_CUPTI}; NCCL found ${BS_NCCL_FOUND}; LibTorch CUDA ${BS_TORCH_CUDA} (${BS_TORCH_CONFIG_DIR})")

add_subdirectory(${PROJECT_SOURCE_DIR}/profiler/cupti ${PROJECT_BINARY_DIR}/profiler/cupti)
add_subdirectory(${PROJECT_SOURCE_DIR}/runtime/gpu ${PROJECT_BINARY_DIR}/runtime/gpu)
if(BS_BUILD_TESTS)
    add_subdirectory(${PROJECT_SOURCE_DIR}/tests/profiler/cupti ${PROJECT_BINARY_DIR}/tests/profiler/cupti)
    add_subdirectory(${PROJECT_SOURCE_DIR}/tests/gpu ${PROJECT_BINARY_DIR}/tests/gpu)
endif()
