#!/usr/bin/env bash
# Installs every Debian package Bubblescope needs to build, test and run.
# Idempotent: packages already present are skipped, and nothing is printed when all are there.
# Uses sudo when not root. One package set serves users, developers and CI alike.
set -euo pipefail

PACKAGES=(
  # build tools
  cmake ninja-build g++ ccache pkg-config git
  # small libraries (configs, JSON, command line, tests, benchmarks)
  libtomlplusplus-dev nlohmann-json3-dev libcli11-dev libgtest-dev libgmock-dev libbenchmark-dev
  # gzip-compressed torch.profiler traces (profiler/import; its tests read .json.gz fixtures)
  zlib1g-dev
  # training runtime: CPU LibTorch, Gloo headers for c10d, and a real BLAS
  # (without libopenblas0-openmp libtorch resolves libblas.so.3 to netlib reference BLAS: ~7x slower)
  libtorch-dev libgloo-dev libopenblas0-openmp
  # desktop app (libqt6opengl6-dev is needed by Qt6Charts' CMake config but is only a Recommends)
  qt6-base-dev qt6-charts-dev libqt6opengl6-dev qt6-svg-dev
  # headless screenshots and GUI tests under a real X server (xauth: xvfb-run aborts without it)
  xvfb xauth
  # packaging
  dpkg-dev fakeroot file
  # fuzzing (tests/fuzz, the fuzz preset): clang and its libFuzzer runtime
  clang-14 libclang-rt-14-dev
  # the formatting check (scripts/check-format.sh: git clang-format on the changed lines)
  clang-format
)

missing=()
for pkg in "${PACKAGES[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$pkg")
  fi
done
[[ ${#missing[@]} -eq 0 ]] && exit 0

SUDO=""
if [[ $(id -u) -ne 0 ]]; then
  command -v sudo >/dev/null || { echo "install-deps: need root or sudo to install: ${missing[*]}" >&2; exit 1; }
  SUDO="sudo"
fi

echo "install-deps: installing ${#missing[@]} package(s): ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
echo "install-deps: done"
