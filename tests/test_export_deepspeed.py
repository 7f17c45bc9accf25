"""The SkyPilot training task for ``--framework deepspeed``: DeepSpeed-Chat's step-1 script started by the
DeepSpeed launcher. Each export is read by DeepSpeed 0.19.8's own launcher parser (``deepspeed.launcher.runner``),
by the script's parser rebuilt from the recorded ``add_argument`` calls plus DeepSpeed's ``add_config_arguments``
(which the script adds), and the DeepSpeed config the script builds from those flags by DeepSpeed's own
``DeepSpeedConfig`` (which derives the accumulation from the batch sizes and checks the ZeRO section)."""

from __future__ import annotations

import argparse
import csv
import re
import shlex
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
import yaml
from test_export import FINETUNE_JOB, LLAMA_8B, REPO, _candidate, _offer, _skypilot_load

from gpuplan.errors import InputError
from gpuplan.export import registry, render
from gpuplan.export.deepspeed_chat import ds_config
from gpuplan.plan.planner import Candidate
from gpuplan.types import Job, Parallelism, TrainSetup

DATA = Path(__file__).parent.parent / "gpuplan" / "data"
LORA = TrainSetup(method="lora", micro_batch=4, seq_len=1024, grad_accum=4, precision="bf16-mixed", recompute="full",
                  lora_rank=32, parallel=Parallelism(dp=8, zero=2, offload_optimizer=True), framework="deepspeed")
LORA_JOB = replace(FINETUNE_JOB, method="lora", framework="deepspeed")  # 20,000 samples × 2 epochs


def _ds(setup: TrainSetup = LORA, job: Job = LORA_JOB, pricing: str = "on-demand", n_gpus: int = 8) -> Candidate:
    offer = _offer("Lambda", "A100-80GB", min(n_gpus, 8), pricing, "gpu_8x_a100_80gb_sxm4")
    return _candidate(job, setup, "A100-80GB", n_gpus, offer)


def _task(c: Candidate) -> dict[str, Any]:
    return yaml.safe_load(render(c, "skypilot", REPO))


def _script_parser() -> argparse.ArgumentParser:
    """main.py's parser, rebuilt from the recorded add_argument calls, with DeepSpeed's own config arguments."""
    import deepspeed

    types = {"int": int, "float": float, "str": str, None: str, "SchedulerType": str}
    parser = argparse.ArgumentParser(allow_abbrev=False)
    for name, spec in registry.flags("deepspeed_chat")["options"].items():
        if not spec["takes_value"]:
            parser.add_argument(name, action="store_true")
        else:
            parser.add_argument(name, type=types[spec["type"]], nargs=spec["nargs"], choices=spec["choices"])
    return deepspeed.add_config_arguments(parser)


def _launch(c: Candidate, nodes: int = 1) -> tuple[Any, argparse.Namespace]:
    """The run's launcher line read by DeepSpeed's launcher parser, then the script's arguments by the script's."""
    from deepspeed.launcher.runner import parse_args

    run = _task(c)["run"]
    line = next(x for x in run.splitlines() if x.startswith("deepspeed "))
    env = {"$SKYPILOT_NUM_NODES": str(nodes), "$SKYPILOT_NUM_GPUS_PER_NODE": "8", "$SKYPILOT_NODE_RANK": "0",
           '$(echo "$SKYPILOT_NODE_IPS" | head -n1)': "10.0.0.1", "$DATASET": "Dahoas/rm-static"}
    for var, value in env.items():
        line = line.replace(f'"{var}"', value)
    launcher = parse_args(shlex.split(line)[1:])
    return launcher, _script_parser().parse_args(launcher.user_args)


class _DataParallel:
    def __init__(self, ranks: int) -> None:
        self.ranks = ranks

    def get_data_parallel_world_size(self) -> int:
        return self.ranks


def _deepspeed_reads(s: TrainSetup, monkeypatch: pytest.MonkeyPatch) -> Any:
    """The config read as on rank 0 of ``s.parallel.dp`` data-parallel ranks (no process group is started)."""
    from deepspeed.runtime import config

    monkeypatch.setattr(config.dist, "get_rank", lambda: 0)
    return config.DeepSpeedConfig(ds_config(s), mpu=_DataParallel(s.parallel.dp))


def test_lora_runs_the_planned_rank_batch_recompute_zero_and_offload() -> None:
    launcher, args = _launch(_ds())
    assert launcher.user_script == "main.py" and launcher.no_ssh and launcher.master_addr == "10.0.0.1"
    assert (launcher.num_nodes, launcher.num_gpus, launcher.node_rank, launcher.master_port) == (1, 8, 0, 29500)
    assert args.model_name_or_path == REPO and args.data_path == ["Dahoas/rm-static"] and args.deepspeed
    assert args.data_split == "10,0,0"  # every row for step 1, none kept for the reward model or PPO
    assert (args.per_device_train_batch_size, args.gradient_accumulation_steps, args.max_seq_len) == (4, 4, 1024)
    assert args.num_train_epochs == 2 and args.gradient_checkpointing and args.offload and args.zero_stage == 2
    assert args.lora_dim == 32 and args.lora_module_name == "layers." and args.only_optimize_lora
    assert args.dtype == "bf16" and args.learning_rate == args.lora_learning_rate == 1e-4
    assert args.output_dir == "/checkpoints/gpuplan-finetune-llama-3-1-8b"


def test_the_config_the_script_builds_is_one_deepspeed_reads_as_planned(monkeypatch: pytest.MonkeyPatch) -> None:
    cfg = _deepspeed_reads(LORA, monkeypatch)
    # 4 a GPU × 8 GPUs × 4 accumulated = 128 a step; DeepSpeed derives the accumulation back from it
    assert (cfg.train_batch_size, cfg.train_micro_batch_size_per_gpu, cfg.gradient_accumulation_steps) == (128, 4, 4)
    assert cfg.zero_optimization_stage == 2 and cfg.zero_config.offload_optimizer.device == "cpu"
    assert cfg.bfloat16_config.enabled and not cfg.float16_config.enabled
    full = replace(LORA, method="full", precision="fp16-mixed", recompute="none", micro_batch=2, grad_accum=8,
                   parallel=Parallelism(dp=16, zero=3))
    cfg = _deepspeed_reads(full, monkeypatch)
    assert (cfg.train_batch_size, cfg.gradient_accumulation_steps, cfg.zero_optimization_stage) == (256, 8, 3)
    assert cfg.float16_config.enabled and cfg.zero_config.offload_param.device == "none"


def test_a_full_finetune_over_two_nodes_starts_the_launcher_on_each() -> None:
    full = replace(LORA, method="full", precision="fp16-mixed", recompute="none", parallel=Parallelism(dp=16, zero=3))
    task = _task(_ds(full, replace(LORA_JOB, method="full"), n_gpus=16))
    assert task["num_nodes"] == 2 and task["resources"]["accelerators"] == "A100-80GB:8"
    launcher, args = _launch(_ds(full, replace(LORA_JOB, method="full"), n_gpus=16), nodes=2)
    assert launcher.num_nodes == 2 and args.zero_stage == 3 and args.dtype == "fp16"
    assert not (args.offload or args.gradient_checkpointing)
    assert args.lora_dim is None and not args.only_optimize_lora  # not given: the script's default, no LoRA
    assert args.learning_rate == 1e-5


def test_the_task_is_one_skypilot_loads_and_bash_parses() -> None:
    import subprocess

    task = _task(_ds())
    loaded = _skypilot_load(task)
    assert "/checkpoints" in loaded.storage_mounts and not task["resources"]["use_spot"]
    assert "83757d9c937daabd1089a08051061706cb73900d" in task["setup"] and "deepspeed==0.19.8" in task["setup"]
    assert "cannot resume" in task["run"]
    for script in (task["setup"], task["run"]):
        subprocess.run(["bash", "-n", "-c", script], check=True)


def test_the_record_is_the_script_the_deepspeed_row_was_sized_from() -> None:
    """The flags are those of the revision frameworks.csv cites for the deepspeed defaults, and the rebuilt parser
    refuses a flag the script lacks."""
    with (DATA / "frameworks.csv").open(encoding="utf-8") as f:
        row = next(r for r in csv.DictReader(f) if r["framework"] == "deepspeed")
    record = registry.flags("deepspeed_chat")
    assert f"@{record['version']}" in row["source"] and "step1_supervised_finetuning/main.py" in record["source"]
    assert record["options"]["--dtype"]["choices"] == ["fp16", "bf16"]
    with pytest.raises(SystemExit):
        _script_parser().parse_args(["--model_name_or_path", "m", "--lora_dropout", "0.1"])


@pytest.mark.parametrize(("change", "job", "words"), [
    ({}, {"pricing": "spot"}, "cannot resume"),
    ({"parallel": Parallelism(tp=2, dp=4)}, {}, "data parallelism and ZeRO only"),
    ({"method": "qlora"}, {}, "not qlora"),
    ({"base_quant": "bnb-int8"}, {}, "no quantized base"),
    ({"parallel": Parallelism(dp=8, zero=3, offload_optimizer=True)}, {}, "parameters to the CPU too"),
    ({"recompute": "selective"}, {}, "whole layers"),
    ({"precision": "fp32"}, {}, "not fp32"),
    ({"optimizer": "sgd"}, {}, "not sgd"),
    ({"lora_targets": "qv"}, {}, "--lora-targets qv"),
    ({}, {"job": replace(LORA_JOB, epochs=1.5)}, "whole epochs"),
])
def test_a_plan_deepspeed_chat_cannot_run_as_planned_is_refused(change: dict[str, Any], job: dict[str, Any],
                                                                words: str) -> None:
    c = _ds(replace(LORA, **change), job.get("job", LORA_JOB), job.get("pricing", "on-demand"))
    with pytest.raises(InputError, match=re.escape(words)):
        render(c, "skypilot", REPO)


def test_lora_on_a_model_whose_module_names_are_unknown_is_refused() -> None:
    c = _ds()
    c = replace(c, estimate=replace(c.estimate, model=replace(LLAMA_8B, name="gpt2", model_type="gpt2")))
    with pytest.raises(InputError, match="Llama-style") as err:
        render(c, "skypilot", REPO)
    assert "--framework trl" in err.value.fix
