#!/usr/bin/env bash
# Whole-process start-up time of bubblescope-cli commands: runs each command N times (after one
# unmeasured run that warms the page cache) and prints min / median / max wall time in ms.
# Speed is measured here, not asserted in ctest.
#
#   tests/bench/process_startup.sh [-n 30] CLI [CLI_BEFORE]
#     CLI         the bubblescope-cli to measure
#     CLI_BEFORE  optional second binary measured the same way (e.g. one linking libtorch)
set -euo pipefail
runs=30
if [[ "${1:-}" == -n ]]; then runs=$2; shift 2; fi
[[ $# -ge 1 ]] || { echo "usage: $0 [-n N] CLI [CLI_BEFORE]" >&2; exit 2; }
python3 - "$runs" "$@" <<'PY'
import statistics, subprocess, sys, time
runs, clis = int(sys.argv[1]), sys.argv[2:]
commands = [["--version"], ["simulate", "--schedule", "1f1b", "-p", "4", "-m", "8"],
            ["tune", "--model", "tiny", "--device-profile", "cpu", "--json"]]
print(f"{'binary':<48} {'command':<32} {'min ms':>7} {'median':>7} {'max':>7}")
for cli in clis:
    for args in commands:
        subprocess.run([cli] + args, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        times = []
        for _ in range(runs):
            t = time.perf_counter()
            subprocess.run([cli] + args, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
            times.append(1000 * (time.perf_counter() - t))
        print(f"{cli[-48:]:<48} {' '.join(args)[:32]:<32} {min(times):7.1f} {statistics.median(times):7.1f} {max(times):7.1f}")
PY
