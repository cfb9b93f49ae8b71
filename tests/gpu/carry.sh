#!/usr/bin/env bash
# Unpacks the small Debian -dev packages the full build needs (toml++, nlohmann-json, CLI11,
# GoogleTest/GoogleMock, Google Benchmark, gloo's headers: PyPI's torch ships none) into an
# ignored folder, so that tests/gpu/run.sh can build the whole project on the GPU machine, which
# reaches no network and has only CUDA, CMake and python3's torch. Run on the build machine:
#
#   bash tests/gpu/carry.sh            # -> .gpu-carry/ (about 10 MB)
#   then the device tool: run(command="bash tests/gpu/run.sh", carry=[".gpu-carry"], timeout_s=570)
#
# Only apt-get download + dpkg -x: nothing is installed, root is not needed.
#
#   bash tests/gpu/carry.sh --binaries [BUILD]   # BUILD: default build/ci-cuda, already built
#
# adds what run.sh runs, built here against the same PyPI CUDA LibTorch (2.11, cu130) as the GPU
# machine's python3 torch, into .gpu-carry/build/ (stripped; the same relative paths as in BUILD):
# bubblescope-cli, the CUDA runtime module, the GPU tests and the two benchmarks, with the sources'
# identity (source_id.sh) and the torch version they were built for. run.sh then skips its build
# (minutes of device time on 16 cores) when both match that machine's, and builds as before when
# not, or when a carried binary does not load there. Keep the packages too: they are the fallback.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
if [[ "${1:-}" == --binaries ]]; then
    FROM="$(cd "${2:-$ROOT/build/ci-cuda}" && pwd)"
    DEST="$ROOT/.gpu-carry/build"
    # shellcheck source=tests/gpu/source_id.sh
    source "$ROOT/tests/gpu/source_id.sh"
    [[ -x "$FROM/app/bubblescope-cli" ]] || { echo "carry.sh: no $FROM/app/bubblescope-cli: build it first" >&2; exit 2; }
    rm -rf "$DEST"
    mkdir -p "$DEST"
    n=0
    for name in bubblescope-cli 'libbubblescope-runtime-*.so' gpu_run_test cupti_gpu_test gpu_plan_test \
                cupti_overhead_bench runtime_overhead_bench; do
        while IFS= read -r f; do
            rel="${f#"$FROM"/}"
            mkdir -p "$DEST/$(dirname "$rel")"
            strip --strip-unneeded -o "$DEST/$rel" "$f"
            n=$((n + 1))
        done < <(find "$FROM" -path "$FROM/CMakeFiles" -prune -o -name "$name" -type f -print)
    done
    # The gtest binaries `ctest -L gpu` would run, for run.sh to run them without CTest files.
    ctest --test-dir "$FROM" -L gpu --show-only=json-v1 \
        | python3 -c 'import json,sys; [print(c) for c in sorted({t["command"][0] for t in json.load(sys.stdin)["tests"]})]' \
        | sed "s|^$FROM/||" >"$DEST/GPU_TESTS"
    source_id "$ROOT" >"$DEST/SOURCES"
    # torch.__version__ of the LibTorch built against (its torch/version.py), as run.sh asks python3 there
    prefix="$(sed -n 's/^BS_TORCH_PREFIX:[A-Z]*=//p' "$FROM/CMakeCache.txt")"
    version="$(sed -n "s/^__version__ = '\(.*\)'.*/\1/p" "${prefix:-/nonexistent}/../../version.py" 2>/dev/null || true)"
    echo "${version:-none}" >"$DEST/TORCH"
    echo "carry: $DEST ($(du -sh "$DEST" | cut -f1), $n files, sources $(cat "$DEST/SOURCES"), torch $(cat "$DEST/TORCH"))" >&2
    exit 0
fi
CARRY="${1:-$ROOT/.gpu-carry}"
PACKAGES=(libtomlplusplus-dev libtomlplusplus3 nlohmann-json3-dev libcli11-dev libgtest-dev libgmock-dev
          libbenchmark-dev libbenchmark1debian libgloo-dev)

debs="$(mktemp -d)"
trap 'rm -rf "$debs"' EXIT
(cd "$debs" && apt-get download -q "${PACKAGES[@]}" >&2)
find "$CARRY" -mindepth 1 -maxdepth 1 ! -name build -exec rm -rf {} + 2>/dev/null || true # keeps --binaries' build/
mkdir -p "$CARRY"
for deb in "$debs"/*.deb; do
    dpkg -x "$deb" "$CARRY"
done
rm -rf "$CARRY/usr/share/doc" "$CARRY/usr/share/lintian" "$CARRY/usr/share/man"
{
    echo "# unpacked by tests/gpu/carry.sh on $(date -u +%FT%TZ) from:"
    for deb in "$debs"/*.deb; do basename "$deb"; done
} >"$CARRY/PACKAGES"
echo "carry: $CARRY ($(du -sh "$CARRY" | cut -f1), ${#PACKAGES[@]} packages)" >&2
echo "$CARRY"
