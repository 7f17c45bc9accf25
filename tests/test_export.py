"""Exporters: golden files built from literal plans, every export validated by the target tool's own parser, and
the errors for plans an exporter cannot express.

Parsers: SkyPilot 0.14.1 (its task JSON schema and ``sky.Task.from_yaml_config``; its accelerator registry from
the recorded catalog file), kubernetes-validate (the Kubernetes OpenAPI schemas, strict), and the option records of
vLLM 0.33.0, SGLang 0.5.23, LLaMA-Factory 0.9.5 and Megatron-LM built from each release's own argument parser
(``scripts/record_flags.py``).

Regenerate the golden files after an intended change with ``GPUPLAN_UPDATE_GOLDEN=1 pytest tests/test_export.py``.
"""

from __future__ import annotations

import csv
import datetime as dt
import os
import re
import shlex
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
import yaml

from gpuplan.errors import InputError
from gpuplan.estimate.frameworks import framework
from gpuplan.estimate.infer_speed import Speed
from gpuplan.estimate.job import JobEstimate
from gpuplan.export import document, exportable, registry, render, serve_document, skypilot, text
from gpuplan.export import k8s as k8s_export
from gpuplan.export.serve import ServeGroup, sglang_command, vllm_command
from gpuplan.export.train import llama_factory_config, megatron_args
from gpuplan.plan.costing import Cost
from gpuplan.plan.planner import Candidate
from gpuplan.types import Gpu, InferSetup, Job, ModelSpec, Offer, Parallelism, TrainSetup

GOLDEN = Path(__file__).parent / "golden"
FIXTURES = Path(__file__).parent / "fixtures"
DATA = Path(__file__).parent.parent / "gpuplan" / "data"
REPO = "meta-llama/Llama-3.1-8B"

# Llama-3.1-8B's architecture, literally (its config.json): goldens do not move with the bundled presets
LLAMA_8B = ModelSpec(name="Llama-3.1-8B", model_type="llama", n_layers=32, hidden=4096, n_heads=32, n_kv_heads=8,
                     head_dim=128, ffn_hidden=14336, vocab=128256, max_positions=131072)


def _gpu(name: str) -> Gpu:
    """A GPU with only the name the exports read (specs do not enter an export)."""
    return Gpu(name=name, vendor="NVIDIA", segment="datacenter", architecture="", chip=None, form_factor="",
               memory_type=None, memory_nominal_gb=80, memory_visible_mib=None, memory_bandwidth_bytes_per_s=None,
               fp32_flops_per_s=None, tf32_flops_per_s=None, fp16_flops_per_s=None, bf16_flops_per_s=None,
               fp8_flops_per_s=None, int8_ops_per_s=None, fp4_flops_per_s=None, interconnect="",
               interconnect_bytes_per_s=None, pcie_gen=None, tdp_w=None, launch_year=None, export_status="",
               export_rule="", export_rule_date=None, source="", verification="", date_checked=dt.date(2026, 1, 1))


def _offer(provider: str, gpu: str, count: int, pricing: str = "on-demand", instance: str | None = None,
           region: str = "us-east-1") -> Offer:
    return Offer(provider=provider, instance_type=instance or f"{gpu.lower()}x{count}", gpu=gpu, gpu_count=count,
                 vcpus=None, ram_bytes=None, region=region, market="global", price_per_hour=2.0 * count,
                 currency="USD", pricing=pricing, billing_granularity_s=1, included_disk_bytes=None,
                 storage_price_per_gb_month=None, gpu_mapping="stated", source="test fixture",
                 as_of=dt.date(2026, 1, 1))


def _candidate(job: Job, setup: TrainSetup | InferSetup, gpu: str, n_gpus: int, offer: Offer,
               replicas: int = 1, rps: float = 0.0) -> Candidate:
    speed = Speed(ttft_s=0.5, tpot_s=0.03, batch=64, output_tokens_per_s=2000.0, requests_per_s=rps,
                  bound="memory") if rps else None
    # the exports read the job, model, GPU name, setup, replicas and speed; memory is not part of a hand-off
    e = JobEstimate(job, LLAMA_8B, _gpu(gpu), n_gpus, setup, None, None, speed, replicas)  # type: ignore[arg-type]
    return Candidate(e, 3600.0, Cost(2.0, 0.0, "USD", 3600.0, 1, 0.0), offer.provider, offer)


SERVE_JOB = Job(task="serve", rps=20, prompt_len=1000, output_len=300, ttft_s=2.0, tpot_s=0.05)


def _serve(engine: str = "vllm", provider: str = "AWS", gpu: str = "L40S", pricing: str = "on-demand",
           fmt: str = "fp8", instance: str | None = "g6e.xlarge") -> Candidate:
    setup = InferSetup(engine=engine, weight_format=fmt, batch=128, prompt_len=1000, output_len=300)
    return _candidate(SERVE_JOB, setup, gpu, 1, _offer(provider, gpu, 1, pricing, instance), replicas=3, rps=6.5)


FINETUNE_JOB = Job(task="finetune", method="qlora", samples=20_000, tokens_per_sample=512, epochs=2, seq_len=1024)
QLORA = TrainSetup(method="qlora", micro_batch=4, seq_len=1024, grad_accum=4, precision="bf16", recompute="full",
                   lora_rank=32, parallel=Parallelism(dp=2, zero=3))
FULL_JOB = Job(task="finetune", method="full", tokens=2e8, seq_len=2048)
FULL = TrainSetup(method="full", micro_batch=2, seq_len=2048, grad_accum=2, precision="bf16-mixed",
                  recompute="none", parallel=Parallelism(dp=8, zero=3, offload_optimizer=True))
PRETRAIN_JOB = Job(task="pretrain", tokens=1e11, seq_len=4096)
PRETRAIN = TrainSetup(method="full", micro_batch=1, seq_len=4096, grad_accum=16, precision="bf16-mixed",
                      recompute="selective", framework="megatron", parallel=Parallelism(tp=8, pp=2, dp=4, zero=1))


def _qlora() -> Candidate:
    return _candidate(FINETUNE_JOB, QLORA, "RTX4090", 2, _offer("RunPod", "RTX4090", 2, region="(community cloud)"))


def _full() -> Candidate:
    return _candidate(FULL_JOB, FULL, "A100-80GB", 8, _offer("Lambda", "A100-80GB", 8, "on-demand",
                                                            "gpu_8x_a100_80gb_sxm4"))


def _pretrain() -> Candidate:
    return _candidate(PRETRAIN_JOB, PRETRAIN, "H100", 64, _offer("AWS", "H100", 8, "spot", "p5.48xlarge"))


def _framework(c: Candidate, fw: str) -> Candidate:
    # the job names the framework the user runs; the setup, the training stack it runs on (TRL: the HF Trainer)
    e = c.estimate
    return replace(c, estimate=replace(e, job=replace(e.job, framework=fw),
                                       setup=replace(e.setup, framework=framework(fw).stack)))


def _check_golden(name: str, written: str) -> None:
    path = GOLDEN / name
    if os.environ.get("GPUPLAN_UPDATE_GOLDEN"):
        path.write_text(written, encoding="utf-8")
    assert written == path.read_text(encoding="utf-8"), f"{name} changed; see the docstring to update it"


GOLDENS = [
    ("serve_vllm.sh", lambda: render(_serve(), "vllm", REPO)),
    ("serve_sglang.sh", lambda: render(_serve("sglang"), "sglang", REPO)),
    ("serve_k8s.yaml", lambda: render(_serve(), "k8s", REPO)),
    ("serve_k8s_sglang.yaml", lambda: render(_serve("sglang"), "k8s", REPO)),
    ("serve_skypilot.yaml", lambda: render(_serve(pricing="spot"), "skypilot", REPO)),
    ("serve_skypilot_sglang.yaml", lambda: render(_serve("sglang", "RunPod", "RTX4090", fmt="bnb-nf4", instance=None),
                                                  "skypilot", REPO)),
    ("finetune_qlora_skypilot.yaml", lambda: render(_qlora(), "skypilot", REPO)),
    ("finetune_full_skypilot.yaml", lambda: render(_full(), "skypilot", REPO)),
    ("pretrain_skypilot.yaml", lambda: render(_pretrain(), "skypilot", REPO)),
    ("finetune_trl_skypilot.yaml", lambda: render(_framework(_qlora(), "trl"), "skypilot", REPO)),
    ("pretrain_torchtitan_skypilot.yaml", lambda: render(_framework(_pretrain(), "torchtitan"), "skypilot", REPO)),
]


@pytest.mark.parametrize(("name", "make"), GOLDENS, ids=[g[0] for g in GOLDENS])
def test_exports_match_golden_files(name: str, make: Any) -> None:
    _check_golden(name, make())


def _golden_docs(suffix: str) -> list[tuple[str, Any]]:
    return [(p.name, list(yaml.safe_load_all(p.read_text(encoding="utf-8"))))
            for p in sorted(GOLDEN.glob(f"*{suffix}"))]


# ---------------------------------------------------------------- SkyPilot's own loader


def _skypilot_load(task: dict[str, Any]) -> Any:
    """Validate ``task`` as SkyPilot 0.14.1 does: its task schema on the document as written, then its loader.
    A region or instance type is checked by SkyPilot against the cloud's catalog, downloaded at launch (no
    network here), so the loader sees the document without those two keys."""
    import sky
    from sky.utils import common_utils, schemas

    common_utils.validate_schema(task, schemas.get_task_schema(), "Invalid task YAML: ")
    offline = {**task, "resources": {k: v for k, v in task["resources"].items()
                                     if k not in ("region", "instance_type")}}
    return sky.Task.from_yaml_config(yaml.safe_load(yaml.safe_dump(offline)))


@pytest.mark.parametrize(("name", "docs"), [d for d in _golden_docs(".yaml") if "skypilot" in d[0]])
def test_skypilot_exports_load_in_skypilot(name: str, docs: list[Any]) -> None:
    (task,) = docs
    loaded = _skypilot_load(task)
    (res,) = loaded.resources
    accelerator, count = task["resources"]["accelerators"].split(":")
    assert res.accelerators == {accelerator: int(count)}
    assert loaded.num_nodes == task.get("num_nodes", 1)
    if "service" in task:
        spec = loaded.service
        assert spec.readiness_path == "/health"
        assert spec.min_replicas == 3 and spec.max_replicas == 6  # planned replicas, autoscaled up to twice
    else:  # training: a managed job that recovers and resumes from the bucket
        assert "/checkpoints" in loaded.storage_mounts
        assert res.job_recovery["strategy"] == "EAGER_NEXT_REGION"


def test_spot_serving_keeps_an_on_demand_fallback() -> None:
    policy = skypilot_doc(_serve(pricing="spot"))["service"]["replica_policy"]
    assert policy["base_ondemand_fallback_replicas"] == 1 and policy["dynamic_ondemand_fallback"] is True
    assert "base_ondemand_fallback_replicas" not in skypilot_doc(_serve())["service"]["replica_policy"]
    assert policy["target_qps_per_replica"] == 6.5  # the plan's capacity of one replica


def skypilot_doc(c: Candidate) -> dict[str, Any]:
    return document(c, "skypilot", REPO)


def _registry_loaded() -> Any:
    import pandas as pd
    from sky.utils import accelerator_registry

    accelerator_registry._accelerator_df = pd.read_csv(FIXTURES / "skypilot_catalog" / "accelerators.csv")
    return accelerator_registry


def _data_rows() -> list[dict[str, str]]:
    with (DATA / "skypilot_accelerators.csv").open(encoding="utf-8") as f:
        return list(csv.DictReader(f))


def test_accelerator_data_is_skypilots_registry() -> None:
    # every (accelerator, cloud) pair of SkyPilot's registry file, and nothing else
    with (FIXTURES / "skypilot_catalog" / "accelerators.csv").open(encoding="utf-8") as f:
        recorded = {(cloud.lower(), r["AcceleratorName"]) for r in csv.DictReader(f)
                    for cloud in yaml.safe_load(r["Clouds"])}
    # and the clouds missing from that file, from their own catalogs (Verda, Mithril)
    with (FIXTURES / "skypilot_catalog" / "cloud_catalogs.csv").open(encoding="utf-8") as f:
        recorded |= {(r["skypilot_cloud"], r["AcceleratorName"]) for r in csv.DictReader(f)}
    assert {(r["skypilot_cloud"], r["accelerator"]) for r in _data_rows()} == recorded


@pytest.mark.parametrize("row", [r for r in _data_rows() if r["gpu"]],
                         ids=lambda r: f"{r['gpu']}@{r['skypilot_cloud']}")
def test_every_accelerator_name_is_canonical_in_skypilot(row: dict[str, str]) -> None:
    from sky.utils import registry as sky_registry

    cloud = sky_registry.CLOUD_REGISTRY.from_str(row["skypilot_cloud"])
    assert cloud is not None
    assert _registry_loaded().canonicalize_accelerator_name(row["accelerator"], cloud) == row["accelerator"]


def test_every_cloud_the_export_writes_is_a_skypilot_cloud() -> None:
    from sky.utils import registry as sky_registry

    for provider, cloud in skypilot.skypilot_clouds().items():  # providers.csv's skypilot_cloud column
        assert cloud in sky_registry.CLOUD_REGISTRY, provider
    # and every cloud the accelerator registry names is one SkyPilot registers
    assert {r["skypilot_cloud"] for r in _data_rows()} <= set(sky_registry.CLOUD_REGISTRY)
    assert "hyperstack" not in sky_registry.CLOUD_REGISTRY  # the cloud an old export wrote; SkyPilot refuses it


@pytest.mark.parametrize(("gpu", "cloud", "name"), [
    ("H100", "runpod", "H100-SXM"),  # RunPod's 'H100' is the PCIe part (SkyPilot's RunPod GPU_NAME_MAP)
    ("H100-PCIe", "runpod", "H100"),
    ("A6000", "runpod", "RTXA6000"), ("A6000", "lambda", "A6000"),
    ("RTX4090", "aws", None),  # AWS has no RTX 4090
    ("A100-80GB", "mithril", "A100"), ("RTX6000-Ada", "verda", "RTX-6000-Ada"),  # from those clouds' catalogs
])
def test_skypilot_names_some_gpus_per_cloud(gpu: str, cloud: str, name: str | None) -> None:
    assert registry.skypilot_accelerator(gpu, cloud) == name


def test_a_gpu_skypilot_does_not_offer_on_that_cloud_is_refused_with_where_it_is() -> None:
    c = _serve(provider="AWS", gpu="RTX4090", instance=None)
    with pytest.raises(InputError, match="lists no RTX4090 on aws") as err:
        render(c, "skypilot", REPO)
    assert "runpod" in err.value.fix and "vast" in err.value.fix
    assert not skypilot.launchable(c)


def test_provider_without_a_skypilot_cloud_is_refused_with_the_supported_list() -> None:
    with pytest.raises(InputError, match="SkyPilot has no cloud") as err:
        render(_serve(provider="AutoDL"), "skypilot", REPO)
    assert "AWS" in err.value.fix


def test_skypilot_export_falls_back_to_the_best_plan_skypilot_launches() -> None:
    # providers.csv: Hyperstack has no SkyPilot cloud
    off_sky, on_sky = _serve(provider="Hyperstack"), _serve(provider="RunPod", instance=None)
    assert exportable([off_sky, on_sky], "skypilot") is on_sky
    assert exportable([off_sky, on_sky], "vllm") is off_sky  # engine commands run anywhere
    assert exportable([off_sky], "skypilot") is None


@pytest.mark.parametrize(("provider", "instance", "region", "named"), [
    ("AWS", "g6e.xlarge", "us-east-1", True),  # the cloud's own instance and region names
    ("RunPod", "rtx4090-community", "US-TX-3", False),  # a listing's names: SkyPilot matches at launch
    ("GCP", "a3-ultragpu (per GPU)", "(US list)", False),  # a row that describes a price, not an instance
])
def test_instance_and_region_only_where_they_are_the_clouds_own_names(provider: str, instance: str, region: str,
                                                                      named: bool) -> None:
    c = _serve(provider=provider, gpu="L4")
    assert c.offer is not None
    c = replace(c, offer=replace(c.offer, instance_type=instance, region=region))
    res = skypilot_doc(c)["resources"]
    assert ("instance_type" in res) == named and ("region" in res) == named


# ---------------------------------------------------------------- training runs what was planned


def _run(c: Candidate) -> str:
    return str(skypilot_doc(c)["run"])


def _llamafactory_yaml(c: Candidate) -> dict[str, Any]:
    run = _run(c)
    body = run.split("cat > train.yaml <<'GPUPLAN_EOF'\n")[1].split("\nGPUPLAN_EOF")[0]
    return yaml.safe_load(body)


def test_qlora_run_carries_the_planned_method_batch_recompute_and_zero() -> None:
    cfg = _llamafactory_yaml(_qlora())
    assert cfg["finetuning_type"] == "lora" and cfg["lora_rank"] == 32 and cfg["lora_target"] == "all"
    assert cfg["quantization_bit"] == 4 and cfg["quantization_type"] == "nf4" and cfg["double_quantization"]
    assert cfg["per_device_train_batch_size"] == 4 and cfg["gradient_accumulation_steps"] == 4
    assert cfg["cutoff_len"] == 1024 and cfg["num_train_epochs"] == 2.0
    assert cfg["disable_gradient_checkpointing"] is False  # the plan recomputes (full)
    assert cfg["deepspeed"] == "ds_z3.json" and '"stage": 3' in _run(_qlora())
    # 20,000 samples × 2 epochs ÷ (4 × 4 × 2 sequences a step) = 1,250 steps; a checkpoint every 1/20 of them
    assert cfg["save_steps"] == 62 and cfg["output_dir"].startswith("/checkpoints/")
    assert cfg["overwrite_output_dir"] is False  # LLaMA-Factory then resumes from the last checkpoint-* there


def test_full_finetune_offloads_the_optimizer_and_trains_a_token_budget() -> None:
    cfg = _llamafactory_yaml(_full())
    assert cfg["finetuning_type"] == "full" and cfg["bf16"] is True
    assert cfg["disable_gradient_checkpointing"] is True  # the plan does not recompute
    # 2e8 tokens ÷ 2,048 = 97,656.25 sequences ÷ (2 × 2 × 8 a step) = 3,051.8 → 3,052 steps
    assert cfg["max_steps"] == 3052
    assert '"offload_optimizer"' in _run(_full())


def test_galore_and_dora_plans_export_the_llamafactory_switches_they_were_priced_with() -> None:
    # LLaMA-Factory's GaloreArguments: use_galore with finetuning_type full, galore_target "all" (every linear but
    # the output layer), galore_rank; DoRA is LoRA with use_dora
    galore = replace(FULL, method="galore", lora_rank=64, parallel=Parallelism(dp=8))
    job = replace(FULL_JOB, method="galore")
    cfg = llama_factory_config(_candidate(job, galore, "A100-80GB", 8, _offer("Lambda", "A100-80GB", 8)).estimate,
                               REPO, "x")
    assert cfg["finetuning_type"] == "full" and cfg["use_galore"] is True
    assert cfg["galore_rank"] == 64 and cfg["galore_target"] == "all"
    dora = replace(QLORA, method="dora")
    cfg = llama_factory_config(_candidate(replace(FINETUNE_JOB, method="dora"), dora, "RTX4090", 2,
                                          _offer("RunPod", "RTX4090", 2)).estimate, REPO, "x")
    assert cfg["finetuning_type"] == "lora" and cfg["use_dora"] is True
    with pytest.raises(InputError, match="no LISA"):
        llama_factory_config(_candidate(replace(job, method="lisa"), replace(galore, method="lisa"), "A100-80GB", 8,
                                        _offer("Lambda", "A100-80GB", 8)).estimate, REPO, "x")
    with pytest.raises(InputError, match="no LLaMA-Adapter") as err:
        llama_factory_config(_candidate(replace(job, method="adapter"), replace(galore, method="adapter"), "A100-80GB",
                                        8, _offer("Lambda", "A100-80GB", 8)).estimate, REPO, "x")
    assert "--framework litgpt" in err.value.fix
    with pytest.raises(InputError, match="no AdaLoRA"):  # not exported as plain LoRA
        llama_factory_config(_candidate(replace(job, method="adalora"), replace(galore, method="adalora"), "A100-80GB",
                                        8, _offer("Lambda", "A100-80GB", 8)).estimate, REPO, "x")
    with pytest.raises(InputError, match="--lora-targets"):
        llama_factory_config(_candidate(job, replace(galore, lora_targets="qv"), "A100-80GB", 8,
                                        _offer("Lambda", "A100-80GB", 8)).estimate, REPO, "x")


def test_every_llamafactory_key_is_one_llamafactory_parses() -> None:
    keys = registry.flags("llamafactory")["options"]
    for c in (_qlora(), _full()):
        cfg = llama_factory_config(c.estimate, REPO, "x")
        assert set(cfg) <= set(keys)
        for key, value in cfg.items():
            choices = keys[key]["choices"]
            assert choices is None or str(value) in choices, key


def test_pretraining_run_is_megatron_with_the_planned_layout() -> None:
    args = megatron_args(_pretrain().estimate, REPO, "x")
    assert args["--tensor-model-parallel-size"] == "8" and args["--pipeline-model-parallel-size"] == "2"
    assert "--use-distributed-optimizer" in args  # ZeRO-1
    assert args["--recompute-granularity"] == "selective"
    assert args["--micro-batch-size"] == "1" and args["--global-batch-size"] == "64"  # 1 × 16 × 4 data ranks
    # 1e11 tokens ÷ 4,096 = 24,414,062.5 sequences ÷ 64 = 381,469.7 → 381,470 steps × 64
    assert args["--train-samples"] == str(381_470 * 64)
    assert args["--num-query-groups"] == "8" and "--swiglu" in args
    assert args["--load"] == args["--save"]  # a relaunch resumes from its own checkpoints


def test_every_megatron_flag_is_one_megatron_parses() -> None:
    options = registry.flags("megatron")["options"]
    run = _run(_pretrain())
    flags = {t for t in shlex.split(run.split("pretrain_gpt.py", 1)[1]) if t.startswith("--")}
    assert flags and flags <= set(options)


def test_training_task_tells_skypilot_to_recover_spot_preemption() -> None:
    task = skypilot_doc(_pretrain())
    assert task["resources"]["use_spot"] is True
    assert task["resources"]["job_recovery"]["strategy"] == "EAGER_NEXT_REGION"
    assert task["num_nodes"] == 8 and task["resources"]["accelerators"] == "H100:8"
    assert task["file_mounts"]["/checkpoints"]["name"] == "${CKPT_BUCKET}"


@pytest.mark.parametrize(("change", "words"), [
    ({"parallel": Parallelism(tp=2, dp=1)}, "LLaMA-Factory trains with data parallelism"),
    ({"method": "ptuning"}, "no P-tuning"),
    ({"optimizer": "sgd-momentum"}, "no 'sgd-momentum' optimizer"),
    ({"lora_targets": "qv", "method": "lora"}, None),  # Llama-style names are known: no error
])
def test_a_finetune_llamafactory_cannot_run_as_planned_is_refused(change: dict[str, Any], words: str | None) -> None:
    c = _qlora()
    c = replace(c, estimate=replace(c.estimate, setup=replace(c.estimate.setup, **change)))
    if words is None:
        assert _llamafactory_yaml(c)["lora_target"] == "q_proj,v_proj"
        return
    with pytest.raises(InputError, match=words) as err:
        render(c, "skypilot", REPO)
    assert err.value.fix


def test_a_framework_the_export_does_not_write_is_refused_with_the_one_it_does() -> None:
    c = _qlora()
    c = replace(c, estimate=replace(c.estimate, job=replace(FINETUNE_JOB, framework="chatglm")))
    with pytest.raises(InputError, match="sized for --framework chatglm") as err:
        render(c, "skypilot", REPO)
    assert "--framework llama-factory" in err.value.fix


def test_megatron_export_refuses_moe_models() -> None:
    c = _pretrain()
    moe = replace(LLAMA_8B, n_experts=8, n_active_experts=2, moe_ffn_hidden=14336)
    with pytest.raises(InputError, match="mixture-of-experts"):
        render(replace(c, estimate=replace(c.estimate, model=moe)), "skypilot", REPO)


# ---------------------------------------------------------------- serving flags: the engines' own parsers


def _check_argv(tool: str, argv: list[str]) -> None:
    options = registry.flags(tool)["options"]
    i = 0
    while i < len(argv):
        flag = argv[i]
        assert flag.startswith("--"), f"stray value {flag!r}"
        spec = options[flag]  # KeyError: the engine has no such flag
        if spec["takes_value"]:
            value = argv[i + 1]
            assert spec["choices"] is None or value in spec["choices"], f"{flag} {value}"
            i += 2
        else:
            i += 1


@pytest.mark.parametrize("name", ["serve_vllm.sh", "serve_sglang.sh"])
def test_server_commands_use_only_flags_the_pinned_engine_accepts(name: str) -> None:
    line = next(x for x in (GOLDEN / name).read_text(encoding="utf-8").splitlines() if not x.startswith("#"))
    argv = shlex.split(line)  # `vllm serve MODEL ...` | `python -m sglang.launch_server ...`
    _check_argv("vllm" if argv[0] == "vllm" else "sglang", argv[3:])


def test_the_flag_records_come_from_the_released_parsers() -> None:
    # facts of the releases, independent of gpuplan: vLLM 0.33.0 dropped bitsandbytes; SGLang loads it
    assert "bitsandbytes" not in registry.flags("vllm")["options"]["--quantization"]["choices"]
    assert "bitsandbytes" in registry.flags("sglang")["options"]["--quantization"]["choices"]
    assert registry.version("vllm") == "0.33.0" and registry.version("sglang") == "0.5.23"
    assert "--tp" not in registry.flags("sglang")["options"]  # SGLang's flag is --tp-size


def test_bnb_nf4_is_refused_by_vllm_and_loaded_on_the_fly_by_sglang() -> None:
    with pytest.raises(InputError, match=r"vLLM 0\.33\.0 has no on-load bnb-nf4") as err:
        render(_serve(fmt="bnb-nf4"), "vllm", REPO)
    assert "--engine sglang" in err.value.fix
    cmd = document(_serve("sglang", fmt="bnb-nf4"), "sglang", REPO)
    assert cmd[cmd.index("--quantization") + 1] == "bitsandbytes"
    assert cmd[cmd.index("--load-format") + 1] == "bitsandbytes"


def test_serve_group_commands_carry_the_planned_layout() -> None:
    g = ServeGroup(model=REPO, gpu="H100", engine="vllm", weight_format="fp8", kv_dtype="fp8", tp=4, pp=2,
                   context_len=8192, max_num_seqs=64)
    cmd = vllm_command(g)
    for flag, value in (("--tensor-parallel-size", "4"), ("--pipeline-parallel-size", "2"),
                        ("--max-model-len", "8192"), ("--max-num-seqs", "64"), ("--kv-cache-dtype", "fp8")):
        assert cmd[cmd.index(flag) + 1] == value
    s = sglang_command(replace(g, engine="sglang"))
    assert s[s.index("--tp-size") + 1] == "4" and s[s.index("--pp-size") + 1] == "2"
    assert s[s.index("--kv-cache-dtype") + 1] == "fp8_e5m2"
    _check_argv("vllm", cmd[3:])
    _check_argv("sglang", s[3:])


@pytest.mark.parametrize(("planned", "fmt"), [("vllm", "sglang"), ("sglang", "vllm")])
def test_a_plan_is_exported_only_to_the_engine_it_was_sized_for(planned: str, fmt: str) -> None:
    with pytest.raises(InputError, match="estimated for") as info:
        render(_serve(planned), fmt, REPO)
    assert f"--engine {fmt}" in info.value.fix


@pytest.mark.parametrize(("setup", "words"), [
    ({"weight_format": "int8-wo"}, "no on-load int8-wo"),
    ({"weight_format": "awq-int4"}, "published in bf16"),  # Llama-3.1-8B's repository is not an AWQ checkpoint
    ({"engine": "llamacpp", "weight_format": "gguf-q4_k_m"}, "estimated for llama.cpp"),
    ({"engine": "trtllm"}, "estimated for TensorRT-LLM"),
])
@pytest.mark.parametrize("fmt", ["vllm", "sglang", "k8s", "skypilot"])
def test_an_export_that_would_not_run_as_planned_is_refused(setup: dict[str, object], words: str, fmt: str) -> None:
    c = _serve("sglang" if fmt == "sglang" else "vllm")
    c = replace(c, estimate=replace(c.estimate, setup=replace(c.estimate.setup, **setup)))
    with pytest.raises(InputError, match=words) as info:
        render(c, fmt, REPO)
    assert info.value.fix


def test_a_training_plan_has_no_server_command() -> None:
    with pytest.raises(InputError, match="inference server"):
        render(_pretrain(), "vllm")


# ---------------------------------------------------------------- Kubernetes: kubernetes-validate


@pytest.mark.parametrize(("name", "docs"), [d for d in _golden_docs(".yaml") if "k8s" in d[0]])
def test_k8s_manifests_are_valid_kubernetes(name: str, docs: list[Any]) -> None:
    import kubernetes_validate

    kinds = [d["kind"] for d in docs]
    assert kinds == ["Deployment", "Service", "PodDisruptionBudget", "HorizontalPodAutoscaler"]
    for doc in docs:
        kubernetes_validate.validate(doc, "1.33", strict=True)


def test_k8s_pod_has_probes_secret_zone_spread_and_the_gfd_label() -> None:
    dep, _, pdb, hpa = k8s_export.manifests(replace(document_group(), zones=("us-east-1a", "us-east-1b")))
    pod = dep["spec"]["template"]["spec"]
    (container,) = pod["containers"]
    assert container["readinessProbe"]["httpGet"]["path"] == "/health"
    assert container["livenessProbe"]["httpGet"]["path"] == "/health"
    assert container["env"][0]["valueFrom"]["secretKeyRef"]["name"] == "hf-token"
    assert pod["nodeSelector"] == {"nvidia.com/gpu.product": "NVIDIA-GeForce-RTX-4090"}
    assert pod["topologySpreadConstraints"][0]["topologyKey"] == "topology.kubernetes.io/zone"
    zones = pod["affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]
    assert zones["nodeSelectorTerms"][0]["matchExpressions"][0]["values"] == ["us-east-1a", "us-east-1b"]
    assert pdb["spec"]["maxUnavailable"] == 1
    metric = hpa["spec"]["metrics"][0]["pods"]
    assert metric["metric"]["name"] == "vllm_num_requests_waiting"
    assert metric["target"]["averageValue"] == "12"  # a tenth of the 128 sequences the plan batches
    assert hpa["spec"]["minReplicas"] == 3 and hpa["spec"]["maxReplicas"] == 6


def document_group() -> ServeGroup:
    return ServeGroup(model=REPO, gpu="RTX4090", engine="vllm", max_num_seqs=128, replicas=3)


def test_k8s_export_of_a_multi_node_replica_is_a_leader_worker_set() -> None:
    # tests/test_export_lws.py validates these objects; here: the single-node Deployment gives way to it
    docs = serve_document(replace(document_group(), gpu="H100", tp=8, pp=2), "k8s")
    assert [d["kind"] for d in docs] == ["LeaderWorkerSet", "Service", "PodDisruptionBudget",
                                         "HorizontalPodAutoscaler"]


# ---------------------------------------------------------------- GPU feature discovery labels


def _gfd_rows() -> list[dict[str, str]]:
    with (DATA / "gfd_labels.csv").open(encoding="utf-8") as f:
        return list(csv.DictReader(f))


def test_gfd_labels_follow_the_feature_discovery_rule() -> None:
    # k8s-device-plugin internal/lm/resource.go sanitise(): drop characters outside [A-Za-z0-9-_. ], then
    # join the words with '-'
    for row in _gfd_rows():
        expected = "-".join(re.sub(r"[^A-Za-z0-9\-_. ]", "", row["nvml_name"]).split())
        assert row["gpu_product_label"] == expected, row["gpu"]
        assert row["source"] and row["as_of"]


@pytest.mark.parametrize(("gpu", "label"), [
    ("RTX4090", "NVIDIA-GeForce-RTX-4090"),  # not NVIDIA-RTX4090: such a pod would stay Pending
    ("H100", "NVIDIA-H100-80GB-HBM3"), ("A100-80GB", "NVIDIA-A100-SXM4-80GB"), ("T4", "Tesla-T4")])
def test_gfd_labels_as_published(gpu: str, label: str) -> None:
    assert registry.gfd_product_label(gpu) == label


def test_k8s_for_a_gpu_without_a_sourced_label_is_refused() -> None:
    with pytest.raises(InputError, match="no sourced GPU feature discovery label for MI300X"):
        serve_document(replace(document_group(), gpu="MI300X"), "k8s")


def test_text_heads_the_file_with_what_the_user_fills_in() -> None:
    head = text(skypilot_doc(_qlora()), "skypilot", "plan").splitlines()[1]
    assert "--env DATASET=..." in head and "CKPT_BUCKET" in head and "HF_TOKEN" in head


def test_skypilot_export_skips_a_plan_the_framework_cannot_run_for_the_next_that_it_can() -> None:
    # a tensor-parallel full fine-tune: LLaMA-Factory has no tensor parallelism, the ZeRO-3 plan below it runs
    tp = _full()
    tp = replace(tp, estimate=replace(tp.estimate, setup=replace(FULL, parallel=Parallelism(tp=8))))
    assert exportable([tp, _full()], "skypilot") is not tp
    assert exportable([tp], "skypilot") is None
