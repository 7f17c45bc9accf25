"""Fine-tuning hand-off for ``--framework litgpt``: ``litgpt finetune_full --config litgpt.yaml`` with the planned
batch, accumulation, length, precision, optimizer and layout.

Every key written is one LitGPT 0.5.13's own parser accepts (``gpuplan/data/flags/litgpt.json``: the jsonargparse
parser ``litgpt`` builds for ``finetune_full``, recorded by ``scripts/record_flags.py``; the tests parse each export
with it). What LitGPT 0.5.13 decides itself, and the export therefore matches or refuses
(Lightning-AI/litgpt litgpt/finetune/full.py, ``setup``):

- one GPU trains with Fabric's ``auto`` strategy, no activation checkpointing; several GPUs with ``FSDPStrategy``
  sharding every ``Block`` (ZeRO-3), checkpointing every ``Block``, no CPU offload. There is no option for either.
- ``resume: auto`` loads the newest ``step-*/lit_model.pth`` in ``out_dir`` (model, optimizer, scheduler and step;
  the data loader is fast-forwarded to the step), or starts afresh when there is none (``utils.find_resume_path``).
  A checkpoint is written every ``train.save_interval`` optimizer steps and none is ever deleted.
- LoRA and QLoRA (``finetune_lora``) take no ``resume`` at all in 0.5.13: a preempted run would start over, so those
  plans are refused.
- ``litgpt download REPO --model_name NAME`` converts only architectures LitGPT has a config for (the record's
  ``models``, name -> repository); ``--model_name`` lets a renamed repository (meta-llama/Llama-3.1-8B, which LitGPT
  lists as meta-llama/Meta-Llama-3.1-8B) convert with its config.
- on several nodes Fabric starts one process per GPU itself and meets the others at ``MASTER_ADDR``/``MASTER_PORT``
  with ``NODE_RANK`` (lightning/fabric/plugins/environments/lightning.py).
"""

from __future__ import annotations

import math
import shlex
from typing import Any

from gpuplan.errors import InputError
from gpuplan.estimate.job import JobEstimate
from gpuplan.export.registry import check_options, flags, version
from gpuplan.types import TrainSetup

# gpuplan precision -> Fabric's (lightning.fabric.connector._PRECISION_INPUT_STR)
_PRECISION = {"bf16-mixed": "bf16-mixed", "bf16": "bf16-true", "fp16-mixed": "16-mixed", "fp32": "32-true"}
_OPTIMIZER = {"adamw": "torch.optim.AdamW", "sgd": "torch.optim.SGD"}  # finetune_full builds torch.optim classes
LR_WARMUP_SHARE = 0.01  # as the Megatron-LM and torchtitan exports: warm-up over 1 % of the steps
CHECKPOINTS_KEPT = 2


def litgpt_model(e: JobEstimate, model_ref: str) -> str:
    """LitGPT's config name for the planned model: the preset's name, or the config whose repository is
    ``model_ref``."""
    models: dict[str, str] = dict(flags("litgpt")["models"])
    if e.model.name in models:
        return e.model.name
    for name, repo in models.items():
        if repo.lower() == model_ref.lower():
            return name
    raise InputError("--export", f"LitGPT {version('litgpt')} has no model config for {e.model.name} ({model_ref}), "
                     "so `litgpt download` could not convert its weights.",
                     "plan a model LitGPT lists (`litgpt download list`), or plan with --framework llama-factory or "
                     "trl.")


def _check(e: JobEstimate, n_nodes: int) -> None:
    s = e.setup
    assert isinstance(s, TrainSetup)
    p = s.parallel
    if s.method in ("lora", "qlora"):
        # litgpt/finetune/lora.py (0.5.13): setup() has no resume parameter; only full, adapter and adapter_v2 do
        raise InputError("--export", f"LitGPT {version('litgpt')} cannot resume a LoRA run (finetune_lora takes no "
                         "--resume), so a spot preemption would start it over: the export's promise of resuming "
                         "from the bucket would not hold.", "plan with --framework llama-factory or hf or trl, or "
                         "with --method full, which LitGPT resumes.")
    if s.method != "full":
        raise InputError("--export", f"LitGPT has no {s.method} fine-tuning.", "plan with --method full.")
    if p.tp > 1 or p.pp > 1 or p.cp > 1:
        raise InputError("--export", f"the plan splits the model with {p.describe()}; LitGPT's finetune_full trains "
                         "with FSDP data parallelism only.", "plan with --max-gpus (fewer GPUs) or a GPU with more "
                         "memory so the model fits without tensor parallelism.")
    if e.n_gpus % n_nodes:
        raise InputError("--export", f"{e.n_gpus} GPUs do not split evenly over {n_nodes} nodes.",
                         "plan with --max-gpus 8 or a multiple of 8.")
    if p.offload_optimizer:
        raise InputError("--export", "LitGPT's finetune_full does not offload optimizer states to the CPU.",
                         "plan on a GPU with more memory, or with --framework llama-factory.")
    if p.dp > 1 and (p.zero != 3 or s.recompute != "full"):
        raise InputError("--export", f"on {p.dp} GPUs LitGPT shards the model with FSDP (ZeRO-3) and checkpoints "
                         "every block, and it has no option to do otherwise; this plan was priced with "
                         f"{p.describe()} and recomputation {s.recompute}.",
                         "plan with --max-gpus 1 (LitGPT on one GPU recomputes nothing, as planned), or with "
                         "--framework llama-factory or trl.")
    if p.dp == 1 and s.recompute != "none":
        raise InputError("--export", "on one GPU LitGPT recomputes no activations, and it has no option to do so; "
                         f"this plan was priced with recomputation {s.recompute}.",
                         "plan with --framework litgpt (which prices its own choice), or with --framework "
                         "llama-factory or trl.")
    if s.precision not in _PRECISION:
        raise InputError("--export", f"LitGPT's export trains in {', '.join(_PRECISION)}, not {s.precision}.",
                         "plan with bf16 mixed precision.")
    if s.optimizer not in _OPTIMIZER:
        raise InputError("--export", f"LitGPT's finetune_full builds a torch.optim optimizer; it has no "
                         f"'{s.optimizer}'.", f"plan with --optimizer {' or '.join(_OPTIMIZER)}.")


def litgpt_config(e: JobEstimate, model_ref: str, out_dir: str, steps: int, save_every: int, lr: float,
                  n_nodes: int) -> dict[str, Any]:
    """The ``litgpt finetune_full --config`` YAML for the planned setup (the dataset is given on the command line)."""
    s = e.setup
    assert isinstance(s, TrainSetup)
    _check(e, n_nodes)
    whole_epochs = bool(e.job.samples) and float(e.job.epochs).is_integer()
    train: dict[str, Any] = {
        "save_interval": save_every, "log_interval": 10,
        "global_batch_size": s.micro_batch * s.grad_accum * s.parallel.dp, "micro_batch_size": s.micro_batch,
        "lr_warmup_steps": max(1, math.ceil(steps * LR_WARMUP_SHARE)), "max_seq_length": s.seq_len,
        # LitGPT counts whole epochs: a token budget or a fraction of an epoch stops at max_steps, with at least
        # one step per epoch so that the step count binds first
        "epochs": int(e.job.epochs) if whole_epochs else steps}
    if not whole_epochs:
        train["max_steps"] = steps
    cfg: dict[str, Any] = {
        "checkpoint_dir": f"checkpoints/{model_ref}", "out_dir": out_dir, "precision": _PRECISION[s.precision],
        "devices": e.n_gpus // n_nodes, "num_nodes": n_nodes, "resume": "auto", "train": train,
        "optimizer": {"class_path": _OPTIMIZER[s.optimizer], "init_args": {"lr": lr}}, "logger_name": "csv"}
    used = {k: None for k, v in cfg.items() if k != "train"} | {f"train.{k}": None for k in train}
    check_options("litgpt", used | {"precision": cfg["precision"]})
    return cfg


def setup_and_run(e: JobEstimate, model_ref: str, config_yaml: str, out_dir: str, n_nodes: int) -> tuple[str, str]:
    """The setup (LitGPT, and the model downloaded and converted to its format on every node) and the run: the
    config written, the older checkpoints pruned (LitGPT keeps every one), and ``finetune_full`` on every node."""
    name = litgpt_model(e, model_ref)
    setup = (f"pip install 'litgpt=={version('litgpt')}'\n"
             f"litgpt download {shlex.quote(model_ref)} --model_name {shlex.quote(name)}\n")
    prune = f"ls -d {out_dir}/step-* 2>/dev/null | sort | head -n -{CHECKPOINTS_KEPT} | xargs -r rm -rf || true"
    run = ("set -euo pipefail\n"
           ': "${DATASET:?set --env DATASET to a JSON file (or a folder with train.json and val.json) of '
           'instruction/input/output records}"\n'
           f"cat > litgpt.yaml <<'GPUPLAN_EOF'\n{config_yaml.rstrip()}\nGPUPLAN_EOF\n"
           f"# LitGPT keeps every checkpoint: node 0 keeps the newest {CHECKPOINTS_KEPT} on the bucket\n"
           f"prune() {{ {prune}; }}\n"
           'if [ "$SKYPILOT_NODE_RANK" = 0 ]; then prune; (while sleep 300; do prune; done) >/dev/null 2>&1 & '
           "trap 'kill $!' EXIT; fi\n"
           'MASTER_ADDR=$(echo "$SKYPILOT_NODE_IPS" | head -n1) MASTER_PORT=29500 NODE_RANK=$SKYPILOT_NODE_RANK '
           'litgpt finetune_full --config litgpt.yaml --data JSON --data.json_path "$DATASET"\n')
    return setup, run
