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
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
CARRY="${1:-$ROOT/.gpu-carry}"
PACKAGES=(libtomlplusplus-dev libtomlplusplus3 nlohmann-json3-dev libcli11-dev libgtest-dev libgmock-dev
          libbenchmark-dev libbenchmark1debian libgloo-dev)

debs="$(mktemp -d)"
trap 'rm -rf "$debs"' EXIT
(cd "$debs" && apt-get download -q "${PACKAGES[@]}" >&2)
rm -rf "$CARRY"
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
