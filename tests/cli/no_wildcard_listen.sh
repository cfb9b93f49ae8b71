#!/usr/bin/env bash
# Issue 14: during `launch --nproc-per-node 2` on 127.0.0.1 no socket of ours listens on a wildcard
# address (c10d's TCPStore used to listen on *:PORT). Usage: no_wildcard_listen.sh CLI WORKDIR [torchrun]
# torchrun: the two ranks are started the way torchrun starts them (RANK, WORLD_SIZE, MASTER_ADDR=
# 127.0.0.1, MASTER_PORT; no launcher): LibTorch 2.x binds its TCPStore to MASTER_ADDR, 1.13 meets
# through a file whose path rank 0 serves on 127.0.0.1:PORT (runtime/train/dist/file_rendezvous.h).
set -u
cli=$1 work=$2 mode=${3:-launch}
command -v ss >/dev/null || { echo "ss (iproute2) not installed: skipped"; exit 0; }
rm -rf "$work" && mkdir -p "$work"
# One intra-op thread per rank: two ranks of OpenMP threads spinning on two cores made the 60
# steps take 135-180 s under PyPI's LibTorch 2.11 (17-27 s under 1.13), near the 180 s limit.
args=(train --model tiny --stages 2 --microbatches 2 --steps 60 --eval-interval 0 --threads 1)
if [[ $mode == torchrun ]]; then
    port=$((20000 + $$ % 9000))
    # Each rank waited for by its pid: `wait -n` twice failed (127) when both ranks had already
    # ended before the first one returned, and the launch counted as failed (seen in CI twice).
    bash -c 'pids=(); for k in 0 1; do RANK=$k WORLD_SIZE=2 MASTER_ADDR=127.0.0.1 MASTER_PORT='"$port"' "$@" --distributed & pids+=($!); done
             status=0; for p in "${pids[@]}"; do wait "$p" || status=1; done; exit $status' \
        _ "$cli" "${args[@]}" >"$work/out.txt" 2>"$work/err.txt" &
else
    "$cli" launch --nproc-per-node 2 -- "${args[@]}" >"$work/out.txt" 2>"$work/err.txt" &
fi
pid=$!
seen=""
# Only sockets of this launch and its ranks count: other tests running at the same time (ctest -j)
# may hold listeners of their own.
family() { # the launch's pid and every descendant's, as an alternation for grep -E
    local all=$1 frontier=$1 next
    while [[ -n "$frontier" ]]; do
        next=$(for p in $frontier; do pgrep -P "$p"; done 2>/dev/null | tr '\n' ' ')
        all+=" $next"; frontier=$next
    done
    tr -s ' ' '|' <<<"$all" | sed 's/^|//; s/|$//'
}
while kill -0 "$pid" 2>/dev/null; do
    seen+=$(ss -ltnpH 2>/dev/null | grep -E "pid=($(family "$pid"))," )$'\n'
    sleep 0.2
done
wait "$pid" || { echo "FAIL: the launch failed"; cat "$work/err.txt"; exit 1; }
if grep -E '(\*|0\.0\.0\.0|\[::\]):[0-9]+' <<<"$seen" | grep -q .; then
    echo "FAIL: listening on a wildcard address:"; grep -E '(\*|0\.0\.0\.0|\[::\])' <<<"$seen" | sort -u; exit 1
fi
echo "ok ($mode): no wildcard listener ($(grep -c . <<<"$seen") listener lines seen, all loopback):"; grep -oE "127\.0\.0\.1:[0-9]+" <<<"$seen" | sort -u | tr "\n" " "; echo
