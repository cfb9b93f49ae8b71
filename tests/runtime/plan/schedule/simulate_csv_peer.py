"""`bubblescope-cli simulate --csv` against PyTorch's own loader (issue 32; run by ctest).

usage: simulate_csv_peer.py CLI DIR

1. For every schedule the catalogue generates that is not asynchronous, `simulate --batches 1 --csv`
   writes a file torch 2.11's _PipelineSchedule._load_csv reads (it rejected the update cells
   "0U0:0-11" that simulate wrote before).
2. For every schedule PyTorch and Bubblescope both have (torch_peer.py's cases), PyTorch's own CSV
   (_dump_csv) goes through `simulate --schedule-csv THEIRS --csv OURS`, and PyTorch's loader reads
   OURS back into PyTorch's order: the round trip PyTorch -> Bubblescope -> PyTorch is the
   identity. Schedule1F1B is left out: torch 2.11 lists its last rank's forwards as F1..Fm
   (torch_peer.py says why), a CSV Bubblescope refuses with the reason (torch_peer_test checks it).
3. An asynchronous schedule (paci) writes its updates beside it (STEM.bubblescope.csv), and that
   file simulates to the same report as the generated schedule.
Exit 0 when all agree, 1 with one line per disagreement, 77 when torch cannot be imported.
"""

import json
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import torch_peer  # exits 77 when torch cannot be imported
from torch_peer import build, compute_order, loader_for, schedules
CLI, DIR = sys.argv[1], sys.argv[2]
CASES = [("gpipe", 4, 8, 1, "loop", "ScheduleGPipe"), ("gpipe", 3, 5, 1, "loop", "ScheduleGPipe"),
         ("interleaved-1f1b", 4, 8, 2, "loop", "ScheduleInterleaved1F1B"),
         ("looped-bfs", 4, 8, 2, "loop", "ScheduleLoopedBFS"),
         ("interleaved-zb", 4, 8, 2, "loop", "ScheduleInterleavedZeroBubble"),
         ("zb-v", 4, 8, 2, "v", "ScheduleZBVZeroBubble"), ("dualpipev", 4, 8, 2, "v", "ScheduleDualPipeV")]


def simulate(*args, json_out=False):
    cmd = [CLI, "simulate", *args] + (["--json"] if json_out else [])
    run = subprocess.run(cmd, capture_output=True, text=True)
    if run.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)}: exit {run.returncode}: {run.stderr.strip()}")
    return run.stdout


def catalogue():
    """The catalogue's synchronous schedules (`bubblescope-cli schedules` lists them all)."""
    return ["gpipe", "1f1b", "zb-h1", "zb-h2", "interleaved-1f1b", "looped-bfs", "interleaved-zb", "zb-v", "dualpipev"]


def main():
    os.makedirs(DIR, exist_ok=True)
    failures = []
    # 1. Every synchronous schedule simulate writes, read by PyTorch.
    for name in catalogue():
        v, style = (2, "v") if name in ("zb-v", "dualpipev") else (2, "loop") if name in (
            "interleaved-1f1b", "looped-bfs", "interleaved-zb") else (1, "loop")
        path = f"{DIR}/sim_{name}.csv"
        try:
            simulate("--schedule", name, "--stages", "4", "--microbatches", "8", "--batches", "1", "--csv", path)
        except RuntimeError as exc:
            if "asynchronous" in str(exc) or name in ("paci", "pipedream", "pipedream-2bw", "async-1f1b",
                                                       "paci-interleaved"):
                continue
            failures.append(str(exc))
            continue
        if not os.path.exists(path):
            continue
        try:
            loader_for(4, 8, v, style)._load_csv(path)
        except Exception as exc:  # noqa: BLE001
            failures.append(f"{name}: PyTorch's _load_csv rejected simulate --csv: {exc}")
    # 2. PyTorch -> Bubblescope -> PyTorch.
    for name, p, m, v, style, cls in CASES:
        theirs = build(getattr(schedules, cls), p, m, v, style)
        base = f"{DIR}/{name}_p{p}_m{m}_v{v}"
        if isinstance(theirs, schedules._PipelineScheduleRuntime):
            theirs._dump_csv(base + ".torch.csv", format="compute_only")
        else:
            torch_peer.dump(theirs, p, base)  # PipelineScheduleSingle has no _dump_csv
        try:
            simulate("--schedule", name, "--stages", str(p), "--microbatches", str(m), "--stages-per-rank", str(v),
                     "--batches", "1", "--schedule-csv", base + ".torch.csv", "--csv", base + ".ours.csv")
            loader = loader_for(p, m, v, style)
            loader._load_csv(base + ".ours.csv")
            if compute_order(loader.pipeline_order, p) != compute_order(theirs.pipeline_order, p):
                failures.append(f"{name} p{p} m{m} v{v}: PyTorch -> Bubblescope -> PyTorch changed the order")
        except Exception as exc:  # noqa: BLE001
            failures.append(f"{name} p{p} m{m} v{v}: {exc}")
    # 3. PACI: the updates beside it, read back into the same simulation.
    try:
        common = ["--schedule", "paci", "--stages", "4", "--accum", "4", "--batches", "3"]
        generated = json.loads(simulate(*common, "--csv", f"{DIR}/paci.csv", json_out=True))
        replayed = json.loads(simulate(*common, "--schedule-csv", f"{DIR}/paci.bubblescope.csv", json_out=True))
        loader_for(4, 12, 1, "loop")  # PyTorch's form is written too (no U cells)
        with open(f"{DIR}/paci.csv") as f:
            if "U" in f.read():
                failures.append("paci: PyTorch's form holds update cells")
        for key in ("makespan", "bubble_fraction", "per_stage"):
            if key not in generated or generated.get(key) != replayed.get(key):
                failures.append(f"paci: {key} {generated.get(key)} from the generated schedule, "
                                f"{replayed.get(key)} from STEM.bubblescope.csv")
    except Exception as exc:  # noqa: BLE001
        failures.append(f"paci: {exc}")
    for line in failures:
        print(line)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
