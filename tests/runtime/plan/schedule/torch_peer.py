"""Bubblescope's schedules against torch.distributed.pipelining's own (run by torch_peer_test).

usage: torch_peer.py DIR CASE...   CASE = name:p:m:v:style:TorchClass

For each case DIR holds CASE_NAME.bubblescope.csv (Bubblescope's per-rank compute order, one
line per rank). This script builds PyTorch's schedule object for the same (p, m, v) on fake
stages (no process group is needed to compute an order), then checks
  1. its pipeline_order, Nones dropped, equals Bubblescope's per rank,
  2. PyTorch's own CSV loader (_load_csv, which validates the order and plans its sends and
     receives) reads Bubblescope's file into the same order,
and writes PyTorch's own CSVs (_dump_csv) to CASE_NAME.torch.csv (compute_only) and, for the
multi-stage runtime, CASE_NAME.torch_comms.csv (with its SEND/RECV actions) for the C++ side.
Exit 0 when all agree, 1 with one line per disagreement, 77 when torch cannot be imported.
"""

import sys

try:
    import torch
    from torch.distributed.pipelining import schedules
    from torch.distributed.pipelining._utils import generate_rank_to_stage_mapping
except Exception as exc:  # noqa: BLE001 - any import failure means "no peer here"
    print(f"torch is not importable: {exc}")
    sys.exit(77)


class FakeStage:
    """The attributes a schedule's constructor reads; nothing runs."""

    def __init__(self, stage_index, num_stages, group_size, group_rank):
        self.stage_index = stage_index
        self.num_stages = num_stages
        self.group_size = group_size
        self.group_rank = group_rank
        self.is_first = stage_index == 0
        self.is_last = stage_index == num_stages - 1
        self.stage_index_to_group_rank = {}
        self.submod = torch.nn.Identity()
        self.has_backward = True


def build(cls, p, m, v, style):
    if issubclass(cls, schedules.PipelineScheduleSingle):
        return cls(FakeStage(0, p, p, 0), n_microbatches=m, loss_fn=lambda out, target: out)
    stages = generate_rank_to_stage_mapping(p, p * v, style=style)[0]
    return cls([FakeStage(s, p * v, p, 0) for s in stages], n_microbatches=m, loss_fn=lambda out, target: out)


def compute_order(pipeline_order, p):
    return [[str(a) for a in pipeline_order[r] if a is not None and a.is_compute_op] for r in range(p)]


def shift_forward_back(action):
    stage, rest = action.split("F", 1) if "F" in action else (None, None)
    return f"{stage}F{int(rest) - 1}" if stage is not None else action


def read_csv(path):
    with open(path) as f:
        return [[c.strip() for c in line.strip().split(",") if c.strip()] for line in f if line.strip()]


def loader_for(p, m, v, style):
    """A multi-stage schedule object whose _load_csv accepts any (p, v) order."""
    cls = schedules.ScheduleZBVZeroBubble if style == "v" else schedules.ScheduleLoopedBFS
    return build(cls, p, m, v, style)


def main():
    out_dir = sys.argv[1]
    failures = []
    for case in sys.argv[2:]:
        name, p, m, v, style, cls_name = case.split(":")
        p, m, v = int(p), int(m), int(v)
        base = f"{out_dir}/{name}_p{p}_m{m}_v{v}"
        ours = read_csv(base + ".bubblescope.csv")
        schedule = build(getattr(schedules, cls_name), p, m, v, style)
        theirs = compute_order(schedule.pipeline_order, p)
        if cls_name == "Schedule1F1B":
            # torch 2.11's Schedule1F1B._get_pipeline_order (descriptive only; step() runs the right
            # order) numbers the last rank's forwards from 1: num_forward = 0 leaves forward_mb at 0
            # and the steady loop increments before use, so it lists F1..Fm and never F0. Accept
            # exactly that shift there and nothing else.
            theirs[p - 1] = [shift_forward_back(a) for a in theirs[p - 1]]
        for r in range(p):
            if ours[r] != theirs[r]:
                first = next((i for i, (a, b) in enumerate(zip(ours[r], theirs[r])) if a != b), None)
                failures.append(
                    f"{case}: rank {r} differs from PyTorch's {cls_name} at step {first}: "
                    f"ours {ours[r][max(0, (first or 0) - 2):(first or 0) + 3]} "
                    f"torch {theirs[r][max(0, (first or 0) - 2):(first or 0) + 3]} "
                    f"(lengths {len(ours[r])}, {len(theirs[r])})"
                )
        loader = loader_for(p, m, v, style)
        try:
            loader._load_csv(base + ".bubblescope.csv")
            loaded = compute_order(loader.pipeline_order, p)
            if loaded != ours:
                failures.append(f"{case}: PyTorch's _load_csv read a different order from our CSV")
        except Exception as exc:  # noqa: BLE001 - report, do not crash, so every case is seen
            failures.append(f"{case}: PyTorch's _load_csv rejected our CSV: {exc}")
        if isinstance(schedule, schedules._PipelineScheduleRuntime):
            schedule._dump_csv(base + ".torch.csv", format="compute_only")
            schedule._dump_csv(base + ".torch_comms.csv", format="compute_comms")
        else:
            dump(schedule, p, base)
    for line in failures:
        print(line)
    return 1 if failures else 0


def dump(schedule, p, base):
    """PipelineScheduleSingle has no _dump_csv: write its pipeline_order the way Multi's does."""
    import csv

    with open(base + ".torch.csv", "w", newline="") as f:
        writer = csv.writer(f)
        for r in range(p):
            # Its order also holds REDUCE_GRAD bookkeeping, which is not part of the CSV format.
            writer.writerow([a for a in schedule.pipeline_order[r] if a is None or a.is_compute_op])


if __name__ == "__main__":
    sys.exit(main())
