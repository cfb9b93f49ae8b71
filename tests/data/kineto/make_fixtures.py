#!/usr/bin/env python3
"""Runs a real torch.distributed.pipelining job under torch.profiler and writes per-rank Kineto traces.

One job = one schedule x one world size. Every rank runs on the CPU over Gloo (spawned with
torch.multiprocessing), holds one stage (two for the interleaved schedule), runs `--steps`
optimizer steps of a small MLP, and profiles the last step. With `--device cuda` rank r runs on
GPU r mod (GPUs) over NCCL and the profiler records CUDA too (kernels, NCCL SendRecv kernels with
their metadata): the same job on a GPU machine, which tests/gpu/run.sh runs where there are two
GPUs (NCCL refuses two ranks on one). Each rank writes

    <out>/<job>/rank<R>.json.gz   the Kineto JSON that torch.profiler's export_chrome_trace writes
    <out>/<job>/order.json        {"ran": {rank: ["0F0", ...]}, "pipeline_order": {...}, ...}

"ran" is the order the stage's compute entry points were called in during the profiled step
(PyTorch's own action strings); "pipeline_order" is the schedule object's IR with idle slots and
communication actions dropped. Tests compare what the importer recovers with "ran": what PyTorch
ran, not what Bubblescope expects.

Usage: make_fixtures.py OUT_DIR [--steps N] [--jobs gpipe-2,1f1b-4,...] [--device cpu|cuda] [--backend gloo|nccl]
"""

import argparse
import gzip
import json
import os
import socket
import sys
import tempfile

import torch
import torch.distributed as dist
import torch.multiprocessing as mp
import torch.nn as nn
from torch.distributed.pipelining import PipelineStage, Schedule1F1B, ScheduleGPipe, ScheduleInterleaved1F1B

HIDDEN = 2048
BATCH = 128
MICROBATCHES = 8


def stage_module(index, n_stages):
    """Stage i of a small MLP; the last stage ends in a 10-way classifier."""
    torch.manual_seed(1234 + index)
    layers = [nn.Linear(HIDDEN, HIDDEN), nn.ReLU(), nn.Linear(HIDDEN, HIDDEN), nn.ReLU()]
    if index == n_stages - 1:
        layers.append(nn.Linear(HIDDEN, 10))
    return nn.Sequential(*layers)


def compute_actions(pipeline_order, rank):
    """The compute actions of one rank, as PyTorch's own strings (0F1, 3B2, ...)."""
    out = []
    for action in pipeline_order[rank]:
        if action is None:
            continue
        kind = action.computation_type.value
        if kind in ("F", "B", "I", "W"):
            out.append(str(action))
    return out


def record_calls(stage, log):
    """Wraps a stage's compute entry points so the profiled step logs each action as it runs.

    This is the order PyTorch executed. `pipeline_order` is logged too, but for the single-stage
    schedules it is only a description (their hand-written loops never read it) and it can differ:
    torch 2.11's Schedule1F1B lists the last rank's forwards as F1..Fm instead of F0..Fm-1.
    """
    forward, backward, weight = stage.forward_one_chunk, stage.backward_one_chunk, stage.backward_weight_one_chunk

    def forward_one_chunk(mb, *args, **kwargs):
        log.append(f"{stage.stage_index}F{mb}")
        return forward(mb, *args, **kwargs)

    def backward_one_chunk(mb, *args, **kwargs):
        log.append(f"{stage.stage_index}{'B' if kwargs.get('full_backward', True) else 'I'}{mb}")
        return backward(mb, *args, **kwargs)

    def backward_weight_one_chunk(mb, *args, **kwargs):
        log.append(f"{stage.stage_index}W{mb}")
        return weight(mb, *args, **kwargs)

    stage.forward_one_chunk = forward_one_chunk
    stage.backward_one_chunk = backward_one_chunk
    stage.backward_weight_one_chunk = backward_weight_one_chunk


def worker(rank, world, schedule_name, steps, out_dir, port, device_kind="cpu", backend="gloo"):
    os.environ["MASTER_ADDR"] = "127.0.0.1"
    os.environ["MASTER_PORT"] = str(port)
    torch.set_num_threads(1)
    if device_kind == "cuda":
        device = torch.device("cuda", rank % torch.cuda.device_count())
        torch.cuda.set_device(device)
    else:
        device = torch.device("cpu")
    dist.init_process_group(backend, rank=rank, world_size=world)
    loss_fn = nn.CrossEntropyLoss()
    if schedule_name == "interleaved":
        n_stages = 2 * world
        indices = [rank, rank + world]  # loop placement: stage i on rank i mod world
        stages = [PipelineStage(stage_module(i, n_stages).to(device), i, n_stages, device) for i in indices]
        schedule = ScheduleInterleaved1F1B(stages, n_microbatches=MICROBATCHES, loss_fn=loss_fn)
        params = [p for s in stages for p in s.submod.parameters()]
        first, last = 0 in indices, n_stages - 1 in indices
    else:
        n_stages = world
        stage = PipelineStage(stage_module(rank, n_stages).to(device), rank, n_stages, device)
        cls = Schedule1F1B if schedule_name == "1f1b" else ScheduleGPipe
        schedule = cls(stage, n_microbatches=MICROBATCHES, loss_fn=loss_fn)
        params = list(stage.submod.parameters())
        first, last = rank == 0, rank == world - 1
    optimizer = torch.optim.SGD(params, lr=0.01)
    gen = torch.Generator().manual_seed(7)

    def one_step():
        x = torch.randn(BATCH, HIDDEN, generator=gen).to(device)
        y = torch.randint(0, 10, (BATCH,), generator=gen).to(device)
        optimizer.zero_grad()
        args = (x,) if first else ()
        schedule.step(*args, target=y if last else None)
        optimizer.step()

    for _ in range(max(0, steps - 1)):
        one_step()  # warm-up steps: allocator growth and Gloo connection set-up stay out of the trace
    ran = []
    for s in (stages if schedule_name == "interleaved" else [stage]):
        record_calls(s, ran)
    dist.barrier()
    activities = [torch.profiler.ProfilerActivity.CPU]
    if device_kind == "cuda":
        activities.append(torch.profiler.ProfilerActivity.CUDA)
    with torch.profiler.profile(activities=activities) as prof:
        one_step()
        if device_kind == "cuda":
            torch.cuda.synchronize()
        dist.barrier()
    with tempfile.NamedTemporaryFile(suffix=".json", delete=False) as tmp:
        path = tmp.name
    prof.export_chrome_trace(path)
    with open(path, "rb") as src, gzip.open(os.path.join(out_dir, f"rank{rank}.json.gz"), "wb", compresslevel=9) as dst:
        dst.write(src.read())
    os.unlink(path)
    gathered = [None] * world
    dist.all_gather_object(gathered, ran)
    if rank == 0:
        meta = {"schedule": schedule_name, "world": world, "stages": n_stages, "microbatches": MICROBATCHES,
                "torch": torch.__version__, "device": device_kind, "backend": backend,
                "ran": {str(r): gathered[r] for r in range(world)},
                "pipeline_order": {str(r): compute_actions(schedule.pipeline_order, r) for r in range(world)}}
        with open(os.path.join(out_dir, "order.json"), "w") as f:
            json.dump(meta, f, indent=1)
    dist.destroy_process_group()


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("out")
    parser.add_argument("--steps", type=int, default=3)
    parser.add_argument("--jobs", default="gpipe-2,1f1b-2,interleaved-2,gpipe-4,1f1b-4,interleaved-4")
    parser.add_argument("--device", choices=["cpu", "cuda"], default="cpu")
    parser.add_argument("--backend", choices=["gloo", "nccl"], default=None, help="default: gloo on cpu, nccl on cuda")
    args = parser.parse_args()
    backend = args.backend or ("nccl" if args.device == "cuda" else "gloo")
    if args.device == "cuda" and not torch.cuda.is_available():
        sys.exit("make_fixtures: --device cuda: no CUDA GPU is visible to torch")
    if (args.device == "cuda") != (backend == "nccl"):
        sys.exit(f"make_fixtures: --backend {backend} with --device {args.device}: use gloo on cpu, nccl on cuda")
    for job in args.jobs.split(","):
        schedule_name, world = job.rsplit("-", 1)
        job_dir = os.path.join(args.out, job)
        os.makedirs(job_dir, exist_ok=True)
        if args.device == "cuda" and torch.cuda.device_count() < int(world):
            sys.exit(f"make_fixtures: {job} needs {world} GPUs (NCCL refuses two ranks on one GPU); "
                     f"{torch.cuda.device_count()} visible")
        mp.spawn(worker, args=(int(world), schedule_name, args.steps, job_dir, free_port(), args.device, backend),
                 nprocs=int(world))
        print(f"make_fixtures: wrote {job_dir}", file=sys.stderr)


if __name__ == "__main__":
    main()
