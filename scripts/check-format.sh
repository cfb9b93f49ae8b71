#!/usr/bin/env bash
# Formatting check on what a branch changed: the lines of C++ files changed since BASE (default:
# the merge base with main) must be formatted as the repository's .clang-format says. Only changed
# lines are checked (git clang-format), so older code is reformatted when it is next touched, not
# in one sweeping commit. Exit 0: clean; 1: prints the diff clang-format wants; 2: tool missing.
# Usage: scripts/check-format.sh [BASE]
set -euo pipefail
cd "$(dirname "$0")/.."
base="${1:-$(git merge-base HEAD main 2>/dev/null || echo HEAD)}"
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
