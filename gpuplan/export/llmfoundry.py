"""Training hand-off for ``--framework llm-foundry``: LLM Foundry's ``scripts/train/train.py`` (a YAML train config
read by ``llmfoundry.command_utils.train_from_yaml``), started by Composer's launcher on every node, with the planned
model, method, rank, micro-batch, accumulation, FSDP layout, recomputation and precision.

Config keys and facts are those of llm-foundry 0.22.0 (``llmfoundry/utils/config_utils.py`` ``TrainConfig``, the
dataclass every config is checked against, unknown keys refused) and Composer 0.32.1 (``FSDPConfig``), the releases
the tests validate each export with. What the script decides itself, and the export therefore matches or refuses:

- it derives the accumulation from ``global_train_batch_size`` / (world size × ``device_train_microbatch_size``):
  the export writes the planned micro-batch × accumulation × data-parallel ranks.
- on one GPU it drops ``fsdp_config`` (``train.py``: "not applicable for single-GPU training") and with it
  activation checkpointing, which Composer applies through FSDP: a one-GPU plan that recomputes is refused.
- FSDP shards as ZeRO does: ``FULL_SHARD`` (ZeRO-3), ``SHARD_GRAD_OP`` (ZeRO-2), ``NO_SHARD`` (replicas); it has no
  optimizer-only sharding (ZeRO-1) and no optimizer-only offload.
- ``peft_config`` is LoRA only (``hf_base.py`` ``get_peft_config``), and ``load_in_8bit`` raises for training
  (``train.py`` ``validate_config``): no QLoRA or quantized base. The base is loaded in fp32
  (``models/consts.py`` ``_MASTER_WEIGHTS_PRECISION``), and ``precision`` is Composer's autocast (``amp_bf16``,
  ``amp_fp16``).
- with ``run_name``, ``save_folder`` and ``autoresume: true`` Composer resumes from the newest checkpoint in the
  folder (on the bucket) after a preemption.
"""

from __future__ import annotations

import shlex
from typing import Any

from gpuplan.errors import InputError
from gpuplan.estimate.job import JobEstimate
from gpuplan.types import Method, Recompute, Task, TrainSetup

VERSION = "0.22.0"  # frameworks.csv's llm-foundry row cites the commit that became it (0.22.0.dev0)
REPO = "https://github.com/mosaicml/llm-foundry.git"
CONFIG = "train.yaml"
_SHARDING = {3: "FULL_SHARD", 2: "SHARD_GRAD_OP", 0: "NO_SHARD"}
_PRECISION = {"bf16-mixed": "amp_bf16", "fp16-mixed": "amp_fp16"}
_OPTIMIZER = {"adamw": "decoupled_adamw"}
# module names of Llama-style decoders for --lora-targets other than all-linear (transformers LlamaForCausalLM)
_LORA_MODULES = {"attention": ["q_proj", "k_proj", "v_proj", "o_proj"], "qv": ["q_proj", "v_proj"],
                 "mlp": ["gate_proj", "up_proj", "down_proj"]}
_LLAMA_STYLE = ("llama", "mistral", "qwen2", "qwen3", "gemma", "gemma2", "gemma3", "yi", "internlm2")


def _check(e: JobEstimate) -> None:
    s = e.setup
    assert isinstance(s, TrainSetup)
    p = s.parallel
    if p.tp > 1 or p.pp > 1 or p.cp > 1:
        raise InputError("--export", f"the plan splits the model with {p.describe()}; the llm-foundry export trains "
                         "with FSDP over data-parallel ranks only.", "plan with --max-gpus (fewer GPUs) or a GPU "
                         "with more memory so the model fits without tensor or pipeline parallelism.")
    if s.method not in (Method.FULL, Method.LORA):
        raise InputError("--method", f"llm-foundry trains full or with LoRA (its peft_config is LoRA only), not "
                         f"{s.method}.", "plan with --method lora or full, or with --framework trl or llama-factory "
                         "for QLoRA.")
    if s.base_quant:
        raise InputError("--method", f"llm-foundry loads the base unquantized (load_in_8bit raises in training), not "
                         f"{s.base_quant}.", "plan --method lora without --quant.")
    if p.offload_optimizer:
        raise InputError("--zero", "FSDP has no optimizer offload.", "plan without optimizer offload.")
    if p.zero not in _SHARDING:
        raise InputError("--zero", "FSDP shards everything (ZeRO-3), gradients and states (ZeRO-2) or nothing; it "
                         "has no ZeRO-1.", "plan with --zero 2 or 3.")
    if s.recompute == Recompute.SELECTIVE:
        raise InputError("--recompute", "llm-foundry checkpoints whole blocks or nothing.",
                         "plan with --recompute none or full.")
    if s.recompute == Recompute.FULL and p.n_gpus == 1:
        raise InputError("--recompute", "llm-foundry checkpoints activations through FSDP, which it drops on one GPU.",
                         "plan with --recompute none, or with --min-gpus 2.")
    if s.precision not in _PRECISION and not (s.precision == "bf16" and Method(s.method).low_rank):
        raise InputError("--precision", f"llm-foundry trains with fp32 master weights under autocast (amp_bf16, "
                         f"amp_fp16), not {s.precision}.", "plan with --precision bf16-mixed or fp16-mixed.")
    if s.optimizer not in _OPTIMIZER:
        raise InputError("--optimizer", f"the llm-foundry export trains with its decoupled_adamw, not "
                         f"{s.optimizer}.", "plan with --optimizer adamw.")
    if Method(s.method).low_rank and (s.lora_targets != "all-linear" or s.train_embeddings) \
            and e.model.model_type not in _LLAMA_STYLE:
        raise InputError("--lora-targets", f"the export names the modules LoRA adapts for Llama-style decoders; "
                         f"{e.model.name} ({e.model.model_type}) is not one.",
                         "plan with --lora-targets all-linear and without --train-embeddings.")


def _peft(s: TrainSetup) -> dict[str, Any]:
    """PEFT's ``LoraConfig`` arguments, as llm-foundry hands ``peft_config`` to it (alpha 2 × rank)."""
    peft: dict[str, Any] = {"peft_type": "LORA", "task_type": "CAUSAL_LM", "r": s.lora_rank,
                            "lora_alpha": 2 * s.lora_rank, "lora_dropout": s.lora_dropout,
                            "target_modules": _LORA_MODULES.get(s.lora_targets, "all-linear")}
    if s.train_embeddings:
        peft["modules_to_save"] = ["embed_tokens", "lm_head"]
    return peft


def _fsdp(s: TrainSetup) -> dict[str, Any]:
    return {"sharding_strategy": _SHARDING[s.parallel.zero], "mixed_precision": "PURE",
            "activation_checkpointing": s.recompute == Recompute.FULL, "activation_checkpointing_reentrant": False,
            "activation_cpu_offload": False, "limit_all_gathers": True}


def _duration(e: JobEstimate) -> str:
    """Whole epochs over the samples, or the token budget (Composer's time strings: ``2ep``, ``100000000tok``)."""
    j = e.job
    if j.samples:
        if not float(j.epochs).is_integer():
            raise InputError("--epochs", f"the llm-foundry export trains whole epochs over the samples, not "
                             f"{j.epochs}.", "plan with a whole number of --epochs, or with --tokens.")
        return f"{int(j.epochs)}ep"
    return f"{round(j.train_tokens)}tok"


def _loader(e: JobEstimate, s: TrainSetup) -> dict[str, Any]:
    """The training data: instruction samples (``finetuning``, the Hugging Face dataset set at run time) or, for
    pretraining, pre-tokenized MDS shards (``text``, streamed from ``DATA_REMOTE``)."""
    if e.job.task is Task.PRETRAIN:
        dataset: dict[str, Any] = {"remote": None, "local": "./mds-cache", "split": "train", "shuffle": True,
                                   "max_seq_len": s.seq_len}
        return {"name": "text", "dataset": dataset, "drop_last": True, "num_workers": 8}
    dataset = {"hf_name": None, "split": "train", "max_seq_len": s.seq_len, "decoder_only_format": True,
               "shuffle": True, "allow_pad_trimming": False}
    if not s.lengths_vary:
        dataset["packing_ratio"] = "auto"  # the plan sized packed sequences
    return {"name": "finetuning", "dataset": dataset, "drop_last": True, "num_workers": 8}


def foundry_config(e: JobEstimate, model_ref: str, name: str, save_folder: str, save_every_steps: int,
                   lr: float) -> dict[str, Any]:
    """The ``train.py`` YAML for the planned setup (the dataset is merged in on the command line at run time)."""
    s = e.setup
    assert isinstance(s, TrainSetup)
    _check(e)
    pretrain = e.job.task is Task.PRETRAIN
    multi = s.parallel.n_gpus > 1
    model: dict[str, Any] = {"name": "hf_causal_lm", "pretrained_model_name_or_path": model_ref,
                             "pretrained": not pretrain, "init_device": ("meta" if pretrain else "mixed")
                             if multi else "cpu", "use_auth_token": True, "attn_implementation": "sdpa"}
    if Method(s.method).low_rank:
        model["peft_config"] = _peft(s)
    cfg: dict[str, Any] = {
        "run_name": name, "max_seq_len": s.seq_len, "model": model,
        "tokenizer": {"name": model_ref, "kwargs": {"model_max_length": s.seq_len}},
        "train_loader": _loader(e, s),
        "optimizer": {"name": _OPTIMIZER[s.optimizer], "lr": lr, "betas": [0.9, 0.95], "eps": 1.0e-8,
                      "weight_decay": 0.1 if pretrain else 0.0},
        "scheduler": {"name": "cosine_with_warmup", "t_warmup": "0.01dur", "alpha_f": 0.1},
        "algorithms": {"gradient_clipping": {"clipping_type": "norm", "clipping_threshold": 1.0}},
        "max_duration": _duration(e),
        "global_train_batch_size": s.micro_batch * s.grad_accum * s.parallel.dp,
        "device_train_microbatch_size": s.micro_batch, "device_eval_batch_size": s.micro_batch,
        "precision": _PRECISION.get(s.precision, "amp_bf16"), "seed": 17,
        "save_folder": save_folder, "save_interval": f"{save_every_steps}ba", "save_num_checkpoints_to_keep": 2,
        "autoresume": True, "progress_bar": False, "log_to_console": True, "console_log_interval": "10ba",
        "callbacks": {"speed_monitor": {"window_size": 10}, "lr_monitor": {}}}
    if multi:
        cfg["fsdp_config"] = _fsdp(s)
    return cfg


# Composer's launcher on every node of a SkyPilot task: the world is every GPU of every node, this node's ranks
# start at its index × GPUs a node
_LAUNCHER = ('composer --world_size "$((SKYPILOT_NUM_NODES * SKYPILOT_NUM_GPUS_PER_NODE))" '
             '--nproc "$SKYPILOT_NUM_GPUS_PER_NODE" --node_rank "$SKYPILOT_NODE_RANK" '
             '--base_rank "$((SKYPILOT_NODE_RANK * SKYPILOT_NUM_GPUS_PER_NODE))" '
             '--master_addr "$(echo "$SKYPILOT_NODE_IPS" | head -n1)" --master_port 29500')


def setup_and_run(config_yaml: str, pretrain: bool) -> tuple[str, str]:
    """The setup (llm-foundry's release with PEFT, and its repository at the release tag for the train script) and
    the run: the config written as it is, then the launcher with the dataset merged in."""
    setup = (f"git clone --depth 1 --branch v{VERSION} {REPO} llm-foundry\n"
             f"pip install 'llm-foundry[peft]=={VERSION}'\n")
    if pretrain:
        need = (': "${DATA_REMOTE:?set --env DATA_REMOTE to the folder or bucket URL of MDS shards written by '
                'llm-foundry scripts/data_prep/convert_dataset_hf.py with this tokenizer}"\n')
        data = 'train_loader.dataset.remote="$DATA_REMOTE"'
    else:
        need = ': "${DATASET:?set --env DATASET to a Hugging Face dataset id with prompt/response columns}"\n'
        data = 'train_loader.dataset.hf_name="$DATASET" train_loader.dataset.split="$DATASET_SPLIT"'
    run = ("set -euo pipefail\n" + need +
           f"cat > {CONFIG} <<'GPUPLAN_EOF'\n{config_yaml.rstrip()}\nGPUPLAN_EOF\n"
           f"{_LAUNCHER} llm-foundry/scripts/train/train.py {shlex.quote(CONFIG)} {data}\n")
    return setup, run
