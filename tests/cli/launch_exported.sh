#!/usr/bin/env bash
# Issue 32: the torchrun export of a tuned `small` PACI setup, launched here on the CPU (--device
# cpu) for 2 steps: every rank reports the pipeline's finite final loss (ranks without the last
# stage said nan) and the merged metrics.jsonl holds a record per step (it was 0 bytes), as does
# each rank's. Usage: launch_exported.sh CLI WORKDIR
set -u
cli=$(realpath "$1") work=$2
rm -rf "$work" && mkdir -p "$work" && cd "$work" || exit 1
fail() { echo "FAIL: $*"; exit 1; }
"$cli" export --preset small --format toml --out small.toml 2>/dev/null || fail "export toml"
# Tuned: 4 stages (one per rank), window 4.
sed -i 's/^stages = 8/stages = 4/; s/^accum = 8/accum = 4/' small.toml
"$cli" export --config small.toml --format torchrun --out launch.sh 2>notes.txt || fail "export torchrun"
grep -q "note: device: cpu -> cuda" notes.txt || fail "no note on the device: $(cat notes.txt)"
# The config the script embeds (it would write it on its first run), as the job would use it.
sed -n "/<<'BUBBLESCOPE_CONFIG'/,/^BUBBLESCOPE_CONFIG$/p" launch.sh | sed '1d;$d' >cluster.toml
grep -q '^name = "cuda"' cluster.toml || fail "the embedded config is not on cuda"
out=$("$cli" launch --nproc-per-node 4 -- train --config cluster.toml --device cpu --data synthetic --steps 2 \
    --out run 2>&1) || fail "launch failed: $out"
for k in 0 1 2 3; do
    line=$(grep "^\[rank $k\] rank $k of 4: 2 steps, final train loss" <<<"$out") || fail "no summary from rank $k: $out"
    loss=${line##* }
    [[ "$loss" =~ ^[0-9]+\.[0-9]+$ ]] || fail "rank $k: final train loss '$loss' is not finite"
    [[ $(wc -l <"run/rank$k/metrics.jsonl") == 2 ]] || fail "run/rank$k/metrics.jsonl: not 2 records"
done
[[ $(wc -l <run/metrics.jsonl) == 2 ]] || fail "run/metrics.jsonl: $(wc -l <run/metrics.jsonl) records, not 2"
grep -q '"train_loss":[0-9]' run/metrics.jsonl || fail "merged records without the loss"
echo "ok: 4 ranks, each with a finite final loss ($loss) and its metrics; merged metrics filled"
