"""SkyPilot training tasks for the framework the plan was sized for (issue 14, part 1): ``--framework trl`` writes
TRL's ``sft`` script with a YAML config, ``torchtitan`` torchtitan's trainer with its flags, ``litgpt`` LitGPT's
``finetune_full``, ``swift`` ms-swift's ``swift sft``, ``axolotl`` ``axolotl train``, ``torchtune`` ``tune run``.
Each export is read by the tool itself, installed by the test extra or (LitGPT, ms-swift, Axolotl, torchtune)
tests/requirements-export-nodeps.txt: TRL 1.16.0's ``TrlParser``, torchtitan 0.3.0's ``ConfigManager``, LitGPT
0.5.13's jsonargparse CLI (then its own argument check), ms-swift 4.6.0's YAML reader and ``HfArgumentParser`` over
``SftArguments``, Axolotl 0.19.0's ``validate_config``, torchtune 0.6.1's ``tune run`` and config parsers and
``config.validate`` (tests/isolated_torchtune, in an interpreter of their own); the option records the export checks
against at run time are compared with those parsers, and the recipe and model tables with torchtitan's recipes,
LitGPT's configs and torchtune's builders. ``unsloth`` writes a script (FastLanguageModel + TRL's SFTTrainer):
the tests compile it, build its SFTConfig with the installed TRL, and check every keyword it gives Unsloth against
Unsloth 2026.10.9's own signatures, read from its source with ``ast`` (it cannot be imported without an NVIDIA GPU)."""

from __future__ import annotations

import ast
import importlib
import json
import os
import re
import shlex
import sys
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
import yaml
from test_export import (
    FINETUNE_JOB,
    FULL,
    FULL_JOB,
    LLAMA_8B,
    PRETRAIN,
    PRETRAIN_JOB,
    QLORA,
    REPO,
    _candidate,
    _offer,
    _skypilot_load,
)

from gpuplan.catalog import load_catalog
from gpuplan.errors import InputError
from gpuplan.export import registry, render, skypilot
from gpuplan.export.torchtitan import RECIPES
from gpuplan.export.train import EXPORTED
from gpuplan.plan.planner import Candidate
from gpuplan.types import Parallelism

DATA = Path(__file__).parent.parent / "gpuplan" / "data"


def _with_framework(c: Candidate, fw: str, **setup: Any) -> Candidate:
    e = c.estimate
    return replace(c, estimate=replace(e, job=replace(e.job, framework=fw), setup=replace(e.setup, **setup)))


def _trl_qlora(**setup: Any) -> Candidate:
    offer = _offer("RunPod", "RTX4090", 2, region="(community cloud)")
    return _with_framework(_candidate(FINETUNE_JOB, QLORA, "RTX4090", 2, offer), "trl", **setup)


def _trl_full() -> Candidate:
    offer = _offer("Lambda", "A100-80GB", 8, "on-demand", "gpu_8x_a100_80gb_sxm4")
    setup = replace(FULL, parallel=Parallelism(dp=8, zero=2), recompute="full")
    return _with_framework(_candidate(FULL_JOB, setup, "A100-80GB", 8, offer), "trl")


def _titan(**setup: Any) -> Candidate:
    c = _candidate(PRETRAIN_JOB, PRETRAIN, "H100", 64, _offer("AWS", "H100", 8, "spot", "p5.48xlarge"))
    return _with_framework(c, "torchtitan", framework="torchtitan", **setup)


def _task(c: Candidate) -> dict[str, Any]:
    return yaml.safe_load(render(c, "skypilot", REPO))


def _heredoc(run: str, name: str) -> str:
    return run.split(f"cat > {name} <<'GPUPLAN_EOF'\n")[1].split("\nGPUPLAN_EOF")[0]


# ---------------------------------------------------------------- TRL


@pytest.fixture(autouse=True)
def _a_gpu_with_bf16(monkeypatch: pytest.MonkeyPatch) -> None:
    """TrainingArguments refuses bf16 where no GPU has it; the exported run is on one (an H100, a 4090)."""
    monkeypatch.setattr("transformers.training_args.is_torch_bf16_gpu_available", lambda: True)


@pytest.fixture(autouse=True)
def _in_tmp(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.chdir(tmp_path)


def _trl_parse(c: Candidate, tmp_path: Path) -> tuple[Any, Any, Any]:
    """The exported config read by ``trl sft``'s own parser, unknown keys refused."""
    from trl.scripts.sft import make_parser

    run = _task(c)["run"]
    config = tmp_path / "sft.yaml"
    config.write_text(_heredoc(run, "sft.yaml"), encoding="utf-8")
    found = re.search(r"ds_z\d\.json", run)
    if found:  # the run writes the DeepSpeed config beside sft.yaml, in the folder it runs in
        (tmp_path / found[0]).write_text(_heredoc(run, found[0]), encoding="utf-8")
    argv = ["--config", str(config), "--dataset_name", "my/dataset"]
    script, training, model, _ = make_parser().parse_args_and_config(args=argv, fail_with_unknown_args=True)
    return script, training, model


def test_trl_qlora_runs_the_planned_method_rank_batch_recompute_and_zero(tmp_path: Path) -> None:
    script, training, model = _trl_parse(_trl_qlora(), tmp_path)
    assert script.dataset_name == "my/dataset" and model.model_name_or_path == REPO
    assert model.use_peft and model.lora_r == 32 and model.lora_target_modules == "all-linear"
    assert model.load_in_4bit and model.bnb_4bit_quant_type == "nf4" and model.use_bnb_nested_quant
    assert training.per_device_train_batch_size == 4 and training.gradient_accumulation_steps == 4
    assert training.max_length == 1024 and training.num_train_epochs == 2.0 and training.gradient_checkpointing
    assert training.deepspeed == "ds_z3.json" and training.bf16
    # 20,000 samples × 2 epochs ÷ (4 × 4 × 2 sequences a step) = 1,250 steps; a checkpoint every 1/20 of them
    assert training.save_steps == 62 and training.output_dir.startswith("/checkpoints/gpuplan-finetune-")


def test_trl_full_finetune_trains_the_token_budget_in_fp32_master_weights(tmp_path: Path) -> None:
    _, training, model = _trl_parse(_trl_full(), tmp_path)
    assert not model.use_peft and model.dtype == "float32" and training.bf16  # bf16 mixed: fp32 master copy
    # 2e8 tokens ÷ 2,048 = 97,657 sequences ÷ (2 × 2 × 8 a step) = 3,052 steps
    assert training.max_steps == 3052 and training.deepspeed == "ds_z2.json"
    assert '"stage": 2' in _task(_trl_full())["run"]


def test_trl_lora_targets_and_embeddings_are_peft_module_names(tmp_path: Path) -> None:
    c = _trl_qlora(lora_targets="attention", train_embeddings=True, parallel=Parallelism(), base_quant=None,
                   method="lora", precision="fp16-mixed", recompute="none")
    _, training, model = _trl_parse(c, tmp_path)
    assert model.lora_target_modules == ["q_proj", "k_proj", "v_proj", "o_proj"]
    assert model.lora_modules_to_save == ["embed_tokens", "lm_head"] and not model.load_in_4bit
    assert training.fp16 and not training.bf16 and model.dtype == "float16" and not training.gradient_checkpointing
    assert training.deepspeed is None


def test_trl_run_resumes_from_the_newest_checkpoint_on_the_bucket() -> None:
    task = _task(_trl_qlora())
    run = task["run"]
    assert "ls -d /checkpoints/gpuplan-finetune-llama-3-1-8b/checkpoint-* " in run and "sort -V | tail -n1" in run
    assert '${LAST:+--resume_from_checkpoint "$LAST"}' in run and "-m trl.scripts.sft --config sft.yaml" in run
    assert task["resources"]["job_recovery"]["strategy"] == "EAGER_NEXT_REGION"
    assert task["file_mounts"]["/checkpoints"]["name"] == "${CKPT_BUCKET}"
    assert "'trl==1.16.0'" in task["setup"] and "deepspeed" in task["setup"] and "bitsandbytes" in task["setup"]


@pytest.mark.parametrize(("change", "words"), [
    ({"parallel": Parallelism(tp=2, dp=1)}, "TP2"), ({"method": "freeze"}, "not freeze"),
    ({"recompute": "selective"}, "recomputes selectively"), ({"optimizer": "lion"}, "no 'lion' optimizer"),
])
def test_a_plan_trl_cannot_run_as_planned_is_refused(change: dict[str, Any], words: str) -> None:
    with pytest.raises(InputError, match=re.escape(words)) as err:
        render(_trl_qlora(**change), "skypilot", REPO)
    assert err.value.fix


def test_the_trl_record_is_trls_own_parser() -> None:
    import trl
    from trl.scripts.sft import make_parser

    record = registry.flags("trl")
    assert record["version"] == trl.__version__ == "1.16.0"
    dests = {a.dest for a in make_parser()._actions} - {"help"}
    assert set(record["options"]) == dests


# ---------------------------------------------------------------- torchtitan


def _titan_parse(c: Candidate) -> Any:
    """The exported command line read by ``torchtitan.train``'s own ConfigManager (tyro, unknown flags refused)."""
    from torchtitan.config.manager import ConfigManager

    run = _task(c)["run"]
    line = next(x for x in run.splitlines() if "-m torchtitan.train" in x)
    line = line.replace('${DATASET_PATH:+--dataloader.dataset-path "$DATASET_PATH"}', "--dataloader.dataset-path /data")
    argv = shlex.split(line.replace('"$DATASET"', "c4").split("-m torchtitan.train", 1)[1])
    return ConfigManager().parse_args(argv)


def test_torchtitan_runs_the_planned_layout_batch_recompute_and_sharding() -> None:
    cfg = _titan_parse(_titan())
    p, t = cfg.parallelism, cfg.training
    assert (p.tensor_parallel_degree, p.pipeline_parallel_degree, p.context_parallel_degree) == (8, 2, 1)
    assert (p.data_parallel_shard_degree, p.data_parallel_replicate_degree) == (4, 1)  # ZeRO-1: sharded, kept
    assert p.fsdp_reshard_after_forward == "never" and p.enable_sequence_parallel
    # the pipeline runs the 16 accumulated micro-batches of 1: 16 a rank a step, 16 × 4 data-parallel ranks
    assert t.local_batch_size == 16 and p.pipeline_parallel_microbatch_size == 1 and t.global_batch_size == 64
    # 1e11 tokens ÷ 4,096 = 24,414,062.5 sequences ÷ 64 a step = 381,469.7, so 381,470 steps
    assert t.seq_len == 4096 and t.steps == 381_470 and t.dtype == "float32" and t.disable_cuda_graphs
    assert type(cfg.activation_checkpoint).__qualname__ == "SelectiveAC.Config"
    assert cfg.checkpoint.enable and cfg.checkpoint.interval == 19_073 and cfg.checkpoint.folder == "checkpoint"
    assert cfg.dump_folder == "/checkpoints/gpuplan-pretrain-llama-3-1-8b" and not cfg.checkpoint.last_save_model_only
    assert cfg.dataloader.dataset == "c4" and cfg.dataloader.dataset_path == "/data"
    assert cfg.hf_assets_path == "assets/model"


def test_torchtitan_without_a_pipeline_accumulates_and_zero3_reshards() -> None:
    cfg = _titan_parse(_titan(parallel=Parallelism(tp=1, dp=64, zero=3), recompute="full", grad_accum=2,
                              micro_batch=2))
    assert cfg.training.local_batch_size == 2 and cfg.training.global_batch_size == 2 * 2 * 64
    assert cfg.parallelism.fsdp_reshard_after_forward == "always"
    assert type(cfg.activation_checkpoint).__qualname__ == "FullAC.Config"
    cfg = _titan_parse(_titan(parallel=Parallelism(dp=64, zero=0), recompute="none"))
    assert (cfg.parallelism.data_parallel_replicate_degree, cfg.parallelism.data_parallel_shard_degree) == (64, 1)
    assert cfg.activation_checkpoint is None


def test_the_torchtitan_record_is_torchtitans_own_parser() -> None:
    import tyro
    from torchtitan.config.manager import ConfigManager, custom_registry

    record = registry.flags("torchtitan")
    assert record["version"] == "0.3.0"
    loaded, _ = ConfigManager()._load_config(["--module", "llama3", "--config", "llama3_8b"])
    parser = tyro.extras.get_parser(type(loaded), default=loaded, registry=custom_registry)
    flags = {f for a in parser._actions for f in a.option_strings if f.startswith("--")} - {"--help"}
    subcommands = {c for a in parser._actions if type(a).__name__ == "_SubParsersAction" for c in a.choices}
    assert set(record["options"]) == flags | subcommands


@pytest.mark.parametrize("preset", sorted(RECIPES))
def test_each_torchtitan_recipe_is_the_presets_architecture(preset: str) -> None:
    """The hand-kept table of recipes, checked against torchtitan's: the recipe's model has the preset's
    layers, width, heads, KV heads, FFN width and vocabulary."""
    module, recipe = RECIPES[preset]
    spec = getattr(importlib.import_module(f"torchtitan.models.{module}.config_registry"), recipe)().model_spec
    m, model = load_catalog().model(preset), spec.model
    attention = model.layers[0].attention
    got = (len(model.layers), model.dim, attention.n_heads, attention.n_kv_heads,
           model.layers[0].feed_forward.w1.out_features, model.vocab_size)
    assert got == (m.n_layers, m.hidden, m.n_heads, m.n_kv_heads, m.ffn_hidden, m.vocab)


def test_torchtitan_for_a_model_without_a_recipe_is_refused_with_the_ones_it_has() -> None:
    c = _titan()
    c = replace(c, estimate=replace(c.estimate, model=replace(LLAMA_8B, name="Mistral-7B")))
    with pytest.raises(InputError, match="no recipe for Mistral-7B") as err:
        render(c, "skypilot", REPO)
    assert "Llama-3.1-8B" in err.value.fix and "--framework megatron" in err.value.fix


@pytest.mark.parametrize(("change", "words"), [
    ({"optimizer": "sgd"}, "not sgd"), ({"precision": "fp8-mixed"}, "not fp8-mixed"),
    ({"parallel": Parallelism(dp=64, zero=3, offload_optimizer=True)}, "offloads whole FSDP shards"),
])
def test_a_plan_torchtitan_cannot_run_as_planned_is_refused(change: dict[str, Any], words: str) -> None:
    with pytest.raises(InputError, match=re.escape(words)):
        render(_titan(**change), "skypilot", REPO)


# ---------------------------------------------------------------- LitGPT


def _litgpt_full(n_gpus: int = 8, **setup: Any) -> Candidate:
    offer = _offer("Lambda", "A100-80GB", n_gpus, "on-demand", "gpu_8x_a100_80gb_sxm4")
    planned = replace(FULL, parallel=Parallelism(dp=n_gpus, zero=3 if n_gpus > 1 else 0),
                      recompute="full" if n_gpus > 1 else "none")
    return _with_framework(_candidate(FULL_JOB, replace(planned, **setup), "A100-80GB", n_gpus, offer), "litgpt")


def _litgpt_parse(c: Candidate | str, tmp_path: Path) -> tuple[Any, Any]:
    """The exported command read by ``litgpt``'s own jsonargparse CLI (the parser ``litgpt finetune_full`` builds,
    unknown keys refused), its classes instantiated as LitGPT does and its own argument check run: (the parsed
    arguments, the instantiated ones)."""
    import litgpt.__main__ as litgpt_cli
    from jsonargparse import CLI, capture_parser
    from litgpt.finetune import adapter, adapter_v2, full, lora

    run = c if isinstance(c, str) else _task(c)["run"]
    (tmp_path / "litgpt.yaml").write_text(_heredoc(run, "litgpt.yaml"), encoding="utf-8")
    (tmp_path / "data.json").write_text('[{"instruction": "hi", "output": "hello"}]', encoding="utf-8")
    line = next(x for x in run.splitlines() if " litgpt finetune_" in x)
    argv = shlex.split(line.replace('"$DATASET"', "data.json").split(" litgpt ", 1)[1])
    parser = capture_parser(lambda: CLI(litgpt_cli.PARSER_DATA, args=argv))
    parsed = parser.parse_args(argv)
    args = parser.instantiate_classes(parsed)[argv[0]]
    scripts = {"finetune_lora": lora, "finetune_adapter": adapter, "finetune_adapter_v2": adapter_v2}
    scripts.get(argv[0], full).validate_args(args.train, args.eval)
    return parsed[argv[0]], args


def test_litgpt_full_finetune_runs_the_planned_batch_length_precision_and_resumes(tmp_path: Path) -> None:
    from litgpt.data import JSON

    parsed, args = _litgpt_parse(_litgpt_full(), tmp_path)
    assert str(args.checkpoint_dir) == f"checkpoints/{REPO}" and args.resume == "auto"
    assert str(args.out_dir) == "/checkpoints/gpuplan-finetune-llama-3-1-8b"
    assert args.precision == "bf16-mixed" and (args.devices, args.num_nodes) == (8, 1)
    t = args.train
    # micro-batch 2 × accumulation 2 × 8 GPUs: LitGPT derives the accumulation from the global batch
    assert t.micro_batch_size == 2 and t.global_batch_size == 32 and t.gradient_accumulation_iters(8) == 2
    # 2e8 tokens ÷ 2,048 = 97,657 sequences ÷ 32 a step = 3,052 steps; a checkpoint every 1/20 of them
    assert t.max_seq_length == 2048 and t.max_steps == 3052 and t.save_interval == 152 and t.epochs >= t.max_steps
    assert parsed.optimizer == {"class_path": "torch.optim.AdamW", "init_args": {"lr": 1e-05}}
    assert isinstance(args.data, JSON) and str(args.data.json_path) == "data.json"


def test_litgpt_run_resumes_and_downloads_the_model_under_litgpts_name() -> None:
    task = _task(_litgpt_full())
    assert task["setup"].splitlines() == ["pip install 'litgpt==0.5.13'",
                                          "litgpt download meta-llama/Llama-3.1-8B --model_name Llama-3.1-8B"]
    run = task["run"]
    assert "NODE_RANK=$SKYPILOT_NODE_RANK litgpt finetune_full --config litgpt.yaml" in run
    assert "step-* 2>/dev/null | sort | head -n -2 | xargs -r rm -rf" in run  # LitGPT itself deletes none
    assert task["resources"]["job_recovery"]["strategy"] == "EAGER_NEXT_REGION"
    assert task["file_mounts"]["/checkpoints"]["name"] == "${CKPT_BUCKET}" and task["envs"]["DATASET"] == ""


def test_litgpt_runs_prune_keeps_the_two_newest_checkpoints(tmp_path: Path) -> None:
    import subprocess

    run = _task(_litgpt_full())["run"]
    prune = next(x for x in run.splitlines() if x.startswith("prune() "))
    prune = prune.replace("/checkpoints/gpuplan-finetune-llama-3-1-8b", str(tmp_path))
    for step in (50, 100, 150, 1000):
        (tmp_path / f"step-{step:06d}").mkdir()
    subprocess.run(["bash", "-c", f"set -euo pipefail; {prune}; prune"], check=True)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["step-000150", "step-001000"]
    subprocess.run(["bash", "-c", f"set -euo pipefail; {prune.replace(str(tmp_path), str(tmp_path / 'none'))}; prune"],
                   check=True)  # no folder yet (the first start): nothing to do, and no failure


def test_litgpt_on_one_gpu_trains_the_samples_in_pure_bf16_without_a_step_budget(tmp_path: Path) -> None:
    c = _litgpt_full(1, precision="bf16", optimizer="sgd")
    c = replace(c, estimate=replace(c.estimate, job=replace(FINETUNE_JOB, method="full", framework="litgpt")))
    _, args = _litgpt_parse(c, tmp_path)
    assert args.precision == "bf16-true" and (args.devices, args.num_nodes) == (1, 1)
    assert args.train.epochs == 2 and args.train.max_steps is None and args.train.global_batch_size == 4


def test_litgpt_counts_whole_epochs_and_stops_a_fraction_of_one_at_the_planned_step(tmp_path: Path) -> None:
    c = _litgpt_full(1)
    job = replace(FINETUNE_JOB, method="full", framework="litgpt", epochs=1.0)
    _, args = _litgpt_parse(replace(c, estimate=replace(c.estimate, job=job)), tmp_path)
    assert args.train.epochs == 1 and args.train.max_steps is None
    job = replace(job, epochs=1.5)
    _, args = _litgpt_parse(replace(c, estimate=replace(c.estimate, job=job)), tmp_path)
    # 20,000 samples × 1.5 epochs ÷ (2 × 2 sequences a step) = 7,500 steps
    assert args.train.max_steps == 7500 and args.train.epochs >= 2


def test_litgpt_on_several_nodes_gives_fabric_the_nodes_and_gpus_per_node(tmp_path: Path) -> None:
    c = _litgpt_full(16)
    _, args = _litgpt_parse(c, tmp_path)
    assert (args.devices, args.num_nodes) == (8, 2) and args.train.global_batch_size == 2 * 2 * 16
    assert _task(c)["num_nodes"] == 2


def test_each_litgpt_model_the_catalog_names_is_litgpts_config_for_it() -> None:
    """The record's models are LitGPT's configs; a preset of the same name has that config's architecture."""
    from litgpt.config import Config

    catalog, matched = load_catalog(), 0
    for name in registry.flags("litgpt")["models"]:
        try:
            m = catalog.model(name)
        except InputError:
            continue
        cfg = Config.from_name(name)
        assert (cfg.n_layer, cfg.n_embd, cfg.n_head, cfg.n_query_groups) == (m.n_layers, m.hidden, m.n_heads,
                                                                              m.n_kv_heads), name
        matched += 1
    assert matched >= 5


def _litgpt_lora(n_gpus: int = 1, pricing: str = "on-demand", **setup: Any) -> Candidate:
    """A LoRA plan as LitGPT prices it (pure bf16; on one GPU no recomputation), on on-demand capacity."""
    offer = _offer("Lambda", "A100-80GB", n_gpus, pricing, "gpu_8x_a100_80gb_sxm4")
    planned = replace(QLORA, method="lora", base_quant=None, precision="bf16", lora_dropout=0.05,
                      parallel=Parallelism(dp=n_gpus, zero=3 if n_gpus > 1 else 0),
                      recompute="full" if n_gpus > 1 else "none")
    job = replace(FINETUNE_JOB, method="lora")
    return _with_framework(_candidate(job, replace(planned, **setup), "A100-80GB", n_gpus, offer), "litgpt")


def test_litgpt_lora_runs_the_planned_rank_targets_batch_and_precision(tmp_path: Path) -> None:
    """The adapters LitGPT builds (its Llama-3.1-8B config, on the meta device) are as many as the plan priced:
    all-linear at rank 32 is 32 layers × 32 × (fused q,k,v 3 × 4096 + 4096+1024+1024, projection 4096+4096, the MLP's
    3 × 18,432 = 81,920) = 83,886,080 parameters."""
    import torch
    from litgpt.lora import GPT, Config

    from gpuplan.estimate.memory import trainable_params

    c = _litgpt_lora()
    parsed, args = _litgpt_parse(c, tmp_path)
    assert (args.lora_r, args.lora_alpha, args.lora_dropout) == (32, 64, 0.05) and args.quantize is None
    assert args.lora_query and args.lora_key and args.lora_value and args.lora_projection and args.lora_mlp
    assert not args.lora_head and args.precision == "bf16-true" and (args.devices, args.num_nodes) == (1, 1)
    # 20,000 samples × 2 epochs ÷ (4 × 4 sequences a step) = 2,500 steps; a checkpoint every 1/20 of them
    assert args.train.micro_batch_size == 4 and args.train.global_batch_size == 16 and args.train.epochs == 2
    assert args.train.save_interval == 125 and parsed.optimizer["init_args"]["lr"] == 1e-4
    assert "litgpt finetune_lora --config litgpt.yaml" in _task(c)["run"] and "resume" not in _heredoc(
        _task(c)["run"], "litgpt.yaml")
    names = ("r", "alpha", "dropout", "query", "key", "value", "projection", "mlp", "head")
    config = Config.from_name("Llama-3.1-8B", **{f"lora_{n}": getattr(args, f"lora_{n}") for n in names})
    with torch.device("meta"):
        model = GPT(config)
    built = sum(p.numel() for n, p in model.named_parameters() if "lora_" in n)
    assert built == 83_886_080 == trainable_params(c.estimate.model, c.estimate.setup)


def test_litgpt_qlora_quantizes_the_base_on_one_gpu_in_true_precision(tmp_path: Path) -> None:
    c = _litgpt_lora(method="qlora", lora_targets="qv")
    _, args = _litgpt_parse(c, tmp_path)
    assert args.quantize == "bnb.nf4-dq" and args.precision == "bf16-true"
    assert (args.lora_query, args.lora_key, args.lora_value, args.lora_mlp) == (True, False, True, False)
    assert _task(c)["setup"].startswith("pip install 'litgpt==0.5.13' bitsandbytes\n")
    plain = _litgpt_lora(method="qlora", base_quant="bnb-nf4")
    assert _litgpt_parse(plain, tmp_path)[1].quantize == "bnb.nf4"


def test_litgpt_lora_on_several_gpus_shards_and_says_a_restart_starts_over(tmp_path: Path) -> None:
    c = _litgpt_lora(8)
    _, args = _litgpt_parse(c, tmp_path)
    assert (args.devices, args.num_nodes) == (8, 1) and args.train.global_batch_size == 4 * 4 * 8
    assert "a restart after a failure starts it over" in _task(c)["run"]


@pytest.mark.parametrize(("change", "words"), [
    ({"pricing": "spot"}, "cannot resume a LoRA run"), ({"method": "qlora", "precision": "bf16-mixed"},
                                                        "true (not mixed) precision"),
    ({"method": "qlora", "n_gpus": 8}, "on one GPU"), ({"train_embeddings": True}, "no embeddings"),
    ({"base_quant": "int8-wo"}, "not int8-wo"),
])
def test_a_lora_plan_litgpt_cannot_run_as_planned_is_refused(change: dict[str, Any], words: str) -> None:
    with pytest.raises(InputError, match=re.escape(words)) as err:
        render(_litgpt_lora(**change), "skypilot", REPO)
    assert err.value.fix


@pytest.mark.parametrize(("change", "words"), [
    ({"method": "freeze"}, "no freeze"), ({"method": "adalora"}, "no adalora"), ({"method": "dora"}, "no dora"),
    ({"recompute": "none"}, "checkpoints every block"), ({"parallel": Parallelism(dp=8, zero=2)}, "ZeRO-2"),
    ({"parallel": Parallelism(dp=8, zero=3, offload_optimizer=True)}, "does not offload"),
    ({"parallel": Parallelism(tp=2, dp=4, zero=3)}, "TP2"), ({"optimizer": "adamw-8bit"}, "no 'adamw-8bit'"),
    ({"precision": "fp8-mixed"}, "not fp8-mixed"),
])
def test_a_plan_litgpt_cannot_run_as_planned_is_refused(change: dict[str, Any], words: str) -> None:
    with pytest.raises(InputError, match=re.escape(words)) as err:
        render(_litgpt_full(**change), "skypilot", REPO)
    assert err.value.fix


def test_litgpt_for_a_model_it_has_no_config_for_is_refused() -> None:
    c = _litgpt_full()
    c = replace(c, estimate=replace(c.estimate, model=replace(LLAMA_8B, name="Made-Up-8B")))
    with pytest.raises(InputError, match="no model config for Made-Up-8B"):
        render(c, "skypilot", "someone/made-up-8b")


def test_the_litgpt_record_is_litgpts_own_parser() -> None:
    from importlib.metadata import version

    import litgpt.__main__ as litgpt_cli
    from jsonargparse import CLI, capture_parser
    from litgpt.config import configs

    record = registry.flags("litgpt")
    assert record["version"] == version("litgpt") == "0.5.13"
    parser = capture_parser(lambda: CLI(litgpt_cli.PARSER_DATA, args=["finetune_full", "--help"]))
    sub = parser._subcommands_action._name_parser_map["finetune_full"]
    assert set(record["options"]) == {a.dest for a in sub._actions} - {"help"}
    assert len(record["models"]) == len(configs)
    parser = capture_parser(lambda: CLI(litgpt_cli.PARSER_DATA, args=["finetune_lora", "--help"]))
    sub = parser._subcommands_action._name_parser_map["finetune_lora"]
    assert set(record["lora_options"]) == {a.dest for a in sub._actions} - {"help"}


def _litgpt_adapter(method: str, pricing: str = "on-demand", **setup: Any) -> Candidate:
    """A LLaMA-Adapter plan on one GPU as LitGPT prices it (pure bf16, no recomputation)."""
    offer = _offer("Lambda", "A100-80GB", 1, pricing, "gpu_8x_a100_80gb_sxm4")
    planned = replace(QLORA, **{"method": method, "base_quant": None, "precision": "bf16", "recompute": "none",
                                "parallel": Parallelism(), **setup})
    job = replace(FINETUNE_JOB, method=method)
    return _with_framework(_candidate(job, planned, "A100-80GB", 1, offer), "litgpt")


def test_litgpt_adapter_v2_runs_its_own_script_on_a_4bit_base(tmp_path: Path) -> None:
    """The parameters LitGPT's adapter_v2 GPT marks trainable (its Llama-3.1-8B config, on the meta device) are as
    many as the plan priced."""
    import torch
    from litgpt.adapter_v2 import GPT, Config, mark_only_adapter_v2_as_trainable

    from gpuplan.estimate.memory import trainable_params

    c = _litgpt_adapter("adapter-v2", base_quant="bnb-nf4")
    _, args = _litgpt_parse(c, tmp_path)
    assert args.quantize == "bnb.nf4" and args.precision == "bf16-true" and not args.resume
    run = _task(c)["run"]
    assert "litgpt finetune_adapter_v2 --config litgpt.yaml" in run and "starts it over" in run
    assert _task(c)["setup"].startswith("pip install 'litgpt==0.5.13' bitsandbytes\n")
    with torch.device("meta"):
        model = GPT(Config.from_name("Llama-3.1-8B"))
    mark_only_adapter_v2_as_trainable(model)
    built = sum(p.numel() for p in model.parameters() if p.requires_grad)
    assert built == trainable_params(c.estimate.model, c.estimate.setup)


@pytest.mark.parametrize("method", ["adapter", "adapter-v2"])
def test_litgpt_adapter_cannot_resume_and_is_refused_on_spot(tmp_path: Path, method: str) -> None:
    with pytest.raises(InputError, match="cannot resume a LLaMA-Adapter run") as err:
        render(_litgpt_adapter(method, pricing="spot"), "skypilot", REPO)
    assert "--no-spot" in err.value.fix
    c = _litgpt_adapter("adapter")
    _, args = _litgpt_parse(c, tmp_path)
    assert args.quantize is None and "a restart after a failure starts it over" in _task(c)["run"]


def test_the_litgpt_adapter_records_are_litgpts_own_parsers() -> None:
    import litgpt.__main__ as litgpt_cli
    from jsonargparse import CLI, capture_parser

    record = registry.flags("litgpt")
    for name, key in (("finetune_adapter", "adapter_options"), ("finetune_adapter_v2", "adapter_v2_options")):
        parser = capture_parser(lambda name=name: CLI(litgpt_cli.PARSER_DATA, args=[name, "--help"]))
        sub = parser._subcommands_action._name_parser_map[name]
        assert set(record[key]) == {a.dest for a in sub._actions} - {"help"}


def test_a_litgpt_plan_from_the_cli_exports_litgpt(tmp_path: Path) -> None:
    from clirun import run_cli

    out = tmp_path / "task.yaml"
    code, _, err = run_cli(["plan", "finetune", "Qwen2.5-0.5B", "--samples", "1k", "--tokens-per-sample", "256",
                            "--method", "full", "--framework", "litgpt", "--max-gpus", "1", "--provider", "aws",
                            "--export", "skypilot", "--out", str(out)])
    assert code == 0, err
    task = yaml.safe_load(out.read_text(encoding="utf-8"))
    assert "--model_name Qwen2.5-0.5B" in task["setup"]
    _, args = _litgpt_parse(task["run"], tmp_path)
    assert args.train.epochs == 1 and (args.devices, args.num_nodes) == (1, 1)


def test_a_litgpt_lora_plan_from_the_cli_exports_the_best_on_demand_plan(tmp_path: Path) -> None:
    """Spot plans cannot be written (LitGPT cannot resume LoRA); the export takes the best on-demand one."""
    from clirun import run_cli

    out = tmp_path / "task.yaml"
    code, _, err = run_cli(["plan", "finetune", "Qwen2.5-0.5B", "--samples", "1k", "--tokens-per-sample", "256",
                            "--framework", "litgpt", "--max-gpus", "1", "--provider", "aws", "--export", "skypilot",
                            "--out", str(out)])
    assert code == 0, err
    task = yaml.safe_load(out.read_text(encoding="utf-8"))
    assert task["resources"]["use_spot"] is False
    _, args = _litgpt_parse(task["run"], tmp_path)
    assert args.lora_r == 16 and args.quantize is None and "litgpt finetune_lora" in task["run"]


# ---------------------------------------------------------------- ms-swift


def _swift_parse(c: Candidate | str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Any:
    """The exported command read as ``swift sft`` reads it: the YAML turned into options by ms-swift's own
    ``parse_yaml_args``, then its ``HfArgumentParser`` over ``SftArguments`` (an unknown option fails)."""
    from swift.arguments import SftArguments
    from swift.cli.main import parse_yaml_args
    from swift.utils.utils import _patch_get_type_hints
    from transformers import HfArgumentParser

    monkeypatch.delenv("SWIFT_CONFIG_FILE", raising=False)  # parse_yaml_args records the file there
    run = c if isinstance(c, str) else _task(c)["run"]
    (tmp_path / "swift.yaml").write_text(_heredoc(run, "swift.yaml"), encoding="utf-8")
    line = next(x for x in run.splitlines() if " swift sft " in x)
    line = line.replace('${LAST:+--resume_from_checkpoint "$LAST"}', "--resume_from_checkpoint /ckpt/checkpoint-9")
    argv = shlex.split(line.replace('"$DATASET"', "my/dataset").split(" swift sft ", 1)[1])
    parse_yaml_args(argv)
    with _patch_get_type_hints():
        parser = HfArgumentParser([SftArguments])
    parsed, rest = parser.parse_known_args(argv)
    assert not rest, rest
    return parsed


def test_swift_qlora_runs_the_planned_method_rank_batch_recompute_and_zero(tmp_path: Path,
                                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    a = _swift_parse(_with_framework(_trl_qlora(), "swift"), tmp_path, monkeypatch)
    assert a.model == REPO and a.use_hf and a.dataset == ["my/dataset"] and a.tuner_type == "lora"
    assert a.lora_rank == 32 and a.lora_alpha == 64 and a.target_modules == ["all-linear"]
    assert (a.quant_method, a.quant_bits, a.bnb_4bit_quant_type, a.bnb_4bit_use_double_quant) == ("bnb", 4, "nf4",
                                                                                                  True)
    assert a.per_device_train_batch_size == 4 and a.gradient_accumulation_steps == 4 and a.max_length == 1024
    assert a.gradient_checkpointing and a.bf16 and not a.fp16 and a.torch_dtype == "bfloat16"
    # 20,000 samples × 2 epochs ÷ (4 × 4 × 2 sequences a step) = 1,250 steps; a checkpoint every 1/20 of them
    assert a.num_train_epochs == 2.0 and a.save_steps == 62 and a.save_total_limit == 2
    assert a.deepspeed == "ds_z3.json" and a.output_dir == "/checkpoints/gpuplan-finetune-llama-3-1-8b"
    assert not a.add_version and a.resume_from_checkpoint == "/ckpt/checkpoint-9"


def test_swift_full_finetune_trains_the_token_budget_with_zero2(tmp_path: Path,
                                                                monkeypatch: pytest.MonkeyPatch) -> None:
    c = _with_framework(_trl_full(), "swift")
    a = _swift_parse(c, tmp_path, monkeypatch)
    assert a.tuner_type == "full" and a.torch_dtype == "float32" and a.bf16  # bf16 mixed: fp32 master copy
    assert a.max_steps == 3052 and a.deepspeed == "ds_z2.json" and a.quant_method is None
    assert '"stage": 2' in _task(c)["run"]
    pure = _with_framework(_trl_full(), "swift", precision="bf16", parallel=Parallelism(dp=8))
    assert _swift_parse(pure, tmp_path, monkeypatch).torch_dtype == "bfloat16"  # ms-swift's default: no fp32 copy
    # with ZeRO, DeepSpeed's optimizer keeps fp32 master weights and states of the bf16 weights: the estimate
    # prices them (memory.state_bytes), so the export runs what was planned
    zero = _swift_parse(_with_framework(_trl_full(), "swift", precision="bf16"), tmp_path, monkeypatch)
    assert zero.torch_dtype == "bfloat16" and zero.deepspeed == "ds_z2.json"


def test_swift_lora_targets_and_embeddings_are_module_names(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    c = _with_framework(_trl_qlora(lora_targets="qv", train_embeddings=True, parallel=Parallelism(), base_quant=None,
                                   method="lora", precision="fp16-mixed", recompute="none"), "swift")
    a = _swift_parse(c, tmp_path, monkeypatch)
    assert a.target_modules == ["q_proj", "v_proj"] and a.modules_to_save == ["embed_tokens", "lm_head"]
    assert a.fp16 and not a.bf16 and a.torch_dtype == "float16" and not a.gradient_checkpointing
    assert a.deepspeed is None and a.quant_method is None


def test_swift_run_launches_torchrun_through_swift_and_resumes_from_the_bucket() -> None:
    task = _task(_with_framework(_trl_qlora(), "swift"))
    run = task["run"]
    assert "ls -d /checkpoints/gpuplan-finetune-llama-3-1-8b/checkpoint-* " in run and "sort -V | tail -n1" in run
    assert "NPROC_PER_NODE=$SKYPILOT_NUM_GPUS_PER_NODE MASTER_PORT=29500 swift sft swift.yaml" in run
    assert task["setup"] == "pip install 'ms-swift==4.6.0' deepspeed bitsandbytes"
    assert task["resources"]["job_recovery"]["strategy"] == "EAGER_NEXT_REGION"


@pytest.mark.parametrize(("change", "words"), [
    ({"parallel": Parallelism(tp=2, dp=1)}, "TP2"), ({"method": "freeze"}, "not freeze"),
    ({"recompute": "selective"}, "recomputes selectively"), ({"optimizer": "lion"}, "no 'lion' optimizer"),
    ({"precision": "fp8-mixed"}, "not fp8-mixed"), ({"base_quant": "int4-wo", "method": "lora"}, "not int4-wo"),
])
def test_a_plan_swift_cannot_run_as_planned_is_refused(change: dict[str, Any], words: str) -> None:
    with pytest.raises(InputError, match=re.escape(words)) as err:
        render(_with_framework(_trl_qlora(**change), "swift"), "skypilot", REPO)
    assert err.value.fix


def test_the_swift_record_is_swifts_own_parser() -> None:
    from importlib.metadata import version

    from swift.arguments import SftArguments
    from swift.utils.utils import _patch_get_type_hints
    from transformers import HfArgumentParser

    record = registry.flags("swift")
    assert record["version"] == version("ms-swift") == "4.6.0"
    with _patch_get_type_hints():
        parser = HfArgumentParser([SftArguments])
    assert set(record["options"]) == {a.dest for a in parser._actions} - {"help"}


def test_a_swift_plan_from_the_cli_exports_swift(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from clirun import run_cli

    out = tmp_path / "task.yaml"
    code, _, err = run_cli(["plan", "finetune", "Qwen2.5-0.5B", "--samples", "1k", "--tokens-per-sample", "256",
                            "--framework", "swift", "--provider", "aws", "--export", "skypilot", "--out", str(out)])
    assert code == 0, err
    parsed = _swift_parse(yaml.safe_load(out.read_text(encoding="utf-8"))["run"], tmp_path, monkeypatch)
    assert parsed.model == "Qwen/Qwen2.5-0.5B" and parsed.tuner_type == "lora" and parsed.use_hf


# ---------------------------------------------------------------- Axolotl


def _axolotl(c: Candidate | None = None, **setup: Any) -> Candidate:
    """A QLoRA plan as Axolotl's defaults price it: packed samples (lengths do not vary)."""
    return _with_framework(c or _trl_qlora(**setup), "axolotl", lengths_vary=False)


def _axolotl_validate(c: Candidate | str, tmp_path: Path, n_gpus: int = 0) -> Any:
    """The config the exported run writes (its shell lines run as written, the dataset appended from the
    environment), validated by Axolotl's own ``validate_config`` on the planned GPUs; every key is a field of its
    schema (the schema ignores unknown keys, so that is checked too)."""
    import subprocess

    from axolotl.utils.config import validate_config
    from axolotl.utils.dict import DictDefault
    from axolotl.utils.schemas.config import AxolotlInputConfig

    run = c if isinstance(c, str) else _task(c)["run"]
    writes = "\n".join(x for x in run.splitlines() if not x.startswith("axolotl train "))
    subprocess.run(["bash", "-c", writes], cwd=tmp_path, check=True,
                   env={"PATH": "/usr/bin:/bin", "DATASET": "my/dataset", "DATASET_TYPE": "alpaca"})
    written = yaml.safe_load((tmp_path / "axolotl.yaml").read_text(encoding="utf-8"))
    assert set(written) <= set(AxolotlInputConfig.model_fields)
    n_gpu = n_gpus or (1 if isinstance(c, str) else c.estimate.n_gpus)
    capabilities = {"bf16": True, "fp8": False, "n_gpu": n_gpu, "n_node": 1, "compute_capability": "sm_90"}
    return validate_config(DictDefault(written), capabilities=capabilities,
                           env_capabilities={"torch_version": "2.10.0"})


def test_axolotl_qlora_runs_the_planned_method_rank_batch_packing_recompute_and_zero(tmp_path: Path) -> None:
    cfg = _axolotl_validate(_axolotl(), tmp_path)
    assert cfg.base_model == REPO and cfg.adapter == "qlora" and cfg.load_in_4bit and not cfg.bnb_config_kwargs
    assert cfg.lora_r == 32 and cfg.lora_alpha == 64 and cfg.lora_target_linear
    assert cfg.micro_batch_size == 4 and cfg.gradient_accumulation_steps == 4 and cfg.sequence_len == 1024
    assert cfg.sample_packing and cfg.gradient_checkpointing and cfg.bf16 and cfg.deepspeed == "ds_z3.json"
    # 2 epochs, 20 checkpoints over the run: 10 an epoch (packing makes the step count Axolotl's to find)
    assert cfg.num_epochs == 2.0 and cfg.saves_per_epoch == 10 and cfg.save_total_limit == 2
    assert cfg.auto_resume_from_checkpoints and cfg.output_dir == "/checkpoints/gpuplan-finetune-llama-3-1-8b"
    assert [(d["path"], d["type"]) for d in cfg.datasets] == [("my/dataset", "alpaca")]


def test_axolotl_full_finetune_of_a_token_budget_with_zero2(tmp_path: Path) -> None:
    """bf16 mixed precision as planned: the 16-bit weights Axolotl loads, fp32 master weights and states in ZeRO."""
    cfg = _axolotl_validate(_axolotl(_trl_full()), tmp_path)
    assert cfg.adapter is None and cfg.bf16 and cfg.deepspeed == "ds_z2.json"
    # 2e8 tokens ÷ 2,048 = 97,657 sequences ÷ (2 × 2 × 8 a step) = 3,052 steps; a checkpoint every 1/20 of them
    assert cfg.max_steps == 3052 and cfg.save_steps == 152


def test_axolotl_full_finetune_without_zero_in_pure_bf16(tmp_path: Path) -> None:
    c = _axolotl(_with_framework(_trl_full(), "axolotl", precision="bf16", parallel=Parallelism(dp=8)))
    cfg = _axolotl_validate(c, tmp_path)
    assert cfg.adapter is None and cfg.bf16 and cfg.deepspeed is None


def test_axolotl_lora_targets_int8_base_and_fp16(tmp_path: Path) -> None:
    c = _axolotl(lora_targets="mlp", train_embeddings=True, parallel=Parallelism(), base_quant="int8-wo",
                 method="lora", precision="fp16-mixed", recompute="none")
    cfg = _axolotl_validate(c, tmp_path)
    assert cfg.adapter == "lora" and cfg.load_in_8bit and cfg.fp16 and not cfg.gradient_checkpointing
    assert cfg.lora_target_modules == ["gate_proj", "up_proj", "down_proj"]
    assert cfg.lora_modules_to_save == ["embed_tokens", "lm_head"] and cfg.deepspeed is None
    plain = _axolotl_validate(_axolotl(base_quant="bnb-nf4"), tmp_path)
    assert plain.bnb_config_kwargs == {"bnb_4bit_use_double_quant": False}


def test_axolotl_run_launches_torchrun_and_installs_the_pinned_release() -> None:
    task = _task(_axolotl())
    assert task["setup"].splitlines() == ["pip install 'axolotl==0.19.0'",
                                          "pip install --no-build-isolation 'axolotl[deepspeed,flash-attn]==0.19.0'"]
    assert "axolotl train axolotl.yaml --launcher torchrun -- --nproc-per-node" in task["run"]
    assert task["envs"]["DATASET_TYPE"] == "alpaca"


@pytest.mark.parametrize(("change", "words"), [
    ({"parallel": Parallelism(tp=2, dp=1)}, "TP2"), ({"method": "freeze"}, "not freeze"),
    ({"recompute": "selective"}, "recomputes selectively"), ({"optimizer": "lion"}, "no 'lion' optimizer"),
    ({"method": "full", "precision": "bf16-mixed", "base_quant": None, "parallel": Parallelism()},
     "without DeepSpeed"),
    ({"base_quant": "int4-wo", "method": "lora"}, "not int4-wo"),
])
def test_a_plan_axolotl_cannot_run_as_planned_is_refused(change: dict[str, Any], words: str) -> None:
    with pytest.raises(InputError, match=re.escape(words)) as err:
        render(_axolotl(**change), "skypilot", REPO)
    assert err.value.fix


def test_the_axolotl_record_is_its_config_schema() -> None:
    from importlib.metadata import version

    from axolotl.utils.schemas.config import AxolotlInputConfig

    record = registry.flags("axolotl")
    assert record["version"] == version("axolotl") == "0.19.0"
    assert set(record["options"]) == set(AxolotlInputConfig.model_fields)


# ---------------------------------------------------------------- torchtune

def _tune(c: Candidate | None = None, **setup: Any) -> Candidate:
    """A QLoRA plan as torchtune prices it: pure bf16, chunked loss."""
    return _with_framework(c or _trl_qlora(), "torchtune", **{"precision": "bf16", "chunked_loss": True, **setup})


def test_torchtune_for_a_model_without_a_builder_is_refused_naming_the_model() -> None:
    c = _tune()
    c = replace(c, estimate=replace(c.estimate, model=replace(LLAMA_8B, name="Made-Up-8B")))
    with pytest.raises(InputError, match="no model builder for Made-Up-8B") as err:
        render(c, "skypilot", REPO)
    assert err.value.field == "--model" and "llama3_1, llama3_2" in err.value.fix


@pytest.mark.parametrize(("change", "words"), [
    ({"parallel": Parallelism(tp=2, dp=1)}, "TP2"), ({"method": "freeze"}, "not freeze"),
    ({"recompute": "selective"}, "recomputes selectively"), ({"optimizer": "lion"}, "no 'lion'"),
    ({"precision": "bf16-mixed"}, "not bf16-mixed"), ({"base_quant": "bnb-nf4"}, "not bnb-nf4"),
    ({"method": "lora", "base_quant": "int8-wo"}, "not int8-wo"), ({"train_embeddings": True}, "no embeddings"),
    ({"parallel": Parallelism(dp=2, zero=1)}, "DP2 ZeRO-1"),
    ({"parallel": Parallelism(dp=2, zero=3, offload_optimizer=True)}, "whole FSDP shards"),
    ({"lora_targets": "mlp"}, "at least one attention projection"),
])
def test_a_plan_torchtune_cannot_run_as_planned_is_refused(change: dict[str, Any], words: str) -> None:
    with pytest.raises(InputError, match=re.escape(words)) as err:
        render(_tune(**change), "skypilot", REPO)
    assert err.value.fix


def test_torchtune_run_downloads_the_model_and_prunes_old_epochs(tmp_path: Path) -> None:
    import subprocess

    task = _task(_tune())
    assert task["setup"].splitlines() == [
        "pip install 'torch==2.8.0' 'torchao==0.13.0' 'torchtune==0.6.1'",
        "tune download meta-llama/Llama-3.1-8B --output-dir model --ignore-patterns 'original/consolidated*'"]
    assert task["resources"]["job_recovery"]["strategy"] == "EAGER_NEXT_REGION" and task["envs"]["DATASET"] == ""
    prune = next(x for x in task["run"].splitlines() if x.startswith("prune() "))
    prune = prune.replace("/checkpoints/gpuplan-finetune-llama-3-1-8b", str(tmp_path))
    for epoch in (0, 1, 2, 10):
        (tmp_path / f"epoch_{epoch}").mkdir()
    (tmp_path / "recipe_state").mkdir()
    subprocess.run(["bash", "-c", f"set -euo pipefail; {prune}; prune"], check=True)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["epoch_10", "epoch_2", "recipe_state"]


TORCHAO = Path(sys.prefix) / "torchao-for-torchtune"


def test_the_torchtune_exports_pass_their_tests_in_an_interpreter_with_torchao() -> None:
    """torchtune 0.6.1 imports torchao 0.13.0's NF4 module (0.17.0, the test environment's for torchtitan, moved it),
    and 0.13 breaks torchtitan's import (its triton kernels fail to define with triton 3.9); so torchtune's tests
    (tests/isolated_torchtune) run in their own interpreter with 0.13.0 first on its path, where scripts/test.sh
    installs it."""
    import subprocess

    assert (TORCHAO / "torchao").is_dir(), f"run scripts/test.sh: it installs torchao 0.13.0 in {TORCHAO}"
    env = {**os.environ, "GPUPLAN_TORCHTUNE": "1",
           "PYTHONPATH": os.pathsep.join([str(TORCHAO), *filter(None, [os.environ.get("PYTHONPATH")])])}
    root = Path(__file__).resolve().parent
    done = subprocess.run([sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-W", "ignore",
                           str(root / "isolated_torchtune")], env=env, cwd=root.parent, capture_output=True, text=True)
    assert done.returncode == 0, done.stdout[-6000:] + done.stderr[-2000:]
    assert re.search(r"\b\d+ passed\b", done.stdout) and "skipped" not in done.stdout, done.stdout[-2000:]


# ---------------------------------------------------------------- Unsloth


def _unsloth(**setup: Any) -> Candidate:
    offer = _offer("RunPod", "RTX4090", 1, region="(community cloud)")
    c = _candidate(FINETUNE_JOB, replace(QLORA, parallel=Parallelism()), "RTX4090", 1, offer)
    return _with_framework(c, "unsloth", **setup)


def _unsloth_calls(c: Candidate) -> dict[str, dict[str, Any]]:
    """The exported script, compiled, and the keyword arguments of each call it makes (literal values as values,
    expressions as their source)."""
    import ast

    source = _heredoc(_task(c)["run"], "train_unsloth.py")
    compile(source, "train_unsloth.py", "exec")
    calls: dict[str, dict[str, Any]] = {}
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Call):
            name = ast.unparse(node.func).rsplit(".", 1)[-1]
            kwargs: dict[str, Any] = {}
            for k in node.keywords:
                assert k.arg, f"{name}: ** in the exported script"
                try:
                    kwargs[k.arg] = ast.literal_eval(k.value)
                except ValueError:
                    kwargs[k.arg] = ast.unparse(k.value)
            calls[name] = kwargs
    return calls


def _unsloth_signature(module: str, cls: str, method: str) -> tuple[set[str], ast.FunctionDef]:
    """The named parameters of ``cls.method`` in the installed unsloth's ``module``, read from its source: unsloth
    cannot be imported without an NVIDIA GPU, so the package is only located (find_spec does not run it)."""
    import importlib.util

    spec = importlib.util.find_spec("unsloth")
    assert spec and spec.submodule_search_locations
    path = Path(next(iter(spec.submodule_search_locations)), *module.split(".")).with_suffix(".py")
    tree = ast.parse(path.read_text(encoding="utf-8"))
    body = next(n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == cls).body
    fn = next(n for n in body if isinstance(n, ast.FunctionDef) and n.name == method)
    return {a.arg for a in (*fn.args.posonlyargs, *fn.args.args, *fn.args.kwonlyargs)}, fn


_UNSLOTH_PLANS = {
    "qlora": {},
    "lora-int8-attention-fp16": {"method": "lora", "base_quant": "bnb-int8", "lora_targets": "attention",
                                 "precision": "fp16-mixed", "recompute": "none"},
    "lora-16bit": {"method": "lora", "base_quant": None},
    "full-mixed": {"method": "full", "base_quant": None, "precision": "bf16-mixed"},
    "full-pure-bf16": {"method": "full", "base_quant": None, "precision": "bf16", "recompute": "none"},
}


def test_unsloth_script_loads_adapts_and_trains_as_planned(tmp_path: Path) -> None:
    from trl import SFTConfig

    calls = _unsloth_calls(_unsloth())
    load, peft = calls["from_pretrained"], calls["get_peft_model"]
    assert load["model_name"] == REPO and load["max_seq_length"] == 1024 and load["load_in_4bit"] is True
    assert load["dtype"] == "torch.bfloat16" and load["token"] == "os.environ.get('HF_TOKEN')"
    assert peft["r"] == 32 and peft["lora_alpha"] == 64 and peft["target_modules"] == "all-linear"
    assert peft["lora_dropout"] == 0.0 and peft["use_gradient_checkpointing"] == "unsloth"
    args = SFTConfig(**{**calls["SFTConfig"], "output_dir": str(tmp_path)})  # the installed TRL's own dataclass
    assert args.per_device_train_batch_size == 4 and args.gradient_accumulation_steps == 4 and args.bf16
    assert args.max_length == 1024 and args.num_train_epochs == 2.0 and args.optim == "adamw_torch"
    # 20,000 samples × 2 epochs ÷ (4 × 4 sequences a step, one GPU) = 2,500 steps; a checkpoint every 1/20 of them
    assert args.save_steps == 125 and calls["SFTConfig"]["output_dir"] == "/checkpoints/gpuplan-finetune-llama-3-1-8b"
    assert set(calls["SFTTrainer"]) == {"model", "processing_class", "train_dataset", "args"}
    assert calls["train"] == {"resume_from_checkpoint": "last"}


@pytest.mark.parametrize("plan", sorted(_UNSLOTH_PLANS))
def test_every_keyword_the_unsloth_script_passes_is_in_unsloths_own_signature(plan: str, tmp_path: Path) -> None:
    import inspect

    from trl import SFTConfig, SFTTrainer

    calls = _unsloth_calls(_unsloth(**_UNSLOTH_PLANS[plan]))
    loads, _ = _unsloth_signature("models.loader", "FastLanguageModel", "from_pretrained")
    adapts, _ = _unsloth_signature("models.llama", "FastLlamaModel", "get_peft_model")
    assert set(calls["from_pretrained"]) <= loads, set(calls["from_pretrained"]) - loads
    assert set(calls.get("get_peft_model", {})) <= adapts, set(calls.get("get_peft_model", {})) - adapts
    assert set(calls["SFTTrainer"]) <= set(inspect.signature(SFTTrainer).parameters)
    SFTConfig(**{**calls["SFTConfig"], "output_dir": str(tmp_path)})  # unknown keywords would raise TypeError


def test_unsloths_get_peft_model_hands_its_keywords_to_fastllamamodels() -> None:
    """The script calls FastLanguageModel.get_peft_model(model, *args, **kwargs), which names no parameter itself:
    the signature that decides is FastLlamaModel.get_peft_model's, which it calls."""
    names, fn = _unsloth_signature("models.loader", "FastLanguageModel", "get_peft_model")
    assert names == {"model"} and fn.args.kwarg is not None
    assert any(isinstance(n, ast.Call) and ast.unparse(n.func) == "FastLlamaModel.get_peft_model"
               for n in ast.walk(fn))


def test_unsloth_full_finetune_loads_every_weight_trainable_in_the_planned_precision() -> None:
    mixed = _unsloth_calls(_unsloth(**_UNSLOTH_PLANS["full-mixed"]))
    assert "get_peft_model" not in mixed and mixed["from_pretrained"]["full_finetuning"] is True
    assert mixed["from_pretrained"]["dtype"] == "torch.float32"  # bf16 mixed: fp32 master weights
    assert mixed["from_pretrained"]["float32_mixed_precision"] is True and mixed["SFTConfig"]["bf16"]
    pure = _unsloth_calls(_unsloth(**_UNSLOTH_PLANS["full-pure-bf16"]))["from_pretrained"]
    assert pure["dtype"] == "torch.bfloat16" and pure["float32_mixed_precision"] is False
    assert pure["use_gradient_checkpointing"] is False


def test_unsloth_lora_int8_attention_without_recompute_in_fp16() -> None:
    calls = _unsloth_calls(_unsloth(**_UNSLOTH_PLANS["lora-int8-attention-fp16"]))
    load, peft = calls["from_pretrained"], calls["get_peft_model"]
    assert load["load_in_8bit"] is True and load["load_in_4bit"] is False and load["dtype"] == "torch.float16"
    assert peft["target_modules"] == ["q_proj", "k_proj", "v_proj", "o_proj"]
    assert peft["use_gradient_checkpointing"] is False and load["use_gradient_checkpointing"] is False
    assert calls["SFTConfig"]["fp16"] is True and calls["SFTConfig"]["bf16"] is False


def test_unsloth_run_resumes_from_the_newest_checkpoint_with_transformers_own_lookup(tmp_path: Path) -> None:
    from transformers.trainer_utils import get_last_checkpoint

    for step in (62, 125, 1000):  # 1000 sorts before 125 and 62 as text
        (tmp_path / f"checkpoint-{step}").mkdir()
    assert get_last_checkpoint(str(tmp_path)) == str(tmp_path / "checkpoint-1000")
    task = _task(_unsloth())
    source = _heredoc(task["run"], "train_unsloth.py")
    assert "get_last_checkpoint(args.output_dir) if os.path.isdir(args.output_dir)" in source
    assert task["file_mounts"]["/checkpoints"]["name"] == "${CKPT_BUCKET}" and task["secrets"] == {"HF_TOKEN": None}
    assert task["setup"] == "pip install 'unsloth==2026.10.9' 'unsloth_zoo==2026.10.9'"
    assert task["resources"]["accelerators"] == "RTX4090:1" and task["num_nodes"] == 1
    assert source.index("from unsloth import") < source.index("from trl import")  # unsloth patches trl first


def test_the_unsloth_record_is_unsloths_own_source() -> None:
    import importlib.metadata

    record = registry.flags("unsloth")
    assert record["version"] == importlib.metadata.version("unsloth") == importlib.metadata.version("unsloth_zoo")
    pins = (Path(__file__).parent / "requirements-export-nodeps.txt").read_text(encoding="utf-8")
    assert f"unsloth=={record['version']}" in pins and f"unsloth_zoo=={record['version']}" in pins
    assert set(record["options"]) == _unsloth_signature("models.loader", "FastLanguageModel", "from_pretrained")[0]
    assert set(record["peft_options"]) == _unsloth_signature("models.llama", "FastLlamaModel", "get_peft_model")[0]


def test_a_multi_gpu_unsloth_plan_is_refused_naming_the_fix() -> None:
    with pytest.raises(InputError, match="trains on 2 GPUs; Unsloth's open-source release trains on one GPU") as err:
        render(_with_framework(_trl_qlora(), "unsloth"), "skypilot", REPO)
    assert err.value.field == "--export" and "--max-gpus 1" in err.value.fix


@pytest.mark.parametrize(("change", "words"), [
    ({"recompute": "selective"}, "recomputes selectively"), ({"method": "freeze"}, "not freeze"),
    ({"base_quant": "bnb-nf4"}, "not bnb-nf4"), ({"train_embeddings": True}, "embeddings"),
    ({"optimizer": "lion"}, "no 'lion' optimizer"), ({"parallel": Parallelism(zero=2)}, "without DeepSpeed"),
])
def test_a_plan_unsloth_cannot_run_as_planned_is_refused(change: dict[str, Any], words: str) -> None:
    with pytest.raises(InputError, match=re.escape(words)) as err:
        render(_unsloth(**change), "skypilot", REPO)
    assert err.value.fix


# ---------------------------------------------------------------- what the three have in common


_NEW = {"litgpt": lambda: _litgpt_full(16), "swift": lambda: _with_framework(_trl_qlora(), "swift"),
        "axolotl": lambda: _axolotl(),
        "torchtune": lambda: _tune(), "unsloth": lambda: _unsloth()}


@pytest.mark.parametrize("framework", sorted(_NEW))
def test_each_new_export_is_a_task_skypilot_loads_with_scripts_bash_parses(framework: str) -> None:
    import subprocess

    task = _task(_NEW[framework]())
    loaded = _skypilot_load(task)
    assert "/checkpoints" in loaded.storage_mounts and loaded.num_nodes == task["num_nodes"]
    for script in (task["setup"], task["run"]):
        subprocess.run(["bash", "-n", "-c", script], check=True)


# ---------------------------------------------------------------- every framework the planner sizes


@pytest.mark.parametrize("framework", sorted({"chatglm", "glm4", "qwen", "pytorch"}))
def test_a_framework_without_an_export_is_refused_naming_those_with_one(framework: str) -> None:
    with pytest.raises(InputError, match=f"sized for --framework {framework}") as err:
        render(_with_framework(_trl_qlora(), framework), "skypilot", REPO)
    assert "--framework llama-factory" in err.value.fix


def test_every_framework_is_one_the_planner_sizes_or_refused() -> None:
    import csv

    with (DATA / "frameworks.csv").open(encoding="utf-8") as f:
        sized = {r["framework"] for r in csv.DictReader(f)}
    assert {fw for written in EXPORTED.values() for fw in written} <= sized


def test_a_trl_plan_from_the_cli_exports_trl(tmp_path: Path) -> None:
    from clirun import run_cli

    out = tmp_path / "task.yaml"
    code, stdout, err = run_cli(["plan", "finetune", "Qwen2.5-0.5B", "--samples", "1k", "--tokens-per-sample", "256",
                                 "--framework", "trl", "--provider", "aws", "--export", "skypilot", "--out", str(out),
                                 "--json"])
    assert code == 0, err
    task = yaml.safe_load(out.read_text(encoding="utf-8"))
    assert "-m trl.scripts.sft" in task["run"] and json.loads(stdout)["export"]["format"] == "skypilot"
    assert skypilot.GPUS_PER_NODE == 8


def test_when_no_plan_can_be_exported_the_error_is_the_frameworks_not_the_picks_cloud() -> None:
    """Every plan of --framework chatglm fails to export; the reason given is that of the best plan SkyPilot would
    launch (the framework), not that the cheapest pick's provider has no SkyPilot cloud."""
    from clirun import run_cli

    code, _, err = run_cli(["plan", "finetune", "Qwen2.5-0.5B", "--samples", "1k", "--tokens-per-sample", "256",
                            "--framework", "chatglm", "--export", "skypilot"])
    assert code == 2 and "sized for --framework chatglm" in err and "no cloud" not in err


def test_an_axolotl_plan_from_the_cli_exports_axolotl_with_its_packing(tmp_path: Path) -> None:
    from clirun import run_cli

    out = tmp_path / "task.yaml"
    code, _, err = run_cli(["plan", "finetune", "Qwen2.5-0.5B", "--samples", "1k", "--tokens-per-sample", "256",
                            "--framework", "axolotl", "--export", "skypilot", "--out", str(out)])
    assert code == 0, err
    cfg = _axolotl_validate(yaml.safe_load(out.read_text(encoding="utf-8"))["run"], tmp_path)
    assert cfg.sample_packing and cfg.base_model == "Qwen/Qwen2.5-0.5B" and cfg.adapter == "lora"
