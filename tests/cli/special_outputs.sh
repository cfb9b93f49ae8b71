#!/usr/bin/env bash
# Issue 33: every output option replaces a regular file atomically, follows a symlink to write its
# target, and refuses (exit 2, one line) a device, FIFO or directory, leaving it what it was.
# Before, the temp file was renamed over it: `simulate --trace /tmp/n` turned a null device into a
# regular file.  Usage: special_outputs.sh CLI KINETO_JOB_DIR WORKDIR
set -u
cli=$1 job=$2 work=$3
rm -rf "$work" && mkdir -p "$work"
failures=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }

# Each writer as "NAME|ARGS before the output path" (the path is appended).
writers=(
    "simulate-trace|simulate --schedule 1f1b -p 2 -m 2 --trace"
    "simulate-csv|simulate --schedule 1f1b -p 2 -m 2 --csv"
    "analyze-perfetto|analyze $job --perfetto"
    "export-o|export --format toml -o"
)
have_null=0
if mknod "$work/probe" c 1 3 2>/dev/null; then have_null=1; rm -f "$work/probe"; else
    echo "skip null-device cases: mknod needs root (CAP_MKNOD)"
fi
for writer in "${writers[@]}"; do
    name=${writer%%|*}
    read -r -a args <<<"${writer#*|}"
    dir="$work/$name" && mkdir -p "$dir"
    # A FIFO (timeout: a writer that opened it would wait for a reader forever).
    mkfifo "$dir/fifo"
    timeout 60 "$cli" "${args[@]}" "$dir/fifo" >"$dir/out" 2>"$dir/err"
    rc=$?
    [[ $rc == 2 ]] || fail "$name on a FIFO: exit $rc, expected 2: $(cat "$dir/err")"
    [[ -p "$dir/fifo" ]] || fail "$name replaced the FIFO"
    grep -q "it is a FIFO" "$dir/err" || fail "$name on a FIFO: no reason: $(cat "$dir/err")"
    [[ $(wc -l <"$dir/err") == 1 ]] || fail "$name on a FIFO: not one line: $(cat "$dir/err")"
    # A directory.
    mkdir "$dir/adir"
    "$cli" "${args[@]}" "$dir/adir" >"$dir/out" 2>"$dir/err"
    rc=$?
    [[ $rc == 2 && -d "$dir/adir" ]] || fail "$name on a directory: exit $rc: $(cat "$dir/err")"
    # A null device made here (never the system's /dev/null).
    if [[ $have_null == 1 ]]; then
        mknod -m 666 "$dir/null" c 1 3
        "$cli" "${args[@]}" "$dir/null" >"$dir/out" 2>"$dir/err"
        rc=$?
        [[ $rc == 2 ]] || fail "$name on a null device: exit $rc, expected 2"
        [[ $(stat -c %F "$dir/null") == "character special file" ]] || fail "$name replaced the null device: $(stat -c %F "$dir/null")"
        grep -q "it is a device" "$dir/err" || fail "$name on a device: no reason: $(cat "$dir/err")"
    fi
    # A symlink: written through to its target; the link stays a link; no temp file left.
    mkdir "$dir/real" && echo old >"$dir/real/target"
    ln -s real/target "$dir/link"
    "$cli" "${args[@]}" "$dir/link" >"$dir/out" 2>"$dir/err"
    rc=$?
    [[ $rc == 0 ]] || fail "$name through a symlink: exit $rc: $(cat "$dir/err")"
    [[ -L "$dir/link" ]] || fail "$name replaced the symlink"
    [[ -s "$dir/real/target" && $(cat "$dir/real/target") != old ]] || fail "$name left the link's target unwritten"
    [[ $(ls -A "$dir/real" | wc -l) == 1 ]] || fail "$name left a temp file: $(ls -A "$dir/real")"
done
[[ $failures == 0 ]] || exit 1
echo "ok: ${#writers[@]} writers refuse a FIFO, a directory$([[ $have_null == 1 ]] && echo ", a null device") and write through a symlink"
