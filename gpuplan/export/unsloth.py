"""Fine-tuning hand-off for ``--framework unsloth``: a short Python script that loads the model with Unsloth's
``FastLanguageModel``, adds the planned LoRA, and trains with TRL's ``SFTTrainer`` (which Unsloth patches), so
checkpoints and ``trainer.train(resume_from_checkpoint=...)`` are the HF Trainer's, as in the TRL export.

What the script relies on (unslothai/unsloth 2026.10.9, unsloth/models/loader.py and unsloth/models/llama.py):

- ``FastLanguageModel.from_pretrained(model_name, max_seq_length, dtype, load_in_4bit, load_in_8bit,
  full_finetuning, float32_mixed_precision, token, use_gradient_checkpointing)``; its 4-bit load is bitsandbytes
  NF4 with double quantization (``bnb_4bit_use_double_quant = True``), nothing else;
- ``FastLanguageModel.get_peft_model(model, r, target_modules, lora_alpha, lora_dropout,
  use_gradient_checkpointing)`` (``loader.py`` hands it to ``FastLlamaModel.get_peft_model``); "unsloth" is its
  checkpointing that also offloads the saved activations to CPU memory;
- ``import unsloth`` comes before TRL and transformers, which it patches;
- the open-source release trains on one GPU: several-GPU plans are refused.

The tests compile the script, build its ``SFTConfig`` with the installed TRL, and check every keyword given to
Unsloth against the parameters of Unsloth's own functions, read from its source with ``ast`` (Unsloth cannot be
imported without an NVIDIA GPU).
"""

from __future__ import annotations

from typing import Any

from gpuplan.errors import InputError
from gpuplan.estimate.job import JobEstimate
from gpuplan.export.registry import check_options
from gpuplan.export.train import trainer_checkpoints
from gpuplan.export.trl import load_dtype, trainer_precision
from gpuplan.types import Method, Recompute, TrainSetup

SCRIPT = "train_unsloth.py"


class Code(str):
    """A Python expression written into the script as it is (``repr`` of other values makes their literal)."""

    __slots__ = ()

    def __repr__(self) -> str:
        return str(self)


def unsloth_config(e: JobEstimate, model_ref: str, output_dir: str, steps: int, save_every: int, lr: float,
                   optim: str, lora_targets: str | None) -> dict[str, dict[str, Any]]:
    """The keyword arguments of each call the script makes: ``from_pretrained``, ``get_peft_model`` (LoRA and
    QLoRA only) and ``SFTConfig``. ``optim`` is the HF Trainer's name of the planned optimizer; ``lora_targets``
    the module names (None: all-linear)."""
    s = e.setup
    assert isinstance(s, TrainSetup)
    _check_layout(e, s)
    checkpointing = "unsloth" if s.recompute == Recompute.FULL else False
    load: dict[str, Any] = {"model_name": model_ref, "max_seq_length": s.seq_len,
                            "dtype": Code(f"torch.{load_dtype(s)}"), **_base(s),
                            "use_gradient_checkpointing": checkpointing, "token": Code('os.environ.get("HF_TOKEN")')}
    calls: dict[str, dict[str, Any]] = {"from_pretrained": load}
    if Method(s.method).low_rank:
        calls["get_peft_model"] = {"r": s.lora_rank, "target_modules": lora_targets.split(",") if lora_targets
                                   else "all-linear", "lora_alpha": 2 * s.lora_rank, "lora_dropout": s.lora_dropout,
                                   "use_gradient_checkpointing": checkpointing}
    sft = {"max_length": s.seq_len, "packing": False, "per_device_train_batch_size": s.micro_batch,
           "gradient_accumulation_steps": s.grad_accum,
           "num_train_epochs": float(e.job.epochs) if e.job.samples else 1.0, "learning_rate": lr, "optim": optim,
           **trainer_precision(s), "output_dir": output_dir, **trainer_checkpoints(e, steps, save_every)}
    calls["SFTConfig"] = sft
    check_options("unsloth", dict.fromkeys(load))
    check_options("unsloth", dict.fromkeys(calls.get("get_peft_model", {})), record="peft_options")
    check_options("trl", {k: (str(v) if k in ("optim", "save_strategy") else None) for k, v in sft.items()})
    return calls


def _check_layout(e: JobEstimate, s: TrainSetup) -> None:
    if e.n_gpus > 1:
        raise InputError("--export", f"the plan trains on {e.n_gpus} GPUs; Unsloth's "
                         "open-source release trains on one GPU.", "plan with --framework unsloth --max-gpus 1 "
                         "(or --gpus with more memory), or plan with --framework trl to export a several-GPU run.")
    if s.parallel.zero or s.parallel.offload_optimizer:
        raise InputError("--export", f"the plan shards or offloads with {s.parallel.describe()}; the Unsloth export "
                         "trains without DeepSpeed.", "plan with --framework unsloth without ZeRO or optimizer "
                         "offload, or with --framework trl.")
    if s.method not in (Method.LORA, Method.QLORA, Method.FULL):
        raise InputError("--export", f"Unsloth trains full or with LoRA/QLoRA, not {s.method}.",
                         "plan with --method lora, qlora or full.")
    if s.recompute == Recompute.SELECTIVE:
        raise InputError("--export", "the plan recomputes selectively; Unsloth checkpoints whole layers or nothing.",
                         "plan with --framework unsloth, which prices its own choice (--recompute full or none).")
    if s.train_embeddings:
        raise InputError("--export", "the Unsloth export does not train the embeddings with LoRA.",
                         "plan without --train-embeddings, or with --framework trl.")


def _base(s: TrainSetup) -> dict[str, Any]:
    """How the weights load: a quantized frozen base, a 16-bit one for LoRA, or all weights trained (full)."""
    if s.method == Method.FULL:
        return {"load_in_4bit": False, "full_finetuning": True,
                "float32_mixed_precision": s.precision != "bf16"}  # pure bf16: no fp32 master copy
    fmt = s.base_quant or ("bnb-nf4-dq" if s.method == Method.QLORA else None)
    if fmt is None:
        return {"load_in_4bit": False}
    if fmt == "bnb-nf4-dq":
        return {"load_in_4bit": True}
    if fmt in ("bnb-int8", "int8-wo"):
        return {"load_in_4bit": False, "load_in_8bit": True}
    raise InputError("--export", f"Unsloth loads a frozen base in bitsandbytes NF4 with double quantization or "
                     f"int8, not {fmt}.", "plan --method qlora (NF4 with double quantization) or --method lora "
                     "--quant int8.")


def _call(callee: str, first: str, kwargs: dict[str, Any]) -> str:
    args = [first] if first else []
    args += [f"{name}={value!r}" for name, value in kwargs.items()]
    return f"{callee}(\n    " + ",\n    ".join(args) + ",\n)"


def unsloth_script(calls: dict[str, dict[str, Any]]) -> str:
    """The training script: load, adapt, train from ``$DATASET``, resuming from the newest checkpoint in
    ``output_dir`` when there is one."""
    lines = ['"""Written by gpuplan: the planned Unsloth fine-tune. DATASET: a Hugging Face dataset id or a local '
             'dataset folder."""', "import os", "",
             "from unsloth import FastLanguageModel  # first: it patches trl and transformers", "",
             "import torch", "from datasets import load_dataset", "from transformers.trainer_utils import "
             "get_last_checkpoint", "from trl import SFTConfig, SFTTrainer", "",
             "model, tokenizer = " + _call("FastLanguageModel.from_pretrained", "", calls["from_pretrained"])]
    if "get_peft_model" in calls:
        lines.append("model = " + _call("FastLanguageModel.get_peft_model", "model", calls["get_peft_model"]))
    lines += ["args = " + _call("SFTConfig", "", calls["SFTConfig"]),
              'dataset = load_dataset(os.environ["DATASET"], split="train")',
              "trainer = SFTTrainer(model=model, processing_class=tokenizer, train_dataset=dataset, args=args)",
              "last = get_last_checkpoint(args.output_dir) if os.path.isdir(args.output_dir) else None",
              "trainer.train(resume_from_checkpoint=last)"]
    return "\n".join(lines) + "\n"
