# GPU detection: CUDA toolkit and CUPTI (BS_WITH_CUPTI), NCCL (nccl::nccl, BS_NCCL_FOUND), a CUDA
# LibTorch (BS_TORCH_CUDA). Only finds things: profiler/cupti, runtime/plan/gpu and tests/gpu are added
# by their parents' CMakeLists like every other folder. Included from the root CMakeLists.txt
# after the other packages, before the first add_subdirectory. Never links CUDA::cuda_driver:
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
    # Where the toolkit keeps it (lib or lib64), or where PyPI's nvidia-nccl wheel beside a CUDA
    # LibTorch does (site-packages/nvidia/nccl); the wheel ships only libnccl.so.2, no dev link.
    set(_bs_nccl_hints ${CUDAToolkit_LIBRARY_DIR} ${CUDAToolkit_LIBRARY_ROOT}/lib64)
    if(Torch_DIR)
        get_filename_component(_bs_site_packages "${Torch_DIR}/../../../.." ABSOLUTE)
        list(APPEND _bs_nccl_hints "${_bs_site_packages}/nvidia/nccl/lib")
    endif()
    find_library(NCCL_LIBRARY NAMES nccl libnccl.so.2 HINTS ${_bs_nccl_hints})
    find_path(NCCL_INCLUDE_DIR nccl.h HINTS ${CUDAToolkit_INCLUDE_DIRS} "${_bs_site_packages}/nvidia/nccl/include")
    if(NCCL_LIBRARY AND NCCL_INCLUDE_DIR AND NOT TARGET nccl::nccl)
        add_library(nccl::nccl SHARED IMPORTED GLOBAL)
        set_target_properties(nccl::nccl PROPERTIES IMPORTED_LOCATION ${NCCL_LIBRARY}
                              INTERFACE_INCLUDE_DIRECTORIES ${NCCL_INCLUDE_DIR})
        set(BS_NCCL_FOUND ON)
    endif()
endif()

# LibTorch with CUDA: the root CMakeLists.txt found Torch before this file; a CUDA build (PyPI's
# wheel) lists libc10_cuda among TORCH_LIBRARIES, Debian's CPU-only 1.13 does not.
set(BS_TORCH_CUDA OFF)
if(Torch_FOUND AND "${TORCH_LIBRARIES}" MATCHES "c10_cuda")
    set(BS_TORCH_CUDA ON)
endif()

if(CUDAToolkit_FOUND)
    message(STATUS "GPU: CUDA toolkit ${CUDAToolkit_VERSION} at ${CUDAToolkit_LIBRARY_DIR}")
else()
    message(STATUS "GPU: CUDA toolkit not found")
endif()
message(STATUS "GPU: CUPTI collector ${BS_WITH_CUPTI}; NCCL found ${BS_NCCL_FOUND}; LibTorch CUDA ${BS_TORCH_CUDA} (${Torch_DIR})")
