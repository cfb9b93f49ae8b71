#!/usr/bin/env bash
# Sets everything up on a fresh Debian 12 machine and runs the main job: the desktop app with
# the embedded demo (PACI vs 1F1B-flush on an 8-stage GPT). Without a display it runs the CLI
# demo instead and says so. Extra arguments go to the program.
# BS_DEMO_DRY_RUN=1 prints the set-up and build commands instead of running them and stops before
# the demo (tests/app: what a GPU workstation gets, checked on a machine without one).
set -euo pipefail
cd "$(dirname "$0")/.."
run() { echo "+ $*"; [[ -n "${BS_DEMO_DRY_RUN:-}" ]] || "$@"; }

run bash packaging/install-deps.sh
export CCACHE_BASEDIR="$PWD" CCACHE_NOHASHDIR=1
run cmake --preset release >/dev/null
# Only what the main job runs (the tests and benchmarks are for scripts/test.sh). Both programs
# depend on the training runtime module (bs_runtime_module) when LibTorch is found, so it is built too.
run cmake --build --preset release --target bubblescope bubblescope-cli

# A GPU workstation (an NVIDIA driver that lists a GPU; BS_DEMO_GPU=force takes this path anywhere,
# =off skips it): PyPI's CUDA LibTorch in the project's venv (packaging/install-torch.sh, ~3 GB once,
# cached outside the clone) and the CUDA training runtime module built against it (preset cuda),
# placed beside the CPU module, so the GUI's "Run on" can train on each GPU and the demo below runs there.
gpu="${BS_DEMO_GPU:-auto}"
if [[ $gpu == auto ]]; then
  gpu=off
  command -v nvidia-smi >/dev/null && nvidia-smi -L 2>/dev/null | grep -q '^GPU' && gpu=on
fi
device=()
if [[ $gpu == on || $gpu == force ]]; then
  echo "NVIDIA GPU found: installing the CUDA LibTorch (packaging/install-torch.sh) and building the CUDA runtime module."
  run bash packaging/install-torch.sh
  run cmake --preset cuda
  run cmake --build --preset cuda --target bs_runtime_module
  run mkdir -p build/release/lib/bubblescope
  run cp build/cuda/lib/bubblescope/libbubblescope-runtime-cuda.so build/release/lib/bubblescope/
  device=(--device cuda:0)
fi
[[ -n "${BS_DEMO_DRY_RUN:-}" ]] && { echo "dry run: the demo would train on ${device[*]:-the CPU}"; exit 0; }

bin=build/release/app
if [[ -x "$bin/gui/bubblescope" && ( -n "${DISPLAY:-}" || -n "${WAYLAND_DISPLAY:-}" ) ]]; then
  exec "$bin/gui/bubblescope" "$@"
fi
echo "No display found: running the command-line demo instead (the GUI needs X11 or Wayland)."
echo
echo "\$ bubblescope-cli compare --stages 8 --accum 8 --batches 20 --schedules 1f1b,zb-h1,paci"
"$bin/bubblescope-cli" compare --stages 8 --accum 8 --batches 20 --schedules 1f1b,zb-h1,paci
echo
echo "\$ bubblescope-cli simulate --schedule paci --stages 8 --accum 8 --batches 20"
"$bin/bubblescope-cli" simulate --schedule paci --stages 8 --accum 8 --batches 20
echo
echo "Now for real: the 8-stage tiny GPT trained under 1F1B-flush and PACI (a = 8) with LibTorch,"
echo "racing to a validation loss of 5.3 (reachable in the demo's 10 global batches)."
echo "\$ bubblescope-cli compare --train --stages 8 --accum 8 --batches 10 --target-loss 5.3 ${device[*]}"
"$bin/bubblescope-cli" compare --train --stages 8 --accum 8 --batches 10 --target-loss 5.3 "${device[@]}" "$@"
