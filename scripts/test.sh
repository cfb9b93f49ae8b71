#!/usr/bin/env bash
# Sets everything up on a fresh Debian 12 machine and runs every test:
#   1. installs the Debian packages (packaging/install-deps.sh; skips what is there),
#   2. builds everything (Release, warnings as errors) and runs ctest,
#   3. builds the torch-free core under ASan+UBSan and TSan and runs its tests again.
# Set BS_SANITIZERS=0 to skip step 3 (it adds a few minutes).
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
