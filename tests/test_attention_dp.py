"""Attention data parallelism (SGLang ``--enable-dp-attention``, TensorRT-LLM ``enable_attention_dp``): every rank
keeps the attention block whole and caches only its own sequences, whole; what that does to the weights per GPU,
the KV cache, a decode step and a prefill."""

from __future__ import annotations

from dataclasses import replace

import pytest

from gpuplan.catalog import Catalog
from gpuplan.estimate.calibration import fitted
from gpuplan.estimate.infer_speed import (
    _allreduce_seconds,
    decode_attention_flops,
    decode_attention_seconds,
    decode_step_seconds,
    latent_passes,
    prefill_seconds,
    rank_prompt_tokens,
    throughput,
)
from gpuplan.estimate.memory import inference_memory, weights_bytes
from gpuplan.estimate.quant import weight_format
from gpuplan.estimate.result import KvCapacity
from gpuplan.types import Engine, InferSetup

_SGLANG_TP8 = InferSetup(engine=Engine.SGLANG, weight_format="fp8", tp=8, prompt_len=1024, output_len=1024)


def _fits(capacity: KvCapacity | None) -> int:
    assert capacity is not None
    return capacity.max_concurrent_seqs


def test_replicated_attention_adds_ten_gigabytes_per_gpu_to_deepseek_v3_fp8_at_dp8(catalog: Catalog) -> None:
    # DeepSeek-V3's attention per layer (config.json shapes): q_a 7168x1536, q_b 1536x(128x192), kv_a 7168x576,
    # kv_b 512x(128x256), o 16384x7168 = 187.1 M weights; x 61 layers = 11.41 G, 1 byte each in FP8. TP 8 keeps
    # an eighth per GPU, DP attention all of it: 7/8 x 11.41 GB = 9.99 GB more on every GPU
    m = catalog.model("DeepSeek-V3")
    fp8 = weight_format("fp8")
    extra = weights_bytes(m, fp8, 8, attention_dp=True) - weights_bytes(m, fp8, 8)
    assert extra == pytest.approx(9.99e9, rel=0.01)
    assert weights_bytes(m, fp8, 1, attention_dp=True) == weights_bytes(m, fp8, 1)  # one GPU: nothing to replicate


def test_tensorrt_llm_also_keeps_llama4_dense_mlps_shared_expert_and_head_whole(catalog: Catalog) -> None:
    # Llama 4 Maverick (config.json: hidden 5120, 48 layers, every second one MoE): 24 dense MLPs of
    # 3 x 5120 x 16384 = 6.04 G weights, 24 shared experts of 3 x 5120 x 8192 = 3.02 G, both FP8 in the ModelOpt
    # checkpoint (1 byte), and a 202,048 x 5120 bf16 head = 2.07 GB. TensorRT-LLM builds all three with TP size 1
    # under enable_attention_dp; SGLang's --enable-dp-attention only the attention. At TP 8 each GPU keeps the 7/8
    # TP would have left to the others: 7/8 x (6.04 + 3.02 + 2.07) GB = 9.74 GB more than SGLang's rank
    m = catalog.model("Llama-4-Maverick-17B-128E")
    fp8 = weight_format("fp8")
    sglang = weights_bytes(m, fp8, 8, attention_dp=True)
    trtllm = weights_bytes(m, fp8, 8, attention_dp=True, dense_dp=True)
    assert trtllm - sglang == pytest.approx(9.74e9, rel=0.01)
    assert weights_bytes(m, fp8, 8, dense_dp=True) == weights_bytes(m, fp8, 8)  # no attention DP: all split


def test_whole_dense_layers_leave_less_kv_cache_on_8_h100(catalog: Catalog) -> None:
    # Maverick FP8 at TP 8 on H100 (80 GiB = 85.9 GB): about 50 GB of weights per GPU and 2 GB of buffers leave
    # some 34 GB, of which TensorRT-LLM gives 0.9 to the cache. Under attention DP the cache holds the same tokens
    # per byte (a rank's own sequences, every head), but the rank keeps 2.6 GB of attention and 9.7 GB of dense
    # MLPs, shared experts and head more: (34 - 12.4) / 34 = 0.64 of the sequences (the attention alone: 0.92)
    m, g = catalog.model("Llama-4-Maverick-17B-128E"), catalog.gpu("H100")
    s = InferSetup(engine=Engine.TRTLLM, weight_format="fp8", kv_dtype="fp8", tp=8, prompt_len=1000,
                   output_len=1000)
    tp, dp = (_fits(inference_memory(m, g, replace(s, attention_dp=dp), describe=False).capacity)
              for dp in (False, True))
    assert 0.55 * tp < dp < 0.75 * tp


@pytest.mark.parametrize(("model", "share"), [
    # Qwen3-30B-A3B: 48 layers, every one MoE: one gather + scatter a layer where TP has two all-reduces
    ("Qwen3-30B-A3B", 0.5),
    # Llama 4 Maverick: 48 layers, every second one MoE; the dense ones run whole on their rank, no collective
    ("Llama-4-Maverick-17B-128E", 0.25),
])
def test_tensorrt_llm_attention_dp_communicates_only_around_the_experts(catalog: Catalog, model: str,
                                                                       share: float) -> None:
    # 4 RTX PRO 6000 (PCIe, no NVLink), 1,024 tokens in the pass: SGLang's DP attention still all-reduces twice a
    # layer in gpuplan's model; TensorRT-LLM's ranks all-gather their tokens before the routed experts and
    # reduce-scatter after, one all-reduce's bytes per MoE layer and nothing for the attention or a dense MLP
    m, g, cal = catalog.model(model), catalog.gpu("RTXPRO6000"), fitted()
    s = InferSetup(weight_format="nvfp4", tp=4, prompt_len=1000, output_len=1000, attention_dp=True)
    sglang, trtllm = (_allreduce_seconds(m, g, replace(s, engine=e), 1024, cal)
                      for e in (Engine.SGLANG, Engine.TRTLLM))
    assert trtllm == pytest.approx(share * sglang)
    assert _allreduce_seconds(m, g, replace(s, engine=Engine.TRTLLM, attention_dp=False), 1024, cal) == sglang


def test_attention_dp_on_one_gpu_changes_nothing(catalog: Catalog) -> None:
    # the perf overview's MoE options set enable_attention_dp on its TP 1 runs too (Qwen3-30B-A3B on one B200):
    # one rank has nothing to replicate, gather or balance
    m, g = catalog.model("Qwen3-30B-A3B"), catalog.gpu("B200")
    s = InferSetup(engine=Engine.TRTLLM, weight_format="nvfp4", kv_dtype="fp8", prompt_len=1000, output_len=1000)
    plain, dp = (throughput(m, g, replace(s, attention_dp=dp), fitted()).figures.output_tokens_per_s
                 for dp in (False, True))
    assert dp == plain


def test_each_rank_caches_only_its_own_sequences(catalog: Catalog) -> None:
    # MLA: under TP every GPU holds the whole latent of every sequence; under DP attention a rank holds its own
    # eighth, so 8x H200 fit several times the sequences despite the extra 10 GB of weights per GPU
    m, g = catalog.model("DeepSeek-V3"), catalog.gpu("H200")
    tp, dp = (_fits(inference_memory(m, g, replace(_SGLANG_TP8, attention_dp=dp), describe=False).capacity)
              for dp in (False, True))
    assert 5 * tp < dp < 8 * tp
    # GQA with 4 KV heads at TP 8: each GPU caches 1 head of every sequence (replicated over 2 GPUs); a DP rank all
    # 4 heads of an eighth of them, half the bytes per GPU for the same 64 sequences
    qwen = catalog.model("Qwen3-235B-A22B")
    s = InferSetup(engine=Engine.TRTLLM, weight_format="fp8", tp=8, batch=64, prompt_len=1000, output_len=1000)
    kv = [dict(inference_memory(qwen, g, replace(s, attention_dp=dp), describe=False).breakdown.parts)["kv_cache"]
          for dp in (False, True)]
    assert kv[1] == pytest.approx(kv[0] / 2)


def test_a_lone_decode_step_reads_the_whole_attention(catalog: Catalog) -> None:
    # one sequence: the step streams the rank's 10 GB of extra attention weights, at least 2 ms at the H200's
    # 4.8 TB/s datasheet bandwidth
    m, g = catalog.model("DeepSeek-V3"), catalog.gpu("H200")
    tp = decode_step_seconds(m, g, _SGLANG_TP8, 1, 1536, fitted())[0]
    dp = decode_step_seconds(m, g, replace(_SGLANG_TP8, attention_dp=True), 1, 1536, fitted())[0]
    assert dp - tp > 9.99e9 / 4.8e12


@pytest.mark.parametrize(("engine", "attention_dp", "passes"), [
    (Engine.SGLANG, False, 1),  # 128 heads / TP 8 = 16 heads: one block of 16
    (Engine.SGLANG, True, 8),  # all 128 heads on a rank: 8 blocks, each streaming the latent
    (Engine.VLLM, True, 1),  # an engine whose kernel is not listed reads it once
])
def test_sglang_streams_the_latent_once_per_block_of_16_heads(catalog: Catalog, engine: Engine, attention_dp: bool,
                                                              passes: int) -> None:
    s = replace(_SGLANG_TP8, engine=engine, attention_dp=attention_dp)
    assert latent_passes(catalog.model("DeepSeek-V3"), s) == passes
    assert latent_passes(catalog.model("Qwen3-235B-A22B"), s) == 1  # not MLA


def test_a_rank_prefills_its_own_prompts_whole() -> None:
    s = InferSetup(tp=8, prompt_len=1000, attention_dp=True)
    assert rank_prompt_tokens(s, 8000) == 1000  # 8 prompts over 8 ranks: one each
    assert rank_prompt_tokens(s, 9000) == 2000  # the ninth doubles one rank's share
    assert rank_prompt_tokens(s, 500) == 500  # a chunk of one prompt stays on its rank


def test_one_prompt_prefills_slower_on_one_attention_rank(catalog: Catalog) -> None:
    m, g = catalog.model("DeepSeek-V3"), catalog.gpu("H200")
    s = replace(_SGLANG_TP8, prompt_len=4096)
    tp = prefill_seconds(m, g, s, 4096, fitted())
    dp = prefill_seconds(m, g, replace(s, attention_dp=True), 4096, fitted())
    assert dp > tp
    # eight prompts, one per rank: the attention work is spread as under TP, only the weights read differ
    eight_tp = prefill_seconds(m, g, replace(s, prompt_len=512), 4096, fitted())
    eight_dp = prefill_seconds(m, g, replace(s, prompt_len=512, attention_dp=True), 4096, fitted())
    assert eight_dp - eight_tp < dp - tp


def test_tensorrt_llm_ranks_prefill_one_after_another(catalog: Catalog) -> None:
    # TensorRT-LLM's default scheduler lets one rank start a context while the others decode, and the iteration
    # lasts that context (its ADP balance blog, "Baseline Behavior": N contexts on N ranks take time(ctx) x N), so
    # eight ranks' prompts take eight one-rank passes: eight times one rank's prompts, not about the same time
    m, g = catalog.model("Qwen3-235B-A22B"), catalog.gpu("H200")
    s = InferSetup(engine=Engine.TRTLLM, weight_format="fp8", tp=8, prompt_len=1000, output_len=1000,
                   attention_dp=True, max_batched_tokens=8 * 2000)  # two prompts per rank and pass
    one_rank = prefill_seconds(m, g, s, 2000, fitted())
    assert prefill_seconds(m, g, s, 8 * 2000, fitted()) == pytest.approx(8 * one_rank)
    # SGLang's ranks prefill their shares in the same pass: eight ranks' prompts take well under eight times
    sgl = replace(s, engine=Engine.SGLANG)
    assert prefill_seconds(m, g, sgl, 8 * 2000, fitted()) < 4 * prefill_seconds(m, g, sgl, 2000, fitted())



def test_absorbed_mla_decode_attention_is_bound_by_its_flops_on_an_attention_dp_rank(catalog: Catalog) -> None:
    # DeepSeek-R1 against its cached latent: 2 x 128 heads x (2 x 512 + 64) per cached position and layer, 61 layers,
    # 1,536 positions; a rank under attention DP attends with all 128 heads, a TP 8 GPU with 16
    m, gpu = catalog.model("DeepSeek-R1"), catalog.gpu("H200")
    dp = InferSetup(engine=Engine.TRTLLM, weight_format="fp8", kv_dtype="fp8", tp=8, attention_dp=True)
    assert decode_attention_flops(m, dp, 1536) == 2 * 128 * 1088 * 61 * 1536
    assert decode_attention_flops(m, replace(dp, attention_dp=False), 1536) == 2 * 128 * 1088 * 61 * 1536 / 8
    # at half the FP8 peak (990 TFLOP/s) and 80 % of the 4.8 TB/s, an H200 does 258 FLOPs per byte it reads
    cal = fitted().with_values(eta_compute_trtllm=0.5, eta_kv_trtllm=0.8)
    # 384 sequences a rank read 384 x 1,536 x 61 x 576 bytes = 20.7 GB of FP8 latent (5.4 ms), as a TP 8 GPU running
    # 384 sequences does (it caches every sequence's latent); the rank's 128 heads do 484 FLOPs a byte (10.0 TFLOP,
    # 10.1 ms), the TP 8 GPU's 16 heads 60: read-bound alone, both would take the read's time
    rank = decode_attention_seconds(m, gpu, dp, 8 * 384, 1536, cal)
    tensor_parallel = decode_attention_seconds(m, gpu, replace(dp, attention_dp=False), 384, 1536, cal)
    assert rank > 1.5 * tensor_parallel
    # Llama-3.1-8B's GQA (4 query heads a KV head, 16-bit cache) does 4 FLOPs a byte: its read bounds it
    llama = catalog.model("Llama-3.1-8B")
    one = InferSetup(engine=Engine.TRTLLM, weight_format="bf16")
    flops = 256 * decode_attention_flops(llama, one, 1536)
    assert decode_attention_seconds(llama, catalog.gpu("H100"), one, 256, 1536, cal) > 20 * flops / 989e12
