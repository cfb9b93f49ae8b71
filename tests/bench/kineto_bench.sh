#!/usr/bin/env bash
# Side by side: importing 4 ranks x 1 M Kineto events with bubblescope's importer vs reading the
# same files with Python's json module (json.load, C accelerated). Usage:
#   tests/bench/kineto_bench.sh [BUILD_DIR] [EVENTS]     (default build/ci, 1000000)
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
build="${1:-build/ci}"
events="${2:-1000000}"
data="${TMPDIR:-/tmp}/bs_kineto_bench_$events"
[[ -f "$data/rank3.json" ]] || python3 "$here/make_kineto_bench_data.py" "$data" "$events" 4
ls -l "$data"
python3 - "$data" <<'PY'
import json, sys, time, os, resource
t = time.perf_counter()
n = 0
for r in range(4):
    with open(os.path.join(sys.argv[1], f"rank{r}.json")) as f:
        n += len(json.load(f)["traceEvents"])
print(f"python json.load: 4 files, {n} events, {time.perf_counter() - t:.3f} s; peak RSS {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss // 1024} MiB")
PY
"$build/tests/bench/kineto_import_bench" "$data"
