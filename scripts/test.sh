#!/usr/bin/env bash
# Sets everything up on a fresh Debian 12 machine and runs every test:
#   1. installs the Debian packages (packaging/install-deps.sh; skips what is there),
#   2. builds everything (Release, warnings as errors) and runs ctest,
#   3. builds the torch-free core under ASan+UBSan and TSan and runs its tests again.
#   4. builds the libFuzzer harnesses (clang, ASan+UBSan) and runs each for a few seconds.
# Set BS_SANITIZERS=0 to skip step 3 (it adds a few minutes), BS_FUZZ=0 to skip step 4.
set -euo pipefail
cd "$(dirname "$0")/.."

bash packaging/install-deps.sh
export CCACHE_BASEDIR="$PWD" CCACHE_NOHASHDIR=1
export XDG_RUNTIME_DIR="${XDG_RUNTIME_DIR:-/tmp/runtime-$(id -u)}"
mkdir -p "$XDG_RUNTIME_DIR" && chmod 700 "$XDG_RUNTIME_DIR"

echo "== build (release, -Werror)"
cmake --preset ci >/dev/null
cmake --build --preset ci
echo "== tests"
ctest --preset ci

if [[ "${BS_SANITIZERS:-1}" != 0 ]]; then
  for preset in asan tsan; do
    echo "== $preset: torch-free core"
    cmake --preset "$preset" -DBS_WITH_GUI=OFF >/dev/null
    cmake --build --preset "$preset"
    ctest --preset "$preset" -L "unit|cli"
  done
fi

# --- fuzzing (issue 14; owner: reliability). Each reader's harness for BS_FUZZ_SECONDS (default 5)
# over its committed corpus; scripts/fuzz.sh runs them for longer.
if [[ "${BS_FUZZ:-1}" != 0 ]]; then
  echo "== fuzz: each reader's harness for ${BS_FUZZ_SECONDS:-5} s"
  cmake --preset fuzz -DBS_FUZZ_SECONDS="${BS_FUZZ_SECONDS:-5}" >/dev/null
  cmake --build --preset fuzz
  ctest --preset fuzz
fi
# --- end fuzzing
