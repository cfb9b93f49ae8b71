#!/usr/bin/env bash
# Sets everything up on a fresh Debian 12 machine and runs every test:
#   1. installs the Debian packages (packaging/install-deps.sh; skips what is there),
#   2. builds everything against Debian's LibTorch 1.13 (Release, warnings as errors, GUI) and runs ctest,
#      then rehearses the GPU script on the CPU (tests/gpu/run.sh --rehearse: every step, tiny model),
#   3. builds again against PyPI's CUDA LibTorch 2.11 (preset ci-cuda, GUI off; the venv comes from
#      packaging/install-torch.sh, cached outside the clone, with the engines of
#      packaging/install-peers.sh) and runs its tests on the CPU: the GPU tests compile, link and
#      skip without a GPU; the engines' own parsers read the exports,
#   4. builds the torch-free core under ASan+UBSan and TSan and runs its tests again,
#   5. builds the libFuzzer harnesses (clang, ASan+UBSan) and runs each for a few seconds,
#   6. checks the formatting of the C++ lines this branch changed (scripts/check-format.sh: the
#      repository's .clang-format on the lines changed since the merge base with main; on main
#      itself, since the commit in scripts/format-base).
# Set BS_CUDA_TORCH=0 to skip step 3 (the first run downloads about 3 GB), BS_SANITIZERS=0 to skip
# step 4 (it adds a few minutes), BS_FUZZ=0 to skip step 5, BS_FORMAT=0 to skip step 6. Each step
# prints its wall time.
set -euo pipefail
cd "$(dirname "$0")/.."

bash packaging/install-deps.sh
export CCACHE_BASEDIR="$PWD" CCACHE_NOHASHDIR=1
export XDG_RUNTIME_DIR="${XDG_RUNTIME_DIR:-/tmp/runtime-$(id -u)}"
mkdir -p "$XDG_RUNTIME_DIR" && chmod 700 "$XDG_RUNTIME_DIR"

SECONDS=0
step() { echo "== $* (at ${SECONDS} s)"; }

step "build: Debian LibTorch 1.13 (release, -Werror)"
cmake --preset ci >/dev/null
cmake --build --preset ci
step "tests: Debian LibTorch 1.13"
ctest --preset ci
step "rehearsal: tests/gpu/run.sh --rehearse (every GPU step on the CPU, tiny model)"
bash tests/gpu/run.sh --rehearse

if [[ "${BS_CUDA_TORCH:-1}" != 0 ]]; then
  step "build: PyPI CUDA LibTorch (ci-cuda, GUI off)"
  bash packaging/install-torch.sh >/dev/null
  bash packaging/install-peers.sh >/dev/null # torchtitan, DeepSpeed, megatron-core, HTA: the peers' own parsers
  cmake --preset ci-cuda >/dev/null
  cmake --build --preset ci-cuda
  step "tests: PyPI CUDA LibTorch, on the CPU"
  ctest --preset ci-cuda
fi

if [[ "${BS_SANITIZERS:-1}" != 0 ]]; then
  for preset in asan tsan; do
    step "$preset: torch-free core"
    cmake --preset "$preset" -DBS_WITH_GUI=OFF >/dev/null
    cmake --build --preset "$preset"
    ctest --preset "$preset" -L "unit|cli"
  done
fi
# --- fuzzing (issue 14; owner: reliability). Each reader's harness for BS_FUZZ_SECONDS (default 5)
# over its committed corpus; scripts/fuzz.sh runs them for longer.
if [[ "${BS_FUZZ:-1}" != 0 ]]; then
  step "fuzz: each reader's harness for ${BS_FUZZ_SECONDS:-5} s"
  cmake --preset fuzz -DBS_FUZZ_SECONDS="${BS_FUZZ_SECONDS:-5}" >/dev/null
  cmake --build --preset fuzz
  ctest --preset fuzz
fi
# --- end fuzzing
if [[ "${BS_FORMAT:-1}" != 0 ]]; then
  step "format: changed lines (scripts/check-format.sh)"
  bash scripts/check-format.sh
fi
echo "== all tests passed (${SECONDS} s)"
