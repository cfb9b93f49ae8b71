# ctest: install the paci component to a temporary prefix, build examples/paci_trainer against it
# with CMAKE_PREFIX_PATH only, run a few PACI steps. Run as
#   cmake -DBUILD_DIR=... -DEXAMPLE_DIR=... -DWORK_DIR=... [-DLAUNCHER=ccache] -P install_example.cmake
foreach(var BUILD_DIR EXAMPLE_DIR WORK_DIR)
    if(NOT ${var})
        message(FATAL_ERROR "${var} is not set")
    endif()
endforeach()
file(REMOVE_RECURSE ${WORK_DIR})
set(prefix ${WORK_DIR}/prefix)

function(run_step what)
    execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
    if(NOT rc EQUAL 0)
        message(FATAL_ERROR "${what} failed (${rc}):\n${out}\n${err}")
    endif()
    set(step_output "${out}" PARENT_SCOPE)
endfunction()

run_step("install" ${CMAKE_COMMAND} --install ${BUILD_DIR} --component paci --prefix ${prefix})
set(launcher_arg "")
if(LAUNCHER)
    set(launcher_arg -DCMAKE_CXX_COMPILER_LAUNCHER=${LAUNCHER})
endif()
run_step("configure example" ${CMAKE_COMMAND} -S ${EXAMPLE_DIR} -B ${WORK_DIR}/build -G Ninja
    -DCMAKE_BUILD_TYPE=Release -DCMAKE_PREFIX_PATH=${prefix} ${launcher_arg})
run_step("build example" ${CMAKE_COMMAND} --build ${WORK_DIR}/build --target paci_trainer -j2)
run_step("run example" ${WORK_DIR}/build/paci_trainer 6)
message(STATUS "${step_output}")
if(NOT step_output MATCHES "6 updates, max version lag 1 \\(bound 1\\)")
    message(FATAL_ERROR "unexpected example output:\n${step_output}")
endif()
