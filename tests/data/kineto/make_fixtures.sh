#!/usr/bin/env bash
# Regenerates the real Kineto fixtures in this folder: a torch.distributed.pipelining job per
# schedule (GPipe, 1F1B, interleaved 1F1B) and world size (2, 4) on the CPU over Gloo, under
# torch.profiler, with PyPI's torch from packaging/install-torch.sh (about 5 minutes on 2 cores).
# Usage: tests/data/kineto/make_fixtures.sh [--jobs 1f1b-2,...] [--microbatches M --profile-steps K]
#   (the 3-step fixtures: --jobs 1f1b-3,gpipe-3,interleaved-3 --microbatches 6 --profile-steps 3)
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
venv="$(bash "$here/../../../packaging/install-torch.sh")"
exec "$venv/bin/python" "$here/make_fixtures.py" "$here" "$@"
