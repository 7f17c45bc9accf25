"""Fine-tuning hand-off for ``--framework deepspeed``: DeepSpeed-Chat's step-1 supervised fine-tuning script
(``training/step1_supervised_finetuning/main.py`` of deepspeedai/DeepSpeedExamples at the recorded revision), the
script gpuplan's ``deepspeed`` row of frameworks.csv was sized from, started by the DeepSpeed launcher with the
planned method, rank, micro-batch, accumulation, recomputation, ZeRO stage and offload.

Every flag written is one the script's parser accepts (``gpuplan/data/flags/deepspeed_chat.json``: its
``add_argument`` calls, read with ``ast`` by ``scripts/record_flags.py``). What the script decides itself, and the
export therefore matches or refuses (applications/DeepSpeed-Chat at that revision):

- it builds its DeepSpeed config in code (``dschat/utils/ds_utils.py`` ``get_train_ds_config``), from
  ``--zero_stage``, ``--dtype`` (fp16 or bf16) and ``--offload``, which sets both ``offload_optimizer`` and
  ``offload_param`` to the CPU (DeepSpeed reads ``offload_param`` only at ZeRO-3); ``main.py`` adds
  ``train_micro_batch_size_per_gpu`` = ``--per_device_train_batch_size`` and ``train_batch_size`` = that ×
  world size × ``--gradient_accumulation_steps``. :func:`ds_config` is the part of it that carries the plan.
- the optimizer is DeepSpeed's ``FusedAdam`` (``DeepSpeedCPUAdam`` with ``--offload``), both AdamW.
- LoRA (``--lora_dim``) replaces every ``nn.Linear`` whose module name contains ``--lora_module_name`` (its llama2
  scripts pass ``layers.``), with no dropout and scale 1/rank; only ``--only_optimize_lora`` freezes the base.
- ``--data_split`` shares a dataset's rows between the three RLHF steps (default 2,4,4: step 1 sees a fifth);
  the export gives step 1 all of them (10,0,0, as the script itself does for ``--sft_only_data_path``).
- it pads every sample to ``--max_seq_len`` and trains whole epochs (``--num_train_epochs`` is an integer).
- it saves the model once, after the last epoch, and cannot resume: so the export is written only for on-demand
  capacity, which is not preempted (a restart after a failure starts over, as the run says).
"""

from __future__ import annotations

import shlex
from typing import Any

from gpuplan.errors import InputError
from gpuplan.estimate.job import JobEstimate
from gpuplan.export.registry import check_options, version
from gpuplan.types import Method, Recompute, TrainSetup

REPO = "https://github.com/deepspeedai/DeepSpeedExamples.git"
CHAT = "DeepSpeedExamples/applications/DeepSpeed-Chat"
STEP1 = "training/step1_supervised_finetuning"
DEEPSPEED = "0.19.8"  # the release the tests parse the config and launcher with
# what DeepSpeed-Chat at the recorded revision runs on: its requirements.txt asks transformers>=4.31.0,!=4.33.2 and
# imports transformers.integrations.deepspeed.HfDeepSpeedConfig; 4.48.3 is the release current at that revision
TRANSFORMERS = "4.48.3"
# gpuplan's LoRA targets -> the module-name part DeepSpeed-Chat adapts (Llama-style names: model.layers.N.self_attn.*
# and model.layers.N.mlp.*); "layers." is what its llama2 scripts pass
_LORA_SCOPE = {"all-linear": "layers.", "attention": "self_attn.", "mlp": "mlp."}
_DTYPE = {"bf16-mixed": "bf16", "bf16": "bf16", "fp16-mixed": "fp16"}
_LLAMA_STYLE = ("llama", "mistral", "qwen2", "qwen3", "gemma", "gemma2", "gemma3", "yi", "internlm2")


def _check(e: JobEstimate, spot: bool) -> None:
    s = e.setup
    assert isinstance(s, TrainSetup)
    p = s.parallel
    if spot:
        raise InputError("--export", "DeepSpeed-Chat's step-1 script saves the model only after its last epoch and "
                         "cannot resume, and this plan rents spot capacity: a preemption would start the run over.",
                         "plan with --no-spot (on-demand capacity is not preempted), or with --framework "
                         "llama-factory or trl, which resume from the bucket.")
    if p.tp > 1 or p.pp > 1 or p.cp > 1 or p.ep > 1:
        raise InputError("--export", f"the plan splits the model with {p.describe()}; DeepSpeed-Chat's step 1 "
                         "trains with data parallelism and ZeRO only.", "plan with --max-gpus (fewer GPUs) or a GPU "
                         "with more memory so the model fits without tensor parallelism.")
    if s.method not in (Method.FULL, Method.LORA):
        raise InputError("--method", f"DeepSpeed-Chat's step 1 trains full or with its own LoRA, not {s.method}.",
                         "plan with --method full or lora, or with --framework llama-factory for the others.")
    if s.base_quant:
        raise InputError("--quant", "DeepSpeed-Chat loads the base in 16-bit; it has no quantized base.",
                         "plan --method lora without --quant.")
    if Method(s.method).low_rank:
        _check_lora(e, s)
    if p.offload_optimizer and p.zero == 0:
        raise InputError("--export", "DeepSpeed offloads optimizer states only with ZeRO 1-3.",
                         "plan with ZeRO, or without optimizer offload.")
    if p.offload_optimizer and p.zero == 3:
        raise InputError("--export", "DeepSpeed-Chat's --offload moves the parameters to the CPU too under ZeRO-3, "
                         "which this plan did not price.", "plan with ZeRO-2 and optimizer offload, or without "
                         "offload.")
    if s.recompute == Recompute.SELECTIVE:
        raise InputError("--recompute", "DeepSpeed-Chat checkpoints whole layers (--gradient_checkpointing) or "
                         "nothing.", "plan with --recompute full or none.")
    if s.precision not in _DTYPE:
        raise InputError("--export", f"DeepSpeed-Chat trains in fp16 or bf16 (--dtype), not {s.precision}.",
                         "plan with bf16 mixed precision.")
    if s.optimizer != "adamw":
        raise InputError("--optimizer", f"DeepSpeed-Chat trains with DeepSpeed's FusedAdam (AdamW), not "
                         f"{s.optimizer}.", "plan with --optimizer adamw.")
    j = e.job
    if not j.samples or not float(j.epochs).is_integer():
        raise InputError("--epochs", "DeepSpeed-Chat trains whole epochs over the dataset (--num_train_epochs is an "
                         "integer) and has no step budget.", "plan with --samples and a whole number of --epochs.")


def _check_lora(e: JobEstimate, s: TrainSetup) -> None:
    if s.lora_targets not in _LORA_SCOPE or e.model.model_type not in _LLAMA_STYLE:
        raise InputError("--lora-targets", f"DeepSpeed-Chat adapts the linear layers whose names contain one "
                         f"string; the export knows those of Llama-style decoders for {', '.join(_LORA_SCOPE)}, "
                         f"not --lora-targets {s.lora_targets} on {e.model.name} ({e.model.model_type}).",
                         "plan with --lora-targets all-linear on a Llama-style model, or with --framework trl.")
    if s.train_embeddings or s.lora_dropout:
        raise InputError("--export", "DeepSpeed-Chat's LoRA trains no embeddings and has no dropout.",
                         "plan without --train-embeddings (and LoRA dropout 0), or with --framework trl.")


def script_args(e: JobEstimate, model_ref: str, out_dir: str, lr: float, spot: bool = False) -> list[str]:
    """``main.py``'s argv for the planned setup (the dataset is added at run time from ``DATASET``)."""
    s = e.setup
    assert isinstance(s, TrainSetup)
    _check(e, spot)
    args: dict[str, str | None] = {
        "--model_name_or_path": model_ref, "--data_split": "10,0,0",
        "--per_device_train_batch_size": str(s.micro_batch), "--per_device_eval_batch_size": str(s.micro_batch),
        "--gradient_accumulation_steps": str(s.grad_accum), "--max_seq_len": str(s.seq_len),
        "--num_train_epochs": str(int(e.job.epochs)), "--learning_rate": f"{lr:g}",
        "--dtype": _DTYPE[s.precision], "--zero_stage": str(s.parallel.zero), "--output_dir": out_dir}
    if s.recompute == Recompute.FULL:
        args["--gradient_checkpointing"] = None
    if s.parallel.offload_optimizer:
        args["--offload"] = None
    if Method(s.method).low_rank:
        args |= {"--lora_dim": str(s.lora_rank), "--lora_module_name": _LORA_SCOPE[s.lora_targets],
                 "--only_optimize_lora": None, "--lora_learning_rate": f"{lr:g}"}
    check_options("deepspeed_chat", {k: v if k == "--dtype" else None for k, v in args.items()})
    argv: list[str] = []
    for flag, value in args.items():
        argv += [flag] if value is None else [flag, value]
    return argv


def ds_config(s: TrainSetup) -> dict[str, Any]:
    """What of the DeepSpeed config the script builds from these flags carries the plan (see the module
    docstring): the batch sizes for ``s.parallel.dp`` ranks, the ZeRO stage, the offload and the dtype."""
    device = "cpu" if s.parallel.offload_optimizer else "none"
    dtype = "bfloat16" if _DTYPE[s.precision] == "bf16" else "fp16"
    return {"train_micro_batch_size_per_gpu": s.micro_batch,
            "train_batch_size": s.micro_batch * s.parallel.dp * s.grad_accum,
            "zero_optimization": {"stage": s.parallel.zero, "offload_param": {"device": device},
                                  "offload_optimizer": {"device": device}},
            dtype: {"enabled": True}, "gradient_clipping": 1.0}


# the DeepSpeed launcher on every node of a SkyPilot task, each node started by itself (no ssh between them)
_LAUNCHER = ("deepspeed --no_ssh --num_nodes \"$SKYPILOT_NUM_NODES\" --num_gpus \"$SKYPILOT_NUM_GPUS_PER_NODE\" "
             "--node_rank \"$SKYPILOT_NODE_RANK\" --master_addr \"$(echo \"$SKYPILOT_NODE_IPS\" | head -n1)\" "
             "--master_port 29500")


def setup_and_run(argv: list[str]) -> tuple[str, str]:
    """The setup (the script's repository at the recorded revision, installed with DeepSpeed) and the run."""
    rev = version("deepspeed_chat")
    setup = (f"git clone {REPO} DeepSpeedExamples && git -C DeepSpeedExamples checkout {rev}\n"
             f"pip install 'deepspeed=={DEEPSPEED}' 'transformers=={TRANSFORMERS}' -e {CHAT}\n")
    run = ("set -euo pipefail\n"
           ': "${DATASET:?set --env DATASET to a dataset DeepSpeed-Chat names (dschat/utils/data/raw_datasets.py) '
           'or local/jsonfile with DATASET_DIR holding train.json and eval.json}"\n'
           f'if [ "$DATASET" = local/jsonfile ]; then mkdir -p {CHAT}/data && cp "$DATASET_DIR"/train.json '
           f'"$DATASET_DIR"/eval.json {CHAT}/data/; fi\n'
           "# DeepSpeed-Chat saves the model after the last epoch and cannot resume: a restart after a failure starts "
           "over (on-demand capacity is not preempted)\n"
           f"cd {CHAT}/{STEP1}\n"
           f"{_LAUNCHER} main.py {shlex.join(argv)} --data_path \"$DATASET\" --deepspeed\n")
    return setup, run
