"""Exporters: golden files for a fixed candidate, and the errors for plans an exporter cannot express.

Regenerate the golden files after an intended change with ``GPUPLAN_UPDATE_GOLDEN=1 pytest tests/test_export.py``.
"""

from __future__ import annotations

import datetime as dt
import os
from pathlib import Path

import pytest
import yaml

from gpuplan import load_catalog
from gpuplan.errors import InputError
from gpuplan.estimate.job import estimate_inference, estimate_training, inference_setup, training_setup
from gpuplan.export import render, skypilot_task, vllm_command
from gpuplan.plan.costing import Cost
from gpuplan.plan.planner import Candidate
from gpuplan.types import Job, Offer, Parallelism

GOLDEN = Path(__file__).parent / "golden"


def _offer(provider: str, gpu: str, count: int, pricing: str = "on-demand") -> Offer:
    return Offer(provider=provider, instance_type=f"{gpu.lower()}x{count}", gpu=gpu, gpu_count=count, vcpus=None,
                 ram_bytes=None, region="us-east-1", market="global", price_per_hour=2.0 * count, currency="USD",
                 pricing=pricing, billing_granularity_s=1, included_disk_bytes=None, storage_price_per_gb_month=None,
                 gpu_mapping="stated", source="test fixture", as_of=dt.date(2026, 1, 1))


def _serve_candidate(provider: str = "AWS", engine: str = "vllm") -> Candidate:
    cat = load_catalog()
    m = cat.model("Llama-3.1-8B")
    gpu = cat.gpu("L40S")
    job = Job(task="serve", rps=5, prompt_len=1000, output_len=300, ttft_s=2.0, tpot_s=0.05, weight_format="fp8")
    e = estimate_inference(m, gpu, job, inference_setup(job, 1, engine, "fp8"))
    return Candidate(e, 3600.0, Cost(2.0, 0.0, "USD", 3600.0, 1, 0.0), provider, _offer(provider, "L40S", 1))


def _check_golden(name: str, text: str) -> None:
    path = GOLDEN / name
    if os.environ.get("GPUPLAN_UPDATE_GOLDEN"):
        path.write_text(text, encoding="utf-8")
    assert text == path.read_text(encoding="utf-8"), f"{name} changed; see the docstring to update it"


@pytest.mark.parametrize("fmt, engine, name", [
    ("skypilot", "vllm", "serve_skypilot.yaml"), ("vllm", "vllm", "serve_vllm.sh"),
    ("sglang", "sglang", "serve_sglang.sh"), ("k8s", "vllm", "serve_k8s.yaml"),
    ("skypilot", "sglang", "serve_skypilot_sglang.yaml"), ("k8s", "sglang", "serve_k8s_sglang.yaml")])
def test_serving_exports_match_golden_files(fmt: str, engine: str, name: str) -> None:
    _check_golden(name, render(_serve_candidate(engine=engine), fmt, "meta-llama/Llama-3.1-8B"))


@pytest.mark.parametrize(("planned", "fmt"), [("vllm", "sglang"), ("sglang", "vllm")])
def test_a_plan_is_exported_only_to_the_engine_it_was_sized_for(planned: str, fmt: str) -> None:
    # vLLM and SGLang reserve memory and hold batches differently: a batch sized for one may not fit the other
    with pytest.raises(InputError, match="estimated for") as info:
        render(_serve_candidate(engine=planned), fmt, "meta-llama/Llama-3.1-8B")
    assert f"--engine {fmt}" in info.value.fix


def test_vllm_command_carries_the_planned_layout() -> None:
    c = _serve_candidate()
    cmd = vllm_command(c, "meta-llama/Llama-3.1-8B")
    assert cmd[:3] == ["vllm", "serve", "meta-llama/Llama-3.1-8B"]
    assert cmd[cmd.index("--quantization") + 1] == "fp8"
    assert cmd[cmd.index("--max-model-len") + 1] == "1300"
    assert cmd[cmd.index("--max-num-seqs") + 1] == str(c.estimate.setup.batch)


def test_skypilot_serve_section_has_the_planned_replicas() -> None:
    c = _serve_candidate()
    task = skypilot_task(c)
    assert task["resources"]["accelerators"] == "L40S:1"
    assert task["service"]["replicas"] == c.estimate.replicas


def test_multi_node_training_export_splits_into_nodes_of_eight() -> None:
    cat = load_catalog()
    m = cat.model("Llama-3.1-8B")
    gpu = cat.gpu("H100")
    job = Job(task="pretrain", tokens=1e10, seq_len=4096)
    e = estimate_training(m, gpu, job, training_setup(job, Parallelism(dp=16, zero=3), 1, "full", gpu=gpu))
    c = Candidate(e, e.seconds, Cost(1.0, 0.0, "USD", e.seconds, 2, 0.0), "AWS", _offer("AWS", "H100", 8))
    task = yaml.safe_load(render(c, "skypilot"))
    assert task["num_nodes"] == 2 and task["resources"]["accelerators"] == "H100:8"
    assert "run" not in task  # a training plan provisions the hardware; the training command is the user's
    with pytest.raises(InputError, match="inference server"):
        render(c, "vllm")


def test_provider_without_a_skypilot_cloud_is_refused_with_the_supported_list() -> None:
    with pytest.raises(InputError, match="SkyPilot has no cloud") as err:
        skypilot_task(_serve_candidate("AutoDL"))
    assert "aws" in err.value.fix.lower()


@pytest.mark.parametrize(("provider", "instance", "named"), [
    ("AWS", "g6e.xlarge", True),  # the cloud's own instance name: SkyPilot launches exactly it
    ("Vast.ai", "vast-l40s-1x-catalog", False),  # Vast.ai offers are matched at launch: accelerators only
    ("GCP", "a3-ultragpu (per GPU)", False),  # a row that describes a price, not an instance
])
def test_skypilot_names_an_instance_type_only_where_skypilot_knows_it(provider: str, instance: str,
                                                                       named: bool) -> None:
    from dataclasses import replace

    c = _serve_candidate(provider)
    assert c.offer is not None
    c = replace(c, offer=replace(c.offer, instance_type=instance))
    resources = skypilot_task(c)["resources"]
    assert ("instance_type" in resources) == named
    assert resources["accelerators"] == "L40S:1"


def test_skypilot_export_falls_back_to_the_best_plan_skypilot_launches() -> None:
    from gpuplan.export import exportable

    off_sky, on_sky = _serve_candidate("Hyperstack"), _serve_candidate("RunPod")  # providers.csv: no SkyPilot cloud
    assert exportable([off_sky, on_sky], "skypilot") is on_sky
    assert exportable([off_sky, on_sky], "vllm") is off_sky  # engine commands run anywhere
    assert exportable([off_sky], "skypilot") is None


def _with(c: Candidate, **setup: object) -> Candidate:
    from dataclasses import replace

    return replace(c, estimate=replace(c.estimate, setup=replace(c.estimate.setup, **setup)))


@pytest.mark.parametrize(("setup", "words"), [
    ({"weight_format": "int8-wo"}, "no on-load int8-wo"),
    ({"weight_format": "awq-int4"}, "published in bf16"),  # Llama-3.1-8B's repository is not an AWQ checkpoint
    ({"engine": "llamacpp", "weight_format": "gguf-q4_k_m"}, "estimated for llama.cpp"),
    ({"engine": "trtllm"}, "estimated for TensorRT-LLM"),
])
@pytest.mark.parametrize("fmt", ["vllm", "sglang", "k8s", "skypilot"])
def test_an_export_that_would_not_run_as_planned_is_refused(setup: dict[str, object], words: str, fmt: str) -> None:
    planned = _serve_candidate(engine="sglang" if fmt == "sglang" else "vllm")
    with pytest.raises(InputError, match=words) as info:
        render(_with(planned, **setup), fmt, "meta-llama/Llama-3.1-8B")
    assert info.value.fix


def test_fp8_is_quantized_on_load() -> None:
    cmd = vllm_command(_with(_serve_candidate(), weight_format="fp8"), "meta-llama/Llama-3.1-8B")
    assert cmd[cmd.index("--quantization") + 1] == "fp8"


@pytest.mark.parametrize("fmt", ["k8s", "skypilot"])
def test_a_server_export_names_itself_when_the_engine_has_no_server(fmt: str) -> None:
    with pytest.raises(InputError, match=f"the {fmt} export runs vLLM or SGLang"):
        render(_with(_serve_candidate(), engine="trtllm"), fmt, "meta-llama/Llama-3.1-8B")
