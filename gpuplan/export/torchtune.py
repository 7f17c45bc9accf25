"""Fine-tuning hand-off for ``--framework torchtune``: ``tune run RECIPE --config torchtune.yaml`` with the planned
method, rank, batch, accumulation, length, packing, recomputation, dtype, optimizer and FSDP resharding.

Every recipe, builder and config key written is one torchtune 0.6.1 has (``gpuplan/data/flags/torchtune.json``,
recorded by ``scripts/record_flags.py`` from the installed release: its recipes, the keys each reads, the model
families of its shipped configs and their builders; the tests load each export with torchtune's own parser and
validate it with ``torchtune.config.validate``). What the export relies on (pytorch/torchtune 0.6.1):

- recipe state (optimizer, data loader, seed, epochs run) is saved only when an epoch ends (recipes/*.py
  ``save_checkpoint``: "Mid-epoch checkpointing is currently not supported"). The export therefore cuts the
  planned steps into ``CHUNKS`` epochs of ``max_steps_per_epoch`` steps, each ending with a checkpoint on the
  bucket. Each epoch draws its steps from a fresh shuffle of the data (``sampler.set_epoch``), so a sample is
  seen the planned number of times on average rather than exactly; the step count, which the plan priced, is the
  planned one rounded up to whole chunks.
- ``resume_from_checkpoint=True`` reads ``recipe_state/recipe_state.pt`` in ``output_dir``; a LoRA run loads its
  base from ``checkpoint_dir`` and its adapter from ``checkpointer.adapter_checkpoint``, a full one its weights from
  ``checkpointer.checkpoint_files``, both relative to ``output_dir`` (training/checkpointing/_utils.py,
  ``get_model_checkpoint_path``). The run points both at the epoch the recipe state records (``epochs_run``), so
  a folder half written when the instance was preempted is never loaded. Old epoch folders are never deleted by
  torchtune: node 0 keeps the newest ``CHECKPOINTS_KEPT``.
- torchtune trains in the config's ``dtype`` (bf16 or fp32) without mixed precision: weights, gradients and
  optimizer states all in that dtype, as the planner prices ``--framework torchtune``.
- the distributed recipes shard every layer with FSDP2: ``fsdp_reshard_after_forward: true`` frees the gathered
  weights after the forward pass (ZeRO-3), ``false`` keeps them until the backward pass (ZeRO-2's memory).
- QLoRA uses the family's ``qlora_`` builder (its ``lora_`` builder with ``quantize_base=True``): the frozen base in
  torchao's NF4, whose scales are quantized again (double quantization); there is no option to turn that off.
- ``tune run`` with launcher options is torchrun (torchtune/_cli/run.py); without them it runs a single-device
  recipe in its own process.
"""

from __future__ import annotations

import math
import re
import shlex
from typing import Any

from gpuplan.errors import InputError
from gpuplan.estimate.job import JobEstimate
from gpuplan.export.registry import flags, version
from gpuplan.types import Method, Recompute, TrainSetup

CHUNKS = 20  # as the other exports' checkpoints: a preemption loses at most 1/20 of the run
CHECKPOINTS_KEPT = 2
LR_WARMUP_SHARE = 0.01  # as the LitGPT and torchtitan exports: warm-up over 1 % of the steps
MODEL_DIR = "model"  # where `tune download` puts the weights, beside the run (torchtune refuses it in output_dir)
# torch.optim classes torchtune's recipes instantiate as the config's optimizer component
_OPTIMIZER = {"adamw": ("torch.optim.AdamW", {"fused": True, "weight_decay": 0.01}), "sgd": ("torch.optim.SGD", {})}
_DTYPE = {"bf16": "bf16", "fp32": "fp32"}
# gpuplan's LoRA targets -> torchtune's LoRA builder arguments (its attention projections' names)
_ATTENTION = ["q_proj", "k_proj", "v_proj", "output_proj"]
_TARGETS = {"all-linear": (_ATTENTION, True), "attention": (_ATTENTION, False), "qv": (["q_proj", "v_proj"], False)}


def _normal(name: str) -> str:
    return re.sub(r"[^a-z0-9]", "", name.lower())


def builder(e: JobEstimate) -> tuple[str, str]:
    """(the family module, the full-model builder) torchtune has for the planned model: the builder whose name is
    the preset's (``Llama-3.1-8B`` -> ``llama3_1_8b``; a ``_base`` builder where torchtune has base and instruct)."""
    families = flags("torchtune")["families"]
    for module, family in families.items():
        for name in family["builders"]:
            if _normal(name.removesuffix("_base")) == _normal(e.model.name):
                return module, name
    known = ", ".join(module.rsplit(".", 1)[1] for module in families)
    raise InputError("--model", f"torchtune {version('torchtune')} has no model builder for {e.model.name}.",
                     f"plan a model of a family torchtune builds ({known}), or plan with --framework llama-factory "
                     "or trl.")


def recipe(s: TrainSetup) -> str:
    """The recipe that trains the planned method on the planned GPUs."""
    kind = "lora" if Method(s.method).low_rank else "full"
    return f"{kind}_finetune_{'distributed' if s.parallel.dp > 1 else 'single_device'}"


def chunks(steps: int) -> tuple[int, int]:
    """(epochs, steps per epoch): the planned steps cut into at most ``CHUNKS`` epochs, each ending with a
    checkpoint."""
    per_epoch = math.ceil(steps / min(CHUNKS, steps))
    return math.ceil(steps / per_epoch), per_epoch


def _check(s: TrainSetup) -> None:
    _check_method(s)
    _check_layout(s)
    if s.precision not in _DTYPE:
        raise InputError("--precision", f"torchtune trains in bf16 or fp32 without mixed precision, not "
                         f"{s.precision}.", "plan with --framework torchtune (which prices pure bf16) on a GPU "
                         "with bf16, or with --framework llama-factory or trl.")
    if s.optimizer not in _OPTIMIZER:
        raise InputError("--optimizer", f"the torchtune export builds a torch.optim optimizer; it has no "
                         f"'{s.optimizer}'.", f"plan with --optimizer {' or '.join(_OPTIMIZER)}.")
    if s.recompute == Recompute.SELECTIVE:
        raise InputError("--recompute", "the plan recomputes selectively; torchtune's recipes checkpoint whole "
                         "layers or nothing.", "plan with --framework torchtune, which prices its own choice.")


def _check_method(s: TrainSetup) -> None:
    if s.method not in (Method.LORA, Method.QLORA, Method.FULL):
        raise InputError("--method", f"the torchtune export trains full or with LoRA, not {s.method}.",
                         "plan with --method lora, qlora or full.")
    if s.train_embeddings:
        raise InputError("--train-embeddings", "torchtune's LoRA recipes train no embeddings beside the adapters (and "
                         "would not reload them on resume).", "plan without --train-embeddings, or with --framework "
                         "llama-factory or trl.")
    base = s.base_quant or ("bnb-nf4-dq" if s.method == Method.QLORA else None)
    if base not in (None, "bnb-nf4-dq") or (base and s.method != Method.QLORA):
        raise InputError("--quant", f"torchtune keeps a frozen base in bf16 or in NF4 with double quantization "
                         f"(QLoRA), not {base}.", "plan --method qlora, or --method lora without --quant.")
    if s.method != Method.FULL and s.lora_targets not in _TARGETS:
        raise InputError("--lora-targets", f"torchtune's LoRA builders adapt at least one attention projection, so "
                         f"they cannot adapt {s.lora_targets} alone.", f"plan with --lora-targets "
                         f"{' or '.join(_TARGETS)}.")
    if s.fused_optimizer_step and s.method != Method.FULL:
        raise InputError("--export", "torchtune's LoRA recipes have no optimizer step in the backward pass.",
                         "plan without the fused optimizer step, or with --method full.")


def _check_layout(s: TrainSetup) -> None:
    p = s.parallel
    if p.tp > 1 or p.pp > 1 or p.cp > 1 or p.ep > 1:
        raise InputError("--export", f"the plan splits the model with {p.describe()}; the torchtune export trains "
                         "with FSDP data parallelism only.", "plan with --max-gpus (fewer GPUs) or a GPU with more "
                         "memory so the model fits without tensor parallelism.")
    if p.offload_optimizer:
        raise InputError("--export", "torchtune offloads whole FSDP shards (fsdp_cpu_offload), not only the "
                         "optimizer states.", "plan without optimizer offload.")
    if p.dp > 1 and p.zero not in (2, 3):
        raise InputError("--export", f"on {p.dp} GPUs torchtune shards weights, gradients and optimizer states with "
                         f"FSDP; this plan was priced with {p.describe()}.", "plan with --framework torchtune, which "
                         "prices its FSDP (ZeRO-3), or with --max-gpus 1.")


def _model(s: TrainSetup, module: str, base: str) -> dict[str, Any]:
    """The ``model`` section: the builder, and for LoRA its rank, alpha, dropout and targets."""
    builders = flags("torchtune")["families"][module]["builders"]
    if s.method == Method.FULL:
        return {"_component_": f"{module}.{base}"}
    attention, mlp = _TARGETS[s.lora_targets]
    name = f"qlora_{base}" if s.method == Method.QLORA and f"qlora_{base}" in builders else f"lora_{base}"
    model: dict[str, Any] = {"_component_": f"{module}.{name}", "lora_attn_modules": attention,
                             "apply_lora_to_mlp": mlp, "apply_lora_to_output": False, "lora_rank": s.lora_rank,
                             "lora_alpha": 2 * s.lora_rank, "lora_dropout": s.lora_dropout}
    if s.method == Method.QLORA and not name.startswith("qlora_"):
        model["quantize_base"] = True
    unknown = sorted(set(model) - {"_component_"} - set(builders.get(name, [])))
    if name not in builders or unknown:
        raise InputError("--export", f"torchtune {version('torchtune')} has no {name} taking {', '.join(unknown)}.",
                         "plan with --method full, or with --framework llama-factory or trl.")
    return model


def _check_keys(name: str, cfg: dict[str, Any]) -> None:
    """Raise if the config has a key the recipe never reads (torchtune ignores such keys without a word)."""
    unknown = sorted(set(cfg) - set(flags("torchtune")["recipes"][name]["keys"]))
    if unknown:
        raise InputError("--export", f"torchtune {version('torchtune')}'s {name} reads no {', '.join(unknown)}.",
                         "report this: the export and the recorded recipe keys disagree.")


def torchtune_config(e: JobEstimate, out_dir: str, steps: int, lr: float) -> dict[str, Any]:
    """The ``tune run --config`` YAML for the planned setup. The dataset, the weight files and the resume point
    are given on the command line (the run finds them)."""
    s = e.setup
    assert isinstance(s, TrainSetup)
    _check(s)
    module, base = builder(e)
    family = flags("torchtune")["families"][module]
    epochs, per_epoch = chunks(steps)
    optimizer, options = _OPTIMIZER[s.optimizer]
    cfg: dict[str, Any] = {
        "output_dir": out_dir,
        "tokenizer": {"_component_": family["tokenizer"], "max_seq_len": s.seq_len,
                      **{k: f"{MODEL_DIR}/{v}" for k, v in family["tokenizer_files"].items()}},
        "model": _model(s, module, base),
        "checkpointer": {"_component_": "torchtune.training.FullModelHFCheckpointer", "checkpoint_dir": MODEL_DIR,
                         "checkpoint_files": [], "recipe_checkpoint": None, "output_dir": out_dir,
                         "model_type": family["model_type"]},
        "resume_from_checkpoint": False,
        "dataset": {"_component_": "torchtune.datasets.alpaca_dataset", "packed": not s.lengths_vary},
        "seed": None, "shuffle": True, "batch_size": s.micro_batch,
        "optimizer": {"_component_": optimizer, "lr": lr, **options},
        "lr_scheduler": {"_component_": "torchtune.training.lr_schedulers.get_cosine_schedule_with_warmup",
                         "num_warmup_steps": max(1, math.ceil(steps * LR_WARMUP_SHARE))},
        "loss": {"_component_": "torchtune.modules.loss.CEWithChunkedOutputLoss" if s.chunked_loss
                 else "torch.nn.CrossEntropyLoss"},
        "epochs": epochs, "max_steps_per_epoch": per_epoch, "gradient_accumulation_steps": s.grad_accum,
        "compile": s.compiled,
        "metric_logger": {"_component_": "torchtune.training.metric_logging.DiskLogger", "log_dir": f"{out_dir}/logs"},
        "log_every_n_steps": 10, "log_peak_memory_stats": True, "device": "cuda", "dtype": _DTYPE[s.precision],
        "enable_activation_checkpointing": s.recompute == Recompute.FULL, "enable_activation_offloading": False}
    if s.method == Method.FULL and s.fused_optimizer_step:
        cfg["optimizer_in_bwd"] = True
    elif s.method == Method.FULL and s.parallel.dp == 1:
        cfg["optimizer_in_bwd"] = False  # the single-device recipe requires the key
    if s.method != Method.FULL:
        cfg["save_adapter_weights_only"] = True  # the adapter each epoch, not a merged copy of the whole model
    if s.parallel.dp > 1:
        cfg["fsdp_reshard_after_forward"] = s.parallel.zero == 3
    _check_keys(recipe(s), cfg)
    return cfg


def _resume_lines(s: TrainSetup, out_dir: str) -> str:
    """Shell lines that set ``EPOCH`` (the epoch the recipe state on the bucket records, empty for a first start)
    and ``FILES`` (the weight files to load: the download's, or for a full fine-tune that epoch's)."""
    state = f"{out_dir}/recipe_state/recipe_state.pt"
    read = ('python -c \'import sys, torch; print(torch.load(sys.argv[1], map_location="cpu", mmap=True, '
            'weights_only=True)["epochs_run"] - 1)\'')
    lines = [f'EPOCH=$( [ -f {state} ] && {read} {state} 2>/dev/null || true)',
             f"FILES=$(cd {MODEL_DIR} && ls *.safetensors | paste -sd, -)"]
    if s.method == Method.FULL:
        lines.append(f'if [ -n "$EPOCH" ]; then FILES=$(cd {out_dir} && ls epoch_"$EPOCH"/*.safetensors | '
                     "paste -sd, -); fi")
    return "\n".join(lines) + "\n"


def _overrides(s: TrainSetup) -> str:
    resume = "resume_from_checkpoint=True"
    if s.method != Method.FULL:
        resume += " checkpointer.adapter_checkpoint=epoch_$EPOCH/adapter_model.pt"
    return f'dataset.source="$DATASET" "checkpointer.checkpoint_files=[$FILES]" ${{EPOCH:+{resume}}}'


def _launcher(s: TrainSetup) -> str:
    if s.parallel.dp == 1:
        return ""
    return ('--nnodes "$SKYPILOT_NUM_NODES" --nproc_per_node "$SKYPILOT_NUM_GPUS_PER_NODE" '
            '--node_rank "$SKYPILOT_NODE_RANK" --rdzv_endpoint "$(echo "$SKYPILOT_NODE_IPS" | head -n1):29500" ')


def setup_and_run(e: JobEstimate, model_ref: str, config_yaml: str, out_dir: str) -> tuple[str, str]:
    """The setup (torchtune, and the model downloaded on every node) and the run: the config written, the resume
    point found on the bucket, the older epochs pruned, and ``tune run`` on every node."""
    s = e.setup
    assert isinstance(s, TrainSetup)
    # torchao 0.13.0 is built against PyTorch 2.8.0 (torchao/__init__.py), and is the last release with the
    # torchao.dtypes.nf4tensor module torchtune 0.6.1 imports
    setup = (f"pip install 'torch==2.8.0' 'torchao==0.13.0' 'torchtune=={version('torchtune')}'\n"
             f"tune download {shlex.quote(model_ref)} --output-dir {MODEL_DIR} "
             "--ignore-patterns 'original/consolidated*'\n")
    prune = f"ls -d {out_dir}/epoch_* 2>/dev/null | sort -V | head -n -{CHECKPOINTS_KEPT} | xargs -r rm -rf || true"
    run = ("set -euo pipefail\n"
           ': "${DATASET:?set --env DATASET to a Hugging Face dataset of instruction/input/output records}"\n'
           f"cat > torchtune.yaml <<'GPUPLAN_EOF'\n{config_yaml.rstrip()}\nGPUPLAN_EOF\n"
           + _resume_lines(s, out_dir) +
           f"# torchtune keeps every epoch's folder: node 0 keeps the newest {CHECKPOINTS_KEPT} on the bucket\n"
           f"prune() {{ {prune}; }}\n"
           'if [ "$SKYPILOT_NODE_RANK" = 0 ]; then prune; (while sleep 300; do prune; done) >/dev/null 2>&1 & '
           "trap 'kill $!' EXIT; fi\n"
           f"tune run {_launcher(s)}{recipe(s)} --config torchtune.yaml {_overrides(s)}\n")
    return setup, run
