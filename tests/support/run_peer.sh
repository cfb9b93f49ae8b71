#!/usr/bin/env bash
# Runs a peer's own reader (PyTorch's _load_csv, HTA, torchtitan, DeepSpeed, Megatron) with the
# Python of the project's torch venv: run_peer.sh PYTHON SCRIPT ARGS... Where that venv is not
# there yet (a fresh machine before packaging/install-torch.sh, which scripts/test.sh runs for its
# ci-cuda step) the test is skipped (77), saying why, instead of failing as "not run".
py=$1
shift
if [[ ! -x "$py" ]]; then
    echo "skipped: no torch venv at $py (packaging/install-torch.sh and packaging/install-peers.sh make it)"
    exit 77
fi
exec "$py" "$@"
