# BS_TORCH_VENV=ON (the `cuda` / `ci-cuda` presets): build against PyPI's CUDA LibTorch from the
# venv packaging/install-torch.sh keeps outside the clone (created on first use, then reused).
# A prefix given explicitly (BS_TORCH_PREFIX, e.g. the GPU machine's own python3 torch) wins.
# Included from the root CMakeLists.txt before find_package(Torch).
option(BS_TORCH_VENV "Find LibTorch in the venv of packaging/install-torch.sh (PyPI, CUDA)" OFF)
set(BS_TORCH_PREFIX "" CACHE PATH "Directory holding TorchConfig.cmake's prefix (overrides BS_TORCH_VENV)")
if(BS_TORCH_VENV AND NOT BS_TORCH_PREFIX)
    execute_process(
        COMMAND bash ${PROJECT_SOURCE_DIR}/packaging/install-torch.sh --cmake
        OUTPUT_VARIABLE _bs_torch_prefix OUTPUT_STRIP_TRAILING_WHITESPACE
        RESULT_VARIABLE _bs_torch_rc)
    if(NOT _bs_torch_rc EQUAL 0 OR NOT IS_DIRECTORY "${_bs_torch_prefix}")
        message(FATAL_ERROR "BS_TORCH_VENV: packaging/install-torch.sh failed (exit ${_bs_torch_rc})")
    endif()
    set(BS_TORCH_PREFIX "${_bs_torch_prefix}" CACHE PATH "" FORCE)
endif()
if(BS_TORCH_PREFIX)
    # Also torch's install root (…/torch, two levels above share/cmake): TorchConfig.cmake finds
    # libtorch/libc10 with find_library(... PATHS <root>/lib), which searches the system first and
    # would pick Debian's libtorch 1.13 where it is installed; a prefix entry is searched before.
    get_filename_component(_bs_torch_root "${BS_TORCH_PREFIX}/../.." ABSOLUTE)
    list(PREPEND CMAKE_PREFIX_PATH "${BS_TORCH_PREFIX}" "${_bs_torch_root}")
    message(STATUS "LibTorch prefix: ${BS_TORCH_PREFIX}")
endif()
