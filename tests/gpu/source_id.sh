# Sourced by tests/gpu/carry.sh and tests/gpu/run.sh: the identity of the sources a build was made
# from, one hash over the path and content of every C++, CUDA and CMake file, so that a build
# carried to the GPU machine is used there only for the very sources it was built from (the
# device's copy of the working tree may have no .git; the ignored build folders are not read).
source_id() {
    (cd "$1" && {
        find app base profiler runtime ui tests cmake -type f \( -name '*.cpp' -o -name '*.h' -o -name '*.hpp' \
            -o -name '*.cu' -o -name '*.cuh' -o -name CMakeLists.txt -o -name '*.cmake' -o -name '*.in' \) -print0 \
            | LC_ALL=C sort -z | xargs -0 sha1sum
        sha1sum CMakeLists.txt CMakePresets.json
    }) | sha1sum | cut -c1-40
}
