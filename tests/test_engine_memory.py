"""Inference memory as each engine allocates it, checked against the engines' own accounting and against
hand-counted tensor sizes, not against the formula's code.

- llama.cpp: weights less the host-resident input table, the KV cache for the whole n_ctx, and one fp32 compute
  buffer reserved for its worst-case graph.
- transformers with a model's own code that rebuilds the KV cache as a new tuple every step (Qwen v1, ChatGLM,
  Baichuan): the previous step's cache is still alive while the next is built."""

from __future__ import annotations

from dataclasses import replace

import pytest

from gpuplan.catalog import Catalog, load_catalog
from gpuplan.estimate.memory import inference_memory
from gpuplan.types import InferSetup
from gpuplan.units import GiB, MiB


@pytest.fixture(scope="module")
def catalog() -> Catalog:
    return load_catalog()


def _llamacpp(n_ctx: int, fmt: str, flash_attention: bool = True) -> InferSetup:
    return InferSetup(engine="llamacpp", weight_format=fmt, prompt_len=n_ctx, output_len=0,
                      flash_attention=flash_attention)


@pytest.mark.parametrize(("model", "fmt", "logged_mib"), [
    # './main' build 1691 (7082d24), all layers on an RTX 3090, n_ctx 512, n_batch 512, f16 KV cache:
    # 'total VRAM used: 3904.05 MiB (model: 3577.55 MiB, context: 326.50 MiB)' and 7411.01 MiB for 13B
    # (XiongjieDai/GPU-Benchmarks-on-LLM-Inference LLaMA/Gaming GPUs/3090.ipynb
    # @aa72e0ec86c356c41f8281c9733e9a13c3675800)
    ("LLaMA-7B", "gguf-q4_0", 3904.05),
    ("LLaMA-13B", "gguf-q4_0", 7411.01),
])
def test_matches_llamacpp_own_accounting_without_the_cuda_context(catalog: Catalog, model: str, fmt: str,
                                                                   logged_mib: float) -> None:
    est = inference_memory(catalog.model(model), catalog.gpu("RTX3090"), _llamacpp(512, fmt, flash_attention=False))
    counted = est.total - est.breakdown.get("overhead")  # llama.cpp's log leaves the CUDA context out
    assert counted == pytest.approx(logged_mib * MiB, rel=0.015)


def test_input_table_stays_on_the_host_unless_the_head_shares_it(catalog: Catalog) -> None:
    gpu = catalog.gpu("RTX4090")
    # Llama-2-7B has its own LM head: the 32000 × 4096 fp16 input table (250 MiB) is not on the GPU under
    # llama.cpp, as it is under vLLM
    llama = catalog.model("Llama-2-7B")
    on_gpu = inference_memory(llama, gpu, InferSetup(engine="vllm", weight_format="fp16")).breakdown.get("weights")
    ggml = inference_memory(llama, gpu, _llamacpp(4096, "fp16")).breakdown.get("weights")
    assert on_gpu - ggml == pytest.approx(32000 * 4096 * 2)
    # Qwen3-0.6B ties them: llama.cpp duplicates the table onto the output layer's device, so nothing is saved
    qwen = catalog.model("Qwen3-0.6B")
    assert inference_memory(qwen, gpu, _llamacpp(4096, "bf16")).breakdown.get("weights") == pytest.approx(
        inference_memory(qwen, gpu, InferSetup(engine="vllm", weight_format="bf16")).breakdown.get("weights"))


def test_attention_scores_dominate_a_long_context_only_without_flash_attention(catalog: Catalog) -> None:
    m, gpu = catalog.model("Llama-2-7B"), catalog.gpu("A100-80GB")
    without = inference_memory(m, gpu, _llamacpp(32768, "gguf-q4_0", flash_attention=False))
    with_fa = inference_memory(m, gpu, _llamacpp(32768, "gguf-q4_0", flash_attention=True))
    # 512 query tokens × 32768 keys × 32 heads of fp32 scores, and their softmax beside them: 4 GiB
    assert without.breakdown.get("compute_buffer") == pytest.approx(4 * GiB, rel=0.01)
    # with Flash Attention the largest tensors are the 512 tokens' fp32 logits over 32000 entries (62.5 MiB)
    # and the hidden state they come from
    assert with_fa.breakdown.get("compute_buffer") < 80 * MiB
    # the KV cache is the same: 2 × 32 layers × 4096 × 2 bytes × 32768 tokens = 16 GiB
    assert with_fa.breakdown.get("kv_cache") == without.breakdown.get("kv_cache") == pytest.approx(16 * GiB)


def test_no_pytorch_workspace_or_separate_logits_under_llamacpp(catalog: Catalog) -> None:
    est = inference_memory(catalog.model("Llama-3.1-8B"), catalog.gpu("RTX4090"), _llamacpp(8192, "gguf-q4_k_m"))
    names = [name for name, _ in est.breakdown.parts]
    assert "workspace" not in names and "logits" not in names and "compute_buffer" in names
    assert any(a.name == "compute buffer" for a in est.assumptions)


def test_remote_code_tuple_cache_holds_two_caches_at_the_peak(catalog: Catalog) -> None:
    gpu = catalog.gpu("A100-80GB")
    generate = InferSetup(engine="hf", weight_format="bf16", prompt_len=1, output_len=2048)
    qwen1 = inference_memory(catalog.model("Qwen-7B"), gpu, generate)
    # Qwen-7B: 32 layers × 2 (K and V) × 4096 × 2 bytes per token, 2049 tokens: 1.0 GiB, and the same again for the
    # previous step's tuple that generate still holds
    assert qwen1.breakdown.get("kv_cache") == pytest.approx(32 * 2 * 4096 * 2 * 2049)
    assert qwen1.breakdown.get("previous_kv_cache") == qwen1.breakdown.get("kv_cache")
    # Qwen's own profile (QwenLM/Qwen README 'Inference Performance', torch.cuda.max_memory_allocated while
    # generating 2048 tokens from one) measured 16.99 GiB; the weights alone are 14.4 GiB
    assert qwen1.total - qwen1.breakdown.get("overhead") == pytest.approx(16.99 * GiB, rel=0.05)
    # Qwen2.5 runs transformers' own Qwen2 code, whose Cache grows in place: one cache
    qwen25 = inference_memory(catalog.model("Qwen2.5-7B"), gpu, generate)
    assert qwen25.breakdown.get("previous_kv_cache") == 0
    # an engine with its own paged cache never holds two, whatever the model's repository code does
    vllm = inference_memory(catalog.model("Qwen-7B"), gpu, replace(generate, engine="vllm"))
    assert vllm.breakdown.get("previous_kv_cache") == 0


def test_a_mac_estimate_does_not_claim_a_cuda_context(catalog: Catalog) -> None:
    est = inference_memory(catalog.model("Llama-3.1-8B"), catalog.gpu("M2-Max"), _llamacpp(4096, "gguf-q4_k_m"))
    names = [a.name for a in est.assumptions]
    assert "runtime context" in names and "CUDA context (outside PyTorch)" not in names
