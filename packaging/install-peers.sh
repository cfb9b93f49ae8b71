#!/usr/bin/env bash
# Adds the engines whose own parsers check Bubblescope's exports (issue 32) to the torch venv of
# packaging/install-torch.sh (which it calls first, waiting for an install in progress), pinned:
#   torchtitan 0.2.2            ConfigManager loads the exported job TOML (0.3 dropped TOML files)
#   deepspeed 0.19.8            DeepSpeedConfig accepts the exported ds_config.json
#   megatron-core 0.16.1        OptimizerParamScheduler, TransformerConfig and the micro-batch
#                               calculator check the exported Megatron arguments (PyPI has no
#                               Megatron-LM argument parser: tests restate its asserts, source named)
#   HolisticTraceAnalysis 0.5.0 reads the exported Perfetto traces
# Each goes in with --no-deps: their declared dependencies pull GPU or notebook stacks (jupyterlab,
# wandb, datasets, torchdata, transformer-engine) that importing their config classes on a CPU
# machine does not need; what it does need is listed in DEPS below (pure Python or small wheels).
# DeepSpeed is an sdist: built against the venv's torch (--no-build-isolation), no ops compiled
# (DS_BUILD_OPS=0, DS_ACCELERATOR=cpu), about a minute.
#
# Usage: packaging/install-peers.sh    prints the venv directory (progress on stderr)
# Exit codes: 0 ready, 1 install failed. Readiness is the marker .bubblescope-peers holding PEERS,
# so a second call costs a stat; the install runs under install-torch.sh's lock.
set -euo pipefail

PEERS="torchtitan==0.2.2 deepspeed==0.19.8 megatron-core==0.16.1 HolisticTraceAnalysis==0.5.0"
DEPS="wheel tyro tokenizers tomli hjson msgpack ninja psutil py-cpuinfo pydantic tqdm einops packaging pandas plotly pydot"

VENV="$(bash "$(dirname "$0")/install-torch.sh")"
PY="$VENV/bin/python"
MARKER="$VENV/.bubblescope-peers"
CACHE_ROOT="$(dirname "$VENV")"

ready() { [[ -f "$MARKER" && "$(cat "$MARKER")" == "$PEERS" ]]; }

if ! ready; then
  exec 9>"$VENV.lock"
  flock 9
  if ! ready; then
    echo "install-peers: adding $PEERS to $VENV" >&2
    pip() { "$PY" -m pip install -q --disable-pip-version-check --cache-dir "$CACHE_ROOT/pip" "$@" >&2; }
    # shellcheck disable=SC2086
    pip $DEPS
    for peer in $PEERS; do
      case "$peer" in
        deepspeed==*) DS_BUILD_OPS=0 DS_ACCELERATOR=cpu pip --no-deps --no-build-isolation "$peer" ;;
        *) pip --no-deps "$peer" ;;
      esac
    done
    "$PY" - >&2 <<'PYEOF' || { echo "install-peers: an engine's config classes did not import" >&2; exit 1; }
from torchtitan.config.manager import ConfigManager
from deepspeed.runtime.config import DeepSpeedConfig
from megatron.core.optimizer_param_scheduler import OptimizerParamScheduler
from hta.trace_analysis import TraceAnalysis
PYEOF
    echo "$PEERS" >"$MARKER.tmp" && mv "$MARKER.tmp" "$MARKER"
    echo "install-peers: done" >&2
  fi
  exec 9>&-
fi
echo "$VENV"
