"""Fine-tuning hand-off for ``--framework litgpt``: ``litgpt finetune_full`` (or ``finetune_lora`` for LoRA and
QLoRA, ``finetune_adapter`` and ``finetune_adapter_v2`` for LLaMA-Adapter) ``--config litgpt.yaml`` with the planned
rank, targets, batch, accumulation, length, precision, optimizer and layout.

Every key written is one LitGPT 0.5.13's own parser accepts (``gpuplan/data/flags/litgpt.json``: the jsonargparse
parser ``litgpt`` builds for ``finetune_full``, and for ``finetune_lora`` its ``lora_options``, recorded by
``scripts/record_flags.py``; the tests parse each export with it). What LitGPT 0.5.13 decides itself, and the export
therefore matches or refuses (Lightning-AI/litgpt litgpt/finetune/full.py and lora.py, ``setup``):

- one GPU trains with Fabric's ``auto`` strategy, no activation checkpointing; several GPUs with ``FSDPStrategy``
  sharding every ``Block`` (ZeRO-3), checkpointing every ``Block``, no CPU offload. There is no option for either.
- ``resume: auto`` loads the newest ``step-*/lit_model.pth`` in ``out_dir`` (model, optimizer, scheduler and step;
  the data loader is fast-forwarded to the step), or starts afresh when there is none (``utils.find_resume_path``).
  A checkpoint is written every ``train.save_interval`` optimizer steps and none is ever deleted.
- LoRA and QLoRA (``finetune_lora``) take no ``resume`` at all in 0.5.13: a preempted run would start over. So they
  are exported only for on-demand capacity, which is not preempted (a restart after a failure starts over, and
  says so), and refused on spot. ``finetune_lora`` on several GPUs shards and checkpoints every ``Block`` as
  ``finetune_full`` does (FSDP2, ``parallelize_fn``); ``--quantize bnb.nf4-dq`` (QLoRA) needs one GPU and true
  (not mixed) precision, and trains with bitsandbytes' paged AdamW whatever the optimizer named (``setup``,
  ``instantiate_bnb_optimizer``).
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
from gpuplan.types import Method, Recompute, TrainSetup

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


# gpuplan's LoRA targets -> finetune_lora's switches (LitGPT's fused attention: query, key, value; its projection)
_TARGETS = {"all-linear": ("query", "key", "value", "projection", "mlp"), "attention": ("query", "key", "value",
            "projection"), "qv": ("query", "value"), "mlp": ("mlp",)}
_QUANTIZE = {"bnb-nf4-dq": "bnb.nf4-dq", "bnb-nf4": "bnb.nf4"}


# the subcommand that trains each method, and the options record (gpuplan/data/flags/litgpt.json) of its parser
_COMMANDS = {Method.FULL: ("finetune_full", "options"), Method.LORA: ("finetune_lora", "lora_options"),
             Method.QLORA: ("finetune_lora", "lora_options"), Method.ADAPTER: ("finetune_adapter", "adapter_options"),
             Method.ADAPTER_V2: ("finetune_adapter_v2", "adapter_v2_options")}


def _resumes(s: TrainSetup) -> bool:
    """Whether the subcommand resumes a run in LitGPT 0.5.13: finetune_full (``resume: auto``). finetune_lora and
    finetune_adapter take no ``--resume``; finetune_adapter_v2's (a bool) reloads the newest adapter weights but
    counts steps from 0 again, without the optimizer state (litgpt/finetune/adapter_v2.py ``main`` and ``fit``:
    ``step_count`` is read from the checkpoint's name only when ``resume`` is false), so a resumed run trains the
    whole schedule over."""
    return command(s) == "finetune_full"


def _check_adapter(s: TrainSetup, spot: bool) -> None:
    """LLaMA-Adapter (finetune_adapter, finetune_adapter_v2): the base in bf16 or bitsandbytes NF4 (``--quantize``,
    one GPU, true precision, bitsandbytes' AdamW: ``setup`` and ``instantiate_bnb_optimizer``)."""
    if spot:
        raise InputError("--export", f"LitGPT {version('litgpt')} cannot resume a LLaMA-Adapter run (finetune_adapter "
                         "takes no --resume; finetune_adapter_v2's reloads the adapter but restarts at step 0 without "
                         "the optimizer state), and this plan rents spot capacity: a preemption would start the run "
                         "over.", "plan with --no-spot (on-demand capacity is not preempted).")
    if s.base_quant is not None and s.base_quant not in _QUANTIZE:
        raise InputError("--quant", f"LitGPT's finetune_adapter keeps a frozen base in bf16 or bitsandbytes NF4, not "
                         f"{s.base_quant}.", "plan with --quant bnb-nf4 or bnb-nf4-dq, or without --quant.")
    if s.base_quant and (s.parallel.dp > 1 or s.precision == "bf16-mixed" or s.optimizer != "adamw"):
        raise InputError("--export", "LitGPT quantizes the base on one GPU, in true (not mixed) precision, and "
                         f"trains it with bitsandbytes' AdamW; this plan has {s.parallel.describe()}, {s.precision} "
                         f"and {s.optimizer}.", "plan with --max-gpus 1 and --optimizer adamw.")


def _check_lora(s: TrainSetup, spot: bool) -> None:
    if spot:
        # litgpt/finetune/lora.py (0.5.13): setup() has no resume parameter; full and adapter_v2 have one
        raise InputError("--export", f"LitGPT {version('litgpt')} cannot resume a LoRA run (finetune_lora takes no "
                         "--resume), and this plan rents spot capacity: a preemption would start the run over, so "
                         "the export's promise of resuming from the bucket would not hold.",
                         "plan with --no-spot (on-demand capacity is not preempted), or with --framework "
                         "llama-factory, trl or torchtune, which resume.")
    if s.train_embeddings:
        raise InputError("--train-embeddings", "LitGPT's finetune_lora trains no embeddings beside the adapters.",
                         "plan without --train-embeddings, or with --framework llama-factory or trl.")
    base = s.base_quant or ("bnb-nf4-dq" if s.method == Method.QLORA else None)
    if base is not None and (base not in _QUANTIZE or s.method != Method.QLORA):
        raise InputError("--quant", f"the LitGPT export keeps a frozen base in bf16 or bitsandbytes NF4 (QLoRA), "
                         f"not {base}.", "plan --method qlora, or --method lora without --quant.")
    if base and (s.parallel.dp > 1 or s.precision == "bf16-mixed" or s.optimizer != "adamw"):
        raise InputError("--export", "LitGPT quantizes the base on one GPU, in true (not mixed) precision, and "
                         f"trains it with paged AdamW; this plan has {s.parallel.describe()}, {s.precision} and "
                         f"{s.optimizer}.", "plan with --max-gpus 1 and --optimizer adamw (LitGPT prices pure bf16), "
                         "or with --framework llama-factory or trl.")


def _check(e: JobEstimate, n_nodes: int, spot: bool) -> None:
    s = e.setup
    assert isinstance(s, TrainSetup)
    p = s.parallel
    if s.method in (Method.DORA, Method.ADALORA):
        raise InputError("--export", f"LitGPT has no {s.method} fine-tuning.",
                         "plan with --method full, lora, qlora, adapter or adapter-v2.")
    if Method(s.method).low_rank:
        _check_lora(s, spot)
    elif Method(s.method).adaption_prompt:
        _check_adapter(s, spot)
    elif s.method != Method.FULL:
        raise InputError("--export", f"LitGPT has no {s.method} fine-tuning.",
                         "plan with --method full, lora, qlora, adapter or adapter-v2.")
    if p.tp > 1 or p.pp > 1 or p.cp > 1 or p.ep > 1:
        raise InputError("--export", f"the plan splits the model with {p.describe()}; LitGPT's finetune_full trains "
                         "with FSDP data parallelism only.", "plan with --max-gpus (fewer GPUs) or a GPU with more "
                         "memory so the model fits without tensor parallelism.")
    if e.n_gpus % n_nodes:
        raise InputError("--export", f"{e.n_gpus} GPUs do not split evenly over {n_nodes} nodes.",
                         "plan with --max-gpus 8 or a multiple of 8.")
    if p.offload_optimizer:
        raise InputError("--export", "LitGPT's finetune_full does not offload optimizer states to the CPU.",
                         "plan on a GPU with more memory, or with --framework llama-factory.")
    if p.dp > 1 and (p.zero != 3 or s.recompute != Recompute.FULL):
        raise InputError("--export", f"on {p.dp} GPUs LitGPT shards the model with FSDP (ZeRO-3) and checkpoints "
                         "every block, and it has no option to do otherwise; this plan was priced with "
                         f"{p.describe()} and recomputation {s.recompute}.",
                         "plan with --max-gpus 1 (LitGPT on one GPU recomputes nothing, as planned), or with "
                         "--framework llama-factory or trl.")
    if p.dp == 1 and s.recompute != Recompute.NONE:
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


def command(s: TrainSetup) -> str:
    """The ``litgpt`` subcommand that trains the planned method."""
    return _COMMANDS.get(Method(s.method), _COMMANDS[Method.FULL])[0]


def _lora(s: TrainSetup) -> dict[str, Any]:
    """``finetune_lora``'s rank, alpha, dropout, targets and quantization."""
    switches = {f"lora_{t}": t in _TARGETS[s.lora_targets] for t in ("query", "key", "value", "projection", "mlp")}
    cfg: dict[str, Any] = {"lora_r": s.lora_rank, "lora_alpha": 2 * s.lora_rank, "lora_dropout": s.lora_dropout,
                           **switches, "lora_head": False}
    if s.method == Method.QLORA:
        cfg["quantize"] = _QUANTIZE[s.base_quant or "bnb-nf4-dq"]
    return cfg


def litgpt_config(e: JobEstimate, model_ref: str, out_dir: str, steps: int, save_every: int, lr: float,
                  n_nodes: int, spot: bool = True) -> dict[str, Any]:
    """The ``litgpt finetune_full`` (or ``finetune_lora``) ``--config`` YAML for the planned setup (the dataset is
    given on the command line); ``spot``: the plan rents spot capacity (LitGPT cannot resume a LoRA run)."""
    s = e.setup
    assert isinstance(s, TrainSetup)
    _check(e, n_nodes, spot)
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
    lora = command(s) == "finetune_lora"
    method_options = _lora(s) if lora else {"quantize": _QUANTIZE[s.base_quant]} if s.base_quant else {}
    cfg: dict[str, Any] = {
        "checkpoint_dir": f"checkpoints/{model_ref}", "out_dir": out_dir, "precision": _PRECISION[s.precision],
        "devices": e.n_gpus // n_nodes, "num_nodes": n_nodes, **method_options,
        **({"resume": "auto"} if _resumes(s) else {}),
        "train": train, "optimizer": {"class_path": _OPTIMIZER[s.optimizer], "init_args": {"lr": lr}},
        "logger_name": "csv"}
    used = {k: None for k, v in cfg.items() if k != "train"} | {f"train.{k}": None for k in train}
    check_options("litgpt", used | {"precision": cfg["precision"]}, _COMMANDS.get(Method(s.method),
                                                                                   _COMMANDS[Method.FULL])[1])
    return cfg


def setup_and_run(e: JobEstimate, model_ref: str, config_yaml: str, out_dir: str, n_nodes: int) -> tuple[str, str]:
    """The setup (LitGPT, and the model downloaded and converted to its format on every node) and the run: the
    config written, the older checkpoints pruned (LitGPT keeps every one), and ``finetune_full`` (or
    ``finetune_lora``) on every node."""
    s = e.setup
    assert isinstance(s, TrainSetup)
    name = litgpt_model(e, model_ref)
    extra = " bitsandbytes" if s.method == Method.QLORA or s.base_quant else ""
    restart = ("# LitGPT cannot resume this run: a restart after a failure starts it over (on-demand capacity is "
               "not preempted)\n" if not _resumes(s) else "")
    setup = (f"pip install 'litgpt=={version('litgpt')}'{extra}\n"
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
           + restart +
           'MASTER_ADDR=$(echo "$SKYPILOT_NODE_IPS" | head -n1) MASTER_PORT=29500 NODE_RANK=$SKYPILOT_NODE_RANK '
           f'litgpt {command(s)} --config litgpt.yaml --data JSON --data.json_path "$DATASET"\n')
    return setup, run
