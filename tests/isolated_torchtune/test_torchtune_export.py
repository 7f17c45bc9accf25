"""The torchtune export (``--framework torchtune``) read by torchtune 0.6.1 itself: ``tune run``'s parser, its config
parser (the YAML merged with the command line's overrides) and ``torchtune.config.validate``, every ``_component_``
resolved, the LoRA model built on the meta device, and its checkpointer pointed at a bucket a preemption left.

torchtune needs torchao 0.13.0, while the test environment holds 0.17.0 for torchtitan (0.13's kernels break its
import), so these tests run only in the interpreter ``test_export_frameworks.py`` starts with torchao 0.13.0 first on
its path (``GPUPLAN_TORCHTUNE=1``; tests/conftest.py leaves this folder out otherwise)."""

from __future__ import annotations

import re
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
import yaml
from test_export import FULL, FULL_JOB, _candidate, _offer
from test_export_frameworks import _in_tmp, _task, _tune, _with_framework

from gpuplan.catalog import load_catalog
from gpuplan.export import registry
from gpuplan.plan.planner import Candidate
from gpuplan.types import Parallelism

__all__ = ["_in_tmp"]  # the working folder of each test is its tmp_path



def _tune_full(n_gpus: int = 8, **setup: Any) -> Candidate:
    offer = _offer("Lambda", "A100-80GB", n_gpus, "on-demand", "gpu_8x_a100_80gb_sxm4")
    planned = replace(FULL, precision="bf16", parallel=Parallelism(dp=n_gpus, zero=3 if n_gpus > 1 else 0),
                      recompute="full", chunked_loss=True)
    return _with_framework(_candidate(FULL_JOB, replace(planned, **setup), "A100-80GB", n_gpus, offer), "torchtune")


def _bucket(tmp_path: Path, epochs_run: int | None, shards: int = 2) -> Path:
    """A bucket folder as torchtune leaves it after ``epochs_run`` epochs (None: a first start), with the next
    epoch's folder half written (a preemption while saving), and the downloaded model beside the run."""
    import torch

    out, model = tmp_path / "bucket", tmp_path / "model"
    (model / "original").mkdir(parents=True)
    (model / "config.json").write_text("{}", encoding="utf-8")
    for i in range(1, shards + 1):
        (model / f"model-{i:05d}-of-{shards:05d}.safetensors").write_text("", encoding="utf-8")
    if epochs_run is not None:
        (out / "recipe_state").mkdir(parents=True)
        torch.save({"epochs_run": epochs_run, "seed": 1}, out / "recipe_state" / "recipe_state.pt")
        for epoch in range(epochs_run + 1):  # the last one half written: no adapter, one shard
            (out / f"epoch_{epoch}").mkdir()
            (out / f"epoch_{epoch}" / f"model-00001-of-{shards:05d}.safetensors").write_text("", encoding="utf-8")
            if epoch < epochs_run:
                (out / f"epoch_{epoch}" / "adapter_model.pt").write_text("", encoding="utf-8")
                (out / f"epoch_{epoch}" / f"model-00002-of-{shards:05d}.safetensors").write_text("", encoding="utf-8")
    return out


def _tune_run(c: Candidate | str, tmp_path: Path, epochs_run: int | None = None) -> tuple[Any, Any]:
    """The exported run as its shell runs it, on a bucket left after ``epochs_run`` epochs: the config written,
    the resume point found, ``tune run``'s words expanded by bash; then read by ``tune run``'s own parser and
    config parser (YAML merged with the command line's overrides), validated by ``torchtune.config.validate``.
    (the ``tune run`` arguments, the config)."""
    import argparse
    import subprocess

    from torchtune import config
    from torchtune._cli.run import Run
    from torchtune.config._parse import TuneRecipeArgumentParser
    from torchtune.config._utils import _merge_yaml_and_cli_args

    run = c if isinstance(c, str) else _task(c)["run"]
    out = _bucket(tmp_path, epochs_run)
    run = re.sub(r"/checkpoints/[a-z0-9-]+", str(out), run)
    lines = [x for x in run.splitlines() if not x.startswith(("prune", "if [ \"$SKYPILOT_NODE_RANK\""))]
    script = "\n".join(lines).replace("\ntune run ", "\nprintf '%s\\n' ")
    env = {"PATH": f"{Path(__import__('sys').executable).parent}:/usr/bin:/bin", "DATASET": "yahma/alpaca-cleaned",
           "SKYPILOT_NUM_NODES": "1", "SKYPILOT_NUM_GPUS_PER_NODE": "8", "SKYPILOT_NODE_RANK": "0",
           "SKYPILOT_NODE_IPS": "10.0.0.1\n10.0.0.2"}
    words = subprocess.run(["bash", "-c", script], cwd=tmp_path, env=env, check=True, capture_output=True,
                           text=True).stdout.splitlines()
    tune = argparse.ArgumentParser(prog="tune")
    Run(tune.add_subparsers())  # `tune run`'s parser: torchrun's options, then the recipe and its arguments
    args = tune.parse_args(["run", *words])
    yaml_args, cli_args = TuneRecipeArgumentParser().parse_known_args(args.recipe_args)
    cfg = _merge_yaml_and_cli_args(yaml_args, cli_args)
    config.validate(cfg)
    return args, cfg


def _components(node: Any) -> list[str]:
    from omegaconf import DictConfig

    if not isinstance(node, DictConfig):
        return []
    found = [str(node["_component_"])] if "_component_" in node else []
    return found + [c for v in node.values() for c in _components(v)]


def test_torchtune_qlora_runs_the_planned_recipe_builder_rank_batch_and_recompute(tmp_path: Path) -> None:
    from torchtune.config._utils import _get_component_from_path

    args, cfg = _tune_run(_tune(), tmp_path)
    assert args.recipe == "lora_finetune_distributed" and (args.nnodes, args.nproc_per_node) == ("1", "8")
    assert args.rdzv_endpoint == "10.0.0.1:29500" and args.node_rank == 0
    assert cfg.model._component_ == "torchtune.models.llama3_1.qlora_llama3_1_8b"
    assert list(cfg.model.lora_attn_modules) == ["q_proj", "k_proj", "v_proj", "output_proj"]
    assert cfg.model.apply_lora_to_mlp and cfg.model.lora_rank == 32 and cfg.model.lora_alpha == 64
    assert cfg.batch_size == 4 and cfg.gradient_accumulation_steps == 4 and cfg.tokenizer.max_seq_len == 1024
    assert cfg.enable_activation_checkpointing and cfg.dtype == "bf16" and cfg.fsdp_reshard_after_forward  # ZeRO-3
    assert cfg.loss._component_ == "torchtune.modules.loss.CEWithChunkedOutputLoss" and not cfg.dataset.packed
    # 20,000 samples × 2 epochs ÷ (4 × 4 × 2 sequences a step) = 1,250 steps: 20 epochs of 63 (1,260 steps)
    assert (cfg.epochs, cfg.max_steps_per_epoch) == (20, 63)
    assert cfg.dataset.source == "yahma/alpaca-cleaned" and cfg.tokenizer.path == "model/original/tokenizer.model"
    assert list(cfg.checkpointer.checkpoint_files) == ["model-00001-of-00002.safetensors",
                                                        "model-00002-of-00002.safetensors"]
    assert cfg.save_adapter_weights_only and not cfg.resume_from_checkpoint
    for component in _components(cfg):
        _get_component_from_path(component)


def test_torchtune_resumes_lora_from_the_epoch_the_recipe_state_records(tmp_path: Path) -> None:
    """Four epochs run, the fifth's folder half written: the run resumes from epoch_3, as torchtune's own
    checkpointer finds it (the base from the download, the adapter and state from the bucket)."""
    from torchtune import config

    _, cfg = _tune_run(_tune(), tmp_path, epochs_run=4)
    assert cfg.resume_from_checkpoint and cfg.checkpointer.adapter_checkpoint == "epoch_3/adapter_model.pt"
    cfg.checkpointer.output_dir = cfg.output_dir = str(tmp_path / "bucket")
    checkpointer = config.instantiate(cfg.checkpointer, should_load_recipe_state=True)
    assert checkpointer._adapter_checkpoint == tmp_path / "bucket" / "epoch_3" / "adapter_model.pt"
    assert checkpointer._recipe_checkpoint == tmp_path / "bucket" / "recipe_state" / "recipe_state.pt"
    assert [p.parent.name for p in checkpointer._checkpoint_paths] == ["model", "model"]


def test_torchtune_resumes_a_full_finetune_from_that_epochs_weights(tmp_path: Path) -> None:
    from torchtune import config

    args, cfg = _tune_run(_tune_full(), tmp_path, epochs_run=4)
    assert args.recipe == "full_finetune_distributed" and cfg.resume_from_checkpoint
    assert list(cfg.checkpointer.checkpoint_files) == ["epoch_3/model-00001-of-00002.safetensors",
                                                        "epoch_3/model-00002-of-00002.safetensors"]
    cfg.checkpointer.output_dir = str(tmp_path / "bucket")
    checkpointer = config.instantiate(cfg.checkpointer, should_load_recipe_state=True)
    assert [p.parent.name for p in checkpointer._checkpoint_paths] == ["epoch_3", "epoch_3"]
    # 2e8 tokens ÷ 2,048 = 97,657 sequences ÷ (2 × 2 × 8 a step) = 3,052 steps: 20 epochs of 153
    assert (cfg.epochs, cfg.max_steps_per_epoch) == (20, 153) and cfg.model._component_.endswith("llama3_1_8b")


def test_torchtune_on_one_gpu_runs_the_single_device_recipe_in_process(tmp_path: Path) -> None:
    c = _tune_full(1, recompute="none", fused_optimizer_step=True, optimizer="sgd", chunked_loss=False,
                   lengths_vary=False)
    args, cfg = _tune_run(c, tmp_path)
    assert args.recipe == "full_finetune_single_device" and args.nnodes == "1:1"  # torchrun's default: unused
    assert "--nproc_per_node" not in _task(c)["run"] and cfg.optimizer_in_bwd
    assert cfg.optimizer._component_ == "torch.optim.SGD" and not cfg.enable_activation_checkpointing
    assert cfg.loss._component_ == "torch.nn.CrossEntropyLoss" and cfg.dataset.packed
    assert "fsdp_reshard_after_forward" not in cfg


def test_torchtune_lora_targets_are_its_builders_arguments_and_train_what_the_plan_counts() -> None:
    """The LoRA model torchtune builds (on the meta device) has the adapters the targets name, as many parameters
    as the plan priced: all-linear on Llama-3.1-8B at rank 32 is 32 layers × 32 × (q 4096+4096, k 4096+1024,
    v 4096+1024, o 4096+4096, gate and up 4096+14336 each, down 14336+4096 = 81,920) = 83,886,080 parameters; qv
    32 × 32 × (8,192 + 5,120); attention 32 × 32 × 26,624."""
    import torch
    from omegaconf import OmegaConf
    from torchtune import config

    from gpuplan.estimate.memory import trainable_params
    from gpuplan.export.torchtune import torchtune_config

    for targets, expected in (("all-linear", 83_886_080), ("qv", 13_631_488), ("attention", 27_262_976)):
        c = _tune(method="lora", base_quant=None, lora_targets=targets)
        cfg = OmegaConf.create(torchtune_config(c.estimate, "/checkpoints/x", 100, 1e-4))
        with torch.device("meta"):
            model = config.instantiate(cfg.model)
        built = sum(p.numel() for n, p in model.named_parameters() if "lora_" in n)
        assert built == expected == trainable_params(c.estimate.model, c.estimate.setup), targets


@pytest.mark.parametrize("preset", ["Llama-3.1-8B", "Llama-3.2-1B", "Llama-3.1-70B", "Qwen2.5-0.5B", "Qwen2.5-7B",
                                    "Qwen2-7B", "Mistral-7B", "Gemma-2-9B", "Gemma-7B", "Llama-2-7B"])
def test_each_torchtune_builder_the_export_picks_is_the_presets_architecture(preset: str) -> None:
    """The builder found by name is checked against the catalog's preset: layers, width, heads, KV heads and
    vocabulary of the model torchtune builds (on the meta device)."""
    import torch
    from torchtune.config._utils import _get_component_from_path

    from gpuplan.export.torchtune import builder

    m = load_catalog().model(preset)
    c = _tune()
    module, name = builder(replace(c.estimate, model=m))
    with torch.device("meta"):
        model = _get_component_from_path(f"{module}.{name}")()
    attention = model.layers[0].attn
    got = (len(model.layers), model.tok_embeddings.embedding_dim, attention.num_heads, attention.num_kv_heads,
           model.tok_embeddings.num_embeddings)
    assert got == (m.n_layers, m.hidden, m.n_heads, m.n_kv_heads, m.vocab)


def test_the_torchtune_record_is_torchtunes_own() -> None:
    """The recipes are ``tune ls``'s, with the keys their source reads; each family's builders and tokenizer exist
    in the installed torchtune, and its files are those of the family's shipped config."""
    import inspect
    from importlib.metadata import version

    import torchtune
    from omegaconf import OmegaConf
    from torchtune._recipe_registry import get_all_recipes
    from torchtune.config._utils import _get_component_from_path

    record = registry.flags("torchtune")
    assert record["version"] == version("torchtune") == "0.6.1"
    shipped = {r.name: r for r in get_all_recipes()}
    root = Path(torchtune.__file__).resolve().parent.parent / "recipes"
    for name, recorded in record["recipes"].items():
        source = (root / shipped[name].file_path).read_text(encoding="utf-8")
        assert shipped[name].supports_distributed == recorded["distributed"]
        assert all(re.search(rf'cfg\.{k}\b|cfg\.get\(\s*"{k}"', source) for k in recorded["keys"]), name
    configs = {c.name: c for r in shipped.values() for c in r.configs}
    for module, family in record["families"].items():
        for name, params in family["builders"].items():
            assert sorted(inspect.signature(_get_component_from_path(f"{module}.{name}")).parameters) == params
        cfg = OmegaConf.load(root / "configs" / configs[family["config"]].file_path)
        assert cfg.tokenizer._component_ == family["tokenizer"] and cfg.checkpointer.model_type == family["model_type"]
        assert all(str(cfg.tokenizer[k]).endswith(v) for k, v in family["tokenizer_files"].items())


def test_a_torchtune_plan_from_the_cli_exports_torchtune(tmp_path: Path) -> None:
    from clirun import run_cli

    out = tmp_path / "task.yaml"
    code, _, err = run_cli(["plan", "finetune", "Qwen2.5-0.5B", "--samples", "1k", "--tokens-per-sample", "256",
                            "--framework", "torchtune", "--provider", "aws", "--export", "skypilot", "--out",
                            str(out)])
    assert code == 0, err
    args, cfg = _tune_run(yaml.safe_load(out.read_text(encoding="utf-8"))["run"], tmp_path)
    assert cfg.model._component_ == "torchtune.models.qwen2_5.lora_qwen2_5_0_5b" and cfg.dtype == "bf16"
    assert cfg.tokenizer.merges_file == "model/merges.txt" and args.recipe.startswith("lora_finetune_")
