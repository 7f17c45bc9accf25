"""Inference memory as each engine allocates it, checked against the engines' own accounting and against
hand-counted tensor sizes, not against the formula's code.

- llama.cpp: weights tensor by tensor as its quantizer types them, less the host-resident input table (counted on
  unified memory), the KV cache for the whole n_ctx, and one fp32 compute buffer reserved for its worst-case graph.
- transformers with a quantized format whose kernels dequantize a matrix for a cuBLAS matmul: that 16-bit copy.
- transformers with a model's own code that rebuilds the KV cache as a new tuple every step (Qwen v1, ChatGLM,
  Baichuan): the previous step's cache is still alive while the next is built.
- transformers with grouped-query attention: a decode step copies one layer's cached keys and values to every
  query head."""

from __future__ import annotations

from dataclasses import replace

import pytest

from gpuplan.catalog import Catalog, load_catalog
from gpuplan.estimate.calibration import fitted
from gpuplan.estimate.engines import with_engine_defaults
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
    # llama.cpp, as it is under vLLM; a GGUF F16 file keeps its 65 norms of 4096 in fp32 (2 bytes more each)
    llama = catalog.model("Llama-2-7B")
    on_gpu = inference_memory(llama, gpu, InferSetup(engine="vllm", weight_format="fp16")).breakdown.get("weights")
    ggml = inference_memory(llama, gpu, _llamacpp(4096, "fp16")).breakdown.get("weights")
    assert on_gpu - ggml == pytest.approx(32000 * 4096 * 2 - 65 * 4096 * 2)
    # Qwen3-0.6B ties them: llama.cpp duplicates the table onto the output layer's device, so nothing is saved;
    # only its 57 norms of 1024 are fp32
    qwen = catalog.model("Qwen3-0.6B")
    assert inference_memory(qwen, gpu, _llamacpp(4096, "bf16")).breakdown.get("weights") == pytest.approx(
        inference_memory(qwen, gpu, InferSetup(engine="vllm", weight_format="bf16")).breakdown.get("weights")
        + 57 * 1024 * 2)


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
    # (less the one-token step's own transients, which the previous cache's bytes already cover)
    assert qwen1.breakdown.get("previous_kv_cache") == pytest.approx(qwen1.breakdown.get("kv_cache"), rel=0.01)
    # Qwen's own profile (QwenLM/Qwen README 'Inference Performance', torch.cuda.max_memory_allocated while
    # generating 2048 tokens from one) measured 16.99 GiB; the weights alone are 14.4 GiB
    assert qwen1.total - qwen1.breakdown.get("overhead") == pytest.approx(16.99 * GiB, rel=0.05)
    # Qwen2.5 runs transformers' own Qwen2 code, whose Cache grows in place: one cache
    qwen25 = inference_memory(catalog.model("Qwen2.5-7B"), gpu, generate)
    assert qwen25.breakdown.get("previous_kv_cache") == 0
    # an engine with its own paged cache never holds two, whatever the model's repository code does
    vllm = inference_memory(catalog.model("Qwen-7B"), gpu, replace(generate, engine="vllm"))
    assert vllm.breakdown.get("previous_kv_cache") == 0


def test_transformers_before_one_dynamic_cache_holds_two_caches(catalog: Catalog) -> None:
    gpu, qwen2 = catalog.gpu("A100-80GB"), catalog.model("Qwen2-7B")
    short = InferSetup(engine="hf", weight_format="bf16", prompt_len=1, output_len=2048)
    # 4.41 and 4.42 both keep every layer's rotary tables (before 4.45): only the cache handling differs
    old = inference_memory(qwen2, gpu, replace(short, engine_version="4.41.2"))
    new = inference_memory(qwen2, gpu, replace(short, engine_version="4.42.0"))
    # Qwen2-7B: 28 layers × 2 (K and V) × 4 KV heads × 128 × 2 bytes per token, 2049 tokens: 0.11 GiB held twice
    # before 4.42, once from 4.42 (one DynamicCache from start to end)
    cache = 28 * 2 * 4 * 128 * 2 * 2049
    assert new.breakdown.get("previous_kv_cache") == 0
    assert old.total - new.total == pytest.approx(cache, rel=0.01)
    # after a long prompt the old generate's peak is the prompt's logits (every position, in fp32 as well), which
    # outweigh a second cache: the stated release adds nothing there
    long = replace(short, prompt_len=30720, full_logits=True)
    assert inference_memory(qwen2, gpu, replace(long, engine_version="4.38.2")).total == pytest.approx(
        inference_memory(qwen2, gpu, replace(long, engine_version="4.44.0")).total)
    # a plan (no release stated) runs the current transformers: one cache and no rotary tables
    current = inference_memory(qwen2, gpu, short)
    assert current.breakdown.get("previous_kv_cache") == current.breakdown.get("rotary_tables") == 0


def test_transformers_before_4_45_keeps_rotary_tables_in_every_qwen2_layer(catalog: Catalog) -> None:
    gpu, qwen2 = catalog.gpu("A100-80GB"), catalog.model("Qwen2-72B")
    short = InferSetup(engine="hf", weight_format="bf16", prompt_len=1, output_len=2048)
    old = inference_memory(qwen2, gpu, replace(short, engine_version="4.44.0"))
    new = inference_memory(qwen2, gpu, replace(short, engine_version="4.45.0"))
    # Qwen2-72B: 80 layers, each with a cos and a sin table of 32,768 positions x 128 in 16-bit:
    # 80 x 2 x 32,768 x 128 x 2 bytes = 1.25 GiB, the only difference between the two releases
    assert old.total - new.total == pytest.approx(1.25 * GiB)
    # held from load whatever the prompt: the same 1.25 GiB after a 14,336-token prompt
    long = replace(short, prompt_len=14336, full_logits=True)
    assert inference_memory(qwen2, gpu, replace(long, engine_version="4.44.0")).total - inference_memory(
        qwen2, gpu, replace(long, engine_version="4.45.0")).total == pytest.approx(1.25 * GiB)
    # Qwen2 speed benchmark (QwenLM/Qwen2.5 docs/source/benchmark/speed_benchmark.rst @5c4e69cb, transformers
    # 4.38.2): Qwen2-72B-Instruct-AWQ generating 2,048 tokens from one held 41.31 GiB (max allocated); the weights,
    # two caches and the tables come to that within 5 %, where without the tables the estimate fell short of it
    awq = replace(short, weight_format="awq-int4", engine_version="4.38.2")
    est = inference_memory(replace(qwen2, ffn_hidden=29696), gpu, awq)
    assert est.total - est.breakdown.get("overhead") == pytest.approx(41.31 * GiB, rel=0.05)
    # other engines and model types whose releases build no such tables add nothing
    assert inference_memory(qwen2, gpu, replace(awq, engine="vllm")).breakdown.get("rotary_tables") == 0
    llama = inference_memory(catalog.model("Llama-3.1-8B"), gpu, replace(short, engine_version="4.44.0"))
    assert llama.breakdown.get("rotary_tables") == 0


def test_a_grouped_query_decode_step_copies_one_layers_keys_and_values_to_every_head(catalog: Catalog) -> None:
    gpu = catalog.gpu("A100-80GB")
    generate = InferSetup(engine="hf", weight_format="bf16", prompt_len=1, output_len=2048, engine_version="4.38.2")
    est = inference_memory(catalog.model("Qwen2-72B"), gpu, generate)
    # Qwen2-72B: 64 query heads over 8 KV heads of 128; transformers' repeat_kv gives the last layer's keys and
    # values all 64 heads for the 2,049 positions: 2 x 64 x 128 x 2049 x 2 bytes, on top of the two caches
    assert est.breakdown.get("repeated_kv") == pytest.approx(2 * 64 * 128 * 2049 * 2)
    assert any(a.name == "keys and values widened to every head" for a in est.assumptions)
    # Qwen-7B gives each of its 32 query heads its own KV head: repeat_kv returns the cache itself
    assert inference_memory(catalog.model("Qwen-7B"), gpu, generate).breakdown.get("repeated_kv") == 0
    # vLLM's kernels read the grouped heads in place
    vllm = inference_memory(catalog.model("Qwen2-72B"), gpu, replace(generate, engine="vllm"))
    assert vllm.breakdown.get("repeated_kv") == 0
    # after a 30,720-token prompt the peak is the prompt's logits, long freed when the copy is made: it adds nothing
    long = replace(generate, prompt_len=30720, full_logits=True)
    assert inference_memory(catalog.model("Qwen2-7B"), gpu, long).breakdown.get("repeated_kv") == 0


def test_a_mac_estimate_does_not_claim_a_cuda_context(catalog: Catalog) -> None:
    est = inference_memory(catalog.model("Llama-3.1-8B"), catalog.gpu("M2-Max"), _llamacpp(4096, "gguf-q4_k_m"))
    names = [a.name for a in est.assumptions]
    assert "runtime context" in names and "CUDA context (outside PyTorch)" not in names


def test_gguf_weights_tensor_by_tensor_match_llamacpp_own_log(catalog: Catalog) -> None:
    # './main' build 1691 (7082d24), LLaMA-13B Q4_0 on an RTX 3090: 'llm_load_tensors: VRAM used = 6936.01 MiB'
    # (XiongjieDai/GPU-Benchmarks-on-LLM-Inference LLaMA/Gaming GPUs/3090.ipynb @aa72e0e). By hand: 40 layers of
    # 4·5120² + 3·5120·13824 weights in Q4_0 (18 bytes per 32) = 7,137.0 MB, the 32000 × 5120 output in Q6_K
    # (210 bytes per 256) = 134.4 MB, 81 fp32 norms of 5120 = 1.7 MB: 6936.0 MiB. The format's average of 4.5 bits
    # for every tensor gave 6.73 GiB (0.6 % short).
    est = inference_memory(catalog.model("LLaMA-13B"), catalog.gpu("RTX3090"), _llamacpp(512, "gguf-q4_0"))
    assert est.breakdown.get("weights") == pytest.approx(6936.01 * MiB, rel=2e-4)


def test_gguf_k_quant_mix_averages_what_llamacpp_publishes(catalog: Catalog) -> None:
    # llama.cpp tools/quantize/README.md: Llama 2 7B in Q4_K_M is 4.84 bits per weight. Tensor by tensor: half the
    # layers (use_more_bits: 0-3, 28-31 and every third between) keep attn_v and ffn_down in Q6_K, the output is Q6_K
    from gpuplan.estimate.memory import gguf_weights_bytes
    from gpuplan.estimate.params import count_params
    from gpuplan.estimate.quant import weight_format

    m = catalog.model("Llama-2-7B")
    bits = 8 * gguf_weights_bytes(m, weight_format("gguf-q4_k_m")) / count_params(m).total
    assert bits == pytest.approx(4.84, abs=0.015)


@pytest.mark.parametrize(("model", "fmt", "file_gib"), [
    # llama-bench's model size column for LLaMA 7B (6.74 B params) in ggerganov's M2 Ultra table of llama.cpp PR
    # #2917: Q4_0 3.56 GiB, Q4_1 3.95 GiB, Q8_0 6.67 GiB. By hand for Q4_1: 32 layers of 4·4096² + 3·4096·11008
    # weights at 20 bytes per 32 (block_q4_1: fp16 scale and minimum, 16 bytes of nibbles) = 4,047.5 MB, the
    # 32000 × 4096 token table in Q4_1 = 81.9 MB and output in Q6_K = 107.5 MB, fp32 norms 1 MB: 3.95 GiB
    ("LLaMA-7B", "gguf-q4_0", 3.56), ("LLaMA-7B", "gguf-q4_1", 3.95), ("LLaMA-7B", "gguf-q8_0", 6.67),
    # llama.cpp tools/quantize/README.md @311c2c9 (Llama-3.1-8B table, size in GiB). Q4_K_S by hand: 32 layers of
    # Q4_K (4.5 bits) but attn_v of layers 0-3 and ffn_down of layers 0-3 (the first eighth) in Q5_K (5.5), the
    # 128256 x 4096 token table in Q4_K and the output in Q6_K: 4.36 GiB; Q5_K_S: Q5_K throughout, Q6_K output
    ("Llama-3.1-8B", "gguf-q4_k_s", 4.36), ("Llama-3.1-8B", "gguf-q4_k_m", 4.58), ("Llama-3.1-8B", "gguf-q5_k_s", 5.21),
    ("Llama-3.1-8B", "gguf-q5_k_m", 5.33), ("Llama-3.1-8B", "gguf-q6_k", 6.14), ("Llama-3.1-8B", "gguf-q8_0", 7.95),
    # bartowski's Q4_K_M files of two tied checkpoints that store lm_head.weight too (enescingoz/mac-llm-bench result
    # files @5e91948, file size / 2^30). Qwen3-0.6B by hand: 28 layers of 15,728,640 weights, 14 use_more_bits layers
    # with attn_v and ffn_down (4,194,304) in Q6_K = 48,168,960 B, the other 381,681,664 in Q4_K = 214,695,936 B; the
    # 151936 x 1024 output in Q6_K = 127,626,240 B and token_embd beside it in Q4_K = 87,515,136 B; fp32 norms
    # 262,144 B: 478,268,416 B = 0.445 GiB (one Q6_K table alone: 0.364 GiB). Qwen3-1.7B: 168,591,360 + 677,117,952
    # + 255,252,480 (output) + 175,030,272 (token_embd) + 495,616 = 1,276,487,680 B = 1.189 GiB (alone: 1.026 GiB)
    ("Qwen3-0.6B", "gguf-q4_k_m", 0.45), ("Qwen3-1.7B", "gguf-q4_k_m", 1.19),
])
def test_gguf_file_size_matches_llama_bench(catalog: Catalog, model: str, fmt: str, file_gib: float) -> None:
    from gpuplan.estimate.memory import gguf_weights_bytes
    from gpuplan.estimate.quant import weight_format

    assert gguf_weights_bytes(catalog.model(model), weight_format(fmt)) == pytest.approx(file_gib * GiB,
                                                                                        abs=0.006 * GiB)


def test_a_stored_tied_head_is_a_second_table_only_in_a_gguf(catalog: Catalog) -> None:
    # Qwen3-0.6B's checkpoint stores lm_head.weight beside its tied token table: transformers ties them at load (one
    # 151936 x 1024 table, 2 bytes each), llama.cpp's GGUF keeps token_embd (Q4_K, 144 bytes per 256 weights) in host
    # memory, which is the device's on a Mac and not on a CUDA card
    from gpuplan.estimate.params import count_params

    m = catalog.model("Qwen3-0.6B")
    assert m.head_stored and m.tied_embeddings and not catalog.model("Qwen3-4B").head_stored
    hf = inference_memory(m, catalog.gpu("RTX4090"), InferSetup(engine="hf", weight_format="bf16"))
    assert hf.breakdown.get("weights") == pytest.approx(count_params(m).total * 2, rel=1e-6)
    mac = inference_memory(m, catalog.gpu("M2-Max"), _llamacpp(4096, "gguf-q4_k_m"))
    cuda = inference_memory(m, catalog.gpu("RTX4090"), _llamacpp(4096, "gguf-q4_k_m"))
    assert mac.breakdown.get("weights") - cuda.breakdown.get("weights") == pytest.approx(151936 * 1024 * 144 / 256)


def test_unified_memory_holds_the_host_table_and_no_cuda_context(catalog: Catalog) -> None:
    m = catalog.model("Llama-3.1-8B")
    mac = inference_memory(m, catalog.gpu("M2-Max"), _llamacpp(4096, "gguf-q4_k_m"))
    cuda = inference_memory(m, catalog.gpu("RTX4090"), _llamacpp(4096, "gguf-q4_k_m"))
    # the 128256 × 4096 token table llama.cpp keeps in host memory is in the same memory on a Mac: Q4_K, 144 bytes
    # per 256 weights
    assert mac.breakdown.get("weights") - cuda.breakdown.get("weights") == pytest.approx(128256 * 4096 * 144 / 256)
    cal = fitted()
    assert mac.breakdown.get("overhead") == cal.get("infer_overhead_unified_bytes")
    assert cuda.breakdown.get("overhead") == cal.get("infer_overhead_bytes")


@pytest.mark.parametrize(("fmt", "prompt", "expected"), [
    # AutoGPTQ's exllama temp_dq: Llama-2-13B's largest quantized matrix is the MLP's 5120 × 13824, in fp16
    ("gptq-int4", 1, 5120 * 13824 * 2),
    # bitsandbytes dequantizes NF4 for a prompt of 512 tokens, but a single token goes through gemv_4bit
    ("bnb-nf4", 512, 5120 * 13824 * 2),
    ("bnb-nf4", 1, 0),
    # AWQ's GEMM kernels read the packed weights; a 16-bit model has nothing to dequantize
    ("awq-int4", 512, 0),
    ("fp16", 512, 0),
])
def test_transformers_holds_one_dequantized_matrix(catalog: Catalog, fmt: str, prompt: int, expected: float) -> None:
    s = InferSetup(engine="hf", weight_format=fmt, prompt_len=prompt, output_len=16)
    est = inference_memory(catalog.model("Llama-2-13B"), catalog.gpu("A100-80GB"), s)
    assert est.breakdown.get("dequant") == expected
    # vLLM's quantized kernels are not transformers': no such buffer
    vllm = inference_memory(catalog.model("Llama-2-13B"), catalog.gpu("A100-80GB"), replace(s, engine="vllm"))
    assert vllm.breakdown.get("dequant") == 0


def test_gguf_fused_qkv_matrix_is_q5_k_in_q4_k_m(catalog: Catalog) -> None:
    # llama.cpp's quantizer gives a fused attn_qkv matrix Q5_K in a Q4_K_M file (src/llama-quant.cpp @8784689,
    # ATTENTION_QKV) and Phi-3/Phi-4's qkv_proj is converted to one attn_qkv (gguf-py tensor_mapping.py @0024aa7).
    # Phi-4 (40 layers, hidden 5120, 10 KV heads of 128, MLP 17920, vocab 100352, untied) by hand: attn_qkv
    # 40·5120·7680 in Q5_K (176 bytes per 256) = 1,081,344,000; attn_output 40·5120² in Q4_K (144 per 256) =
    # 589,824,000; the fused ffn_up 40·5120·35840 in Q4_K = 4,128,768,000; ffn_down 40·17920·5120, 20 use_more_bits
    # layers in Q6_K (210 per 256) = 1,505,280,000 and 20 in Q4_K = 1,032,192,000; the token table in Q4_K =
    # 289,013,760 and the output in Q6_K = 421,478,400; 81 fp32 norms of 5120 = 1,658,880. Total 9,049,559,040
    # bytes = 8.428 GiB; bartowski/phi-4-GGUF Q4_K_M is 8.43 GiB (os.path.getsize / 2^30 in
    # enescingoz/mac-llm-bench results/m2/max/raw/m2-max_12c-30g_32gb/gguf/phi-4_Q4_K_M_ngl99.json @5e91948)
    from gpuplan.estimate.memory import gguf_weights_bytes
    from gpuplan.estimate.quant import weight_format

    m = catalog.model("Phi-4")
    assert gguf_weights_bytes(m, weight_format("gguf-q4_k_m")) == pytest.approx(9_049_559_040, rel=1e-9)
    assert gguf_weights_bytes(m, weight_format("gguf-q4_k_m")) == pytest.approx(8.43 * GiB, abs=0.006 * GiB)
    # Q4_K_S has no rule for attn_qkv: the matrix stays Q4_K, one bit per weight less than in Q4_K_M
    assert gguf_weights_bytes(m, weight_format("gguf-q4_k_s")) < gguf_weights_bytes(m, weight_format("gguf-q4_k_m"))


def test_gguf_hybrid_promotes_attn_v_of_its_attention_layers_only(catalog: Catalog) -> None:
    # Qwen3.5-27B: 64 layers, 48 Gated DeltaNet (their in_proj_qkv is a fused attn_qkv: Q5_K in Q4_K_M) and 16
    # full-attention layers with attn_v of their own; use_more_bits counts attn_v over those 16 (i_attention_wv of
    # n_attention_wv): 2 + 2 + 4 = 8 of them in Q6_K, not the 32 of 64 a dense count would give
    from gpuplan.estimate.memory import fused_qkv_params, more_bits_layers

    m = catalog.model("Qwen3.5-27B")
    fused, v_layers = fused_qkv_params(m)
    assert v_layers == 16 and more_bits_layers(v_layers) == 8
    assert fused == 48 * 52_428_800  # in_proj_qkv of [2·16·128 + 48·128 = 10240, 5120] per Gated DeltaNet layer


def test_gguf_gemma4_promotes_attn_v_of_its_sliding_layers_only(catalog: Catalog) -> None:
    # Gemma-4-31B: 60 layers, 10 full-attention layers whose values are their keys (attention_k_eq_v: no v_proj,
    # so no attn_v in the GGUF); use_more_bits counts the 50 attn_v tensors the file holds: 6 + 7 + 12 = 25 in
    # Q6_K, where counting all 60 layers would promote 30
    from gpuplan.estimate.memory import fused_qkv_params, gguf_weights_bytes, more_bits_layers
    from gpuplan.estimate.quant import weight_format

    m = catalog.model("Gemma-4-31B")
    assert fused_qkv_params(m) == (0, 50) and more_bits_layers(50) == 25
    # a stock llama.cpp Q4_K_M of gemma-4-31B-it weighs 18.7e9 bytes (steampunque/gemma-4-31B-it-MP-GGUF model
    # card, comparison table); bartowski's (19.6e9 bytes) is not a stock mix
    assert gguf_weights_bytes(m, weight_format("gguf-q4_k_m")) == pytest.approx(18.7e9, abs=0.05e9)


def test_gguf_70b_models_keep_every_attn_v_at_q5_k_or_more(catalog: Catalog) -> None:
    # llama.cpp's quantizer lifts a Q3_K/Q4_K attn_v to Q5_K in a model it types LLM_TYPE_70B (src/llama-quant.cpp
    # @007dbbf), which an 80-layer llama-architecture model with grouped KV heads is (src/llama-model.cpp @00342301).
    # Llama-3-70B in Q4_K_M: the 40 attn_v (8192 x 1024) outside use_more_bits go from Q4_K (144 bytes per 256) to
    # Q5_K (176): 40 x 8,388,608 x 32 / 256 = 41,943,040 bytes more than the same tensors under an architecture
    # without that rule; llama-bench reports the file as 39.59 GiB (XiongjieDai/GPU-Benchmarks-on-LLM-Inference
    # @aa72e0e, LLaMA 3 notebooks: 'file 39.59 GiB')
    from gpuplan.estimate.memory import gguf_weights_bytes
    from gpuplan.estimate.quant import weight_format

    q4km = weight_format("gguf-q4_k_m")
    m = catalog.model("Llama-3-70B")
    assert gguf_weights_bytes(m, q4km) - gguf_weights_bytes(replace(m, model_type="qwen3"), q4km) == 41_943_040
    assert gguf_weights_bytes(m, q4km) == pytest.approx(39.59 * GiB, abs=0.006 * GiB)
    # LLaMA-65B has as many KV heads as heads: llama.cpp types it 65B, and its attn_v stays in the mix's types
    old = catalog.model("LLaMA-65B")
    assert gguf_weights_bytes(old, q4km) == gguf_weights_bytes(replace(old, model_type="qwen3"), q4km)
    # a Q5_K_M file's attn_v is already Q5_K or Q6_K: nothing to lift
    q5km = weight_format("gguf-q5_k_m")
    assert gguf_weights_bytes(m, q5km) == gguf_weights_bytes(replace(m, model_type="qwen3"), q5km)


def test_gguf_eight_expert_model_keeps_attn_k_and_v_in_q8_0(catalog: Catalog) -> None:
    # llama.cpp's quantizer gives a model with 8 experts attn_v and attn_k in Q8_0 and, in Q4_K_S/Q4_K_M files,
    # attn_output in Q5_K (src/llama-quant.cpp @007dbbf: 'for the 8-expert model, bumping this to Q8_0 trades just
    # ~128MB'). Mixtral-8x7B in Q4_K_M by hand (32 layers, hidden 4096, 8 KV heads of 128, 8 experts of 14336,
    # untied 32000-token table): attn_q 536,870,912 weights in Q4_K (144 bytes per 256) = 301,989,888; attn_k and
    # attn_v 134,217,728 each in Q8_0 (34 per 32) = 285,212,672; attn_output in Q5_K (176 per 256) = 369,098,752;
    # expert gate and up 30,064,771,072 in Q4_K = 16,911,433,728; expert down 15,032,385,536, half (the 16
    # use_more_bits layers) in Q6_K (210 per 256) = 6,165,626,880 and half in Q4_K = 4,227,858,432; fp32 router
    # 4,194,304 and norms 1,064,960; token_embd in Q4_K 73,728,000 and output in Q6_K 107,520,000
    from gpuplan.estimate.memory import gguf_weights_bytes
    from gpuplan.estimate.quant import weight_format

    m = catalog.model("Mixtral-8x7B")
    assert gguf_weights_bytes(m, weight_format("gguf-q4_k_m")) == 28_447_727_616
    # the Q5_K attn_output is for the Q4_K files only; attn_k and attn_v are Q8_0 in a Q4_0 file too: 32 layers x
    # 2 x 4,194,304 weights at 34 - 18 bytes per 32 more than Q4_0 = 134,217,728 bytes over Q4_0 throughout
    q4_0 = gguf_weights_bytes(m, weight_format("gguf-q4_0"))
    all_q4_0 = (45_097_156_608 + 1_342_177_280 + 131_072_000) * 18 / 32 + 107_520_000 + (1_048_576 + 266_240) * 4
    assert q4_0 - all_q4_0 == pytest.approx(134_217_728)


def test_gguf_k_quant_falls_back_where_rows_are_not_whole_super_blocks(catalog: Catalog) -> None:
    # A K-quant needs rows (ne0) of whole 256-weight super-blocks; llama.cpp's quantizer gives any other tensor Q5_0
    # for Q4_K and Q8_0 for Q6_K (src/llama-quant.cpp @8784689, convert_incompatible_tensor). Gemma-3-1B's hidden
    # state is 1152 wide (4.5 super-blocks), so every matrix that reads it falls back. By hand (26 layers, 4 heads and
    # 1 KV head of 256, MLP 6912, tied 262144-token table): q, k, gate, up and the 13 attn_v outside use_more_bits
    # in Q5_0 (22 bytes per 32) = 313,657,344; the 13 promoted attn_v in Q8_0 (34 per 32) = 4,073,472; attn_output
    # (rows of 1024) in Q4_K = 17,252,352; ffn_down (rows of 6912) half Q6_K, half Q4_K = 143,140,608; the tied table
    # as the output in Q8_0 = 320,864,256; fp32 norms 537,088: 799,525,120 bytes = 0.745 GiB. bartowski's
    # google_gemma-3-1b-it-GGUF Q4_K_M is 0.75 GiB (enescingoz/mac-llm-bench results/m2/max/raw/
    # m2-max_12c-30g_32gb/gguf/gemma-3-1b_Q4_K_M_ngl99.json @5e91948); Q4_K throughout it would be 0.62 GiB
    from gpuplan.estimate.memory import gguf_weights_bytes
    from gpuplan.estimate.quant import weight_format

    est = gguf_weights_bytes(catalog.model("Gemma-3-1B"), weight_format("gguf-q4_k_m"))
    assert est == pytest.approx(799_525_120, rel=1e-4)  # the q/k norms (13,312 weights) are counted with q and k
    assert est == pytest.approx(0.75 * GiB, abs=0.006 * GiB)


@pytest.mark.parametrize(("n_ctx", "flash_attention", "cells"), [
    (33, True, 256),    # llama-bench -p 32 -n 1 -fa 1: n_ctx 33 rounds up to one 256-cell pad
    (33, False, 64),    # without Flash Attention the pad is 32 cells: 33 -> 64
    (512, False, 512),  # a whole number of pads stays as it is (llama.cpp's own log: 'KV self size = 256.00 MiB')
    (4100, True, 4352),  # 4100 -> 17 pads of 256
])
def test_llamacpp_kv_cache_is_allocated_for_n_ctx_padded_to_whole_cells(catalog: Catalog, n_ctx: int,
                                                                        flash_attention: bool, cells: int) -> None:
    # llama.cpp pads n_ctx to 256 KV cells with Flash Attention, 32 without (src/llama-kv-cache.cpp get_padding;
    # releases after PR #17046 pad to 256 always). LLaMA-7B: 32 layers x 4096 x (K + V) x 2 bytes = 512 KiB a cell
    est = inference_memory(catalog.model("LLaMA-7B"), catalog.gpu("RTX3090"), _llamacpp(n_ctx, "gguf-q4_0",
                                                                                      flash_attention))
    assert est.breakdown.get("kv_cache") == cells * 32 * 4096 * 2 * 2


def _scoring(prompt: int) -> InferSetup:  # transformers 4.38 generate: logits for every prompt position
    return InferSetup(engine="hf", weight_format="bf16", prompt_len=prompt, output_len=2048, full_logits=True)


def test_long_prompt_peak_holds_the_logits_not_the_layer_activations_too(catalog: Catalog) -> None:
    # Qwen2-7B, 30,720 prompt tokens: one layer's transients are 30,720 x (4 x 3584 + 3584 + 2 x 512 + 3 x 18944)
    # x 2 bytes = 4.34 GiB; the logits, made after the last layer has freed its transients, are 30,720 x 152,064
    # x (2 + 4) bytes = 26.1 GiB with the 16-bit final hidden state (0.21 GiB) they come from. The Qwen2 speed
    # benchmark (bench/calibration/inference_extra.csv imm-0068) measured 42.62 GiB, the parts without the 4.34.
    est = inference_memory(catalog.model("Qwen2-7B"), catalog.gpu("A100-80GB"), _scoring(30720))
    layer = 30720 * (4 * 3584 + 3584 + 2 * 512 + 3 * 18944) * 2
    assert est.breakdown.get("logits") == 30720 * 152_064 * 6
    assert est.breakdown.get("activations") == 30720 * 3584 * 2
    assert est.breakdown.get("activations") < layer / 10


def test_short_prompt_peak_is_inside_a_layer(catalog: Catalog) -> None:
    # one prompt token, generate keeping the last position's logits: 152,064 x 6 bytes = 0.9 MB of logits against
    # a layer's transients; the peak is the layer's and no logits are added to it
    s = InferSetup(engine="hf", weight_format="bf16", prompt_len=4096, output_len=256)
    est = inference_memory(catalog.model("Qwen2-7B"), catalog.gpu("A100-80GB"), s)
    assert est.breakdown.get("activations") == 4096 * (4 * 3584 + 3584 + 2 * 512 + 3 * 18944) * 2
    assert est.breakdown.get("logits") == 0


def test_peak_does_not_grow_with_the_activations_while_the_logits_dominate(catalog: Catalog) -> None:
    gpu = catalog.gpu("A100-80GB")
    qwen = catalog.model("Qwen2-7B")
    wider = replace(qwen, ffn_hidden=2 * qwen.ffn_hidden)  # larger layer transients only
    short_of_weights = [inference_memory(m, gpu, _scoring(30720)) for m in (qwen, wider)]
    assert [e.total - e.breakdown.get("weights") for e in short_of_weights] == pytest.approx(
        [short_of_weights[0].total - short_of_weights[0].breakdown.get("weights")] * 2)


# vLLM's scheduler defaults by release, GPU and entry point, read in each release's vllm/engine/arg_utils.py
# (EngineArgs._set_default_args_v1, later get_batch_defaults): the expected pairs are the source's, not gpuplan's.
@pytest.mark.parametrize(("gpu_name", "launcher", "version", "tokens", "seqs", "why"), [
    ("H100", "vllm-llm-class", "0.11.0", 16384, 1024, "80 GB, not an A100: large tier, offline LLM class"),
    ("H100", "", "0.11.0", 8192, 1024, "80 GB, not an A100: large tier, API server"),
    ("A100-80GB", "", "0.11.0", 2048, 256, "80 GB but named A100 (PR #17885): small tier, API server"),
    ("A100-80GB", "", "0.8.5", 8192, 1024, "0.8.5 keyed on memory alone: the A100 80GB was in the large tier"),
    ("A100", "", "0.8.3", 2048, 1024, "0.8.3 keyed the budget on the names H100/H200, 1,024 sequences on all"),
    ("A100", "", "0.8.4", 2048, 256, "0.8.4: 256 sequences outside H100/H200 (PR #16158)"),
    ("B200", "", "0.16.0", 8192, 1024, "before 0.28.0 the B200 is in the 70 GiB tier"),
    ("B200", "", "", 16384, 1024, "the current release gives 160 GiB parts 16,384 tokens for the server too"),
])
def test_vllm_batch_defaults_follow_release_gpu_and_entry_point(gpu_name, launcher, version, tokens, seqs, why):
    gpu = load_catalog().gpu(gpu_name)
    s = with_engine_defaults(InferSetup(engine="vllm", launcher=launcher, engine_version=version), gpu)
    assert (s.max_batched_tokens, s.max_num_seqs) == (tokens, seqs), why


def test_stated_vllm_limits_and_v0_keep_theirs():
    h100 = load_catalog().gpu("H100")
    stated = with_engine_defaults(InferSetup(engine="vllm", max_batched_tokens=4096), h100)
    assert (stated.max_batched_tokens, stated.max_num_seqs) == (4096, 1024)
    v0 = InferSetup(engine="vllm", engine_version="0.6.3")
    assert with_engine_defaults(v0, h100) is v0  # V0 keeps engines.csv's 256 sequences and its own budget


@pytest.mark.parametrize(("gpu_name", "version", "dp", "tokens", "why"), [
    ("H200", "0.4.1", False, 8192, "0.4.1 server_args.py: 8,192 on any GPU of 25,000 MiB or more, not 16,384"),
    ("RTX 4090", "0.4.3.post2", False, 2048, "0.4.3.post2: 24,564 MiB is under 25,000 MiB"),
    ("MI300X", "0.4.2.post4", False, 8192, "before 0.5.3 a 192 GB part takes 8,192 like an 80 GB one"),
    ("H200", "0.4.1", True, 8 * 4096, "0.4.1 halves it per DP rank (dp_size = tp_size): 4,096 on each of 8"),
    ("H200", "0.4.6.post2", True, 8192, "0.4.6 splits it over the dp_size ranks: 1,024 on each of 8"),
    ("L40S", "0.5.4.post2", False, 4096, "0.5.x _handle_gpu_memory_settings: under 60 GiB"),
    ("H100", "0.5.6.post2", False, 8192, "0.5.x: under 160 GiB (an H200's 143,771 MiB too)"),
    ("B200", "0.5.3", False, 16384, "0.5.x: 160 GiB or more"),
    ("MI300X", "", False, 16384, "plans run the current release: 192 GB parts take 16,384"),
])
def test_sglang_prompt_chunk_follows_release_gpu_memory_and_attention_dp(gpu_name, version, dp, tokens, why):
    gpu = load_catalog().gpu(gpu_name)
    s = InferSetup(engine="sglang", engine_version=version, tp=8, attention_dp=dp)
    assert with_engine_defaults(s, gpu).max_batched_tokens == tokens, why


def test_stated_sglang_chunk_and_other_platforms_keep_theirs():
    cat = load_catalog()
    stated = InferSetup(engine="sglang", max_batched_tokens=2048)
    assert with_engine_defaults(stated, cat.gpu("B200")).max_batched_tokens == 2048
    apple = next(g for g in cat.gpus.values() if g.vendor == "Apple")
    s = InferSetup(engine="sglang")
    assert with_engine_defaults(s, apple) is s  # no rule read for another platform's runner: engines.csv's


def test_h100_offline_runs_bigger_batches_than_a100_server():
    """The same 8B model at 128 tokens in, 128 out, queued all at once: vLLM's LLM class on an H100 may run 1,024
    sequences where its API server on an A100 80GB runs 256, so the H100 run's batch is four times larger (the KV
    cache of either holds more than 1,024 such sequences)."""
    from gpuplan.estimate.infer_speed import max_batch

    cat = load_catalog()
    m = cat.model("Llama-3.1-8B")
    s = InferSetup(engine="vllm", prompt_len=128, output_len=128, engine_version="0.11.0")
    h100 = with_engine_defaults(replace(s, launcher="vllm-llm-class"), cat.gpu("H100"))
    a100 = with_engine_defaults(s, cat.gpu("A100-80GB"))
    assert max_batch(m, cat.gpu("H100"), h100, fitted()) == 1024
    assert max_batch(m, cat.gpu("A100-80GB"), a100, fitted()) == 256


@pytest.mark.parametrize(("gpu_name", "version", "tp", "low", "high", "why"), [
    ("H100", "0.4.1", 8, 0.81, 0.81, "0.4.0-0.4.3 server_args.py: 0.81 from TP 8, whatever the GPU"),
    ("H100", "0.4.3.post2", 1, 0.88, 0.88, "0.4.x: 0.88 on one GPU"),
    ("H200", "lmsysorg/sglang:dev docker image, Dec 2024", 8, 0.82, 0.82, "0.3.6.post3: 0.82 from TP 8"),
    ("H200", "0.4.6.post2", 8, 0.86, 0.88, "0.4.6: 0.88 above 81,920 MiB, capped at (memory - 18 GiB) / memory"),
    ("H100", "0.5.6.post2", 1, 0.82, 0.85, "0.5.x: about 13 GiB of 80 GB reserved for an 8,192-token chunk"),
    ("H200", "", 1, 0.89, 0.92, "the same 13 GiB is a smaller share of 141 GB: the current release keeps more"),
])
def test_sglang_memory_share_follows_release_tp_and_gpu_memory(gpu_name, version, tp, low, high, why):
    s = InferSetup(engine="sglang", engine_version=version, tp=tp)
    share = with_engine_defaults(s, load_catalog().gpu(gpu_name)).gpu_memory_utilization
    assert share is not None and low <= share <= high, why


def test_stated_sglang_memory_share_is_kept_and_sets_the_kv_pool():
    """A server started with --mem-fraction-static 0.78 keeps it; at TP 8 an H200 running Llama-3.1-405B holds about
    101 GB of weights per GPU, so 0.4.1's 0.81 leaves a KV pool well under what 0.88 would."""
    from gpuplan.estimate.infer_speed import max_batch

    cat = load_catalog()
    h200, m = cat.gpu("H200"), cat.model("Llama-3.1-405B")
    stated = with_engine_defaults(InferSetup(engine="sglang", gpu_memory_utilization=0.78, tp=8), h200)
    assert stated.gpu_memory_utilization == 0.78
    s = InferSetup(engine="sglang", engine_version="0.4.1", tp=8, prompt_len=4096, output_len=1024, batch=4096)
    old = max_batch(m, h200, with_engine_defaults(s, h200), fitted())
    wide = max_batch(m, h200, replace(with_engine_defaults(s, h200), gpu_memory_utilization=0.88), fitted())
    assert old < 0.75 * wide


@pytest.mark.parametrize(("version", "expected"), [
    ("lmsysorg/sglang:dev docker image, Dec 2024 (exact version not stated)", (0, 3, 6)),
    ("not stated (Dec 2024)", (0, 3, 6)),
    ("v0.4.1 (title)", (0, 4, 1)),
    ("dev image", (999, 0, 0)),
])
def test_a_dated_sglang_dev_image_runs_the_last_release_before_its_month(version, expected):
    from gpuplan.estimate.engines import running_release

    assert running_release(InferSetup(engine="sglang", engine_version=version)) == expected


def _lit_gpt_falcon(catalog: Catalog):  # type: ignore[no-untyped-def]
    # Lit-GPT holds Falcon-7B's output layer apart from the token table (lit_gpt/model.py @03f8197)
    return replace(catalog.model("Falcon-7B"), tied_embeddings=False)


# Falcon-7B's output layer: 65,024 tokens × 4,544, the largest matrix once it is quantized
FALCON_HEAD = 65024 * 4544


def test_a_quantized_output_layer_dequantizes_through_fp16_under_bitsandbytes_0_40(catalog: Catalog) -> None:
    # Lit-GPT's NF4 prompt pass (5 tokens, bf16 activations) under bitsandbytes 0.40: MatMul4Bit dequantizes the
    # output layer to fp16 (the state Params4bit.cuda made from a .half() copy) and casts it to bf16, two 16-bit
    # copies of 65,024 × 4,544 alive at once; the layer itself is stored at 4.5 bits instead of 16
    model, gpu = _lit_gpt_falcon(catalog), catalog.gpu("A100")
    plain = InferSetup(engine="hf", weight_format="bnb-nf4", prompt_len=5, output_len=256)
    lit = replace(plain, quantized_head=True, quant_release="0.40.0")
    before, after = inference_memory(model, gpu, plain), inference_memory(model, gpu, lit)
    assert before.breakdown.get("dequant") == 4544 * 18176 * 2  # the MLP's matrix, one copy
    assert after.breakdown.get("dequant") == 2 * FALCON_HEAD * 2
    assert before.breakdown.get("weights") - after.breakdown.get("weights") == pytest.approx(FALCON_HEAD * (2 - 0.5625))
    # bitsandbytes 0.43 and later dequantize in the weights' own dtype: one copy
    today = inference_memory(model, gpu, replace(lit, quant_release=""))
    assert today.breakdown.get("dequant") == FALCON_HEAD * 2


def test_lit_gpt_int8_peaks_while_the_output_layer_is_quantized_again_at_load(catalog: Catalog) -> None:
    # Lit-GPT's InferenceLinear8bitLt quantizes each layer when built on the GPU and again from the checkpoint: while
    # the output layer is re-quantized, its first int8 copy, the fp16 copy of the checkpoint's weight and the new
    # row- and column-wise int8 copies are alive, 1 + 2 + 1 + 1 bytes a weight where 1 stays: 4 beyond the weights.
    # Nothing of generation has run yet, so the peak is the weights and those 4 bytes a weight
    model, gpu = _lit_gpt_falcon(catalog), catalog.gpu("A100")
    s = InferSetup(engine="hf", weight_format="bnb-int8", prompt_len=5, output_len=256, quantized_head=True,
                   quantized_at_build=True)
    est = inference_memory(model, gpu, s)
    parts = est.breakdown
    assert parts.get("quantize_at_load") > 0
    assert est.total - parts.get("overhead") == pytest.approx(parts.get("weights") + 4 * FALCON_HEAD)
    # transformers quantizes each matrix once, from the CPU: 3 bytes a weight of Llama-2-13B's MLP matrix beyond
    # the weights stay under what generation holds (its framework workspace alone), so the load adds nothing
    hf = InferSetup(engine="hf", weight_format="bnb-int8", prompt_len=512, output_len=16)
    assert inference_memory(catalog.model("Llama-2-13B"), catalog.gpu("A100-80GB"), hf).breakdown.get(
        "quantize_at_load") == 0


def test_the_load_peak_of_int8_weights_takes_nothing_from_the_kv_cache(catalog: Catalog) -> None:
    # the re-quantization at load is over before any KV cache exists: the cache the GPU holds once it has passed
    # is what generation leaves, whether the load holds 3 or 4 bytes a weight of the output layer beyond the weights
    model, gpu = _lit_gpt_falcon(catalog), catalog.gpu("A100")
    s = InferSetup(engine="hf", weight_format="bnb-int8", prompt_len=5, output_len=256, quantized_head=True,
                   quantized_at_build=True)
    one = inference_memory(model, gpu, s)
    once = inference_memory(model, gpu, replace(s, quantized_at_build=False))  # 3 bytes a weight beyond, not 4
    assert one.breakdown.get("quantize_at_load") > once.breakdown.get("quantize_at_load") > 0
    assert one.answers.kv_budget_bytes == pytest.approx(once.answers.kv_budget_bytes)
    generation = one.total - one.breakdown.get("quantize_at_load") - one.breakdown.get("kv_cache")
    assert one.answers.kv_budget_bytes == pytest.approx(gpu.memory_bytes - generation)
    # ... but on a card the load's peak overflows, the model does not load, whatever generation would need
    small = replace(gpu, memory_visible_mib=(one.total - 0.5 * FALCON_HEAD) / 2**20)
    assert inference_memory(model, small, s).answers.kv_budget_bytes < 0


# ---------------------------------------------------------------- GPUs that share the system's memory


def test_llamacpp_host_token_table_counts_once_where_the_gpu_shares_system_memory(catalog: Catalog) -> None:
    # llama.cpp keeps an untied token-embedding table in host memory (src/llama-model.cpp). Llama-3.1-8B's is
    # 128,256 x 4,096 weights in Q4_K (144 bytes per 256) = 295,501,824 bytes: outside an RX 7900 XTX's memory,
    # but on a Strix Halo, a DGX Spark or a Mac host memory is the GPU's pool, so it counts there once
    m, s = catalog.model("Llama-3.1-8B"), _llamacpp(4096, "gguf-q4_k_m")
    discrete = inference_memory(m, catalog.gpu("RX7900XTX"), s).breakdown.get("weights")
    for gpu in ("Radeon-8060S", "DGX-Spark", "M4-Max-40C"):
        shared = inference_memory(m, catalog.gpu(gpu), s).breakdown.get("weights")
        assert shared - discrete == pytest.approx(295_501_824), gpu


def test_shared_memory_parts_off_apple_keep_their_cuda_or_hip_context(catalog: Catalog) -> None:
    # Metal's runtime is fitted on Apple readings only; a DGX Spark runs CUDA and a Radeon APU ROCm (or Vulkan), so
    # they are counted the context a discrete GPU of their vendor is: the same bytes as on an RX 7900 XTX
    m, s = catalog.model("Llama-3.1-8B"), _llamacpp(4096, "gguf-q4_k_m")
    cal = fitted()
    for gpu in ("Radeon-8060S", "DGX-Spark", "RX7900XTX"):
        est = inference_memory(m, catalog.gpu(gpu), s)
        assert est.breakdown.get("overhead") == cal.get("infer_overhead_bytes"), gpu
        assert "CUDA context (outside PyTorch)" in [a.name for a in est.assumptions]
    apple = inference_memory(m, catalog.gpu("M4-Max-40C"), s)
    assert apple.breakdown.get("overhead") == cal.get("infer_overhead_unified_bytes")


def test_a_70b_q8_model_fits_strix_halo_and_dgx_spark_but_not_an_rx_7900_xtx(catalog: Catalog) -> None:
    # Llama-3.3-70B in Q8_0 is about 70 GiB with its token table (8.5 bits per weight): within the 96 GiB the
    # Strix Halo firmware can dedicate to its GPU and the 121.69 GiB CUDA reports on a DGX Spark, not in 24 GiB
    m, s = catalog.model("Llama-3.3-70B"), _llamacpp(8192, "gguf-q8_0")
    for gpu, fits in (("Radeon-8060S", True), ("DGX-Spark", True), ("RX7900XTX", False)):
        est = inference_memory(m, catalog.gpu(gpu), s)
        assert (est.breakdown.total <= catalog.gpu(gpu).memory_bytes) is fits, gpu
        assert 68 * GiB < est.breakdown.get("weights") < 72 * GiB


def test_dgx_spark_capacity_is_the_total_cuda_reports() -> None:
    # unslothai/unsloth PR #10486: on a GB10 the GPU's total is the kernel's MemTotal, 130,663,006,208 bytes
    gpu = load_catalog().gpu("DGX-Spark")
    assert gpu.shares_system_memory
    assert gpu.memory_bytes == pytest.approx(130_663_006_208, rel=1e-5)
