"""The SkyPilot training task for ``--framework llm-foundry``: LLM Foundry's train script started by Composer's
launcher. Each export's config is read by LLM Foundry 0.22.0 itself (``make_dataclass_and_log_config`` over
``TrainConfig``, unknown keys refused, with its transforms, which derive the accumulation from the batch sizes, and
``validate_config``), its FSDP section by Composer 0.32.1's ``FSDPConfig``, its LoRA section by the ``LoraConfig``
llm-foundry builds from it, every registered name by llm-foundry's registries, and the launcher line by Composer's
launcher parser: in an interpreter of their own (tests/isolated_foundry/check.py), with the releases
tests/requirements-export-foundry.txt pins first on its path, where scripts/test.sh installs them."""

from __future__ import annotations

import json
import re
import shlex
import subprocess
import sys
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
import yaml
from test_export import FINETUNE_JOB, FULL_JOB, LLAMA_8B, PRETRAIN_JOB, REPO, _candidate, _offer, _skypilot_load

from gpuplan.errors import InputError
from gpuplan.export import render
from gpuplan.export.llmfoundry import VERSION
from gpuplan.plan.planner import Candidate
from gpuplan.types import Job, Parallelism, TrainSetup

FOUNDRY = Path(sys.prefix) / f"llm-foundry-{VERSION}"
CHECK = Path(__file__).parent / "isolated_foundry" / "check.py"
PINS = Path(__file__).parent / "requirements-export-foundry.txt"

LORA = TrainSetup(method="lora", micro_batch=4, seq_len=1024, grad_accum=4, precision="bf16-mixed", recompute="full",
                  lora_rank=32, parallel=Parallelism(dp=8, zero=3), framework="llm-foundry", lengths_vary=False)
LORA_JOB = replace(FINETUNE_JOB, method="lora", framework="llm-foundry")  # 20,000 samples × 2 epochs
FULL = TrainSetup(method="full", micro_batch=2, seq_len=2048, grad_accum=2, precision="fp16-mixed", recompute="none",
                  parallel=Parallelism(dp=16, zero=2), framework="llm-foundry")
ONE = replace(LORA, micro_batch=8, grad_accum=3, recompute="none", lora_rank=16, lora_targets="attention",
              lora_dropout=0.05, train_embeddings=True, parallel=Parallelism(), lengths_vary=True)
PRETRAIN = TrainSetup(method="full", micro_batch=1, seq_len=4096, grad_accum=16, precision="bf16-mixed",
                      recompute="full", parallel=Parallelism(dp=64, zero=3), framework="llm-foundry")


def _plan(setup: TrainSetup = LORA, job: Job = LORA_JOB, n_gpus: int = 8, pricing: str = "spot") -> Candidate:
    offer = _offer("AWS", "H100", min(n_gpus, 8), pricing, "p5.48xlarge")
    return _candidate(replace(job, framework="llm-foundry"), setup, "H100", n_gpus, offer)


PLANS = {"lora": _plan(), "full-2-nodes": _plan(FULL, replace(FULL_JOB, framework="llm-foundry"), 16),
         "lora-1-gpu": _plan(ONE, n_gpus=1), "pretrain": _plan(PRETRAIN, PRETRAIN_JOB, 64)}


def _task(c: Candidate) -> dict[str, Any]:
    return yaml.safe_load(render(c, "skypilot", REPO))


def _case(c: Candidate, node_rank: int = 0) -> dict[str, Any]:
    """The config the run writes, its overrides and the launcher's argv, as the shell gives them on ``node_rank``
    of a task of 8 GPUs a node (DATASET=tatsu-lab/alpaca, DATA_REMOTE=s3://bucket/mds)."""
    task = _task(c)
    run = task["run"]
    config = run.split("cat > train.yaml <<'GPUPLAN_EOF'\n")[1].split("\nGPUPLAN_EOF")[0]
    line = next(x for x in run.splitlines() if x.startswith("composer "))
    nodes, per_node = task["num_nodes"], int(task["resources"]["accelerators"].split(":")[1])
    env = {"SKYPILOT_NUM_NODES": str(nodes), "SKYPILOT_NUM_GPUS_PER_NODE": str(per_node),
           "SKYPILOT_NODE_RANK": str(node_rank), "SKYPILOT_NODE_IPS": "10.0.0.1\n10.0.0.2",
           "DATASET": "tatsu-lab/alpaca", "DATASET_SPLIT": "train", "DATA_REMOTE": "s3://bucket/mds"}
    argv = subprocess.run(["bash", "-c", f'printf "%s\\0" {line.removeprefix("composer ")}'], env=env,
                          capture_output=True, text=True, check=True).stdout.split("\0")[:-1]
    script = argv.index("llm-foundry/scripts/train/train.py")
    return {"yaml": config, "overrides": argv[script + 2:], "world_size": nodes * per_node, "launcher": argv}


@pytest.fixture(scope="module")
def read() -> dict[str, Any]:
    """Every plan of PLANS (and the two-node one on its second node) as llm-foundry and Composer read it."""
    assert (FOUNDRY / "llmfoundry").is_dir(), f"run scripts/test.sh: it installs llm-foundry {VERSION} in {FOUNDRY}"
    cases = {name: _case(c) for name, c in PLANS.items()} | {"node-1": _case(PLANS["full-2-nodes"], 1)}
    done = subprocess.run([sys.executable, str(CHECK)], input=json.dumps(list(cases.values())), text=True,
                          capture_output=True, env={"PYTHONPATH": str(FOUNDRY), "PATH": "/usr/bin:/bin",
                                                    "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"})
    line = next((x for x in done.stdout.splitlines() if x.startswith("GPUPLAN_RESULT ")), None)
    assert done.returncode == 0 and line, done.stdout[-3000:] + done.stderr[-6000:]
    version, *results = json.loads(line.removeprefix("GPUPLAN_RESULT "))
    assert version == {"version": VERSION}
    return dict(zip(cases, results, strict=True))


def test_lora_trains_the_planned_rank_batch_fsdp_and_recompute_and_resumes(read: dict[str, Any]) -> None:
    r = read["lora"]
    assert "error" not in r, r.get("error")
    # 4 a GPU × 4 accumulated × 8 GPUs = 128 a step; llm-foundry derives 128 / 8 / 4 = 4 micro-steps back from it
    assert (r["global_train_batch_size"], r["device_train_microbatch_size"]) == (128, 4)
    assert r["device_train_grad_accum"] == 4
    assert r["n_gpus"] == 8 and r["max_seq_len"] == 1024 and r["max_duration"] == "2ep"  # 2 epochs of the samples
    assert r["lora"] == {"r": 32, "alpha": 64, "dropout": 0.0, "targets": "all-linear", "modules_to_save": None}
    assert r["fsdp_config"]["sharding_strategy"] == "FULL_SHARD" and r["fsdp_config"]["activation_checkpointing"]
    assert r["precision"] == "amp_bf16" and r["model"]["pretrained"]
    assert r["model"]["pretrained_model_name_or_path"] == REPO
    assert r["autoresume"] and r["save_folder"] == "/checkpoints/gpuplan-finetune-llama-3-1-8b" and r["run_name"]
    # 20,000 × 2 ÷ 128 = 313 steps; a checkpoint every 313 // 20 = 15
    assert r["save_interval"] == "15ba"
    assert r["train_loader"]["dataset"]["hf_name"] == "tatsu-lab/alpaca"
    assert r["train_loader"]["dataset"]["packing_ratio"] == "auto"  # the plan sized packed sequences


def test_a_full_finetune_over_two_nodes_shards_gradients_in_fp16_for_the_token_budget(read: dict[str, Any]) -> None:
    r = read["full-2-nodes"]
    assert "error" not in r, r.get("error")
    # 2 × 2 × 16 GPUs = 64 sequences a step
    assert (r["global_train_batch_size"], r["device_train_grad_accum"], r["n_gpus"]) == (64, 2, 16)
    assert r["max_duration"] == "200000000tok" and r["precision"] == "amp_fp16" and "peft_config" not in r["model"]
    assert r["fsdp_config"]["sharding_strategy"] == "SHARD_GRAD_OP" and not r["fsdp_config"]["activation_checkpointing"]
    first, second = r["launcher"], read["node-1"]["launcher"]
    assert (first["world_size"], first["nproc"], first["base_rank"], first["node_rank"]) == (16, 8, 0, 0)
    assert (second["world_size"], second["nproc"], second["base_rank"], second["node_rank"]) == (16, 8, 8, 1)
    assert first["master_addr"] == second["master_addr"] == "10.0.0.1" and first["master_port"] == 29500
    assert first["training_script"] == "llm-foundry/scripts/train/train.py"
    assert first["training_script_args"][0] == "train.yaml"


def test_one_gpu_trains_without_fsdp_with_the_planned_lora_modules(read: dict[str, Any]) -> None:
    r = read["lora-1-gpu"]
    assert "error" not in r, r.get("error")
    assert r["fsdp_config"] is None and r["n_gpus"] == 1 and r["model"]["init_device"] == "cpu"
    assert (r["global_train_batch_size"], r["device_train_grad_accum"]) == (24, 3)  # 8 × 3 on one GPU
    assert r["lora"] == {"r": 16, "alpha": 32, "dropout": 0.05, "targets": ["k_proj", "o_proj", "q_proj", "v_proj"],
                         "modules_to_save": ["embed_tokens", "lm_head"]}
    assert "packing_ratio" not in r["train_loader"]["dataset"]


def test_pretraining_starts_from_the_architecture_and_streams_the_shards(read: dict[str, Any]) -> None:
    r = read["pretrain"]
    assert "error" not in r, r.get("error")
    assert not r["model"]["pretrained"] and r["model"]["init_device"] == "meta"
    assert (r["global_train_batch_size"], r["device_train_grad_accum"], r["n_gpus"]) == (1024, 16, 64)  # 1 × 16 × 64
    assert r["max_duration"] == "100000000000tok" and r["train_loader"]["name"] == "text"
    assert r["train_loader"]["dataset"]["remote"] == "s3://bucket/mds"
    assert r["fsdp_config"]["activation_checkpointing"] and r["optimizer"]["lr"] == 3e-4


def test_llm_foundry_refuses_a_key_it_does_not_have(read: dict[str, Any]) -> None:
    """The check can fail: the same config with one key llm-foundry's TrainConfig lacks is refused."""
    case = _case(PLANS["lora"])
    case["yaml"] += "\ngradient_checkpointing: true\n"
    done = subprocess.run([sys.executable, str(CHECK)], input=json.dumps([case]), text=True, capture_output=True,
                          env={"PYTHONPATH": str(FOUNDRY), "PATH": "/usr/bin:/bin", "HF_HUB_OFFLINE": "1"})
    line = next(x for x in done.stdout.splitlines() if x.startswith("GPUPLAN_RESULT "))
    assert "gradient_checkpointing" in json.loads(line.removeprefix("GPUPLAN_RESULT "))[1]["error"]


@pytest.mark.parametrize("plan", sorted(PLANS))
def test_the_task_is_one_skypilot_loads_and_bash_parses(plan: str) -> None:
    task = _task(PLANS[plan])
    loaded = _skypilot_load(task)
    assert "/checkpoints" in loaded.storage_mounts and task["resources"]["use_spot"]
    assert f"--branch v{VERSION}" in task["setup"] and f"'llm-foundry[peft]=={VERSION}'" in task["setup"]
    for script in (task["setup"], task["run"]):
        subprocess.run(["bash", "-n", "-c", script], check=True)


def test_the_pins_are_the_release_the_export_installs() -> None:
    pins = PINS.read_text(encoding="utf-8")
    assert f"llm-foundry=={VERSION}" in pins and "mosaicml==0.32.1" in pins and "mosaicml-streaming==0.12.0" in pins
    assert f"--target .venv/llm-foundry-{VERSION}" in (Path(__file__).parent.parent / "scripts" / "test.sh").read_text(
        encoding="utf-8")


@pytest.mark.parametrize(("change", "job", "field", "words"), [
    ({"method": "qlora"}, {}, "--method", "not qlora"),
    ({"base_quant": "bnb-int8"}, {}, "--method", "not bnb-int8"),
    ({"parallel": Parallelism(dp=8, zero=1)}, {}, "--zero", "no ZeRO-1"),
    ({"parallel": Parallelism(dp=8, zero=2, offload_optimizer=True)}, {}, "--zero", "no optimizer offload"),
    ({"parallel": Parallelism(tp=2, dp=4, zero=3)}, {}, "--export", "data-parallel ranks only"),
    ({"recompute": "selective"}, {}, "--recompute", "whole blocks or nothing"),
    ({"parallel": Parallelism()}, {"n_gpus": 1}, "--recompute", "drops on one GPU"),
    ({"method": "full", "precision": "bf16"}, {}, "--precision", "not bf16"),
    ({"precision": "fp8-mixed"}, {}, "--precision", "not fp8-mixed"),
    ({"optimizer": "sgd"}, {}, "--optimizer", "not sgd"),
    ({}, {"job": replace(LORA_JOB, epochs=1.5)}, "--epochs", "whole epochs"),
])
def test_a_plan_llm_foundry_cannot_run_as_planned_is_refused(change: dict[str, Any], job: dict[str, Any], field: str,
                                                             words: str) -> None:
    c = _plan(replace(LORA, **change), job.get("job", LORA_JOB), job.get("n_gpus", 8))
    with pytest.raises(InputError, match=re.escape(words)) as err:
        render(c, "skypilot", REPO)
    assert err.value.field == field and err.value.fix


def test_lora_modules_of_a_model_whose_names_are_unknown_are_refused() -> None:
    c = _plan(replace(LORA, lora_targets="qv"))
    c = replace(c, estimate=replace(c.estimate, model=replace(LLAMA_8B, name="gpt2", model_type="gpt2")))
    with pytest.raises(InputError, match="Llama-style") as err:
        render(c, "skypilot", REPO)
    assert "--lora-targets all-linear" in err.value.fix


def test_the_run_quotes_the_dataset_it_merges_in() -> None:
    run = _task(PLANS["lora"])["run"]
    assert 'train_loader.dataset.hf_name="$DATASET"' in run and shlex.split(run.splitlines()[-1])[0] == "composer"
