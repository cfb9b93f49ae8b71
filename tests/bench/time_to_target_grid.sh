#!/usr/bin/env bash
# The oracle for the tuner's time-to-target prediction (issue 30): a grid of real runs of the tiny
# GPT at p = 8 on real English text (the licence texts of Debian's base-files package,
# /usr/share/common-licenses), fixed b and seeds, each trained until its validation loss first
# reaches the same target (train --stop-at-target):
#   PACI a in {1, 2, 4, 8, 16, 32} and 1F1B-flush m in {8, 16, 32}.
# Every run uses one constant learning rate (3e-4, no warm-up, no decay, optimizer.lr_scaling =
# "none"): the batch per update changes across the grid and the runs must not rescale lr with it;
# the tuner reads that rule from the calibration runs' config.toml.
# Prints each run's measured time to target (virtual seconds, summary.json time_to_target_s),
# the tuner's prediction from a calibration on two short runs of their own seed (PACI a = 8 and
# a = 2: the statistics need two lags to fit the staleness cost; tune --calibrate ... --target-loss),
# Suggest's pick against the grid's best, and the Spearman rank correlation of predicted against
# measured. 10 to 20 minutes on 2 cores (docs/BENCHMARKS.md); nothing here is a timed test.
#
#   tests/bench/time_to_target_grid.sh [CLI] [WORKDIR]
set -euo pipefail
CLI=${1:-build/ci/app/bubblescope-cli}
WORK=${2:-$(mktemp -d /tmp/ttt-grid.XXXXXX)}
TARGET=${TARGET:-3.0}      # validation loss in nats (byte-level tokens)
SAMPLES=${SAMPLES:-12288}  # the most sequences a grid run may train (steps = SAMPLES / (m·b)); runs stop at the target
B=${B:-4}                  # micro-batch size
SEED=${SEED:-7}            # the grid's; the calibration runs use SEED + 1
EVAL_SAMPLES=32            # sequences between validation passes (eval interval = max(1, 32 / (m·b)) batches)
P=8
mkdir -p "$WORK"
TEXT="$WORK/english.txt"
cat /usr/share/common-licenses/* > "$TEXT"
CONFIG="$WORK/constant-lr.toml"
cat > "$CONFIG" <<'TOML'
[optimizer]
lr = 3e-4
warmup_steps = 0
decay = "constant"
lr_scaling = "none"

[training]
eval_batches = 8
TOML
common=(--config "$CONFIG" --model tiny --stages $P --micro-batch-size $B --data "text:$TEXT" --device cpu
        --target-loss "$TARGET" --stop-at-target --threads 1)

train() { # NAME SCHEDULE M A STEPS SEED
    local out="$WORK/$1"
    [ -f "$out/summary.json" ] && return 0
    local every=$(( EVAL_SAMPLES / ($3 * B) )); [ "$every" -ge 1 ] || every=1
    "$CLI" train --schedule "$2" --microbatches "$3" --accum "$4" --steps "$5" --seed "$6" --eval-interval "$every" \
        --out "$out" --overwrite "${common[@]}" > "$out.log" 2>&1 || { echo "train $1 failed: see $out.log" >&2; return 1; }
}

# 1. Calibration: two short runs of their own seed, PACI a = 8 and a = 2 (a quarter of the budget each).
train cal-paci-a8 paci 8 8 $(( SAMPLES / (8 * B) / 4 )) $(( SEED + 1 ))
train cal-paci-a2 paci 2 2 $(( SAMPLES / (2 * B) / 4 )) $(( SEED + 1 ))
CAL="$WORK/cal-paci-a8,$WORK/cal-paci-a2"

# 2. Predictions: every grid row, ranked by predicted time to target.
"$CLI" tune --schedule paci --model tiny --device-profile cpu -p $P --accum-values 1,2,4,8,16,32 \
    --micro-batch-sizes $B --max-lag 100 --keep 100 --calibrate "$CAL" --target-loss "$TARGET" --json \
    > "$WORK/predict-paci.json"
"$CLI" tune --schedule 1f1b --model tiny --device-profile cpu -p $P --accum-values 8,16,32 \
    --micro-batch-sizes $B --max-lag 100 --keep 100 --calibrate "$CAL" --target-loss "$TARGET" --json \
    > "$WORK/predict-1f1b.json"

# 3. The grid, each to the target (or the sample budget).
for a in 1 2 4 8 16 32; do train "paci-a$a" paci $a $a $(( SAMPLES / (a * B) )) $SEED; done
for m in 8 16 32; do train "1f1b-m$m" 1f1b $m 0 $(( SAMPLES / (m * B) )) $SEED; done

# 4. Measured against predicted: time to target (the oracle), and samples to target beside it (the
# statistical half alone: virtual time follows the measured action durations, so a loaded machine
# moves the times of the runs, not their samples).
python3 - "$WORK" "$B" <<'PY'
import json, sys, os
work, b = sys.argv[1], int(sys.argv[2])
def load(p):
    with open(os.path.join(work, p)) as f: return json.load(f)
pred = {}
stats = []
for sched, key in (("paci", "paci-a%d"), ("1f1b", "1f1b-m%d")):
    t = load("predict-%s.json" % sched)
    stats.append(t.get("statistics", ""))
    for row in t["top"]:
        if row["time_to_target_s"] is not None:
            pred[key % row["accum"]] = (row["time_to_target_s"], row["time_to_target_spread_s"],
                                        row["throughput_samples_per_s"])
rows = []
for name in ["paci-a%d" % a for a in (1, 2, 4, 8, 16, 32)] + ["1f1b-m%d" % m for m in (8, 16, 32)]:
    try: s = load(name + "/summary.json")
    except OSError: s = {}
    m = int(name.split("-")[1][1:])
    step = s.get("step_to_target")
    samples = (step + 1) * m * b if step is not None else None
    rows.append((name, s.get("time_to_target_s"), samples, pred.get(name)))
print("statistics: " + stats[0])
print("%-10s %12s %14s %22s %12s %10s %10s" % ("run", "measured (s)", "measured seq/s", "predicted (s)", "pred seq/s",
                                              "samples", "pred samp."))
for name, m, n, p in rows:
    print("%-10s %12s %14s %22s %12s %10s %10s" % (name, "%.2f" % m if m is not None else "not reached",
          "%.1f" % (n / m) if m else "-", "%.2f ± %.2f" % (p[0], p[1]) if p else "-", "%.1f" % p[2] if p else "-",
          n if n is not None else "-", "%.0f" % (p[0] * p[2]) if p else "-"))
def ranks(v):
    order = sorted(range(len(v)), key=lambda i: v[i]); r = [0.0] * len(v)
    i = 0
    while i < len(order):
        j = i
        while j + 1 < len(order) and v[order[j + 1]] == v[order[i]]: j += 1
        for k in range(i, j + 1): r[order[k]] = (i + j) / 2.0
        i = j + 1
    return r
def spearman(pairs):
    if len(pairs) < 3: return float("nan")
    rm, rp = ranks([x[0] for x in pairs]), ranks([x[1] for x in pairs])
    n = len(pairs); mm = sum(rm) / n; mp = sum(rp) / n
    cov = sum((x - mm) * (y - mp) for x, y in zip(rm, rp))
    var = (sum((x - mm) ** 2 for x in rm) * sum((y - mp) ** 2 for y in rp)) ** 0.5
    return cov / var if var else float("nan")
both = [(m, p[0]) for _, m, _, p in rows if m is not None and p]
print("Spearman rank correlation, time to target (predicted vs measured, %d runs): %.3f" % (len(both), spearman(both)))
samp = [(n, p[0] * p[2]) for _, _, n, p in rows if n is not None and p]
print("Spearman rank correlation, samples to target (predicted vs measured, %d runs): %.3f" % (len(samp), spearman(samp)))
reached = [(m, name) for name, m, _, _ in rows if m is not None]
predicted = [(p[0], name) for name, _, _, p in rows if p]
if reached and predicted:
    best = min(reached); pick = min(predicted)
    pick_measured = dict((n, m) for m, n in reached).get(pick[1])
    print("grid's best: %s %.2f s; Suggest's pick: %s, measured %s" % (best[1], best[0], pick[1],
          "%.2f s (%+.1f %%)" % (pick_measured, 100 * (pick_measured / best[0] - 1)) if pick_measured else "not reached"))
PY
echo "runs and logs in $WORK"
