#!/usr/bin/env bash
# Runs every libFuzzer harness (tests/fuzz) for a while under ASan + UBSan and prints how many
# inputs each tried. CI runs them for a few seconds each (scripts/test.sh, ctest -L fuzz); this is
# the longer local run.  Usage: scripts/fuzz.sh [SECONDS_PER_HARNESS=600] [JOBS=1]
# (BS_FUZZ_HARNESSES="kineto_trace token_files" runs only those.)
# New interesting inputs go to build/fuzz/corpus-work/<harness>/; a crash leaves crash-* files
# in build/fuzz/findings/<harness>/: add it to tests/fuzz/corpus/<harness>/ with the fix, and the
# corpus replay in ctest keeps it fixed.
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${1:-600}
jobs=${2:-1}
export CCACHE_BASEDIR="$PWD" CCACHE_NOHASHDIR=1
cmake --preset fuzz >/dev/null
cmake --build --preset fuzz
status=0
printf '%-14s %12s %10s %s\n' harness runs "exec/s" result
harnesses=${BS_FUZZ_HARNESSES:-config_toml chrome_trace schedule_csv run_files token_files kineto_trace unit_profile}
for harness in $harnesses; do
    work=build/fuzz/corpus-work/$harness findings=build/fuzz/findings/$harness
    mkdir -p "$work" "$findings"
    log=build/fuzz/findings/$harness.log
    set +e
    (cd "$findings" && "$OLDPWD/build/fuzz/tests/fuzz/fuzz_$harness" -max_total_time="$seconds" -rss_limit_mb=2048 \
        -timeout=10 -print_final_stats=1 -jobs="$jobs" -workers="$jobs" "$OLDPWD/$work" "$OLDPWD/tests/fuzz/corpus/$harness") \
        >"$log" 2>&1
    rc=$?
    set -e
    # With -jobs the workers' logs (fuzz-N.log) hold the stats and the main log repeats them:
    # count the workers' when there are any, else the main log's (never both: that doubled).
    stats=("$log")
    if compgen -G "$findings/fuzz-*.log" >/dev/null; then stats=("$findings"/fuzz-*.log); fi
    runs=$(grep -h "stat::number_of_executed_units" "${stats[@]}" 2>/dev/null | awk '{s += $2} END {print s + 0}')
    speed=$(grep -h "stat::average_exec_per_sec" "${stats[@]}" 2>/dev/null | awk '{s += $2} END {print s + 0}')
    result=ok
    if [[ $rc != 0 ]] || ls "$findings"/crash-* "$findings"/leak-* "$findings"/timeout-* "$findings"/oom-* >/dev/null 2>&1; then
        result="FOUND SOMETHING (exit $rc): see $findings"
        status=1
    fi
    printf '%-14s %12s %10s %s\n' "$harness" "$runs" "$speed" "$result"
done
exit $status
