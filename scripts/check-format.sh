#!/usr/bin/env bash
# Formatting check on what a branch changed: the lines of C++ files changed since BASE (default:
# the merge base with main) must be formatted as the repository's .clang-format says. Only changed
# lines are checked (git clang-format), so older code is reformatted when it is next touched, not
# in one sweeping commit. Exit 0: clean; 1: prints the diff clang-format wants; 2: tool missing.
# Usage: scripts/check-format.sh [BASE]
# On main itself the merge base is HEAD, which would check nothing (a clean clone of main, as CI
# runs): there the base is the commit in scripts/format-base, the last one whose successors' lines
# were all checked; move it forward when a submission's lines are clean.
set -euo pipefail
cd "$(dirname "$0")/.."
base="${1:-$(git merge-base HEAD main 2>/dev/null || echo HEAD)}"
if [[ $# -eq 0 && "$(git rev-parse "$base" 2>/dev/null)" == "$(git rev-parse HEAD)" && -f scripts/format-base ]]; then
    recorded="$(tr -d '[:space:]' < scripts/format-base)"
    if git cat-file -e "${recorded}^{commit}" 2>/dev/null; then
        base="$recorded"
    fi
fi
tool="$(command -v git-clang-format || command -v git-clang-format-14 || true)"
if [[ -z "$tool" ]]; then
    echo "check-format: git-clang-format not found (apt-get install clang-format)" >&2
    exit 2
fi
binary="$(command -v clang-format || command -v clang-format-14)"
diff="$("$tool" --binary "$binary" --diff --extensions cpp,h "$base" -- app base profiler runtime ui tests 2>&1 || true)"
if [[ -z "$diff" || "$diff" == *"no modified files to format"* || "$diff" == *"clang-format did not modify any files"* ]]; then
    echo "check-format: changed lines since ${base:0:12} are formatted"
    exit 0
fi
echo "$diff"
echo "check-format: the lines above differ from .clang-format (fix: git clang-format $base)" >&2
exit 1
