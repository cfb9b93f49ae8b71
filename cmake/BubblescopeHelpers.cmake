# Shared warning set, linked PRIVATE into every target (benchmark's option pattern).
add_library(bs_warnings INTERFACE)
target_compile_options(bs_warnings INTERFACE
    -Wall -Wextra -Wpedantic -Wshadow -Wnon-virtual-dtor -Woverloaded-virtual -Wformat=2
    -Wimplicit-fallthrough
    # GCC 12 reports false -Wrestrict and -Wmaybe-uninitialized errors inside std::string at -O3
    # (GCC PR105329, PR107138: aggregates with string members, string concatenation).
    $<$<AND:$<CXX_COMPILER_ID:GNU>,$<VERSION_LESS:$<CXX_COMPILER_VERSION>,13>>:-Wno-restrict -Wno-maybe-uninitialized>
    $<$<BOOL:${BS_WERROR}>:-Werror>)

# Engine folders (runtime/, profiler/) have no Qt int APIs: narrowing there is a bug.
add_library(bs_engine_warnings INTERFACE)
target_link_libraries(bs_engine_warnings INTERFACE bs_warnings)
target_compile_options(bs_engine_warnings INTERFACE -Wconversion -Wsign-conversion)

# bs_add_library(name SOURCES ... LIBS ...): a static library with includes rooted at the repo.
function(bs_add_library name)
    cmake_parse_arguments(ARG "" "" "SOURCES;LIBS;PRIVATE_LIBS" ${ARGN})
    add_library(${name} STATIC ${ARG_SOURCES})
    target_include_directories(${name} PUBLIC ${PROJECT_SOURCE_DIR})
    target_link_libraries(${name} PUBLIC ${ARG_LIBS} PRIVATE bs_engine_warnings ${ARG_PRIVATE_LIBS})
    # PIC: the engine libraries are linked into the training runtime module (a shared object,
    # runtime/train/module) as well as into the programs.
    set_target_properties(${name} PROPERTIES POSITION_INDEPENDENT_CODE ON)
endfunction()

# bs_add_gtest(name SOURCES ... LIBS ...): one GoogleTest binary, tests discovered by ctest.
function(bs_add_gtest name)
    cmake_parse_arguments(ARG "" "" "SOURCES;LIBS;LABELS" ${ARGN})
    add_executable(${name} ${ARG_SOURCES})
    target_link_libraries(${name} PRIVATE ${ARG_LIBS} GTest::gtest_main bs_warnings)
    if(NOT ARG_LABELS)
        set(ARG_LABELS unit)
    endif()
    gtest_discover_tests(${name} PROPERTIES LABELS "${ARG_LABELS}" DISCOVERY_TIMEOUT 60)
endfunction()
