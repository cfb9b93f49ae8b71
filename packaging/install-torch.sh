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
# Exit codes: 0 ready, 1 install failed (no network, no python3, disk full).
set -euo pipefail

TORCH_VERSION="${BS_TORCH_VERSION:-2.11.0}"
CACHE_ROOT="${BUBBLESCOPE_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/bubblescope}"
VENV="$CACHE_ROOT/venv-torch-$TORCH_VERSION"
PY="$VENV/bin/python"

ready() {
  [[ -x "$PY" ]] && "$PY" - "$TORCH_VERSION" <<'PYEOF' 2>/dev/null
import sys, torch
sys.exit(0 if torch.__version__.split("+")[0] == sys.argv[1] else 1)
PYEOF
}

if ! ready; then
  command -v python3 >/dev/null || { echo "install-torch: python3 not found" >&2; exit 1; }
  mkdir -p "$CACHE_ROOT"
  # Build into a temporary directory and rename at the end, so an interrupted install never leaves a
  # half-filled venv that looks ready.
  tmp="$VENV.partial-$$"
  rm -rf "$tmp"
  trap 'rm -rf "$tmp"' EXIT
  echo "install-torch: creating $VENV (torch $TORCH_VERSION from PyPI, about 3 GB, once per machine)" >&2
  python3 -m venv "$tmp" >&2
  "$tmp/bin/python" -m pip install -q --disable-pip-version-check \
      --cache-dir "$CACHE_ROOT/pip" "torch==$TORCH_VERSION" numpy >&2
  # venv scripts embed their own path: recreate the launchers for the final location.
  rm -rf "$VENV"
  mv "$tmp" "$VENV"
  trap - EXIT
  python3 -m venv --upgrade "$VENV" >&2
  ready || { echo "install-torch: torch $TORCH_VERSION did not import from $VENV" >&2; exit 1; }
  echo "install-torch: done" >&2
fi

if [[ "${1:-}" == "--cmake" ]]; then
  "$PY" -c 'import torch; print(torch.utils.cmake_prefix_path)'
else
  echo "$VENV"
fi
