"""Fine-tuning hand-off for ``--framework swift``: ms-swift's ``swift sft swift.yaml`` with the planned method, rank,
batch, accumulation, length, recomputation, precision and ZeRO.

Every key written is one ms-swift 4.6.0's own parser accepts (``gpuplan/data/flags/swift.json``: the
``HfArgumentParser`` over ``SftArguments`` that ``swift sft`` builds, recorded by ``scripts/record_flags.py``; the
tests read each export with it). What the export relies on (modelscope/ms-swift 4.6.0, swift/cli/main.py and
swift/arguments/sft_args.py):

- ``swift sft FILE.yaml`` turns every key of the file into ``--key value``; options after the file override it.
  With ``NPROC_PER_NODE``/``NNODES``/``NODE_RANK``/``MASTER_ADDR``/``MASTER_PORT`` set it starts
  ``torch.distributed.run`` itself.
- ``add_version: false`` keeps checkpoints in ``output_dir/checkpoint-N`` (by default ms-swift adds a
  ``vN-<timestamp>`` folder per run, so a relaunch would not find the last one); ``resume_from_checkpoint`` with
  the newest of them restores model, optimizer, scheduler and data position (the HF Trainer's resume).
- ``use_hf: true``: the model and dataset ids are Hugging Face's (ms-swift reads ModelScope's by default).
- ``tuner_type`` (4.x; 3.x called it ``train_type``) is ``lora`` or ``full``; QLoRA is LoRA over a bitsandbytes
  base (``quant_method: bnb``, ``quant_bits: 4``).
"""

from __future__ import annotations

from typing import Any

from gpuplan.errors import InputError
from gpuplan.estimate.job import JobEstimate
from gpuplan.export.registry import check_options
from gpuplan.export.trl import load_dtype
from gpuplan.types import Method, Recompute, TrainSetup

_CHOICE_KEYS = ("tuner_type", "torch_dtype", "optim", "save_strategy", "quant_method", "quant_bits",
                "bnb_4bit_quant_type", "bnb_4bit_compute_dtype")


def swift_config(e: JobEstimate, model_ref: str, output_dir: str, steps: int, save_every: int, lr: float,
                 optim: str, lora_targets: str | None) -> dict[str, Any]:
    """The ``swift sft`` YAML for the planned setup (the dataset is given on the command line). ``optim`` is the HF
    Trainer's name of the planned optimizer; ``lora_targets`` the module names (None: all-linear)."""
    s = e.setup
    assert isinstance(s, TrainSetup)
    _check_layout(s)
    tuner = "full" if s.method == Method.FULL else "lora"
    cfg: dict[str, Any] = {"model": model_ref, "use_hf": True, "tuner_type": tuner,
                           "torch_dtype": load_dtype(s)}
    if Method(s.method).low_rank:
        cfg |= {"lora_rank": s.lora_rank, "lora_alpha": 2 * s.lora_rank, "lora_dropout": s.lora_dropout,
                "target_modules": lora_targets.split(",") if lora_targets else ["all-linear"]}
        if s.train_embeddings:
            cfg["modules_to_save"] = ["embed_tokens", "lm_head"]
        cfg |= _base_quant(s)
    cfg |= {"max_length": s.seq_len, "packing": False, "per_device_train_batch_size": s.micro_batch,
            "gradient_accumulation_steps": s.grad_accum, "gradient_checkpointing": s.recompute == Recompute.FULL,
            "num_train_epochs": float(e.job.epochs) if e.job.samples else 1.0, "learning_rate": lr,
            "optim": optim, **_precision(s), "output_dir": output_dir, "add_version": False,
            "save_strategy": "steps", "save_steps": save_every, "save_total_limit": 2, "logging_steps": 10,
            "report_to": ["none"]}
    if not e.job.samples:
        cfg["max_steps"] = steps  # a token budget, not epochs over a sample count
    if s.parallel.zero:
        cfg["deepspeed"] = f"ds_z{s.parallel.zero}.json"
    check_options("swift", {k: (str(v) if k in _CHOICE_KEYS else None) for k, v in cfg.items()})
    return cfg


def _check_layout(s: TrainSetup) -> None:
    p = s.parallel
    if p.tp > 1 or p.pp > 1 or p.cp > 1 or p.ep > 1:
        raise InputError("--export", f"the plan splits the model with {p.describe()}; ms-swift's sft trains with "
                         "data parallelism and ZeRO only (its Megatron path is another command).",
                         "plan with --max-gpus (fewer GPUs) or a GPU with more memory so the model fits without "
                         "tensor parallelism.")
    if s.method not in (Method.LORA, Method.QLORA, Method.FULL):
        raise InputError("--export", f"the ms-swift export trains full or with LoRA, not {s.method}.",
                         "plan with --method lora, qlora or full.")
    if s.recompute == Recompute.SELECTIVE:
        raise InputError("--export", "the plan recomputes selectively; the HF Trainer checkpoints whole layers "
                         "or nothing.", "plan with --framework swift, which prices its own choice.")


def _base_quant(s: TrainSetup) -> dict[str, Any]:
    fmt = s.base_quant or ("bnb-nf4-dq" if s.method == Method.QLORA else None)
    if fmt is None:
        return {}
    if fmt in ("bnb-nf4", "bnb-nf4-dq"):
        return {"quant_method": "bnb", "quant_bits": 4, "bnb_4bit_quant_type": "nf4",
                "bnb_4bit_use_double_quant": fmt.endswith("-dq"), "bnb_4bit_compute_dtype": load_dtype(s)}
    if fmt in ("bnb-int8", "int8-wo"):
        return {"quant_method": "bnb", "quant_bits": 8}
    raise InputError("--export", f"ms-swift loads a frozen base in bitsandbytes NF4 or int8 for this export, not "
                     f"{fmt}.", "plan --method qlora (NF4) or --method lora --quant int8.")


def _precision(s: TrainSetup) -> dict[str, Any]:
    if s.precision == "fp16-mixed":
        return {"fp16": True, "bf16": False}
    if s.precision in ("bf16", "bf16-mixed"):
        return {"bf16": True, "fp16": False}
    raise InputError("--export", f"the ms-swift export trains in bf16 or fp16 mixed precision, not {s.precision}.",
                     "plan with bf16 or fp16 mixed precision.")
