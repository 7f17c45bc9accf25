"""Huawei Ascend (vLLM through vllm-ascend, MindIE) and Apple MLX (mlx-lm): the catalog figures they need, the
engines as a vocabulary, where each may run, the efficiency key each is fitted under, and MLX's 4-bit bytes."""

from __future__ import annotations

import pytest
from conftest import read_csv, run_cli

from gpuplan.catalog import BUNDLED_DIR, Catalog
from gpuplan.errors import InfeasibleError
from gpuplan.estimate.calibration import Calibration
from gpuplan.estimate.engines import efficiency_keys, engine_name
from gpuplan.estimate.engines import engine as get_engine
from gpuplan.estimate.infer_speed import _eff, decode_weight_bytes
from gpuplan.estimate.job import check_inference
from gpuplan.estimate.memory import inference_memory
from gpuplan.estimate.quant import weight_format
from gpuplan.plan.candidates import Constraints
from gpuplan.plan.planner import plan
from gpuplan.requests import make_job
from gpuplan.types import ENGINES, Engine, InferSetup


def test_ascend_910b_bandwidth_is_in_the_catalog_with_its_source(catalog: Catalog) -> None:
    rows = {r["name"]: r for r in read_csv(BUNDLED_DIR / "gpus.csv")}
    # 1.6 TB/s (910B1-B3) and 0.8 TB/s (910B4): the HWConf table of a public Ascend performance model
    assert catalog.gpu("Ascend-910B").memory_bandwidth_bytes_per_s == 1600e9
    assert catalog.gpu("Ascend-910B4").memory_bandwidth_bytes_per_s == 800e9
    for name in ("Ascend-910B", "Ascend-910B4"):
        assert "HBM bandwidth" in rows[name]["source"] and rows[name]["verification"] == "secondhand"


def test_mindie_and_mlx_are_engines_the_cli_accepts() -> None:
    assert {Engine.MINDIE, Engine.MLX} <= set(ENGINES)
    assert engine_name("mlx-lm") is Engine.MLX and engine_name("MindIE") is Engine.MINDIE
    assert not Engine.MLX.tensor_parallel and Engine.MINDIE.tensor_parallel
    # an unknown engine's error lists the choices, the new ones among them
    out = run_cli("estimate", "Qwen2.5-0.5B", "--task", "serve", "--gpu", "H100", "--engine", "nope")
    assert out.returncode != 0 and "mindie" in out.stdout + out.stderr and "mlx" in out.stdout + out.stderr


def test_mindie_defaults_are_mindie_service_defaults() -> None:
    # MindIE service_parameter_configuration.md: cacheBlockSize 128, maxBatchSize 200, maxPrefillTokens 8192,
    # NPU_MEMORY_FRACTION 0.8 of the whole NPU memory
    e = get_engine("mindie")
    assert (e.kv_block_tokens, e.max_num_seqs, e.max_batched_tokens, e.gpu_memory_utilization, e.kv_share_of) == (
        128, 200, 8192, 0.8, "total")


@pytest.mark.parametrize(("engine", "gpu"), [("mindie", "H100"), ("mindie", "M1"), ("mlx", "H100"),
                                             ("mlx", "Ascend-910B")])
def test_engines_are_refused_where_they_do_not_run(catalog: Catalog, engine: str, gpu: str) -> None:
    fmt = "mlx-q4" if engine == "mlx" else "bf16"
    s = InferSetup(engine=engine, weight_format=fmt, prompt_len=512, output_len=128)
    with pytest.raises(InfeasibleError, match="does not run on"):
        check_inference(catalog.model("Qwen2.5-0.5B"), catalog.gpu(gpu), s)


def test_a_mindie_plan_never_offers_an_nvidia_part(frozen_catalog: Catalog) -> None:
    # the same job on vLLM ranks NVIDIA offers; on MindIE (Ascend only, runs_on.csv) none of them
    job = make_job("serve", prompt=512, output=128, rps=1)
    m = frozen_catalog.model("Qwen2.5-7B")
    vllm = plan(frozen_catalog, m, job, Constraints(top=50, engine="vllm"), suggest=False)
    mindie = plan(frozen_catalog, m, job, Constraints(top=50, engine="mindie"), suggest=False)
    assert "NVIDIA" in {x.estimate.gpu.vendor for x in vllm.ranked}
    assert {x.estimate.gpu.vendor for x in mindie.ranked} <= {"Huawei"}


def test_vllm_on_ascend_is_its_own_backend_with_vllm_as_prior(catalog: Catalog) -> None:
    npu, h100, m1 = catalog.gpu("Ascend-910B"), catalog.gpu("H100"), catalog.gpu("M1")
    assert efficiency_keys("eta_memory", "vllm", npu) == ("eta_memory_vllm_ascend", "eta_memory_vllm")
    assert efficiency_keys("eta_memory", "vllm", h100) == ("eta_memory_vllm",)
    assert efficiency_keys("eta_memory", "mindie", npu) == (
        "eta_memory_mindie", "eta_memory_vllm_ascend", "eta_memory_vllm")
    assert efficiency_keys("f_moe", "mlx", m1) == ("f_moe_mlx", "f_moe_llamacpp_metal", "f_moe_llamacpp")
    vllm = get_engine("vllm")
    # a calibration without the Ascend key takes vLLM's value; one with it, its own
    assert _eff(Calibration({"eta_memory_vllm": 0.9}), vllm, "eta_memory", npu) == 0.9
    assert _eff(Calibration({"eta_memory_vllm": 0.9, "eta_memory_vllm_ascend": 0.4}), vllm, "eta_memory", npu) == 0.4
    assert _eff(Calibration({"eta_memory_vllm": 0.9, "eta_memory_vllm_ascend": 0.4}), vllm, "eta_memory", h100) == 0.9


def test_mlx_4bit_is_four_and_a_half_bits() -> None:
    # mlx.core.quantize defaults: group_size 64, bits 4, a 16-bit scale and a 16-bit bias per group
    assert weight_format("mlx-q4").bits_per_weight == 4 + 32 / 64
    assert weight_format("mlx-q8").bits_per_weight == 8 + 32 / 64


def test_mlx_4bit_decode_reads_every_weight_once(catalog: Catalog) -> None:
    # Llama-3.2-1B: 1,235,814,400 parameters (transformers numel), embeddings tied so the table is read as the
    # output head every token: 1,235,814,400 x 4.5 / 8 = 695,145,600 bytes per decode step at batch 1
    m = catalog.model("Llama-3.2-1B")
    s = InferSetup(engine="mlx", weight_format="mlx-q4")
    assert decode_weight_bytes(m, weight_format("mlx-q4"), s, 1) == pytest.approx(695_145_600)


def test_mlx_kv_cache_grows_in_steps_of_256_tokens(catalog: Catalog) -> None:
    # mlx-lm KVCache.step = 256: 512 + 128 = 640 tokens hold 3 steps = 768 positions; Llama-3.2-1B keeps
    # 16 layers x 8 KV heads x 64 dims x 2 (K, V) x 2 bytes = 32,768 bytes a position: 25,165,824 bytes
    s = InferSetup(engine="mlx", weight_format="mlx-q4", prompt_len=512, output_len=128)
    est = inference_memory(catalog.model("Llama-3.2-1B"), catalog.gpu("M1"), s)
    assert est.breakdown.get("kv_cache") == 25_165_824


def test_mlx_weights_need_the_mlx_engine(catalog: Catalog) -> None:
    m, gpu = catalog.model("Qwen2.5-0.5B"), catalog.gpu("M1")
    with pytest.raises(InfeasibleError, match="mlx-q4 is not a GGUF type"):
        check_inference(m, gpu, InferSetup(engine="llamacpp", weight_format="mlx-q4"))
    with pytest.raises(InfeasibleError, match="mlx-lm"):
        check_inference(m, gpu, InferSetup(engine="hf", weight_format="mlx-q4"))
    with pytest.raises(InfeasibleError, match="mlx-lm"):
        check_inference(m, gpu, InferSetup(engine="mlx", weight_format="awq-int4"))


def test_vllm_ascend_moe_grouped_gemms_take_their_own_share(catalog: Catalog) -> None:
    # Qwen3-30B-A3B: the routed experts' FLOPs are weighted by 1/f_moe; at f_moe 0.25 on the NPU's own key against
    # 0.5 for vLLM's CUDA kernels the NPU's expert FLOPs are twice the H100's, its dense FLOPs the same
    from gpuplan.estimate.infer_speed import gemm_flops_split

    m, vllm = catalog.model("Qwen3-30B-A3B"), get_engine("vllm")
    cal = Calibration({"f_moe_vllm": 0.5, "f_moe_vllm_ascend": 0.25})
    npu = gemm_flops_split(m, vllm, cal, catalog.gpu("Ascend-910B"))
    h100 = gemm_flops_split(m, vllm, cal, catalog.gpu("H100"))
    assert npu[0] == h100[0] and npu[1] == pytest.approx(2 * h100[1])


def test_mlx_prefills_a_long_prompt_in_chunks_of_2048_tokens(catalog: Catalog) -> None:
    # mlx_lm generate_step runs the prompt through the model prefill_step_size = 2048 tokens at a time and evaluates
    # only the cache between chunks (ml-explore/mlx-lm mlx_lm/generate.py @f8e2d6f976fa29ab6f4b5d41810ed3a66e798a14),
    # so a 33,898-token prompt (mlx-lm PR #40's run, bench/calibration/inference_llamacpp.csv lcp-0766) holds one
    # chunk's transients: Mistral-7B, 2048 x (4 x 4096 + 4096 + 2 x 1024 + 3 x 14336) x 2 bytes = 256 MiB
    s = InferSetup(engine="mlx", weight_format="mlx-q4", prompt_len=33898, output_len=100)
    est = inference_memory(catalog.model("Mistral-7B-v0.2"), catalog.gpu("M2-Ultra"), s)
    assert est.breakdown.get("activations") == 2048 * 65_536 * 2
