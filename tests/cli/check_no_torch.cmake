# Fails if EXE (or anything it loads at start-up, transitively) is libtorch or libc10: programs
# reach LibTorch only through the training runtime module (runtime/train/module), loaded when a run starts.
#   cmake -DEXE=path -P check_no_torch.cmake
file(GET_RUNTIME_DEPENDENCIES EXECUTABLES ${EXE}
     RESOLVED_DEPENDENCIES_VAR resolved UNRESOLVED_DEPENDENCIES_VAR unresolved)
set(torch "")
foreach(lib IN LISTS resolved unresolved)
    if(lib MATCHES "/?lib(torch|c10)[^/]*\\.so")
        list(APPEND torch ${lib})
    endif()
endforeach()
list(LENGTH resolved count)
if(torch)
    message(FATAL_ERROR "${EXE} loads LibTorch at start-up: ${torch}")
endif()
message(STATUS "${EXE}: ${count} shared libraries at start-up, none of them LibTorch")
