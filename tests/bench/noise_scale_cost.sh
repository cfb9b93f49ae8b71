#!/usr/bin/env bash
# What measuring the gradient noise scale costs a training run: the same runs with this build's
# CLI (A) and a baseline CLI built without the measurement (B, e.g. main before it), alternated
# A B A B ... per schedule; each run's training wall time (summary.json wall_time_s: start-up and
# validation excluded), fastest of ROUNDS per side. Not part of ctest; figures: docs/BENCHMARKS.md.
# Usage: tests/bench/noise_scale_cost.sh CLI_A CLI_B [ROUNDS] [STEPS]
set -euo pipefail
a="$1"; b="$2"; rounds="${3:-5}"; steps="${4:-20}"
tmp="$(mktemp -d)"; trap 'rm -rf "$tmp"' EXIT
common=(--stages 4 --microbatches 8 --micro-batch-size 8 --model tiny --steps "$steps" --eval-interval 0
    --threads 1 --executor serial --overwrite)
wall() { python3 -c "import json,sys; print(json.load(open(sys.argv[1]))['wall_time_s'])" "$1/summary.json"; }
printf '%-12s %10s %10s %8s\n' schedule "A s" "B s" "A/B"
for spec in paci:4 1f1b:0 async-1f1b:0; do
    schedule="${spec%%:*}"; accum="${spec##*:}"
    best_a=1e9; best_b=1e9
    for ((r = 0; r < rounds; ++r)); do
        "$a" train --schedule "$schedule" --accum "$accum" "${common[@]}" --out "$tmp/a" >/dev/null
        "$b" train --schedule "$schedule" --accum "$accum" "${common[@]}" --out "$tmp/b" >/dev/null
        best_a=$(python3 -c "print(min($best_a, $(wall "$tmp/a")))")
        best_b=$(python3 -c "print(min($best_b, $(wall "$tmp/b")))")
    done
    printf '%-12s %10.3f %10.3f %8.4f\n' "$schedule" "$best_a" "$best_b" "$(python3 -c "print($best_a / $best_b)")"
done
