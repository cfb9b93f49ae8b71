#!/usr/bin/env bash
# Issue 14: a training run stopped by SIGTERM (timeout, SLURM, Kubernetes) or SIGINT keeps its
# whole run directory and exits 128 + signal.  Usage: stop_by_signal.sh CLI SIGNAL WORKDIR
#   SIGNAL=TERM|INT: sent once the first metrics record is on disk; expects 143 / 130 and all four
#   files, the trace readable by `tune --calibrate`.
#   SIGNAL=KILL: expects the trace chunks up to the last finished batch (trace.partial.json).
set -um # -m: job control, so the background run does not start with SIGINT ignored
cli=$1 sig=$2 work=$3
rm -rf "$work" && mkdir -p "$work"
"$cli" train --model tiny --stages 2 --microbatches 2 --steps 500 --eval-interval 0 --out "$work/run" \
    >"$work/out.txt" 2>"$work/err.txt" &
pid=$!
for _ in $(seq 1 600); do # up to 60 s for the first batch
    [[ -s "$work/run/metrics.jsonl" ]] && [[ $(wc -l <"$work/run/metrics.jsonl") -ge 2 ]] && break
    sleep 0.1
done
kill -"$sig" "$pid"
wait "$pid"
rc=$?
fail() { echo "FAIL ($sig): $*"; echo "--- stderr"; cat "$work/err.txt"; ls -la "$work/run"; exit 1; }
case $sig in
TERM) [[ $rc == 143 ]] || fail "exit code $rc, expected 143" ;;
INT) [[ $rc == 130 ]] || fail "exit code $rc, expected 130" ;;
KILL) [[ $rc == 137 ]] || fail "exit code $rc, expected 137" ;;
esac
if [[ $sig == KILL ]]; then
    [[ -s "$work/run/trace.partial.json" ]] || fail "no trace.partial.json after SIGKILL"
    [[ ! -e "$work/run/summary.json" ]] || fail "summary.json after SIGKILL?"
else
    for f in config.toml metrics.jsonl trace.json summary.json; do
        [[ -s "$work/run/$f" ]] || fail "$f missing"
    done
    [[ ! -e "$work/run/trace.partial.json" ]] || fail "trace.partial.json left next to trace.json"
    grep -q "stopped by SIG$sig" "$work/err.txt" || fail "no 'stopped by SIG$sig' message"
    # Issue 33: the summary keeps what the batches measured (it said 0 s and 0 tok/s) and says so.
    python3 - "$work/run/summary.json" "SIG$sig" <<'PY' || fail "summary.json of the stopped run: $(cat "$work/run/summary.json")"
import json, sys
s = json.load(open(sys.argv[1]))
assert s.get("stopped") == sys.argv[2], f"stopped = {s.get('stopped')!r}"
assert s["steps"] >= 1, "no batch"
for key in ("virtual_time_s", "wall_time_s", "tokens_per_s_virtual", "tokens_per_s_wall"):
    assert s[key] > 0, f"{key} = {s[key]}"
# both rates are the same tokens (the batches it finished) over their own clock
a, b = s["tokens_per_s_virtual"] * s["virtual_time_s"], s["tokens_per_s_wall"] * s["wall_time_s"]
assert abs(a - b) <= 1e-6 * a, (a, b)
PY
fi
# Whatever is there opens as a run: the calibration reads the (possibly cut-short) trace.
"$cli" tune --model tiny --stages 2 --calibrate "$work/run" >"$work/tune.txt" 2>&1 || fail "tune --calibrate failed: $(cat "$work/tune.txt")"
echo "ok ($sig): exit $rc, $(wc -l <"$work/run/metrics.jsonl") metrics records kept"
