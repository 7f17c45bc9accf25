"""Training hand-off: the commands that run a planned fine-tune (LLaMA-Factory, or TRL, LitGPT, ms-swift, Axolotl,
torchtune, Unsloth, DeepSpeed-Chat or LLM Foundry for their
``--framework``) or pretraining (Megatron-LM, or torchtitan or LLM Foundry for their ``--framework``) with the
settings the plan was sized for, checkpointing into ``CKPT_DIR`` and resuming from the last
checkpoint there.

Every option written is one the pinned release accepts (``gpuplan/data/flags/llamafactory.json``, recorded from
LLaMA-Factory 0.9.5's own parser; ``megatron.json`` from Megatron-LM's ``add_megatron_arguments`` at a commit),
checked before a command is returned.

- LLaMA-Factory resumes by itself: with ``overwrite_output_dir`` false and a ``checkpoint-*`` folder in
  ``output_dir`` it sets ``resume_from_checkpoint`` to the last one (hiyouga/LLaMA-Factory
  src/llamafactory/hparams/parser.py, get_train_args). It launches torchrun itself from ``FORCE_TORCHRUN``,
  ``NNODES``, ``NODE_RANK``, ``NPROC_PER_NODE``, ``MASTER_ADDR``, ``MASTER_PORT`` (llamafactory/launcher.py).
- Megatron-LM resumes from ``--load`` (the latest iteration recorded there) and, with ``--exit-signal-handler``,
  saves a checkpoint when the spot instance is told to stop.
"""

from __future__ import annotations

import math
import shlex
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import yaml

from gpuplan.errors import InputError
from gpuplan.estimate.job import JobEstimate
from gpuplan.export.registry import check_options, flags, version, write_vocabulary_as_value
from gpuplan.types import Method, ModelSpec, Recompute, Task, TrainSetup


class _ConfigDumper(yaml.SafeDumper):
    """YAML for the frameworks' config files: a vocabulary member (Method, Engine …) is written as its value."""


write_vocabulary_as_value(_ConfigDumper)


def _yaml(cfg: dict[str, Any]) -> str:
    return yaml.dump(cfg, Dumper=_ConfigDumper, sort_keys=False)


CKPT_DIR = "/checkpoints"
CHECKPOINTS_PER_RUN = 20  # a preemption loses at most 1/20 of the run
MEGATRON_REPO = "https://github.com/NVIDIA/Megatron-LM.git"
# module names of Llama-style decoders (q_proj ... down_proj, embed_tokens, lm_head): transformers LlamaForCausalLM
_LLAMA_STYLE = ("llama", "mistral", "qwen2", "qwen3", "gemma", "gemma2", "gemma3", "yi", "deepseek", "internlm2")
_LORA_TARGETS = {"attention": "q_proj,k_proj,v_proj,o_proj", "qv": "q_proj,v_proj",
                 "mlp": "gate_proj,up_proj,down_proj"}
_HF_OPTIM = {"adamw": "adamw_torch", "adamw-8bit": "adamw_bnb_8bit", "paged-adamw": "paged_adamw_32bit",
             "paged-adamw-8bit": "paged_adamw_8bit", "sgd": "sgd", "adafactor": "adafactor"}
# learning rates are not planned; these are LLaMA-Factory's shipped examples (examples/train_lora/*_lora_sft.yaml
# 1.0e-4, examples/train_full/*_full_sft.yaml 1.0e-5) and, for pretraining, Llama 2's (Touvron et al. 2023,
# section 2.2: AdamW, peak 3e-4, cosine to 10 %, weight decay 0.1, gradient clipping 1.0)
LR_ADAPTER, LR_FULL, LR_PRETRAIN = 1.0e-4, 1.0e-5, 3.0e-4


@dataclass(frozen=True, slots=True)
class TrainRun:
    """What a launcher needs: the setup and run scripts, and the variables the user sets (name -> default)."""

    framework: str
    setup: str
    run: str
    envs: dict[str, str] = field(default_factory=dict)


def train_run(e: JobEstimate, model_ref: str, n_nodes: int, name: str, spot: bool = True) -> TrainRun:
    """The run of the framework the plan was sized for; ``spot``: on capacity that may be preempted."""
    s = e.setup
    assert isinstance(s, TrainSetup)
    fw = e.job.framework
    if e.job.task is Task.FINETUNE and fw in (None, "hf", "llama-factory"):
        return llama_factory(e, model_ref, name)
    if e.job.task is Task.FINETUNE and fw == "trl":
        return trl(e, model_ref, name)
    if e.job.task is Task.FINETUNE and fw == "litgpt":
        return litgpt(e, model_ref, n_nodes, name, spot)
    if e.job.task is Task.FINETUNE and fw == "swift":
        return swift(e, model_ref, name)
    if e.job.task is Task.FINETUNE and fw == "axolotl":
        return axolotl(e, model_ref, name)
    if e.job.task is Task.FINETUNE and fw == "torchtune":
        return torchtune(e, model_ref, name)
    if e.job.task is Task.FINETUNE and fw == "unsloth":
        return unsloth(e, model_ref, name)
    if e.job.task is Task.FINETUNE and fw == "deepspeed":
        return deepspeed_chat(e, model_ref, name, spot)
    if fw == "llm-foundry":
        return llm_foundry(e, model_ref, name)
    if e.job.task is Task.PRETRAIN and fw in (None, "megatron"):
        return megatron(e, model_ref, n_nodes, name)
    if e.job.task is Task.PRETRAIN and fw == "torchtitan":
        return torchtitan(e, model_ref, name)
    written = EXPORTED[e.job.task]
    raise InputError("--export", f"the skypilot export writes the run for --framework {' or '.join(written)} "
                     f"({e.job.task}); this plan was sized for --framework {fw}.",
                     f"plan with --framework {written[0]} (or {', '.join(written[1:])}) to export a task that "
                     "trains, or write the run for that framework by hand from the plan's settings.")


# the frameworks whose run the export writes, by task (the first is what a plan without --framework gets)
EXPORTED = {"finetune": ("llama-factory", "hf", "trl", "litgpt", "swift", "axolotl", "torchtune", "unsloth",
                         "deepspeed", "llm-foundry"),
            "pretrain": ("megatron", "torchtitan", "llm-foundry")}


def _steps(e: JobEstimate, s: TrainSetup) -> int:
    """Optimizer steps: every sample (one sequence each, unpacked) per epoch, or the token budget in sequences."""
    j = e.job
    sequences = j.samples * j.epochs if j.samples else j.train_tokens / s.seq_len
    return max(1, math.ceil(sequences / (s.micro_batch * s.grad_accum * s.parallel.dp)))


def _save_every(steps: int) -> int:
    return max(1, steps // CHECKPOINTS_PER_RUN)


# torchrun's options on every node of a SkyPilot task
_TORCHRUN = ("--nproc-per-node \"$SKYPILOT_NUM_GPUS_PER_NODE\" --nnodes \"$SKYPILOT_NUM_NODES\" "
             "--node-rank \"$SKYPILOT_NODE_RANK\" --master-addr \"$(echo \"$SKYPILOT_NODE_IPS\" | head -n1)\" "
             "--master-port 29500")


def _launch_env() -> str:
    return ("MASTER_ADDR=$(echo \"$SKYPILOT_NODE_IPS\" | head -n1) NNODES=$SKYPILOT_NUM_NODES "
            "NODE_RANK=$SKYPILOT_NODE_RANK NPROC_PER_NODE=$SKYPILOT_NUM_GPUS_PER_NODE MASTER_PORT=29500")


# ---------------------------------------------------------------- LLaMA-Factory


def llama_factory_config(e: JobEstimate, model_ref: str, name: str) -> dict[str, Any]:
    """The ``llamafactory-cli train`` YAML for the planned setup (dataset given on the command line)."""
    s = e.setup
    assert isinstance(s, TrainSetup)
    m = e.model
    if s.parallel.tp > 1 or s.parallel.pp > 1 or s.parallel.cp > 1 or s.parallel.ep > 1:
        raise InputError("--export", f"the plan splits the model with {s.parallel.describe()}; LLaMA-Factory "
                         "trains with data parallelism and ZeRO/FSDP only.", "plan with --max-gpus (fewer GPUs) "
                         "or a GPU with more memory so the model fits without tensor parallelism.")
    if s.method == Method.PTUNING:
        raise InputError("--export", "LLaMA-Factory has no P-tuning v2.", "use the model's own P-tuning scripts "
                         "(ChatGLM ptuning/main.py); the skypilot export covers lora, qlora, freeze and full.")
    if s.method == Method.ADALORA:
        raise InputError("--export", "LLaMA-Factory has no AdaLoRA.", "plan with --method lora or dora, or run "
                         "AdaLoRA with PEFT's AdaLoraConfig (ms-swift --sft_type adalora).")
    if Method(s.method).adaption_prompt:
        raise InputError("--export", "LLaMA-Factory has no LLaMA-Adapter.", "plan with --method lora or qlora, or "
                         "run LLaMA-Adapter with LitGPT (--framework litgpt).")
    if s.method == Method.LISA:
        raise InputError("--export", "LLaMA-Factory has no LISA.", "plan with --method full, lora or galore, or run "
                         "LISA with ms-swift's --lisa_activated_layers or LMFlow.")
    if s.recompute == Recompute.SELECTIVE:
        raise InputError("--export", "the plan recomputes selectively; LLaMA-Factory checkpoints whole layers "
                         "or nothing.", "plan with --framework llama-factory, which prices its own choice.")
    cfg: dict[str, Any] = {"model_name_or_path": model_ref, "stage": "sft", "do_train": True,
                           "finetuning_type": "lora" if Method(s.method).low_rank else s.method}
    if Method(s.method).low_rank:
        cfg |= {"lora_rank": s.lora_rank, "lora_target": _lora_target(m, s.lora_targets)}
        if s.method == Method.DORA:
            cfg["use_dora"] = True
        if s.train_embeddings:
            _need_llama_style(m, "training the embeddings with LoRA")
            cfg["additional_target"] = "embed_tokens,lm_head"
        cfg |= _base_quant(s)
    if s.method == Method.FREEZE:
        cfg["freeze_trainable_layers"] = s.trainable_layers
    if s.method == Method.GALORE:
        cfg |= _galore(s)
    optim = _HF_OPTIM.get(s.optimizer)
    if optim is None:
        raise InputError("--export", f"LLaMA-Factory has no '{s.optimizer}' optimizer.",
                         f"plan with --optimizer {' or '.join(sorted(_HF_OPTIM))}.")
    steps = _steps(e, s)
    cfg |= {"cutoff_len": s.seq_len, "per_device_train_batch_size": s.micro_batch,
            "gradient_accumulation_steps": s.grad_accum,
            "num_train_epochs": float(e.job.epochs) if e.job.samples else 1.0,
            "learning_rate": LR_ADAPTER if Method(s.method).low_rank else LR_FULL, "optim": optim,
            **_precision(s), "disable_gradient_checkpointing": s.recompute == Recompute.NONE,
            "output_dir": f"{CKPT_DIR}/{name}", "overwrite_output_dir": False,
            **trainer_checkpoints(e, steps, _save_every(steps))}
    check_options("llamafactory", {k: (str(v) if k in _CHOICE_KEYS else None) for k, v in cfg.items()})
    return cfg


_CHOICE_KEYS = ("stage", "finetuning_type", "quantization_method", "quantization_type", "optim", "save_strategy")


def _need_llama_style(m: ModelSpec, what: str) -> None:
    if m.model_type not in _LLAMA_STYLE:
        raise InputError("--export", f"{what} names modules, and {m.name} ({m.model_type}) is not a Llama-style "
                         "decoder whose module names the export knows.", "plan with --lora-targets all-linear "
                         "and without --train-embeddings, or edit lora_target in the exported config.")


def _lora_target(m: ModelSpec, targets: str) -> str:
    if targets == "all-linear":
        return "all"
    _need_llama_style(m, f"--lora-targets {targets}")
    return _LORA_TARGETS[targets]


def trainer_checkpoints(e: JobEstimate, steps: int, save_every: int) -> dict[str, Any]:
    """The HF Trainer arguments LLaMA-Factory and TRL both take as they are: a checkpoint every ``save_every``
    steps (two kept, which spot recovery resumes from), logging, the step budget of a job counted in tokens, and
    the ZeRO config file."""
    s = e.setup
    assert isinstance(s, TrainSetup)
    cfg: dict[str, Any] = {"save_strategy": "steps", "save_steps": save_every, "save_total_limit": 2,
                           "logging_steps": 10, "report_to": "none"}
    if not e.job.samples:
        cfg["max_steps"] = steps  # a token budget, not epochs over a sample count
    if s.parallel.zero:
        cfg["deepspeed"] = f"ds_z{s.parallel.zero}.json"
    return cfg


def _base_quant(s: TrainSetup) -> dict[str, Any]:
    fmt = s.base_quant or ("bnb-nf4-dq" if s.method == Method.QLORA else None)
    if fmt is None:
        return {}
    if fmt in ("bnb-nf4", "bnb-nf4-dq"):
        return {"quantization_bit": 4, "quantization_method": "bnb", "quantization_type": "nf4",
                "double_quantization": fmt.endswith("-dq")}
    if fmt in ("bnb-int8", "int8-wo"):
        return {"quantization_bit": 8, "quantization_method": "bnb"}
    raise InputError("--export", f"LLaMA-Factory has no {fmt} frozen base.",
                     "plan --method qlora (NF4) or --method lora --quant int8.")


def _galore(s: TrainSetup) -> dict[str, Any]:
    """LLaMA-Factory's GaLore switches (full fine-tuning with use_galore; galore_target "all" projects every linear
    but the output layer, as gpuplan's all-linear does)."""
    if s.lora_targets != "all-linear":
        raise InputError("--lora-targets", f"the LLaMA-Factory export projects GaLore on every linear, not "
                         f"{s.lora_targets}.", "plan with --lora-targets all-linear.")
    return {"finetuning_type": "full", "use_galore": True, "galore_rank": s.lora_rank, "galore_target": "all"}


def _precision(s: TrainSetup) -> dict[str, Any]:
    if s.precision == "fp16-mixed":
        return {"fp16": True}
    if s.precision == "bf16" and Method(s.method).trains_every_weight:
        return {"pure_bf16": True}  # weights and optimizer states in bf16, no fp32 master copy
    if s.precision in ("bf16", "bf16-mixed"):
        return {"bf16": True}
    raise InputError("--export", f"LLaMA-Factory does not train in {s.precision}.",
                     "plan with bf16 or fp16 mixed precision.")


def deepspeed_config(s: TrainSetup) -> dict[str, Any]:
    """The DeepSpeed ZeRO config LLaMA-Factory passes to the HF Trainer ("auto" values come from its arguments)."""
    zero: dict[str, Any] = {"stage": s.parallel.zero, "overlap_comm": True, "contiguous_gradients": True}
    if s.parallel.zero in (1, 2):  # the gradient reduce buffers the memory estimate counted (memory.zero_bucket_bytes)
        zero.update(overlap_comm=s.overlap_comm, reduce_bucket_size=s.reduce_bucket_size)
    if s.parallel.zero == 3:
        zero["stage3_gather_16bit_weights_on_model_save"] = True
    if s.parallel.offload_optimizer:
        zero["offload_optimizer"] = {"device": "cpu", "pin_memory": True}
    return {"train_batch_size": "auto", "train_micro_batch_size_per_gpu": "auto",
            "gradient_accumulation_steps": "auto", "gradient_clipping": "auto",
            "bf16": {"enabled": "auto"}, "fp16": {"enabled": "auto"}, "zero_optimization": zero}


def llama_factory(e: JobEstimate, model_ref: str, name: str) -> TrainRun:
    s = e.setup
    assert isinstance(s, TrainSetup)
    cfg = llama_factory_config(e, model_ref, name)
    writes = _config_files("train.yaml", cfg, s)
    extras = (["deepspeed"] if s.parallel.zero else []) + (["bitsandbytes"] if "quantization_bit" in cfg else [])
    setup = " ".join(["pip install", f"'llamafactory=={version('llamafactory')}'", *extras])
    run = ("set -euo pipefail\n"
           ': "${DATASET:?set --env DATASET to a dataset named in $DATASET_DIR/dataset_info.json}"\n'
           + writes +
           f"FORCE_TORCHRUN=1 {_launch_env()} llamafactory-cli train train.yaml "
           'dataset="$DATASET" dataset_dir="$DATASET_DIR"\n')
    return TrainRun("llama-factory", setup, run, {"DATASET": "", "DATASET_DIR": "data"})


# ---------------------------------------------------------------- TRL (and the HF Trainer's other front ends)


def _hf_optim(s: TrainSetup, who: str) -> str:
    optim = _HF_OPTIM.get(s.optimizer)
    if optim is None:
        raise InputError("--export", f"the HF Trainer ({who}) has no '{s.optimizer}' optimizer.",
                         f"plan with --optimizer {' or '.join(sorted(_HF_OPTIM))}.")
    return optim


def _peft_targets(e: JobEstimate, s: TrainSetup) -> str | None:
    """The module names LoRA adapts (None: all linear layers), checking that the names the plan implies exist."""
    if s.train_embeddings:
        _need_llama_style(e.model, "training the embeddings with LoRA")
    if Method(s.method).low_rank and s.lora_targets != "all-linear":
        return _lora_target(e.model, s.lora_targets)
    return None


def _trainer_config(e: JobEstimate, model_ref: str, name: str, tool: str,
                    build: Callable[..., dict[str, Any]]) -> tuple[TrainSetup, str, dict[str, Any]]:
    """What the exports that run on the HF Trainer (TRL, ms-swift, Axolotl, Unsloth) share: the setup, the checkpoint
    folder, and the tool's config from ``build`` (its ``*_config``) with the planned optimizer, LoRA targets, steps,
    save interval and learning rate."""
    s = e.setup
    assert isinstance(s, TrainSetup)
    optim = _hf_optim(s, tool)
    targets = _peft_targets(e, s)
    steps = _steps(e, s)
    out = f"{CKPT_DIR}/{name}"
    lr = LR_ADAPTER if Method(s.method).low_rank else LR_FULL
    return s, out, build(e, model_ref, out, steps, _save_every(steps), lr, optim, targets)


def trl(e: JobEstimate, model_ref: str, name: str) -> TrainRun:
    from gpuplan.export.trl import trl_config

    s, out, cfg = _trainer_config(e, model_ref, name, "TRL", trl_config)
    writes = _config_files("sft.yaml", cfg, s)
    extras = (["deepspeed"] if s.parallel.zero else []) + (["bitsandbytes"] if "load_in_4bit" in cfg
                                                           or "load_in_8bit" in cfg else [])
    setup = " ".join(["pip install", f"'trl=={version('trl')}'", "peft", *extras])
    launch = f"torchrun {_TORCHRUN}"
    run = ("set -euo pipefail\n"
           ': "${DATASET:?set --env DATASET to a Hugging Face dataset id or a local dataset folder}"\n'
           + writes +
           f"LAST=$(ls -d {out}/checkpoint-* 2>/dev/null | sort -V | tail -n1 || true)\n"
           f"{launch} -m trl.scripts.sft --config sft.yaml --dataset_name \"$DATASET\" "
           '${LAST:+--resume_from_checkpoint "$LAST"}\n')
    return TrainRun("trl", setup, run, {"DATASET": ""})


# ---------------------------------------------------------------- LitGPT


def litgpt(e: JobEstimate, model_ref: str, n_nodes: int, name: str, spot: bool) -> TrainRun:
    from gpuplan.export.litgpt import litgpt_config, setup_and_run

    s = e.setup
    assert isinstance(s, TrainSetup)
    steps = _steps(e, s)
    out = f"{CKPT_DIR}/{name}"
    lr = LR_ADAPTER if Method(s.method).low_rank else LR_FULL
    cfg = litgpt_config(e, model_ref, out, steps, _save_every(steps), lr, n_nodes, spot)
    setup, run = setup_and_run(e, model_ref, _yaml(cfg), out, n_nodes)
    return TrainRun("litgpt", setup, run, {"DATASET": ""})


# ---------------------------------------------------------------- ms-swift


def swift(e: JobEstimate, model_ref: str, name: str) -> TrainRun:
    from gpuplan.export.swift import swift_config

    s, out, cfg = _trainer_config(e, model_ref, name, "ms-swift", swift_config)
    writes = _config_files("swift.yaml", cfg, s)
    extras = (["deepspeed"] if s.parallel.zero else []) + (["bitsandbytes"] if "quant_method" in cfg else [])
    setup = " ".join(["pip install", f"'ms-swift=={version('swift')}'", *extras])
    run = ("set -euo pipefail\n"
           ': "${DATASET:?set --env DATASET to a Hugging Face dataset id or a local dataset file}"\n'
           + writes +
           f"LAST=$(ls -d {out}/checkpoint-* 2>/dev/null | sort -V | tail -n1 || true)\n"
           f"{_launch_env()} swift sft swift.yaml --dataset \"$DATASET\" "
           '${LAST:+--resume_from_checkpoint "$LAST"}\n')
    return TrainRun("swift", setup, run, {"DATASET": ""})


# ---------------------------------------------------------------- Axolotl


def axolotl(e: JobEstimate, model_ref: str, name: str) -> TrainRun:
    from gpuplan.export.axolotl import axolotl_config

    s, _, cfg = _trainer_config(e, model_ref, name, "Axolotl", axolotl_config)
    writes = _config_files("axolotl.yaml", cfg, s)
    extras = ",".join((["deepspeed"] if s.parallel.zero else []) + (["flash-attn"] if s.flash_attention else []))
    pinned = f"axolotl=={version('axolotl')}"
    setup = f"pip install '{pinned}'\n"
    if extras:  # flash-attn builds against the torch installed first (Axolotl's README: --no-build-isolation)
        setup += f"pip install --no-build-isolation '{pinned.replace('==', f'[{extras}]==')}'\n"
    run = ("set -euo pipefail\n"
           ': "${DATASET:?set --env DATASET to a Hugging Face dataset id or a local file (DATASET_TYPE: its '
           'Axolotl prompt format)}"\n'
           + writes +
           "cat >> axolotl.yaml <<GPUPLAN_EOF\ndatasets:\n  - path: \"$DATASET\"\n    type: \"$DATASET_TYPE\"\n"
           "GPUPLAN_EOF\n"
           f"axolotl train axolotl.yaml --launcher torchrun -- {_TORCHRUN}\n")
    return TrainRun("axolotl", setup, run, {"DATASET": "", "DATASET_TYPE": "alpaca"})


# ---------------------------------------------------------------- torchtune


def torchtune(e: JobEstimate, model_ref: str, name: str) -> TrainRun:
    from gpuplan.export.torchtune import setup_and_run, torchtune_config

    s = e.setup
    assert isinstance(s, TrainSetup)
    steps = _steps(e, s)
    out = f"{CKPT_DIR}/{name}"
    cfg = torchtune_config(e, out, steps, LR_ADAPTER if Method(s.method).low_rank else LR_FULL)
    setup, run = setup_and_run(e, model_ref, _yaml(cfg), out)
    return TrainRun("torchtune", setup, run, {"DATASET": ""})


# ---------------------------------------------------------------- Unsloth


def unsloth(e: JobEstimate, model_ref: str, name: str) -> TrainRun:
    """Unsloth's script (written beside the run) with the planned settings; it finds the newest checkpoint in the
    bucket's folder itself."""
    from gpuplan.export.unsloth import SCRIPT, unsloth_config, unsloth_script

    _, _, calls = _trainer_config(e, model_ref, name, "Unsloth", unsloth_config)
    pinned = version("unsloth")
    setup = f"pip install 'unsloth=={pinned}' 'unsloth_zoo=={pinned}'"
    run = ("set -euo pipefail\n"
           ': "${DATASET:?set --env DATASET to a Hugging Face dataset id or a local dataset folder}"\n'
           f"cat > {SCRIPT} <<'GPUPLAN_EOF'\n{unsloth_script(calls).rstrip()}\nGPUPLAN_EOF\n"
           f"python {SCRIPT}\n")
    return TrainRun("unsloth", setup, run, {"DATASET": ""})


# ---------------------------------------------------------------- DeepSpeed-Chat


def deepspeed_chat(e: JobEstimate, model_ref: str, name: str, spot: bool) -> TrainRun:
    """DeepSpeed-Chat's step-1 script with the planned flags; it writes the model to the bucket when it ends."""
    from gpuplan.export.deepspeed_chat import script_args, setup_and_run

    s = e.setup
    assert isinstance(s, TrainSetup)
    lr = LR_ADAPTER if Method(s.method).low_rank else LR_FULL
    setup, run = setup_and_run(script_args(e, model_ref, f"{CKPT_DIR}/{name}", lr, spot))
    return TrainRun("deepspeed", setup, run, {"DATASET": "", "DATASET_DIR": "data"})


# ---------------------------------------------------------------- LLM Foundry


def llm_foundry(e: JobEstimate, model_ref: str, name: str) -> TrainRun:
    """LLM Foundry's train script with the planned config; Composer resumes from the newest checkpoint on the
    bucket."""
    from gpuplan.export.llmfoundry import foundry_config, setup_and_run

    s = e.setup
    assert isinstance(s, TrainSetup)
    pretrain = e.job.task is Task.PRETRAIN
    lr = LR_PRETRAIN if pretrain else LR_ADAPTER if Method(s.method).low_rank else LR_FULL
    cfg = foundry_config(e, model_ref, name, f"{CKPT_DIR}/{name}", _save_every(_steps(e, s)), lr)
    setup, run = setup_and_run(_yaml(cfg), pretrain)
    envs = {"DATA_REMOTE": ""} if pretrain else {"DATASET": "", "DATASET_SPLIT": "train"}
    return TrainRun("llm-foundry", setup, run, envs)


# ---------------------------------------------------------------- torchtitan


def torchtitan(e: JobEstimate, model_ref: str, name: str) -> TrainRun:
    from gpuplan.export.torchtitan import setup_and_run

    s = e.setup
    assert isinstance(s, TrainSetup)
    steps = _steps(e, s)
    setup, run = setup_and_run(e, model_ref, steps, f"{CKPT_DIR}/{name}", _save_every(steps))
    return TrainRun("torchtitan", setup, run, {"DATASET": "c4"})  # DATASET_PATH (a local copy): --env, optional


def _config_files(path: str, cfg: dict[str, Any], s: TrainSetup) -> str:
    """Shell lines that write ``cfg`` as YAML to ``path`` and, for a ZeRO plan, the DeepSpeed config it names beside
    it, each as it is (a quoted here-document: nothing expanded)."""
    files = [(path, _yaml(cfg))]
    if s.parallel.zero:
        files.append((cfg["deepspeed"], _json(deepspeed_config(s))))
    return "".join(f"cat > {name} <<'GPUPLAN_EOF'\n{text.rstrip()}\nGPUPLAN_EOF\n" for name, text in files)


def _json(d: dict[str, Any]) -> str:
    import json

    return json.dumps(d, indent=2)


# ---------------------------------------------------------------- Megatron-LM


def _model_args(m: ModelSpec) -> dict[str, str | None]:
    unsupported = [what for what, yes in (
        ("mixture-of-experts layers", m.is_moe), ("multi-head latent attention", m.is_mla),
        (f"{m.positional} positions", m.positional != "rope"), ("sliding-window layers", m.n_sliding_layers > 0),
        ("an encoder-only stack", m.encoder_only), ("parallel attention blocks", m.parallel_attn)) if yes]
    if unsupported:
        raise InputError("--export", f"the Megatron-LM export describes dense RoPE decoders; {m.name} has "
                         f"{', '.join(unsupported)}.", "write the model's Megatron-LM arguments by hand (its "
                         "examples/ folder has recipes for MoE and MLA models).")
    args: dict[str, str | None] = {
        "--num-layers": str(m.n_layers), "--hidden-size": str(m.hidden), "--num-attention-heads": str(m.n_heads),
        "--ffn-hidden-size": str(m.ffn_hidden), "--max-position-embeddings": str(m.max_positions),
        "--position-embedding-type": "rope", "--normalization": "LayerNorm" if m.norm_bias else "RMSNorm"}
    if m.n_kv_heads != m.n_heads:
        args |= {"--group-query-attention": None, "--num-query-groups": str(m.n_kv_heads)}
    if m.head_dim * m.n_heads != m.hidden:
        args["--kv-channels"] = str(m.head_dim)
    if m.gated_mlp:
        args["--swiglu"] = None
    if not m.tied_embeddings:
        args["--untie-embeddings-and-output-weights"] = None
    if not (m.qkv_bias or m.out_bias or m.mlp_bias):
        args["--disable-bias-linear"] = None
    elif m.qkv_bias and not (m.out_bias or m.mlp_bias):
        args |= {"--disable-bias-linear": None, "--add-qkv-bias": None}
    if m.qk_norm:
        args["--qk-layernorm"] = None
    return args


def _parallel_args(s: TrainSetup) -> dict[str, str | None]:
    p = s.parallel
    args: dict[str, str | None] = {"--tensor-model-parallel-size": str(p.tp),
                                   "--pipeline-model-parallel-size": str(p.pp),
                                   "--context-parallel-size": str(p.cp)}
    if p.tp > 1 and p.sequence_parallel:
        args["--sequence-parallel"] = None
    if p.zero == 1:
        args["--use-distributed-optimizer"] = None  # optimizer states sharded over data parallel ranks
    elif p.zero in (2, 3):
        args |= {"--use-megatron-fsdp": None,
                 "--data-parallel-sharding-strategy": "optim_grads" if p.zero == 2 else "optim_grads_params"}
    if s.recompute == Recompute.SELECTIVE:
        args["--recompute-granularity"] = "selective"
    elif s.recompute == Recompute.FULL:
        args |= {"--recompute-granularity": "full", "--recompute-method": "uniform", "--recompute-num-layers": "1"}
    return args


def megatron_args(e: JobEstimate, model_ref: str, name: str) -> dict[str, str | None]:
    """``pretrain_gpt.py`` arguments for the planned model, layout, batch and length (data path added at run)."""
    s = e.setup
    assert isinstance(s, TrainSetup)
    if s.optimizer not in ("adamw", "sgd"):
        raise InputError("--export", f"Megatron-LM has no '{s.optimizer}' optimizer.", "plan with --optimizer "
                         "adamw.")
    by_precision: dict[str, dict[str, str | None]] = {
        "bf16-mixed": {"--bf16": None}, "fp16-mixed": {"--fp16": None},
        "fp8-mixed": {"--bf16": None, "--fp8-format": "hybrid"},
        # Megatron-LM's FP4 arguments (megatron/training/arguments.py: --fp4-format e2m1, --fp4-recipe nvfp4)
        "fp4-mixed": {"--bf16": None, "--fp4-format": "e2m1", "--fp4-recipe": "nvfp4"}}
    precision = by_precision.get(s.precision)
    if precision is None:
        raise InputError("--export", f"Megatron-LM trains in mixed precision, not {s.precision}.",
                         "plan with bf16 mixed precision.")
    global_batch = s.micro_batch * s.grad_accum * s.parallel.dp
    steps = _steps(e, s)
    args: dict[str, str | None] = {**_model_args(e.model), **_parallel_args(s), **precision,
            "--seq-length": str(s.seq_len), "--micro-batch-size": str(s.micro_batch),
            "--global-batch-size": str(global_batch), "--train-samples": str(steps * global_batch),
            "--optimizer": "adam" if s.optimizer == "adamw" else "sgd", "--lr": f"{LR_PRETRAIN:g}",
            "--min-lr": f"{LR_PRETRAIN / 10:g}", "--lr-decay-style": "cosine",
            "--lr-warmup-samples": str(max(global_batch, steps * global_batch // 100)), "--weight-decay": "0.1",
            "--clip-grad": "1.0", "--tokenizer-type": "HuggingFaceTokenizer", "--tokenizer-model": model_ref,
            "--save": f"{CKPT_DIR}/{name}", "--load": f"{CKPT_DIR}/{name}",
            "--save-interval": str(_save_every(steps)), "--exit-signal-handler": None, "--log-interval": "10"}
    check_options("megatron", args)
    return args


def megatron(e: JobEstimate, model_ref: str, n_nodes: int, name: str) -> TrainRun:
    args = megatron_args(e, model_ref, name)
    argv: list[str] = []
    for flag, value in args.items():
        argv += [flag] if value is None else [flag, value]
    commit = version("megatron")
    setup = (f"git clone {MEGATRON_REPO} Megatron-LM && git -C Megatron-LM checkout {commit}\n"
             "pip install -e ./Megatron-LM transformers\n"
             "pip install --no-build-isolation 'transformer_engine[pytorch]'\n")
    launch = f"torchrun {_TORCHRUN}"
    run = ("set -euo pipefail\n"
           ': "${DATA_PATH:?set --env DATA_PATH to the prefix tools/preprocess_data.py wrote, with this tokenizer}"\n'
           f"cd Megatron-LM\n{launch} pretrain_gpt.py {shlex.join(argv)} --data-path \"$DATA_PATH\"\n")
    del n_nodes  # the node count reaches torchrun through SKYPILOT_NUM_NODES
    return TrainRun("megatron", setup, run, {"DATA_PATH": ""})


def known_keys(tool: str) -> frozenset[str]:
    return frozenset(flags(tool)["options"])
