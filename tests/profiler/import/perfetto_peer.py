"""`bubblescope-cli analyze --perfetto` read by HolisticTraceAnalysis 0.5 (issue 32; run by ctest).

usage: perfetto_peer.py CLI KINETO_DATA_DIR WORKDIR

For each imported job under tests/data/kineto, the exported trace must (1) give every event a
`cat` (HTA's parser needs one; without it HTA 0.5 failed with AttributeError), (2) keep complete
slices on each (pid, tid) nested (no partial overlap), async 'b'/'e' pairs balanced per (cat, id),
and (3) load with HTA's own parse_trace_file into a frame holding the compute and bubble slices.
Exit 0 when all hold, 1 with one line per failure, 77 when HTA cannot be imported
(packaging/install-peers.sh installs it).
"""

import json
import os
import subprocess
import sys

try:
    from hta.common.trace import parse_trace_file
except Exception as exc:  # noqa: BLE001
    print(f"HolisticTraceAnalysis is not importable ({exc}); packaging/install-peers.sh installs it")
    sys.exit(77)

CLI, DATA, WORK = sys.argv[1:4]


def check(path):
    problems = []
    events = json.load(open(path))["traceEvents"]
    tracks, open_async = {}, {}
    for ev in events:
        if not isinstance(ev.get("cat"), str):
            problems.append(f"no cat: {ev}")
        if ev["ph"] == "X":
            tracks.setdefault((ev["pid"], ev["tid"]), []).append((ev["ts"], ev["ts"] + ev["dur"]))
        elif ev["ph"] == "b":
            open_async[(ev["cat"], ev["id"])] = ev
        elif ev["ph"] == "e" and open_async.pop((ev["cat"], ev["id"]), None) is None:
            problems.append(f"async end without begin: {ev}")
    problems += [f"async begin without end: {ev}" for ev in open_async.values()]
    eps = 1e-6
    for track, spans in tracks.items():
        spans.sort()
        for i, (s0, e0) in enumerate(spans):
            for s1, e1 in spans[i + 1:]:
                if s1 >= e0 - eps:
                    break
                if e1 > e0 + eps:
                    problems.append(f"track {track}: [{s0}, {e0}] and [{s1}, {e1}] overlap partially")
    _, df, sym = parse_trace_file(path)
    cats = {sym.sym_table[i] for i in df["cat"].unique()}
    if not {"compute", "bubble"} <= cats:
        problems.append(f"HTA read categories {sorted(cats)}, not compute and bubble")
    return problems


def main():
    os.makedirs(WORK, exist_ok=True)
    failures = []
    for job in ("1f1b-2", "gpu-nccl-2", "interleaved-2"):
        out = os.path.join(WORK, f"{job}.json")
        run = subprocess.run([CLI, "analyze", os.path.join(DATA, job), "--perfetto", out], capture_output=True, text=True)
        if run.returncode != 0:
            failures.append(f"{job}: analyze exit {run.returncode}: {run.stderr.strip()}")
            continue
        try:
            failures += [f"{job}: {p}" for p in check(out)]
        except Exception as exc:  # noqa: BLE001 - HTA refused the file
            failures.append(f"{job}: HTA: {type(exc).__name__}: {exc}")
    for line in failures:
        print(line)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
