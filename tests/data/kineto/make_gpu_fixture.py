#!/usr/bin/env python3
"""HAND-MADE Kineto traces of a 2-rank 1F1B job on GPUs with NCCL (m = 2): gpu-nccl-2/rank{0,1}.json.

There is no GPU here, so these files are written by hand, following the schema torch.profiler's
Kineto writes on CUDA machines: cpu_op / user_annotation ranges on host threads, cuda_runtime
launches with a "correlation" id, kernels on (pid = device, tid = stream) with the same id,
gpu_user_annotation ranges on the GPU, and NCCL kernels with the communication metadata
("Collective name", "In msg nelems", "dtype", "Process Group *", "Src Rank" / "Dst Rank", "Seq").
The timings are chosen so that every wait is known exactly (µs, rank clocks identical):

  rank 0: F0 [0,100]  F1 [120,220]  B0 [440,640]  B1 [780,980]   (CPU PP: labels, kernels joined by correlation)
  rank 1: F0 [120,220] B0 [220,420] F1 [460,560] B1 [560,760]    (gpu_user_annotation PP: ranges only)
  act0 0->1: send kernel [100,120], recv kernel [50,120]   -> recv waited 50, transfer 20
  act1 0->1: send kernel [220,460], recv kernel [440,460]  -> send waited 220, transfer 20
  grad0 1->0: send kernel [420,440], recv kernel [240,440] -> recv waited 180, transfer 20
  grad1 1->0: send kernel [760,780], recv kernel [640,780] -> recv waited 120, transfer 20
  plus one data-parallel all-reduce on rank 0 (not a pipeline transfer: ignored).
"""

import json
import os
import sys

T0 = 1_000_000  # µs: arbitrary trace origin
PG = {"Process Group Name": "1", "Process Group Description": "pp", "Process Group Ranks": "[0, 1]", "Group size": 2}


class Rank:
    def __init__(self, rank):
        self.rank = rank
        self.events = []
        self.corr = 1000 * (rank + 1)
        self.seq = 0  # the process group's p2p sequence number ("Seq"), counted in post order

    def x(self, name, cat, ts, dur, pid, tid, **args):
        self.events.append({"ph": "X", "cat": cat, "name": name, "pid": pid, "tid": tid, "ts": T0 + ts, "dur": dur, "args": args})

    def launch(self, cpu_ts, gpu_ts, gpu_dur, name, stream=7, **kernel_args):
        self.corr += 1
        self.x("cudaLaunchKernel", "cuda_runtime", cpu_ts, 4, 100 + self.rank, 100 + self.rank, correlation=self.corr)
        self.x(name, "kernel", gpu_ts, gpu_dur, self.rank, stream, correlation=self.corr, device=self.rank, stream=stream,
               **kernel_args)
        self.events.append({"ph": "f", "id": self.corr, "pid": self.rank, "tid": stream, "ts": T0 + gpu_ts, "cat": "ac2g",
                            "name": "ac2g", "bp": "e"})

    def nccl(self, cpu_ts, gpu_ts, gpu_dur, send, peer):
        meta = dict(PG)
        meta.update({"Collective name": "send" if send else "recv", "In msg nelems": 65536, "Out msg nelems": 65536,
                     "dtype": "Float", ("Dst Rank" if send else "Src Rank"): peer, "Seq": self.seq})
        self.seq += 1
        self.x("record_param_comms", "cpu_op", cpu_ts - 2, 8, 100 + self.rank, 100 + self.rank, **meta)
        self.launch(cpu_ts, gpu_ts, gpu_dur, "ncclDevKernel_SendRecv(ncclDevKernelArgsStorage<4096ul>)", stream=20, **meta)

    def write(self, path):
        doc = {"schemaVersion": 1, "deviceProperties": [{"id": self.rank, "name": "hand-made GPU"}],
               "distributedInfo": {"backend": "nccl", "rank": self.rank, "world_size": 2, "pg_count": 2,
                                   "pg_config": [{"pg_name": "0", "pg_desc": "default_pg", "backend_config": "cuda:nccl",
                                                  "pg_size": 2, "ranks": [0, 1]},
                                                 {"pg_name": "1", "pg_desc": "pp", "backend_config": "cuda:nccl",
                                                  "pg_size": 2, "ranks": [0, 1]}]},
               "traceName": "HAND-MADE fixture (see make_gpu_fixture.py)", "traceEvents": self.events}
        with open(path, "w") as f:
            json.dump(doc, f, indent=0)


def main(out):
    os.makedirs(out, exist_ok=True)
    r0, r1 = Rank(0), Rank(1)
    cpu = 100  # host thread id of rank 0 is 100, of rank 1 is 101
    # rank 0: CPU PP: ranges hold the launches; two GEMM kernels per action.
    for label, cpu_ts, gpu, dur in (("PP:0F0", -60, 0, 100), ("PP:0F1", 60, 120, 100), ("PP:0B0", 200, 440, 200),
                                    ("PP:0B1", 300, 780, 200)):
        r0.x(label, "user_annotation", cpu_ts, 30, cpu, cpu)
        r0.launch(cpu_ts + 5, gpu, dur // 2, "sm90_xmma_gemm_f32f32_tf32f32_f32_nn_n")
        r0.launch(cpu_ts + 15, gpu + dur // 2, dur - dur // 2, "sm90_xmma_gemm_f32f32_tf32f32_f32_nn_n")
    for label, cpu_ts, gpu, dur, send in (("PP:0SEND_F0", -20, 100, 20, True), ("PP:0SEND_F1", 100, 220, 240, True),
                                          ("PP:0RECV_B0", 120, 240, 200, False), ("PP:0RECV_B1", 250, 640, 140, False)):
        r0.x(label, "user_annotation", cpu_ts, 15, cpu, cpu)
        r0.nccl(cpu_ts + 5, gpu, dur, send, 1)
    r0.x("Optimizer.step#AdamW.step", "user_annotation", 990, 30, cpu, cpu)
    meta = dict(PG)
    meta.update({"Collective name": "allreduce", "In msg nelems": 1 << 20, "Out msg nelems": 1 << 20, "dtype": "Float"})
    r0.launch(985, 985, 10, "ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevKernelArgsStorage<4096ul>)", stream=21, **meta)
    # rank 1: only GPU-side ranges; NCCL launches shortly before their kernels.
    for label, gpu, dur in (("PP:1F0", 120, 100), ("PP:1B0", 220, 200), ("PP:1F1", 460, 100), ("PP:1B1", 560, 200)):
        r1.x(label, "gpu_user_annotation", gpu, dur, 1, 7)
        r1.launch(gpu - 30, gpu, dur, "sm90_xmma_gemm_f32f32_tf32f32_f32_nn_n")
    for cpu_ts, gpu, dur, send in ((40, 50, 70, False), (410, 420, 20, True), (430, 440, 20, False), (750, 760, 20, True)):
        r1.nccl(cpu_ts, gpu, dur, send, 0)
    r1.x("Optimizer.step#AdamW.step", "user_annotation", 770, 30, 101, 101)
    r0.write(os.path.join(out, "rank0.json"))
    r1.write(os.path.join(out, "rank1.json"))


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(os.path.abspath(__file__)), "gpu-nccl-2"))
