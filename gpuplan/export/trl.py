"""Fine-tuning hand-off for ``--framework trl``: TRL's ``sft`` script (``trl/scripts/sft.py``: ``SFTTrainer`` over
PEFT) with a YAML config of the planned method, rank, batch, accumulation, checkpointing and ZeRO.

Every key written is one TRL 1.16.0's ``TrlParser`` over ``ScriptArguments, SFTConfig, ModelConfig,
DatasetMixtureConfig`` accepts (``gpuplan/data/flags/trl.json``, recorded by ``scripts/record_flags.py``; the
tests load each export with that parser). The script calls ``trainer.train(resume_from_checkpoint=...)``: the run
passes the newest ``checkpoint-*`` folder in ``output_dir`` (on the bucket) when there is one, so a relaunch
after a preemption resumes from it.
"""

from __future__ import annotations

from typing import Any

from gpuplan.errors import InputError
from gpuplan.estimate.job import JobEstimate
from gpuplan.export.registry import check_options
from gpuplan.export.train import trainer_checkpoints
from gpuplan.types import Method, Recompute, TrainSetup

_CHOICE_KEYS = ("dtype", "optim", "save_strategy", "bnb_4bit_quant_type")


def trl_config(e: JobEstimate, model_ref: str, output_dir: str, steps: int, save_every: int,
               lr: float, optim: str, lora_targets: str | None) -> dict[str, Any]:
    """The ``trl sft --config`` YAML for the planned setup (the dataset is given on the command line).
    ``optim`` is the HF Trainer's name of the planned optimizer; ``lora_targets`` the module names (None:
    all-linear)."""
    s = e.setup
    assert isinstance(s, TrainSetup)
    _check_layout(s)
    cfg: dict[str, Any] = {"model_name_or_path": model_ref, "dtype": load_dtype(s)}
    if Method(s.method).low_rank:
        cfg |= {"use_peft": True, "lora_r": s.lora_rank, "lora_alpha": 2 * s.lora_rank,
                "lora_dropout": s.lora_dropout,
                "lora_target_modules": lora_targets.split(",") if lora_targets else "all-linear"}
        if s.train_embeddings:
            cfg["lora_modules_to_save"] = ["embed_tokens", "lm_head"]
        cfg |= _base_quant(s)
    cfg |= {"max_length": s.seq_len, "packing": False, "per_device_train_batch_size": s.micro_batch,
            "gradient_accumulation_steps": s.grad_accum, "gradient_checkpointing": s.recompute == Recompute.FULL,
            "num_train_epochs": float(e.job.epochs) if e.job.samples else 1.0, "learning_rate": lr,
            "optim": optim, **trainer_precision(s), "output_dir": output_dir,
            **trainer_checkpoints(e, steps, save_every)}
    check_options("trl", {k: (str(v) if k in _CHOICE_KEYS else None) for k, v in cfg.items()})
    return cfg


def _check_layout(s: TrainSetup) -> None:
    p = s.parallel
    if p.tp > 1 or p.pp > 1 or p.cp > 1 or p.ep > 1:
        raise InputError("--export", f"the plan splits the model with {p.describe()}; TRL's SFTTrainer trains "
                         "with data parallelism and ZeRO only.", "plan with --max-gpus (fewer GPUs) or a GPU with "
                         "more memory so the model fits without tensor parallelism.")
    if s.method not in (Method.LORA, Method.QLORA, Method.FULL):
        raise InputError("--export", f"TRL's sft script trains full or with a PEFT LoRA, not {s.method}.",
                         "plan with --method lora, qlora or full.")
    if s.recompute == Recompute.SELECTIVE:
        raise InputError("--export", "the plan recomputes selectively; the HF Trainer checkpoints whole layers "
                         "or nothing.", "plan with --framework trl, which prices its own choice (estimate: "
                         "--recompute full or none).")


def load_dtype(s: TrainSetup) -> str:
    """The dtype the weights load in: 16-bit for a frozen base (LoRA) or pure 16-bit training, else fp32 (the
    master copy of mixed precision)."""
    if Method(s.method).low_rank or s.precision == "bf16":
        return "float16" if s.precision == "fp16-mixed" else "bfloat16"
    return "float32"


def _base_quant(s: TrainSetup) -> dict[str, Any]:
    fmt = s.base_quant or ("bnb-nf4-dq" if s.method == Method.QLORA else None)
    if fmt is None:
        return {}
    if fmt in ("bnb-nf4", "bnb-nf4-dq"):
        return {"load_in_4bit": True, "bnb_4bit_quant_type": "nf4", "use_bnb_nested_quant": fmt.endswith("-dq")}
    if fmt in ("bnb-int8", "int8-wo"):
        return {"load_in_8bit": True}
    raise InputError("--export", f"TRL loads a frozen base in bitsandbytes NF4 or int8, not {fmt}.",
                     "plan --method qlora (NF4) or --method lora --quant int8.")


def trainer_precision(s: TrainSetup) -> dict[str, Any]:
    """The HF Trainer's mixed-precision flags for the planned precision (TRL and Unsloth pass them as they are)."""
    if s.precision == "fp16-mixed":
        return {"fp16": True, "bf16": False}
    if s.precision in ("bf16", "bf16-mixed"):
        return {"bf16": True}
    raise InputError("--export", f"TRL does not train in {s.precision}.", "plan with bf16 or fp16 mixed precision.")

