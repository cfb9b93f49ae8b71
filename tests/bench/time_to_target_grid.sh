#!/usr/bin/env bash
# The oracle for the tuner's time-to-target prediction (issue 30): a grid of real runs of the tiny
# GPT at p = 8 on real English text (the licence texts of Debian's base-files package,
# /usr/share/common-licenses), fixed b and seeds, each trained to the same target validation loss:
#   PACI a in {1, 2, 4, 8, 16, 32} and 1F1B-flush m in {8, 16, 32}.
# Prints each run's measured time to target (virtual seconds, summary.json time_to_target_s),
# the tuner's prediction from a calibration on two short runs (tune --calibrate ... --target-loss),
# Suggest's pick against the grid's best, and the Spearman rank correlation of predicted against
# measured. Budget: about 25 minutes on 2 cores (SAMPLES below); nothing here is a timed test.
#
#   tests/bench/time_to_target_grid.sh [CLI] [WORKDIR]
set -euo pipefail
CLI=${1:-build/ci/app/bubblescope-cli}
WORK=${2:-$(mktemp -d /tmp/ttt-grid.XXXXXX)}
TARGET=${TARGET:-2.6}      # validation loss (byte-level tokens; the text's unigram entropy is ~3.0 nats)
SAMPLES=${SAMPLES:-6144}   # sequences each grid run may train (steps = SAMPLES / (m·b))
B=${B:-4}                  # micro-batch size
SEED=${SEED:-7}
P=8
mkdir -p "$WORK"
TEXT="$WORK/english.txt"
cat /usr/share/common-licenses/* > "$TEXT"
common=(--model tiny --stages $P --micro-batch-size $B --seed $SEED --data "text:$TEXT" --device cpu
        --target-loss "$TARGET" --eval-interval 1 --threads 1)

train() { # NAME SCHEDULE M A STEPS
    local out="$WORK/$1"
    [ -f "$out/summary.json" ] && return 0
    "$CLI" train --schedule "$2" --microbatches "$3" --accum "$4" --steps "$5" --out "$out" --overwrite \
        "${common[@]}" > "$out.log" 2>&1 || { echo "train $1 failed: see $out.log" >&2; return 1; }
}

# 1. Calibration: two short runs (PACI a = 8 and 1F1B m = 8), a quarter of the budget each.
train cal-paci paci 8 8 $(( SAMPLES / (8 * B) / 4 ))
train cal-1f1b 1f1b 8 0 $(( SAMPLES / (8 * B) / 4 ))
CAL="$WORK/cal-paci,$WORK/cal-1f1b"

# 2. Predictions: every grid row, ranked by predicted time to target.
"$CLI" tune --schedule paci --model tiny --device-profile cpu -p $P --accum-values 1,2,4,8,16,32 \
    --micro-batch-sizes $B --max-lag 100 --keep 100 --calibrate "$CAL" --target-loss "$TARGET" --json \
    > "$WORK/predict-paci.json"
"$CLI" tune --schedule 1f1b --model tiny --device-profile cpu -p $P --accum-values 8,16,32 \
    --micro-batch-sizes $B --max-lag 100 --keep 100 --calibrate "$CAL" --target-loss "$TARGET" --json \
    > "$WORK/predict-1f1b.json"

# 3. The grid, each to the target (or the sample budget).
for a in 1 2 4 8 16 32; do train "paci-a$a" paci $a $a $(( SAMPLES / (a * B) )); done
for m in 8 16 32; do train "1f1b-m$m" 1f1b $m 0 $(( SAMPLES / (m * B) )); done

# 4. Measured against predicted.
python3 - "$WORK" <<'PY'
import json, sys, os
work = sys.argv[1]
def load(p):
    with open(os.path.join(work, p)) as f: return json.load(f)
pred = {}
stats = []
for sched, key in (("paci", "paci-a%d"), ("1f1b", "1f1b-m%d")):
    t = load("predict-%s.json" % sched)
    stats.append(t.get("statistics", ""))
    for row in t["top"]:
        pred[key % row["accum"]] = (row["time_to_target_s"], row["time_to_target_spread_s"], row["throughput_samples_per_s"])
rows = []
for name in ["paci-a%d" % a for a in (1, 2, 4, 8, 16, 32)] + ["1f1b-m%d" % m for m in (8, 16, 32)]:
    try: s = load(name + "/summary.json")
    except OSError: s = {}
    rows.append((name, s.get("time_to_target_s"), pred.get(name)))
print("statistics: " + " | ".join(stats))
print("%-10s %14s %22s %12s" % ("run", "measured (s)", "predicted (s)", "pred seq/s"))
for name, m, p in rows:
    ps = "%.2f ± %.2f" % (p[0], p[1]) if p and p[0] is not None else "-"
    print("%-10s %14s %22s %12s" % (name, "%.2f" % m if m is not None else "not reached", ps, "%.1f" % p[2] if p else "-"))
both = [(m, p[0]) for _, m, p in rows if m is not None and p and p[0] is not None]
def ranks(v):
    order = sorted(range(len(v)), key=lambda i: v[i]); r = [0.0] * len(v)
    i = 0
    while i < len(order):
        j = i
        while j + 1 < len(order) and v[order[j + 1]] == v[order[i]]: j += 1
        for k in range(i, j + 1): r[order[k]] = (i + j) / 2.0
        i = j + 1
    return r
if len(both) >= 3:
    rm, rp = ranks([b[0] for b in both]), ranks([b[1] for b in both])
    n = len(both); mm = sum(rm) / n; mp = sum(rp) / n
    cov = sum((x - mm) * (y - mp) for x, y in zip(rm, rp))
    var = (sum((x - mm) ** 2 for x in rm) * sum((y - mp) ** 2 for y in rp)) ** 0.5
    print("Spearman rank correlation (predicted vs measured, %d runs): %.3f" % (n, cov / var if var else float("nan")))
reached = [(m, name) for name, m, _ in rows if m is not None]
predicted = [(p[0], name) for name, _, p in rows if p and p[0] is not None]
if reached and predicted:
    best = min(reached); pick = min(predicted)
    pick_measured = dict((n, m) for m, n in reached).get(pick[1])
    print("grid's best: %s %.2f s; Suggest's pick: %s, measured %s" % (best[1], best[0], pick[1],
          "%.2f s (%+.1f %%)" % (pick_measured, 100 * (pick_measured / best[0] - 1)) if pick_measured else "not reached"))
PY
echo "runs and logs in $WORK"
