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

With `--profile-steps K` (K > 1) the job is profiled the way torch.profiler's documentation sets
it up: `schedule(wait=1, warmup=1, active=K)` with `prof.step()` after every optimizer step, so
the trace holds K `ProfilerStep#N` ranges (and the gradient scaling, `aten::div_`, and the
optimizer of each). Then order.json also has "ran_steps" (each profiled step's order) and
"step_bubbles": each step's bubble computed here, independently of the importer, from the
monotonic clock around every stage entry point and optimizer.step(): 1 - busy / (ranks x
(last end - first start)), over all ranks.

Usage: make_fixtures.py OUT_DIR [--steps N] [--jobs gpipe-2,1f1b-4,...] [--device cpu|cuda] [--backend gloo|nccl]
                        [--microbatches M] [--profile-steps K]
"""

import argparse
import gzip
import json
import os
import socket
import sys
import tempfile
import time

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


def record_calls(stage, log, spans=None):
    """Wraps a stage's compute entry points so the profiled step logs each action as it runs.

    This is the order PyTorch executed. `pipeline_order` is logged too, but for the single-stage
    schedules it is only a description (their hand-written loops never read it) and it can differ:
    torch 2.11's Schedule1F1B lists the last rank's forwards as F1..Fm instead of F0..Fm-1.
    """
    forward, backward, weight = stage.forward_one_chunk, stage.backward_one_chunk, stage.backward_weight_one_chunk

    def timed(call, *args, **kwargs):
        start = time.monotonic_ns()
        out = call(*args, **kwargs)
        if spans is not None:
            spans.append((start, time.monotonic_ns()))
        return out

    def forward_one_chunk(mb, *args, **kwargs):
        log.append(f"{stage.stage_index}F{mb}")
        return timed(forward, mb, *args, **kwargs)

    def backward_one_chunk(mb, *args, **kwargs):
        log.append(f"{stage.stage_index}{'B' if kwargs.get('full_backward', True) else 'I'}{mb}")
        return timed(backward, mb, *args, **kwargs)

    def backward_weight_one_chunk(mb, *args, **kwargs):
        log.append(f"{stage.stage_index}W{mb}")
        return timed(weight, mb, *args, **kwargs)

    stage.forward_one_chunk = forward_one_chunk
    stage.backward_one_chunk = backward_one_chunk
    stage.backward_weight_one_chunk = backward_weight_one_chunk


def worker(rank, world, schedule_name, steps, out_dir, port, device_kind="cpu", backend="gloo", microbatches=MICROBATCHES,
           profile_steps=1):
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
        schedule = ScheduleInterleaved1F1B(stages, n_microbatches=microbatches, loss_fn=loss_fn)
        params = [p for s in stages for p in s.submod.parameters()]
        first, last = 0 in indices, n_stages - 1 in indices
    else:
        n_stages = world
        stage = PipelineStage(stage_module(rank, n_stages).to(device), rank, n_stages, device)
        cls = Schedule1F1B if schedule_name == "1f1b" else ScheduleGPipe
        schedule = cls(stage, n_microbatches=microbatches, loss_fn=loss_fn)
        params = list(stage.submod.parameters())
        first, last = rank == 0, rank == world - 1
    optimizer = torch.optim.SGD(params, lr=0.01)
    gen = torch.Generator().manual_seed(7)

    spans = []  # (start, end) on the monotonic clock of every stage action and optimizer step

    def one_step():
        batch = BATCH // MICROBATCHES * microbatches  # 16 rows a micro-batch (128 at the default m = 8)
        x = torch.randn(batch, HIDDEN, generator=gen).to(device)
        y = torch.randint(0, 10, (batch,), generator=gen).to(device)
        optimizer.zero_grad()
        args = (x,) if first else ()
        schedule.step(*args, target=y if last else None)
        start = time.monotonic_ns()
        optimizer.step()
        spans.append((start, time.monotonic_ns()))

    for _ in range(max(0, steps - 1)):
        one_step()  # warm-up steps: allocator growth and Gloo connection set-up stay out of the trace
    ran = []
    for s in (stages if schedule_name == "interleaved" else [stage]):
        record_calls(s, ran, spans)
    dist.barrier()
    activities = [torch.profiler.ProfilerActivity.CPU]
    if device_kind == "cuda":
        activities.append(torch.profiler.ProfilerActivity.CUDA)
    exported = []
    ran_steps, step_spans = [], []
    if profile_steps > 1:
        # The usual set-up: skip one step, warm up one, record profile_steps; prof.step() ends each.
        def on_trace_ready(p):
            with tempfile.NamedTemporaryFile(suffix=".json", delete=False) as tmp:
                p.export_chrome_trace(tmp.name)
                exported.append(tmp.name)

        with torch.profiler.profile(activities=activities, on_trace_ready=on_trace_ready,
                                    schedule=torch.profiler.schedule(wait=1, warmup=1, active=profile_steps,
                                                                     repeat=1)) as prof:
            for i in range(2 + profile_steps):
                del ran[:]
                del spans[:]
                one_step()
                if device_kind == "cuda":
                    torch.cuda.synchronize()
                dist.barrier()
                if i >= 2:
                    ran_steps.append(list(ran))
                    step_spans.append(list(spans))
                prof.step()
        path = exported[0]
        ran = ran_steps[0]
    else:
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
    gathered_steps = [None] * world
    dist.all_gather_object(gathered_steps, (ran_steps, step_spans))
    if rank == 0:
        meta = {"schedule": schedule_name, "world": world, "stages": n_stages, "microbatches": microbatches,
                "torch": torch.__version__, "device": device_kind, "backend": backend,
                "ran": {str(r): gathered[r] for r in range(world)},
                "pipeline_order": {str(r): compute_actions(schedule.pipeline_order, r) for r in range(world)}}
        if profile_steps > 1:
            meta["ran_steps"] = [{str(r): gathered_steps[r][0][k] for r in range(world)} for k in range(profile_steps)]
            meta["step_bubbles"] = [step_bubble([gathered_steps[r][1][k] for r in range(world)])
                                    for k in range(profile_steps)]
        with open(os.path.join(out_dir, "order.json"), "w") as f:
            json.dump(meta, f, indent=1)
    dist.destroy_process_group()


def step_bubble(rank_spans):
    """1 - busy / (ranks x window) of one step: busy is each rank's time inside stage entry points
    and optimizer.step(), the window from the first start to the last end on any rank."""
    first = min(a for spans in rank_spans for a, _ in spans)
    last = max(b for spans in rank_spans for _, b in spans)
    busy = sum(b - a for spans in rank_spans for a, b in spans)
    return 1.0 - busy / (len(rank_spans) * (last - first))


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
    parser.add_argument("--microbatches", type=int, default=MICROBATCHES)
    parser.add_argument("--profile-steps", type=int, default=1, help="> 1: schedule(wait=1, warmup=1, active=K)")
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
        mp.spawn(worker, args=(int(world), schedule_name, args.steps, job_dir, free_port(), args.device, backend,
                               args.microbatches, args.profile_steps),
                 nprocs=int(world))
        print(f"make_fixtures: wrote {job_dir}", file=sys.stderr)


if __name__ == "__main__":
    main()
