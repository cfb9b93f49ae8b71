"""Bubblescope's engine exports read by the engines' own code (issue 32; run by ctest).

usage: engine_peers.py CLI WORKDIR

For a tuned `small` setup under PACI and under 1F1B, `bubblescope-cli export` writes the torchtitan
TOML, the DeepSpeed JSON and the Megatron launch script, and
  - torchtitan 0.2.2: ConfigManager().parse_args(["--job.config_file", toml]) loads it (it refuses
    unknown sections and keys) with the pipeline degree, micro-batch size and model section given;
  - DeepSpeed 0.19.8: DeepSpeedConfig(json) accepts it (its batch assertion: train_batch_size =
    micro batch x accumulation x data-parallel size);
  - Megatron: PyPI ships megatron-core, not Megatron-LM's argument parser
    (megatron/training/arguments.py), so the script's arguments go through megatron-core's own
    OptimizerParamScheduler (asserts warm-up < decay, min_lr <= max_lr), TransformerConfig
    (its __post_init__ checks, pipeline_dtype as core_transformer_config_from_args sets it) and
    ConstantNumMicroBatchesCalculator (global batch divisible by micro batch x DP), and then through
    each assert of validate_args() that these arguments reach, restated below with its line in
    NVIDIA/Megatron-LM megatron/training/arguments.py at d98e8a6 (2026-08-22).
and torch 2.11's torchrun parser reads the torchrun/slurm scripts' torchrun arguments (run with
stand-ins for torchrun, srun and scontrol).
Exit 0 when all accept, 1 with one line per refusal, 77 when the venv lacks an engine
(packaging/install-peers.sh adds them).
"""

import json
import os
import subprocess
import sys
import tomllib

try:
    import torch
    from torchtitan.config.manager import ConfigManager
    from deepspeed.runtime.config import DeepSpeedConfig
    from megatron.core.optimizer_param_scheduler import OptimizerParamScheduler
    from megatron.core.transformer.transformer_config import TransformerConfig
    from megatron.core.num_microbatches_calculator import ConstantNumMicroBatchesCalculator
except Exception as exc:  # noqa: BLE001 - any import failure means "no peer here"
    print(f"an engine is not importable ({exc}); packaging/install-peers.sh installs them")
    sys.exit(77)

CLI, WORK = sys.argv[1], sys.argv[2]
failures = []


def export(config, fmt, out):
    subprocess.run([CLI, "export", "--config", config, "--format", fmt, "--out", out], check=True,
                   stderr=subprocess.DEVNULL)
    return out


def check_torchtitan(path, cfg):
    job = ConfigManager().parse_args(["--job.config_file", path])
    expect = {"parallelism.pipeline_parallel_degree": (job.parallelism.pipeline_parallel_degree, cfg["p"]),
              "parallelism.pipeline_parallel_microbatch_size": (job.parallelism.pipeline_parallel_microbatch_size, cfg["b"]),
              "training.local_batch_size": (job.training.local_batch_size, cfg["m"] * cfg["b"]),
              "model.name": (job.model.name, "llama3"),
              "debug.seed": (job.debug.seed, cfg["seed"])}
    return [f"torchtitan {k}: {got} != {want}" for k, (got, want) in expect.items() if got != want]


def check_deepspeed(path, cfg):
    ds = DeepSpeedConfig(path)  # asserts its batch arithmetic
    got = (ds.train_batch_size, ds.train_micro_batch_size_per_gpu, ds.gradient_accumulation_steps)
    want = (cfg["m"] * cfg["b"], cfg["b"], cfg["m"])
    return [] if got == want else [f"deepspeed batch {got} != {want}"]


def megatron_args(path):
    """The script's arguments as bash expands them (sourced: it defines the arrays and returns)."""
    env = dict(os.environ, DATA_PATH="/data/prefix")
    out = subprocess.run(["bash", "-c", 'source "$1"; printf "%s\\n" "${MEGATRON_ARGS[@]}" "${DATA_ARGS[@]}"', "_",
                          path], check=True, capture_output=True, text=True, env=env).stdout.split("\n")[:-1]
    args, i = {}, 0
    while i < len(out):
        key = out[i][2:].replace("-", "_")
        if i + 1 < len(out) and not out[i + 1].startswith("--"):
            args[key] = out[i + 1]
            i += 2
        else:
            args[key] = True
            i += 1
    return args


def check_megatron(path, cfg):
    a = megatron_args(path)
    num = {k: float(v) for k, v in a.items() if isinstance(v, str) and v.replace(".", "", 1).replace("e-", "", 1).isdigit()}
    pp, layers, gbs, mbs = int(num["pipeline_model_parallel_size"]), int(num["num_layers"]), int(num["global_batch_size"]), int(num["micro_batch_size"])
    vpp_layers = int(num.get("num_layers_per_virtual_pipeline_stage", 0))
    problems = []

    def check(ok, what):
        if not ok:
            problems.append("megatron: " + what)

    # megatron-core's own checks, as pretrain_gpt.py builds them from these arguments.
    ConstantNumMicroBatchesCalculator(gbs, mbs, 1, False, 0)
    param = torch.nn.Parameter(torch.zeros(1))
    OptimizerParamScheduler(torch.optim.AdamW([param], lr=num["lr"]), init_lr=0.0, max_lr=num["lr"],
                            min_lr=num["min_lr"], lr_warmup_steps=int(num["lr_warmup_iters"]) * gbs,
                            lr_decay_steps=int(num["lr_decay_iters"]) * gbs, lr_decay_style=a["lr_decay_style"],
                            start_wd=num["weight_decay"], end_wd=num["weight_decay"],
                            wd_incr_steps=int(num["train_iters"]) * gbs, wd_incr_style="constant")
    dtype = torch.bfloat16 if a.get("bf16") else torch.float32
    vpp = (layers // pp) // vpp_layers if vpp_layers else None
    TransformerConfig(num_layers=layers, hidden_size=int(num["hidden_size"]),
                      num_attention_heads=int(num["num_attention_heads"]), pipeline_model_parallel_size=pp,
                      virtual_pipeline_model_parallel_size=vpp, pipeline_dtype=dtype, params_dtype=dtype,
                      bf16=bool(a.get("bf16")), hidden_dropout=num["hidden_dropout"],
                      attention_dropout=num["attention_dropout"])
    # validate_args() asserts (arguments.py at d98e8a6, line of each):
    check(num["micro_batch_size"] > 0 and gbs > 0, "694/705: micro and global batch > 0")
    if vpp_layers:
        check(layers % pp == 0, "968: num_layers divisible by pipeline size")
        check((layers // pp) % vpp_layers == 0, "972: layers per stage divisible by layers per virtual stage")
        check(vpp == 1 or pp > 2, "1006: interleaving without p2p overlap needs pipeline size > 2")
    else:
        check(layers % pp == 0, "997: num_layers divisible by pipeline size")
    check(int(num["hidden_size"]) % int(num["num_attention_heads"]) == 0, "1332: hidden size divisible by heads")
    check(num["max_position_embeddings"] >= num["seq_length"], "1354: max_position_embeddings >= seq_length")
    check(num["min_lr"] <= num["lr"], "1360: min_lr <= lr")
    check(num["lr_warmup_iters"] < num["lr_decay_iters"], "optimizer_param_scheduler: warm-up < decay")
    for required in ("num_layers", "hidden_size", "num_attention_heads", "max_position_embeddings", "data_path",
                     "tokenizer_type"):
        check(required in a, f"1316: {required} is required")
    check(a.get("data_path") == "/data/prefix", "the data path comes from DATA_PATH")
    return problems


def check_launchers(config):
    """torchrun and slurm scripts run here against stand-ins for torchrun/srun/scontrol that record
    the torchrun arguments; torch 2.11's own torchrun parser (torch.distributed.run) reads them."""
    from torch.distributed.run import get_args_parser

    problems = []
    bin_dir = os.path.join(WORK, "bin")
    os.makedirs(bin_dir, exist_ok=True)
    stubs = {"torchrun": 'printf "%s\\n" "$@" > "$ARGS_OUT"', "srun": 'exec "$@"', "scontrol": "echo node1"}
    for name, body in stubs.items():
        with open(os.path.join(bin_dir, name), "w") as f:
            f.write(f"#!/usr/bin/env bash\n{body}\n")
        os.chmod(os.path.join(bin_dir, name), 0o755)
    for fmt, nodes in (("torchrun", "2"), ("slurm", "2")):
        script = os.path.join(WORK, f"{fmt}.sh")
        subprocess.run([CLI, "export", "--config", config, "--format", fmt, "--nodes", nodes, "--out", script],
                       check=True, stderr=subprocess.DEVNULL)
        args_out = os.path.join(WORK, f"{fmt}.args")
        env = dict(os.environ, PATH=bin_dir + ":" + os.environ["PATH"], ARGS_OUT=args_out, DATA="synthetic",
                   CONFIG=os.path.join(WORK, f"{fmt}.toml"), SLURM_JOB_NODELIST="node1", SLURM_NNODES=nodes,
                   SLURM_JOB_ID="7", SLURM_SUBMIT_DIR=WORK)
        run = subprocess.run(["bash", script], env=env, capture_output=True, text=True)
        if run.returncode != 0:
            problems.append(f"{fmt}: the script failed: {run.stderr.strip()}")
            continue
        argv = open(args_out).read().split("\n")[:-1]
        a = get_args_parser().parse_args(argv)
        want_nproc = "4"  # 8 ranks over 2 nodes
        if str(a.nproc_per_node) != want_nproc or str(a.nnodes) != nodes or not a.no_python:
            problems.append(f"{fmt}: torchrun reads nnodes={a.nnodes} nproc_per_node={a.nproc_per_node} "
                            f"no_python={a.no_python}")
        if a.training_script != "bubblescope-cli" or "--distributed" not in a.training_script_args:
            problems.append(f"{fmt}: torchrun would run {a.training_script} {a.training_script_args}")
        if "nccl" not in a.training_script_args:
            problems.append(f"{fmt}: not on NCCL: {a.training_script_args}")
    return problems


def main():
    os.makedirs(WORK, exist_ok=True)
    for schedule, accum in (("paci", 4), ("1f1b", 0)):
        config = os.path.join(WORK, f"{schedule}.toml")
        subprocess.run([CLI, "export", "--preset", "small", "--format", "toml", "--out", config], check=True,
                       stderr=subprocess.DEVNULL)
        # tuned: the schedule and its window, and a warm-up longer than the run (Megatron's assert)
        lines = open(config).read().split("\n")
        section = ""
        for i, line in enumerate(lines):
            section = line if line.startswith("[") else section
            if section == "[schedule]" and line.startswith("name = "):
                lines[i] = f'name = "{schedule}"'
            elif section == "[pipeline]" and line.startswith("accum = "):
                lines[i] = f"accum = {accum}"
            elif section == "[training]" and line.startswith("steps = "):
                lines[i] = "steps = 8"
            elif section == "[optimizer]" and line.startswith("warmup_steps = "):
                lines[i] = "warmup_steps = 10"
        with open(config, "w") as f:
            f.write("\n".join(lines))
        with open(config, "rb") as f:
            t = tomllib.load(f)
        cfg = {"p": t["pipeline"]["stages"], "m": t["pipeline"]["microbatches"],
               "b": t["pipeline"]["micro_batch_size"], "seed": t["training"]["seed"]}
        for fmt, check in (("torchtitan", check_torchtitan), ("deepspeed", check_deepspeed),
                           ("megatron", check_megatron)):
            path = export(config, fmt, os.path.join(WORK, f"{schedule}.{fmt}"))
            try:
                failures.extend(f"{schedule}: {p}" for p in check(path, cfg))
            except Exception as exc:  # noqa: BLE001 - the engine refused the file
                failures.append(f"{schedule} {fmt}: {type(exc).__name__}: {exc}")
    try:
        failures.extend(check_launchers(os.path.join(WORK, "1f1b.toml")))
    except Exception as exc:  # noqa: BLE001
        failures.append(f"launchers: {type(exc).__name__}: {exc}")
    for line in failures:
        print(line)
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
