#!/usr/bin/env bash
# Issue 14: exported scripts ran `cmd` from `--config-name 'cfg$(cmd).toml'`, and a newline in
# --job-name injected a line into the SLURM header. Usage: injection.sh CLI WORKDIR
set -u
cli=$(realpath "$1") work=$2
rm -rf "$work" && mkdir -p "$work" && cd "$work" || exit 1
fail() { echo "FAIL: $*"; exit 1; }
for format in torchrun slurm; do
    for name in 'cfg$(touch PWNED).toml' 'cfg`touch PWNED`.toml' "it's \"quoted\" \$HOME;touch PWNED.toml"; do
        "$cli" export --format "$format" --config-name "$name" --job-name 'job $(touch PWNED) ; x' --out "$format.sh" \
            || fail "export --format $format refused a legal name: $name"
        bash -n "$format.sh" || fail "bash -n $format.sh"
        # Run it: it writes the config, then fails on the missing torchrun / scontrol.
        (env -u CONFIG -u SLURM_SUBMIT_DIR bash "$format.sh" >/dev/null 2>&1)
        [[ ! -e PWNED ]] || fail "$format: running the script ran an injected command ($name)"
        [[ -f "$name" ]] || fail "$format: the config was not written to the file named $name"
        # Issue 32: written once; a second run keeps the user's edits.
        echo '# edited by the user' >>"$name"
        (env -u CONFIG -u SLURM_SUBMIT_DIR bash "$format.sh" >/dev/null 2>&1)
        grep -q '^# edited by the user$' "$name" || fail "$format: a second run overwrote the edited config"
        rm -f -- "$name"
    done
done
out=$("$cli" export --format slurm --job-name $'job\n#SBATCH --wrap=evil' 2>&1)
rc=$?
[[ $rc == 2 ]] || fail "a newline in --job-name: exit $rc, expected 2"
grep -q "job-name: contains a newline" <<<"$out" || fail "no message naming job-name: $out"
out=$("$cli" export --format torchrun --config-name $'a\nb.toml' 2>&1)
[[ $? == 2 ]] || fail "a newline in --config-name was accepted"
echo "ok: no injected command ran; control characters refused"
