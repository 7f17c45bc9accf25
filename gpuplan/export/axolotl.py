"""Fine-tuning hand-off for ``--framework axolotl``: ``axolotl train axolotl.yaml`` with the planned method, rank,
batch, accumulation, length, packing, recomputation, precision and ZeRO.

Every key written is a field of Axolotl 0.19.0's config schema (``gpuplan/data/flags/axolotl.json``: the fields of
``AxolotlInputConfig``, recorded by ``scripts/record_flags.py``; the tests validate each export with Axolotl's own
``validate_config``). What the export relies on (axolotl-ai-cloud/axolotl 0.19.0):

- ``auto_resume_from_checkpoints: true``: with no ``resume_from_checkpoint`` given, training resumes from the
  highest ``checkpoint-N`` in ``output_dir`` (axolotl/utils/train.py, ``determine_last_checkpoint``), which is on the
  bucket.
- ``bf16: true`` loads the weights in bfloat16 (axolotl/utils/config/__init__.py, ``normalize_config`` sets
  ``torch_dtype``), so without DeepSpeed a full fine-tune trains its weights and optimizer states in bf16 (pure
  bf16); with DeepSpeed ZeRO the optimizer keeps fp32 master weights and fp32 states of its partition
  (deepspeed/runtime/zero/stage_1_and_2.py ``single_partition_of_fp32_groups``, stage3.py
  ``fp32_partitioned_groups_flat``), as bf16 mixed precision does. A plan priced the other way is refused rather
  than run differently.
- ``adapter: qlora`` with ``load_in_4bit`` quantizes the base to NF4 with double quantization
  (axolotl/loaders/model.py); ``bnb_config_kwargs`` turns double quantization off for a plain NF4 plan.
- ``sample_packing`` packs samples into ``sequence_len`` (the planned packing); flash attention keeps packed
  samples from attending to each other, so the setup installs the ``flash-attn`` extra as Axolotl's README does.
- ``axolotl train --launcher torchrun -- ARGS`` passes ``ARGS`` to torchrun (axolotl/cli/utils/train.py).
"""

from __future__ import annotations

import math
from typing import Any

from gpuplan.errors import InputError
from gpuplan.estimate.job import JobEstimate
from gpuplan.export.registry import check_options
from gpuplan.types import Method, Recompute, TrainSetup

CHECKPOINTS_PER_RUN = 20  # as the other exports: a preemption loses at most 1/20 of the run


def axolotl_config(e: JobEstimate, model_ref: str, output_dir: str, steps: int, save_every: int, lr: float,
                   optim: str, lora_targets: str | None) -> dict[str, Any]:
    """The ``axolotl train`` YAML for the planned setup, without ``datasets`` (the run appends the user's).
    ``optim`` is the HF Trainer's name of the planned optimizer; ``lora_targets`` the module names (None:
    all-linear)."""
    s = e.setup
    assert isinstance(s, TrainSetup)
    _check(s)
    cfg: dict[str, Any] = {"base_model": model_ref}
    if Method(s.method).low_rank:
        cfg |= _adapter(s) | {"lora_r": s.lora_rank, "lora_alpha": 2 * s.lora_rank, "lora_dropout": s.lora_dropout}
        cfg |= {"lora_target_modules": lora_targets.split(",")} if lora_targets else {"lora_target_linear": True}
        if s.train_embeddings:
            cfg["lora_modules_to_save"] = ["embed_tokens", "lm_head"]
    cfg |= {"sequence_len": s.seq_len, "sample_packing": not s.lengths_vary, "pad_to_sequence_len": not s.lengths_vary,
            "attn_implementation": "flash_attention_2" if s.flash_attention else "sdpa",
            "micro_batch_size": s.micro_batch, "gradient_accumulation_steps": s.grad_accum,
            "gradient_checkpointing": s.recompute == Recompute.FULL, "learning_rate": lr, "optimizer": optim,
            **({"fp16": True} if s.precision == "fp16-mixed" else {"bf16": True}),
            "output_dir": output_dir, "auto_resume_from_checkpoints": True, "save_total_limit": 2,
            "logging_steps": 10, "val_set_size": 0.0}
    if e.job.samples:  # packed sequences make fewer steps than samples: checkpoints counted per epoch
        cfg |= {"num_epochs": float(e.job.epochs), "saves_per_epoch": max(1, math.ceil(CHECKPOINTS_PER_RUN /
                                                                                      e.job.epochs))}
    else:  # a token budget: full sequences of seq_len, so the step count is exact
        cfg |= {"num_epochs": 1.0, "max_steps": steps, "save_steps": save_every}
    if s.parallel.zero:
        cfg["deepspeed"] = f"ds_z{s.parallel.zero}.json"
    check_options("axolotl", dict.fromkeys([*cfg, "datasets"]))
    return cfg


def _check(s: TrainSetup) -> None:
    p = s.parallel
    if p.tp > 1 or p.pp > 1 or p.cp > 1 or p.ep > 1:
        raise InputError("--export", f"the plan splits the model with {p.describe()}; the Axolotl export trains with "
                         "data parallelism and ZeRO only.", "plan with --max-gpus (fewer GPUs) or a GPU with more "
                         "memory so the model fits without tensor parallelism.")
    if s.method not in (Method.LORA, Method.QLORA, Method.FULL):
        raise InputError("--export", f"the Axolotl export trains full or with LoRA, not {s.method}.",
                         "plan with --method lora, qlora or full.")
    if s.recompute == Recompute.SELECTIVE:
        raise InputError("--export", "the plan recomputes selectively; the HF Trainer checkpoints whole layers "
                         "or nothing.", "plan with --framework axolotl, which prices its own choice.")
    if s.method == Method.FULL and not p.zero and s.precision != "bf16":
        raise InputError("--export", "without DeepSpeed, Axolotl trains a full fine-tune's weights in the 16 bits it "
                         f"loads them in, so it cannot train as planned in {s.precision} (with an fp32 master copy).",
                         "plan with --framework llama-factory or trl, or with --method lora.")
    mixed_in_zero = s.method == Method.FULL and p.zero and s.precision == "bf16-mixed"
    if s.precision not in ("bf16", "fp16-mixed") and not mixed_in_zero:
        raise InputError("--export", f"the Axolotl export trains in bf16 or fp16 mixed precision, not {s.precision}.",
                         "plan with bf16 or fp16 mixed precision.")


def _adapter(s: TrainSetup) -> dict[str, Any]:
    fmt = s.base_quant or ("bnb-nf4-dq" if s.method == Method.QLORA else None)
    if fmt is None:
        return {"adapter": "lora"}
    if fmt in ("bnb-nf4", "bnb-nf4-dq"):
        cfg: dict[str, Any] = {"adapter": "qlora", "load_in_4bit": True}
        if fmt == "bnb-nf4":  # Axolotl's QLoRA quantizes with double quantization unless told otherwise
            cfg["bnb_config_kwargs"] = {"bnb_4bit_use_double_quant": False}
        return cfg
    if fmt in ("bnb-int8", "int8-wo"):
        return {"adapter": "lora", "load_in_8bit": True}
    raise InputError("--export", f"Axolotl loads a frozen base in bitsandbytes NF4 or int8 for this export, not "
                     f"{fmt}.", "plan --method qlora (NF4) or --method lora --quant int8.")
