#!/usr/bin/env bash
# Creates (once) the Python virtual environment that holds PyPI's CUDA LibTorch and prints its path.
#
# The venv lives in a cache outside the clone, so a fresh clone (CI's included) reuses it instead of
# downloading ~3 GB again:  ${BUBBLESCOPE_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/bubblescope}/venv-torch-VERSION
# It is never installed system-wide. The version is pinned to the GPU machine's (torch 2.11.0+cu130:
# PyPI's 2.11.0 Linux wheel is the CUDA 13.0 build; its METADATA asks for cuda-toolkit 13.0.2).
#
# Usage: packaging/install-torch.sh            prints the venv directory on stdout (progress on stderr)
#        packaging/install-torch.sh --cmake    prints torch's CMAKE_PREFIX_PATH instead
#        packaging/install-torch.sh --python   prints where the venv's python is (or will be);
#                                              installs nothing (tests/CMakeLists.txt: the peers' python)
# Exit codes: 0 ready, 1 install failed (no network, no python3, disk full).
#
# Readiness is a marker file written after torch imported from the finished venv (.bubblescope-ready,
# holding the version), so the check costs a stat instead of a 5 s `import torch`, and an interrupted
# install (no marker) is wiped and redone. The venv is built in place (venv launchers embed their
# path, so no rename), under a lock: concurrent callers (several builds on one machine) wait for the
# first instead of installing twice.
set -euo pipefail

TORCH_VERSION="${BS_TORCH_VERSION:-2.11.0}"
CACHE_ROOT="${BUBBLESCOPE_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/bubblescope}"
VENV="$CACHE_ROOT/venv-torch-$TORCH_VERSION"
PY="$VENV/bin/python"
MARKER="$VENV/.bubblescope-ready"
if [[ "${1:-}" == "--python" ]]; then
  echo "$PY"
  exit 0
fi

ready() { [[ -x "$PY" && -f "$MARKER" && "$(cat "$MARKER")" == "$TORCH_VERSION" ]]; }

imports() {
  "$PY" - "$TORCH_VERSION" <<'PYEOF' 2>/dev/null
import sys, torch
sys.exit(0 if torch.__version__.split("+")[0] == sys.argv[1] else 1)
PYEOF
}

if ! ready; then
  command -v python3 >/dev/null || { echo "install-torch: python3 not found" >&2; exit 1; }
  mkdir -p "$CACHE_ROOT"
  exec 9>"$CACHE_ROOT/venv-torch-$TORCH_VERSION.lock"
  flock 9
  if ! ready; then
    if [[ -x "$PY" ]] && imports; then
      : # a finished venv from before markers existed
    else
      echo "install-torch: creating $VENV (torch $TORCH_VERSION from PyPI, about 3 GB download, 4.7 GB on disk, once per machine)" >&2
      rm -rf "$VENV"
      python3 -m venv "$VENV" >&2
      "$PY" -m pip install -q --disable-pip-version-check \
          --cache-dir "$CACHE_ROOT/pip" "torch==$TORCH_VERSION" numpy >&2
      imports || { echo "install-torch: torch $TORCH_VERSION did not import from $VENV" >&2; exit 1; }
      echo "install-torch: done" >&2
    fi
    echo "$TORCH_VERSION" >"$MARKER.tmp" && mv "$MARKER.tmp" "$MARKER"
  fi
  exec 9>&-
fi

if [[ "${1:-}" == "--cmake" ]]; then
  # Where TorchConfig.cmake's prefix is, without importing torch (python -c 'import torch' costs 5 s).
  prefix="$(echo "$VENV"/lib/python3*/site-packages/torch/share/cmake)"
  [[ -f "$prefix/Torch/TorchConfig.cmake" ]] || prefix="$("$PY" -c 'import torch; print(torch.utils.cmake_prefix_path)')"
  echo "$prefix"
else
  echo "$VENV"
fi
