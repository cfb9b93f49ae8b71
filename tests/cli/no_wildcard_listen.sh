#!/usr/bin/env bash
# Issue 14: during `launch --nproc-per-node 2` on 127.0.0.1 no socket of ours listens on a wildcard
# address (c10d's TCPStore used to listen on *:PORT). Usage: no_wildcard_listen.sh CLI WORKDIR
set -u
cli=$1 work=$2
command -v ss >/dev/null || { echo "ss (iproute2) not installed: skipped"; exit 0; }
rm -rf "$work" && mkdir -p "$work"
"$cli" launch --nproc-per-node 2 -- train --model tiny --stages 2 --microbatches 2 --steps 60 --eval-interval 0 \
    >"$work/out.txt" 2>"$work/err.txt" &
pid=$!
seen=""
while kill -0 "$pid" 2>/dev/null; do
    seen+=$(ss -ltnpH 2>/dev/null | grep bubblescope-cli)$'\n'
    sleep 0.2
done
wait "$pid" || { echo "FAIL: the launch failed"; cat "$work/err.txt"; exit 1; }
if grep -E '(\*|0\.0\.0\.0|\[::\]):[0-9]+' <<<"$seen" | grep -q .; then
    echo "FAIL: listening on a wildcard address:"; grep -E '(\*|0\.0\.0\.0|\[::\])' <<<"$seen" | sort -u; exit 1
fi
echo "ok: no wildcard listener ($(grep -c . <<<"$seen") listener lines seen, all loopback)"
