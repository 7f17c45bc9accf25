"""Ollama and LM Studio as the llama.cpp / MLX runners they are: the same kernels (and estimate) as the engine,
started with the runner's own defaults, read from its code at a release (gpuplan/data/runners.csv)."""

from __future__ import annotations

from dataclasses import replace

import pytest

from gpuplan import api
from gpuplan.catalog import Catalog, load_catalog
from gpuplan.errors import InputError
from gpuplan.estimate.job import estimate_inference, inference_setup
from gpuplan.types import Engine, Job, Task
from gpuplan.units import GiB

# Llama-3.1-8B: 32 layers x 8 KV heads x 128 dims x (K and V) x 2 bytes = 128 KiB of 16-bit KV cache a token
KV_PER_TOKEN = 32 * 8 * 128 * 2 * 2
JOB = Job(task=Task.INFER, prompt_len=512, output_len=128, batch=1)


@pytest.fixture(scope="module")
def catalog() -> Catalog:
    return load_catalog()


def _estimate(catalog: Catalog, gpu: str, engine: str, release: str = "", model: str = "Llama-3.1-8B",
              job: Job = JOB):
    s = inference_setup(job, 1, engine, "gguf-q4_k_m")
    return estimate_inference(catalog.model(model), catalog.gpu(gpu), job, replace(s, runner_release=release))


@pytest.mark.parametrize("name", ["ollama", "Ollama", "OLLAMA", "lmstudio", "LM Studio", "lm-studio"])
def test_the_names_users_type_run_on_llamacpp(name: str) -> None:
    s = inference_setup(JOB, 1, name, "gguf-q4_k_m")
    assert s.engine is Engine.LLAMACPP and s.launcher in ("ollama", "lmstudio")


def test_ollama_is_llamacpp_but_for_the_defaults_it_changes(catalog: Catalog) -> None:
    """Ollama 0.15.5 on an RTX 4090 (24 GiB: num_ctx 32768) equals llama.cpp started with n_ctx 32768 and an f16
    KV cache: same parts, same speed; only the context its KV cache is allocated for differs from llama.cpp's run
    sized for prompt + output."""
    ollama = _estimate(catalog, "RTX4090", "ollama", "0.15.5")
    same = estimate_inference(catalog.model("Llama-3.1-8B"), catalog.gpu("RTX4090"), JOB,
                              replace(inference_setup(JOB, 1, "llamacpp", "gguf-q4_k_m"), kv_dtype="fp16",
                                      max_model_len=32768))
    plain = _estimate(catalog, "RTX4090", "llamacpp")
    assert ollama.memory.breakdown.parts == same.memory.breakdown.parts
    assert (ollama.speed.ttft_s, ollama.speed.tpot_s) == (plain.speed.ttft_s, plain.speed.tpot_s)
    kv = dict(ollama.memory.breakdown.parts)["kv_cache"]
    assert kv == 32768 * KV_PER_TOKEN == 4 * GiB  # against 640 tokens (768 with the pad) for llama.cpp
    assert dict(plain.memory.breakdown.parts)["kv_cache"] == 768 * KV_PER_TOKEN


@pytest.mark.parametrize(("release", "gpu", "sequences", "n_ctx"), [
    ("0.1.48", "RTX4090", 1, 2048),    # api/types.go NumCtx 2048, one sequence at a time
    ("0.6.6", "RTX4090", 4, 2048),     # from v0.2.0 four sequences of num_ctx where they fit (defaultParallel 4)
    ("0.6.7", "RTX4090", 2, 4096),     # num_ctx raised to 4096, defaultParallel lowered to 2
    ("0.10.0", "RTX4090", 1, 4096),    # OLLAMA_NUM_PARALLEL 1
    ("0.15.4", "RTX4090", 1, 4096),
    ("0.15.5", "T4", 1, 4096),         # VRAM tiers: below 23 GiB
    ("0.15.5", "RTX4090", 1, 32768),   # 23 GiB and more
    ("0.15.5", "H100", 1, 131072),     # 262144 from 47 GiB, capped at Llama-3.1's 131072 trained positions
    ("", "H100", 1, 131072),           # no release: the newest
])
def test_the_default_context_sizes_the_kv_cache_as_the_release_says(catalog: Catalog, release: str, gpu: str,
                                                                    sequences: int, n_ctx: int) -> None:
    e = _estimate(catalog, gpu, "ollama", release)
    assert dict(e.memory.breakdown.parts)["kv_cache"] == sequences * n_ctx * KV_PER_TOKEN
    assert f"num_ctx {n_ctx} tokens" in " ".join(a.value for a in e.memory.assumptions)


def test_older_ollama_falls_back_to_one_sequence_where_four_do_not_fit(catalog: Catalog) -> None:
    """Llama-3.1-70B Q4_K_M on an L40S (44.99 GiB visible): Ollama 0.6.6 tries 4 x 2048 tokens of KV cache
    (2.5 GiB at 320 KiB a token), which do not fit beside 40 GiB of weights, then one sequence of 2048."""
    e = _estimate(catalog, "L40S", "ollama", "0.6.6", model="Llama-3.1-70B")
    assert e.fits and e.setup.max_model_len == 2048


def test_a_prompt_longer_than_the_default_context_is_sized_for_itself_and_said(catalog: Catalog) -> None:
    job = Job(task=Task.INFER, prompt_len=7000, output_len=1192, batch=1)
    e = _estimate(catalog, "T4", "ollama", "0.6.7", job=job)
    assert dict(e.memory.breakdown.parts)["kv_cache"] == 8192 * KV_PER_TOKEN
    said = " ".join(a.value for a in e.memory.assumptions)
    assert "exceed Ollama's default num_ctx (4096 tokens)" in said and "OLLAMA_CONTEXT_LENGTH" in said


def test_older_ollama_runs_without_flash_attention_and_names_its_readouts(catalog: Catalog) -> None:
    old, new = _estimate(catalog, "RTX4090", "ollama", "0.6.6"), _estimate(catalog, "RTX4090", "ollama", "0.13.4")
    assert not old.setup.flash_attention and new.setup.flash_attention
    said = {a.name: a.value for a in old.memory.assumptions}
    assert "'eval rate' is the batch-1 decode rate" in said["readout"] and said["runner"].startswith("Ollama runs")


def test_a_model_larger_than_the_gpu_does_not_fit_rather_than_offload(catalog: Catalog) -> None:
    e = _estimate(catalog, "RTX4090", "ollama", model="Llama-3.1-70B")
    assert not e.fits
    assert any(a.name == "partial offload" for a in e.memory.assumptions)


def test_ollama_serves_its_library_quantization_when_none_is_given(catalog: Catalog) -> None:
    e = api.estimate("Llama-3.1-8B", "RTX4090", "infer", engine="Ollama", prompt=512, output=128)
    assert e.setup.weight_format == "gguf-q4_k_m" and e.setup.launcher == "ollama"


def test_lm_studio_runs_mlx_files_on_its_mlx_runtime() -> None:
    assert inference_setup(JOB, 1, "LM Studio", "mlx-q4").engine is Engine.MLX
    assert inference_setup(JOB, 1, "LM Studio", "gguf-q4_k_m").engine is Engine.LLAMACPP


def test_an_unknown_engine_is_refused_naming_the_option_and_the_runners(catalog: Catalog) -> None:
    with pytest.raises(InputError) as err:
        api.estimate("Llama-3.1-8B", "RTX4090", "infer", engine="olama")
    assert err.value.field == "--engine" and "ollama" in str(err.value.fix) and "lmstudio" in str(err.value.fix)


def test_a_plan_with_ollama_sizes_every_gpu_with_its_defaults() -> None:
    """Each GPU type gets the num_ctx of its own memory tier (newest release): 4096 tokens below 23 GiB, 32768
    from 23 GiB; the runner, not llama.cpp, is what the plan names."""
    result = api.plan("Llama-3.1-8B", "infer", engine="Ollama", requests=100, prompt=512, output=128).result
    for option in result.ranked:
        s, gpu = option.estimate.setup, option.estimate.gpu
        assert (s.launcher, s.engine, s.weight_format) == ("ollama", Engine.LLAMACPP, "gguf-q4_k_m")
        vram = gpu.memory_bytes * s.n_gpus
        assert s.max_model_len == (4096 if vram < 23 * GiB else 32768 if vram < 47 * GiB else 131072)


def test_a_serving_replica_under_ollama_holds_its_default_context(catalog: Catalog) -> None:
    """Llama-3.1-70B Q4_K_M on an L40S (44.99 GiB): llama.cpp sized for 1000 + 300 tokens holds it; Ollama's
    default num_ctx on 23-47 GiB, 32768 tokens (10 GiB of KV cache at 320 KiB a token), does not."""
    from gpuplan.estimate.calibration import fitted
    from gpuplan.plan.serving import Targets, one_gpu_config, parse_buckets, serve_request

    def replica(engine: str) -> object:
        r = serve_request(1.0, None, parse_buckets((), 1000, 300), Targets(), 99.9, engine=engine,
                          quant="gguf-q4_k_m")
        return one_gpu_config(catalog.model("Llama-3.1-70B"), catalog.gpu("L40S"), r, fitted(), [])

    assert replica("llamacpp") is not None and replica("Ollama") is None


def test_newer_ollama_lowers_a_default_context_that_does_not_fit(catalog: Catalog) -> None:
    """Llama-3.1-70B Q4_K_M on an H100: num_ctx 262144 (capped at 131072 positions) needs 40 GiB of KV cache beside
    40 GiB of weights. v0.15.5 loads it so (here: does not fit, where Ollama would offload layers to the CPU);
    from v0.30.0 Ollama lowers num_ctx to the next tier, 32768 tokens (10 GiB), which fits."""
    old = _estimate(catalog, "H100", "ollama", "0.15.5", model="Llama-3.1-70B")
    new = _estimate(catalog, "H100", "ollama", "0.30.0", model="Llama-3.1-70B")
    assert not old.fits and old.setup.max_model_len == 131072
    assert new.fits and new.setup.max_model_len == 32768
    assert "does not fit, so it lowers num_ctx" in " ".join(a.value for a in new.memory.assumptions)


def test_the_http_api_takes_the_runner_by_the_name_users_type() -> None:
    from starlette.testclient import TestClient

    from gpuplan.web.app import create_app

    client = TestClient(create_app())
    body = {"model": "Llama-3.1-8B", "gpu": "RTX4090", "task": "infer", "prompt": 512, "output": 128}
    ok = client.post("/api/estimate", json=body | {"engine": "Ollama"})
    assert ok.status_code == 200
    assert any(a["name"] == "runner" for a in ok.json()["memory"]["assumptions"])
    refused = client.post("/api/estimate", json=body | {"engine": "olama"})
    assert refused.status_code == 400 and refused.json()["field"] == "engine" and "ollama" in refused.json()["fix"]
