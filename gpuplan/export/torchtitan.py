"""Pretraining hand-off for ``--framework torchtitan``: ``torchrun -m torchtitan.train`` with the recipe of the planned
model and the plan's layout, batch, length, recomputation and sharding as torchtitan's own flags.

torchtitan 0.3.0 builds its job from a named recipe (``--module llama3 --config llama3_8b``: a function of the
module's ``config_registry`` returning ``Trainer.Config``) and command-line overrides parsed by tyro
(``--section.key value``). Every flag written is one that release's parser accepts
(``gpuplan/data/flags/torchtitan.json``, recorded by ``scripts/record_flags.py``; the tests parse each export with
torchtitan's own ``ConfigManager``). With ``--checkpoint.enable`` torchtitan saves every ``--checkpoint.interval``
steps into ``DUMP/checkpoint/step-N`` and, started again, loads the latest step there (``load_step`` -1): a spot
relaunch resumes where the last checkpoint was.
"""

from __future__ import annotations

import math
import shlex

from gpuplan.errors import InputError
from gpuplan.estimate.job import JobEstimate
from gpuplan.export.registry import check_options, version
from gpuplan.types import TrainSetup

# gpuplan preset -> (torchtitan module, recipe), from torchtitan 0.3.0 torchtitan/models/{llama3,qwen3}/
# config_registry.py; tests/test_export_frameworks.py checks each recipe's model against the preset's config.json.
# llama3_405b is left out: it trains in float8 (torchao converters), which a bf16 plan did not price.
RECIPES = {
    "Llama-3.1-8B": ("llama3", "llama3_8b"), "Llama-3.1-70B": ("llama3", "llama3_70b"),
    "Qwen3-0.6B": ("qwen3", "qwen3_0_6b"),
    "Qwen3-1.7B": ("qwen3", "qwen3_1_7b"), "Qwen3-14B": ("qwen3", "qwen3_14b"), "Qwen3-32B": ("qwen3", "qwen3_32b"),
}
_AC = {"none": "activation-checkpoint:none", "selective": "activation-checkpoint:selective",
       "full": "activation-checkpoint:full"}
_AT_RUN = ("--hf-assets-path", "--dataloader.dataset", "--dataloader.dataset-path")  # added by the run script
LR_WARMUP_SHARE = 0.01  # as the Megatron-LM export: warm-up over 1 % of the steps


def torchtitan_args(e: JobEstimate, steps: int, dump: str, save_every: int) -> list[str]:
    """``torchtitan.train``'s arguments for the planned job (the tokenizer's folder and the dataset added at run)."""
    s = e.setup
    assert isinstance(s, TrainSetup)
    recipe = RECIPES.get(e.model.name)
    if recipe is None:
        raise InputError("--export", f"torchtitan {version('torchtitan')} has no recipe for {e.model.name}.",
                         f"plan one of {', '.join(RECIPES)} with --framework torchtitan, or plan with --framework "
                         "megatron (which the export describes from the model's architecture).")
    p = s.parallel
    if s.optimizer != "adamw":
        raise InputError("--export", f"the torchtitan recipes train with AdamW, not {s.optimizer}.",
                         "plan with --optimizer adamw.")
    if s.precision not in ("bf16-mixed", "bf16"):
        raise InputError("--export", f"the torchtitan export trains in bf16 (mixed or pure), not {s.precision}.",
                         "plan with bf16 mixed precision.")
    if p.offload_optimizer:
        raise InputError("--export", "torchtitan offloads whole FSDP shards, not only the optimizer states.",
                         "plan without optimizer offload.")
    pipelined = p.pp > 1  # the pipeline runs the accumulation's micro-batches itself
    local = s.micro_batch * (s.grad_accum if pipelined else 1)
    flags: dict[str, str | None] = {
        "--module": recipe[0], "--config": recipe[1],
        "--parallelism.tensor-parallel-degree": str(p.tp), "--parallelism.pipeline-parallel-degree": str(p.pp),
        "--parallelism.context-parallel-degree": str(p.cp),
        # ZeRO-0 is DDP (replicas); ZeRO-1/2 shard without resharding after forward, ZeRO-3 reshards (FSDP2)
        "--parallelism.data-parallel-replicate-degree": str(p.dp if p.zero == 0 else 1),
        "--parallelism.data-parallel-shard-degree": str(1 if p.zero == 0 else p.dp),
        "--parallelism.fsdp-reshard-after-forward": "always" if p.zero == 3 else "never",
        "--training.local-batch-size": str(local),
        "--training.global-batch-size": str(s.micro_batch * s.grad_accum * p.dp),
        "--training.seq-len": str(s.seq_len), "--training.steps": str(steps),
        "--training.dtype": "bfloat16" if s.precision == "bf16" else "float32",
        "--lr-scheduler.warmup-steps": str(max(1, math.ceil(steps * LR_WARMUP_SHARE))),
        "--dump-folder": dump, "--checkpoint.enable": None, "--checkpoint.folder": "checkpoint",
        "--checkpoint.interval": str(save_every), "--checkpoint.keep-latest-k": "2",
        "--checkpoint.no-last-save-model-only": None}
    if pipelined:  # torchtitan 0.3.0 captures no CUDA graphs with a pipeline (trainer.py refuses the pair)
        flags |= {"--parallelism.pipeline-parallel-microbatch-size": str(s.micro_batch),
                  "--training.disable-cuda-graphs": None}
    if p.tp > 1:
        flags["--parallelism.enable-sequence-parallel" if p.sequence_parallel else
              "--parallelism.no-enable-sequence-parallel"] = None
    # --module and --config are ConfigManager's own (the recipe), read before tyro parses the rest
    check_options("torchtitan", {**{k: None for k in (*flags, *_AT_RUN) if k not in ("--module", "--config")},
                                 _AC[s.recompute]: None})
    argv: list[str] = []
    for flag, value in flags.items():
        argv += [flag] if value is None else [flag, value]
    return [*argv, _AC[s.recompute]]  # the checkpointing choice is tyro's subcommand: it comes last


def setup_and_run(e: JobEstimate, model_ref: str, steps: int, dump: str, save_every: int) -> tuple[str, str]:
    """The setup (torchtitan and the model's tokenizer files) and the run: torchrun on every node, the dataset from
    ``DATASET`` (a name in torchtitan's ``DATASETS``: c4 streams allenai/c4) and ``DATASET_PATH`` (a local copy)."""
    *flags, ac = torchtitan_args(e, steps, dump, save_every)
    setup = (f"pip install 'torchtitan=={version('torchtitan')}' 'huggingface_hub[cli]'\n"
             f"hf download {shlex.quote(model_ref)} --include 'tokenizer*' 'special_tokens_map.json' "
             "'config.json' --local-dir assets/model\n")
    launch = ("torchrun --nproc-per-node \"$SKYPILOT_NUM_GPUS_PER_NODE\" --nnodes \"$SKYPILOT_NUM_NODES\" "
              "--node-rank \"$SKYPILOT_NODE_RANK\" --master-addr \"$(echo \"$SKYPILOT_NODE_IPS\" | head -n1)\" "
              "--master-port 29500")
    run = ("set -euo pipefail\n"
           f"{launch} -m torchtitan.train {shlex.join(flags)} --hf-assets-path assets/model "
           '--dataloader.dataset "$DATASET" ${DATASET_PATH:+--dataloader.dataset-path "$DATASET_PATH"} '
           f"{ac}\n")
    return setup, run
