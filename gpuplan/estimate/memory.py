"""GPU memory per device for inference and for training / fine-tuning, as breakdowns that sum to the total.

References
- Weights: parameter count (``params.count_params``) × bits per weight of the format (``data/quant_formats.csv``).
- KV cache: 2 · n_kv_heads · head_dim · bytes per token per layer (GQA/MQA-aware); MLA caches the latent
  ``kv_lora_rank + qk_rope_head_dim`` per token per layer in engines that support it (DeepSeek-V2 paper,
  sec. 2.1.2); sliding-window layers hold at most ``window`` tokens; Gated DeltaNet linear-attention layers hold
  no KV cache but a fixed recurrent state per sequence (``linear_state_bytes``).
- Training states: Rajbhandari et al. 2020 (ZeRO), sec. 3: 2Ψ weights + 2Ψ gradients + KΨ optimizer states
  (K = 12 for mixed-precision Adam: fp32 master, momentum, variance), each shardable over data parallelism.
- Activations: Korthikanti et al. 2022, sec. 4.1 (s·b·h·(34 + 5·a·s/h) bytes per layer for GPT-3-style
  layers). gpuplan re-derives the saved tensors for the layer actually used (GQA, gated MLP, no dropout,
  flash attention: the 5·a·s/h term is gone) and drops tensors that only serve weight gradients of frozen
  linears (LoRA, QLoRA, P-tuning v2, freeze). One fitted factor scales the result.
- Loss: the logits of every token, b·s·V, held in 16-bit plus an fp32 copy and the fp32 log-softmax, and the
  shifted copy of the logits where the model's own code makes one (Qwen v1, ChatGLM, Baichuan2 remote code;
  transformers' own causal-LM models before 4.49, for a setup that states its transformers release).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import NamedTuple

from gpuplan.errors import InputError
from gpuplan.estimate.calibration import Calibration, fitted
from gpuplan.estimate.engines import Engine as EngineSpec
from gpuplan.estimate.engines import engine as get_engine
from gpuplan.estimate.engines import hf_holds_previous_cache, hf_layer_rotary_tables, release
from gpuplan.estimate.frameworks import stack
from gpuplan.estimate.loss import FP32, HEAD_CHUNK_POSITIONS, LossCase
from gpuplan.estimate.moe_train import gpu_params
from gpuplan.estimate.params import count_params, mlp_params
from gpuplan.estimate.quant import WeightFormat, kv_bytes_per_value, weight_format
from gpuplan.estimate.result import Assumption, Breakdown, Estimate, Floor, KvCapacity, TrainedParts
from gpuplan.estimate.runners import runner_assumptions
from gpuplan.memo import IdentityMemo
from gpuplan.types import Engine, Framework, Gpu, InferSetup, Method, ModelSpec, Recompute, TrainSetup
from gpuplan.units import GiB, fmt_bytes

BYTES_16 = 2.0
# With sequence lengths that change between steps the caching allocator's pool holds, besides the fitted slack,
# up to one more set of the step's transient tensors: blocks cut for one length cannot be merged to serve a longer
# one while their neighbours are in use, so a longer step allocates fresh segments (see allocator_slack_bytes)
VARYING_LENGTHS_EXTRA_POOL = 1.0
# Why a run fits a card smaller than the memory it reserves on a large one: when an allocation fails, PyTorch's
# caching allocator frees its cached unused segments and retries before it reports out-of-memory
ALLOCATOR_GIVES_BACK = ("pytorch/pytorch c10/cuda/CUDACachingAllocator.cpp (malloc: release_available_cached_blocks, "
                        "then release_cached_blocks, then retry); docs/source/notes/cuda.rst 'Memory management'")


# ---------------------------------------------------------------- weights


def linear_and_other_params(m: ModelSpec) -> tuple[int, int]:
    """Parameters in linear layers (quantizable, TP-shardable) and the rest (embeddings, norms, head, router)."""
    p = count_params(m)
    linear = p.attention + p.mlp + p.experts + p.shared_experts
    return linear, p.total - linear


def weights_bytes(m: ModelSpec, fmt: WeightFormat, tp: int = 1, pp: int = 1, attention_dp: bool = False,
                  dense_dp: bool = False) -> float:
    """Bytes of weights on the busiest GPU: linear layers split over TP and PP stages, embeddings and head
    split over TP (vocabulary-parallel), norms replicated. Under attention data parallelism (``attention_dp``)
    every rank keeps the attention projections whole, and with ``dense_dp`` the dense MLP layers and shared
    experts too (:func:`attention_dp_extra_bytes`)."""
    linear, other = linear_and_other_params(m)
    other_bytes = _other_bytes_per_weight(fmt)
    extra = attention_dp_extra_bytes(m, fmt, tp, pp, dense_dp) if attention_dp else 0.0
    if fmt.scope == "experts":  # MXFP4 checkpoints (gpt-oss): routed experts quantized, other linears 16-bit
        experts = count_params(m).experts
        return ((experts * fmt.bytes_per_weight + (linear - experts) * BYTES_16) / (tp * pp) + other * BYTES_16 / tp
                + extra)
    return linear * fmt.bytes_per_weight / (tp * pp) + other * other_bytes / tp + extra


def _other_bytes_per_weight(fmt: WeightFormat) -> float:
    """Bytes per weight of what is not a linear layer (embeddings, head, norms): the format's own where it
    quantizes everything, fp32's under fp32, else 16-bit."""
    if fmt.name == "fp32":
        return 4.0
    return fmt.bytes_per_weight if fmt.scope == "all" else BYTES_16


# Attention data parallelism runs the attention of a rank's own sequences with the whole attention block on every
# rank, while the MLP/MoE stays split: SGLang's --enable-dp-attention builds DeepseekV2AttentionMLA with use_dp, its
# projections ReplicatedLinear and all heads local (sgl-project/sglang python/sglang/srt/models/deepseek_v2.py,
# v0.4.x, PR #2787); TensorRT-LLM's PyTorch flow gives the attention module TP size 1 when
# mapping.enable_attention_dp (NVIDIA/TensorRT-LLM tensorrt_llm/_torch/modules/attention.py, v1.0). Each rank
# caches the KV of its own sequences only, every head (or the whole MLA latent) of them.
# TensorRT-LLM keeps everything but the routed experts and the input embedding whole
# (Engine.dense_mlp_with_attention_dp): Llama 4's dense MLP layers and its shared expert are
# GatedMLP(overridden_tp_size=1 if enable_attention_dp) (NVIDIA/TensorRT-LLM
# tensorrt_llm/_torch/models/modeling_llama.py @3a5901cd0d77, Llama4DecoderLayer and Llama4MoE), DeepSeek-V3's
# dense and shared-expert MLPs get TP size 1 ("If using attention DP, the MLP also uses DP instead of TP",
# modeling_deepseekv3.py _compute_mlp_tp_size), and the output head is an LMHead built without the mapping
# (DecoderModelForCausalLM.__init__, tensorrt_llm/_torch/models/modeling_utils.py @000a01de66f0; later releases
# shard it only under enable_lm_head_tp_in_adp, off by default).


def attention_dp_extra_bytes(m: ModelSpec, fmt: WeightFormat, tp: int, pp: int = 1, dense_dp: bool = False) -> float:
    """Weight bytes a GPU holds beyond its TP share when the attention projections (and with ``dense_dp`` the
    dense MLP layers, shared experts and output head) are whole on every rank: the (tp − 1)/tp of them that tensor
    parallelism would have left to the other ranks, of the GPU's pipeline stage (the head: of the last stage)."""
    p = count_params(m)
    linears = p.attention + (p.mlp + p.shared_experts if dense_dp else 0)
    per_weight = BYTES_16 if fmt.scope == "experts" else fmt.bytes_per_weight
    head = p.head * _other_bytes_per_weight(fmt) if dense_dp else 0.0
    return (linears * per_weight / pp + head) * (1.0 - 1.0 / tp)


def kv_layout(s: InferSetup) -> tuple[int, float]:
    """(the TP degree that splits a sequence's KV cache, the share of the running sequences one GPU caches): under
    attention data parallelism each rank caches its own sequences whole (1, 1/tp); otherwise every GPU caches a
    TP share of every sequence (tp, 1)."""
    return (1, 1.0 / s.tp) if s.attention_dp and s.tp > 1 else (s.tp, 1.0)


def rank_sequences(s: InferSetup, batch: float) -> float:
    """Running sequences on the busiest GPU: all of them, or under attention data parallelism ⌈batch / tp⌉ (the
    ranks balance their sequences, and every step waits for the fullest)."""
    return float(math.ceil(batch / s.tp)) if s.attention_dp and s.tp > 1 else batch


# ---------------------------------------------------------------- KV cache


def kv_bytes_per_token(m: ModelSpec, kv_dtype: str = "bf16", tp: int = 1, latent: bool = True,
                       layers: int | None = None, kind: str = "all") -> float:
    """KV-cache bytes one token adds on one GPU, over ``layers`` layers (default every layer that attends) of
    ``kind`` "full" or "sliding" where a model's full-attention layers have their own head size (Gemma 4: K and V
    of ``global_head_dim`` for its global KV heads, both cached even when V is K, as transformers' cache does)."""
    n_layers = m.n_attention_layers if layers is None else layers
    width = kv_bytes_per_value(kv_dtype)
    if m.is_mla and latent:  # latent is replicated on every TP rank (vLLM/SGLang MLA backends)
        return n_layers * ((m.kv_lora_rank + m.qk_rope_head_dim) * width + index_key_bytes(m, latent))
    if m.is_mla:  # decompressed K (nope + rope) and V per head
        per_head = m.head_dim + (m.v_head_dim or m.head_dim)
        return n_layers * (math.ceil(m.n_heads / tp) * per_head * width + index_key_bytes(m, latent))
    heads = math.ceil(m.n_kv_heads / tp)
    if not m.global_head_dim or kind == "sliding":
        return n_layers * 2 * heads * m.head_dim * width
    full = 2 * math.ceil((m.global_kv_heads or m.n_kv_heads) / tp) * m.global_head_dim * width
    if kind == "full":
        return n_layers * full
    return m.n_sliding_layers * 2 * heads * m.head_dim * width + m.n_full_attention_layers * full


def index_key_bytes(m: ModelSpec, latent: bool = True) -> float:
    """Bytes one token adds per layer to DeepSeek Sparse Attention's indexer key cache: engines with MLA kernels
    store the one key head in FP8 with an fp32 scale per 128 values (vLLM ``DeepseekV32IndexerCache``:
    index_head_dim + index_head_dim / 128 × 4 bytes, uint8), transformers in 16-bit."""
    if not m.is_sparse_attention:
        return 0.0
    return m.index_head_dim + m.index_head_dim / 128 * 4 if latent else m.index_head_dim * BYTES_16


def kv_read_bytes(m: ModelSpec, context: float, kv_dtype: str = "bf16", tp: int = 1, latent: bool = True) -> float:
    """KV-cache bytes one decode step reads for one sequence at ``context`` tokens on one GPU: every cached token,
    except under DeepSeek Sparse Attention, where the indexer reads every cached key but attention only the
    ``index_topk`` tokens it picks (DeepSeek-V3.2-Exp report, sec. 2.1)."""
    per_token = kv_bytes_per_token(m, kv_dtype, tp, latent)
    if not m.is_sparse_attention or context <= m.index_topk:
        return context * per_token
    index = m.n_attention_layers * index_key_bytes(m, latent)
    return m.index_topk * (per_token - index) + context * index


def kv_cache_bytes(m: ModelSpec, n_seqs: float, context: int, kv_dtype: str = "bf16", tp: int = 1, pp: int = 1,
                   latent: bool = True, block: int = 1) -> float:
    """KV cache of ``n_seqs`` sequences of ``context`` tokens on one GPU; sliding-window layers are capped at
    the window; allocation rounds each sequence up to whole blocks of ``block`` tokens; linear-attention layers
    add their fixed state per sequence."""
    ctx = math.ceil(context / block) * block
    full_layers = m.n_attention_layers - m.n_sliding_layers
    per_seq = kv_bytes_per_token(m, kv_dtype, tp, latent, full_layers, "full") * ctx + linear_state_bytes(m, tp)
    if m.n_sliding_layers and m.sliding_window:
        per_seq += kv_bytes_per_token(m, kv_dtype, tp, latent, m.n_sliding_layers, "sliding") * min(
            ctx, m.sliding_window)
    return n_seqs * per_seq / pp


_STATE_SHAPES = {"gated_deltanet": "gated_delta_net_state_shape", "mamba2": "mamba2_state_shape"}


def linear_state_bytes(m: ModelSpec, tp: int = 1) -> float:
    """The recurrent state one sequence keeps on one GPU in the Gated DeltaNet or Mamba-2 layers, whatever its
    length: per layer a value-head × key-size × value-size matrix per value head in the config's ``mamba_ssm_dtype``
    and the causal convolution's last ``kernel − 1`` inputs over q, k and v in 16-bit, heads and channels split over
    tensor parallelism (vLLM model_executor/layers/mamba/mamba_utils.py ``MambaStateShapeCalculator.
    gated_delta_net_state_shape``: conv (conv_dim / tp, kernel − 1), temporal (v_heads / tp, k_dim, v_dim); Mamba-2,
    ``mamba2_state_shape``: conv over x, B, C and temporal (heads / tp, head_dim, state_size), the same numbers)."""
    if not m.n_linear_layers:
        return 0.0
    state = math.ceil(m.linear_v_heads / tp) * m.linear_k_dim * m.linear_v_dim * kv_bytes_per_value(
        m.linear_state_dtype)
    conv = (2 * m.linear_key_width + m.linear_value_width) / tp * (m.linear_conv_kernel - 1) * BYTES_16
    return m.n_linear_layers * (state + conv)


# ---------------------------------------------------------------- inference


def input_embedding_bytes(m: ModelSpec, fmt: WeightFormat, tp: int = 1) -> float:
    """Bytes per GPU of an untied input-embedding table (0 when the output head shares it), in the format
    :func:`weights_bytes` stores non-linear tensors in."""
    if m.tied_embeddings:
        return 0.0
    per_weight = fmt.bytes_per_weight if fmt.scope == "all" else 4.0 if fmt.name == "fp32" else BYTES_16
    return count_params(m).embeddings * per_weight / tp


# Bits per weight of the ggml block types a GGUF file mixes (llama.cpp ggml/src/ggml-common.h: block_q4_0 18 bytes
# per 32 weights, block_q4_1 20 per 32, block_q5_0 22 per 32, block_q5_1 24 per 32, block_q8_0 34 per 32, block_q4_K
# 144 per 256, block_q5_K 176 per 256, block_q6_K 210 per 256; block_mxfp4, ggml/src/ggml-common.h
# @aca2e6ce7909064dbfbf3bd168e9ad3db1826e6c: one E8M0 scale byte and 16 bytes of 4-bit E2M1 weights, 17 per 32)
GGML_TYPE_BITS = {"q4_0": 4.5, "q4_1": 5.0, "q5_0": 5.5, "q5_1": 6.0, "q8_0": 8.5, "q4_k": 4.5, "q5_k": 5.5,
                  "q6_k": 6.5625, "f16": 16.0, "mxfp4": 4.25}
# What llama.cpp's quantizer gives each tensor for a file type (ggml-org/llama.cpp src/llama-quant.cpp @8784689,
# llama_tensor_get_type; the same rules @007dbbf, llama_tensor_get_type_impl, but for attn_qkv): (every other
# matrix, the output matrix — or the token table where it is tied —, attn_v and ffn_down in the layers where
# use_more_bits holds; for Q4_K_S, attn_v in the first 4 layers (i_attention_wv < 4) and ffn_down in the first
# eighth (i_layer < n_layer/8), a fused attn_qkv matrix: Q5_K in Q4_K_M, Q6_K in Q5_K_M). The output gets Q6_K
# unless the file is Q8_0. @007dbbf category_is_attn_v sends attn_qkv through the attn_v branch (Q6_K where
# use_more_bits holds over a count shared with attn_v, Q4_K elsewhere in Q4_K_M), which for Phi-4-mini and
# Qwen3.5-27B comes within 0.1 % of this rule's file size.
GGUF_MIX = {"gguf-q4_0": ("q4_0", "q6_k", "q4_0", "q4_0"), "gguf-q4_1": ("q4_1", "q6_k", "q4_1", "q4_1"),
            "gguf-q5_0": ("q5_0", "q6_k", "q5_0", "q5_0"), "gguf-q5_1": ("q5_1", "q6_k", "q5_1", "q5_1"),
            "gguf-q4_k_s": ("q4_k", "q6_k", "q5_k", "q4_k"), "gguf-q4_k_m": ("q4_k", "q6_k", "q6_k", "q5_k"),
            "gguf-q5_k_s": ("q5_k", "q6_k", "q5_k", "q5_k"), "gguf-q5_k_m": ("q5_k", "q6_k", "q6_k", "q6_k"),
            "gguf-q6_k": ("q6_k", "q6_k", "q6_k", "q6_k"), "gguf-q8_0": ("q8_0", "q8_0", "q8_0", "q8_0"),
            "gguf-mxfp4_moe": ("q8_0", "q8_0", "q8_0", "q8_0")}
# File types whose routed experts get a type of their own, apart from the mix: MXFP4_MOE gives every 3-D tensor
# (ne[2] > 1: the merged ffn_gate_exps, ffn_up_exps, ffn_down_exps) MXFP4 and every other matrix Q8_0, the output and
# the token table included, ahead of the attn_v/ffn_down rules, so neither use_more_bits nor the 8-expert rule
# applies (src/llama-quant.cpp @8784689, llama_tensor_get_type: 'MoE tensors -> MXFP4, other tensors -> Q8_0'). A
# model without routed experts quantized to it is Q8_0 throughout
GGUF_EXPERT_TYPE = {"gguf-mxfp4_moe": "mxfp4"}
# Architectures whose GGUF holds Q, K and V as one attn_qkv matrix, as llama.cpp's converter names their checkpoint's
# fused projection (gguf-py/gguf/tensor_mapping.py @0024aa7, MODEL_TENSOR.ATTN_QKV: query_key_value of GPT-NeoX,
# Falcon, BLOOM and ChatGLM, c_attn of GPT-2, StarCoder and Qwen (v1), Wqkv of MPT, qkv_proj of Phi-3/Phi-4); they
# have no attn_v for use_more_bits to promote. Qwen3.5's Gated DeltaNet layers map in_proj_qkv to attn_qkv too, while
# its full-attention layers keep q, k and v apart (:func:`fused_qkv_params`).
FUSED_QKV_GGUF = frozenset({"gpt_neox", "falcon", "bloom", "chatglm", "gpt2", "gpt_bigcode", "qwen", "mpt", "phi3"})


def fused_qkv_params(m: ModelSpec) -> tuple[int, int]:
    """(weights in the GGUF's fused attn_qkv matrices, layers with an attn_v matrix of their own). Full-attention
    layers of a :data:`FUSED_QKV_GGUF` architecture hold hidden × (q + 2 kv) each; Gated DeltaNet layers hold the
    hidden × (2 keys + values) in-projection each (Qwen3.5 ``linear_attn.in_proj_qkv``). Gemma 4's full-attention
    layers read their values from the keys (``attention_k_eq_v``: the checkpoint has no v_proj there, so the GGUF
    has no attn_v either), and llama.cpp's use_more_bits counts only the attn_v tensors the file holds
    (src/llama-quant.cpp @007dbbf, init_quantize_state_counters: n_attention_wv)."""
    fused_attention = m.model_type in FUSED_QKV_GGUF and not m.is_mla
    linear = m.n_linear_layers * m.hidden * (2 * m.linear_key_width + m.linear_value_width)
    if not fused_attention:
        return linear, m.n_attention_layers - (m.n_full_attention_layers if m.global_k_eq_v else 0)
    return linear + m.n_attention_layers * m.hidden * (m.q_dim + 2 * m.kv_dim), 0


# llama.cpp's quantizer keys two more attention rules on the model it loads (src/llama-quant.cpp @007dbbf and
# @8784689, llama_tensor_get_type): a model typed LLM_TYPE_70B gets Q5_K for any attn_v the mix makes Q3_K or Q4_K
# ("8 heads sharing the same attn_v weights ... nearly negligible increase in model size"); a model with 8 experts
# gets attn_v and attn_k in Q8_0 whatever the file type, and attn_output in Q5_K in Q4_K_S and Q4_K_M files.
# LLM_TYPE_70B is what src/llama-model.cpp @00342301 (load_hparams) calls an 80-layer LLM_ARCH_LLAMA model with fewer
# KV heads than heads (Llama 2/3 70B; with as many it is 65B) and any 80-layer LLM_ARCH_QWEN2 model (Qwen2/2.5 72B)
EIGHT_EXPERT_ATTN_OUTPUT_FILES = frozenset({"gguf-q4_k_s", "gguf-q4_k_m"})


def llm_type_70b(m: ModelSpec) -> bool:
    """Whether llama.cpp types the model LLM_TYPE_70B, which its quantizer gives more bits in attn_v."""
    if m.n_layers != 80 or m.n_experts == 8:
        return False
    return m.model_type == "qwen2" or (m.model_type == "llama" and m.n_kv_heads != m.n_heads)


def gguf_attention_types(m: ModelSpec, fmt_name: str, mix: tuple[str, str, str, str]) -> tuple[str, str, str, str]:
    """(attn_v where use_more_bits holds, the other attn_v, attn_k, attn_output) as llama.cpp's quantizer types them
    for a file of ``mix`` (:data:`GGUF_MIX`): the mix's own types but for the 70B and 8-expert rules above."""
    base, _, more, _ = mix
    if base == "f16" or fmt_name in GGUF_EXPERT_TYPE:  # an F16/BF16 file is not quantized, MXFP4_MOE types
        return more, base, base, base  # every matrix but the experts alike: no rule applies
    if m.n_experts == 8:
        return "q8_0", "q8_0", "q8_0", "q5_k" if fmt_name in EIGHT_EXPERT_ATTN_OUTPUT_FILES else base
    other_v = "q5_k" if llm_type_70b(m) and base == "q4_k" else base
    return more, other_v, base, base


def more_bits_layers(n_layers: int) -> int:
    """Layers whose attn_v and ffn_down llama.cpp's K-quant mixes keep at more bits: the first and last eighth and
    every third layer between (src/llama-quant.cpp, use_more_bits)."""
    eighth = n_layers // 8
    return sum(1 for i in range(n_layers) if i < eighth or i >= 7 * n_layers // 8 or (i - eighth) % 3 == 2)


def gguf_weights_bytes(m: ModelSpec, fmt: WeightFormat, tp: int = 1, pp: int = 1, input_table: bool = True) -> float:
    """Bytes of a GGUF file's tensors on the busiest GPU, tensor by tensor as llama.cpp's quantizer types them
    (``GGUF_MIX``, with :func:`gguf_attention_types` for 70B and 8-expert models; an F16 or BF16 file keeps every
    matrix 16-bit; a fused attn_qkv, :data:`FUSED_QKV_GGUF`, and a K-quant matrix whose rows are not whole
    super-blocks, :func:`ggml_bytes`, get types of their own); norms, biases and the router stay fp32.

    The format's average bits per weight (``data/quant_formats.csv``) is measured on Llama 2 7B, whose output layer
    is 2 % of its weights: for a small model with a large vocabulary (Qwen3-0.6B: 26 %) the Q6_K output makes the
    file much larger than that average says. ``input_table=False`` leaves out an untied token table (llama.cpp
    keeps it in host memory), and the token table of a tied checkpoint that stores its head too
    (:attr:`ModelSpec.head_stored`: Qwen3-0.6B's GGUF holds both, 0.45 GiB where one Q6_K table gives 0.36 GiB).
    Other formats fall back to :func:`weights_bytes`."""
    mix = _gguf_mix(fmt)
    if mix is None:
        return weights_bytes(m, fmt, tp, pp) - (0.0 if input_table else input_embedding_bytes(m, fmt, tp))
    base, output, more, qkv = mix
    p = count_params(m)
    v_per_layer = m.kv_lora_rank * m.n_heads * (m.qk_nope_head_dim + (m.v_head_dim or m.head_dim)) if m.is_mla \
        else m.hidden * m.kv_dim
    fused, v_layers = fused_qkv_params(m)
    n_dense = m.n_layers - m.n_moe_layers - m.n_layers_without_ffn  # Nemotron-H: mixer-only layers
    # ffn_down by its row length (ne0: the MLP width it reads), dense layers and the shared expert; the routed experts
    # are typed apart (gguf_expert_bytes)
    downs = ((n_dense * m.hidden * m.ffn_hidden, m.ffn_hidden),
             (m.n_moe_layers * m.hidden * m.shared_ffn_hidden, m.shared_ffn_hidden))
    # use_more_bits counts attn_v over the layers that have one (i_attention_wv of n_attention_wv), ffn_down over
    # all layers; Q4_K_S gives Q5_K to attn_v in the first 4 layers and ffn_down in the first eighth
    v_promoted = (min(4, v_layers) if fmt.name == "gguf-q4_k_s" else more_bits_layers(v_layers)) * v_per_layer
    share = _down_promoted_share(m, fmt)
    v_more, v_other, k_type, o_type = gguf_attention_types(m, fmt.name, mix)
    # attn_v outside the promoted layers and attn_k, where a rule types them apart from the base (dense attention)
    v_rest = v_layers * v_per_layer - v_promoted if v_other != base and not m.is_mla else 0
    k_all = m.n_attention_layers * m.hidden * m.kv_dim if k_type != base and not m.is_mla else 0
    # the other matrices whose rows are not the hidden state: attention and Gated DeltaNet output projections
    attn_out = (0, 0) if m.is_mla else (m.n_attention_layers * m.q_dim * m.hidden, m.q_dim)
    delta_out = (m.n_linear_layers * m.linear_value_width * m.hidden, m.linear_value_width)
    linear = p.attention + p.mlp + p.experts + p.shared_experts
    rest = linear - p.experts - fused - v_promoted - v_rest - k_all - sum(n for n, _ in (*downs, attn_out, delta_out))
    table = m.vocab * m.hidden
    head = table if m.tied_embeddings else p.head
    other = p.total - linear - p.embeddings - p.head
    split = ((rest, base, m.hidden), (fused, qkv, m.hidden), (v_promoted, v_more, m.hidden),
             (v_rest, v_other, m.hidden), (k_all, k_type, m.hidden),
             *((n * share, more, ne0) for n, ne0 in downs), *((n * (1 - share), base, ne0) for n, ne0 in downs),
             (attn_out[0], o_type, attn_out[1]), (delta_out[0], base, delta_out[1]))
    # a tied checkpoint that stores lm_head.weight anyway (``head_stored``) converts to two tensors: the output typed
    # as the output matrix, and token_embd, which is then not the output, in the file's base type
    # (src/llama-quant.cpp @8784689: the output's type goes to token_embd only when the file has no output tensor)
    inputs = (p.embeddings - table + table * input_table * m.head_stored) if m.tied_embeddings \
        else p.embeddings * input_table
    tables = head * ggml_bytes(output, m.hidden) + inputs * ggml_bytes(base, m.hidden)
    return (sum(n * ggml_bytes(t, ne0) for n, t, ne0 in split) / (tp * pp) + (tables + other * 4.0) / tp
            + gguf_expert_bytes(m, fmt, tp) / pp)


def _gguf_mix(fmt: WeightFormat) -> tuple[str, str, str, str] | None:
    """The tensor types of a GGUF file of ``fmt`` (:data:`GGUF_MIX`; an F16 or BF16 file keeps every matrix 16-bit);
    None for a format that is not a GGUF file type."""
    return GGUF_MIX.get(fmt.name) or (("f16",) * 4 if fmt.name in ("fp16", "bf16") else None)


def _down_promoted_share(m: ModelSpec, fmt: WeightFormat) -> float:
    """Share of the layers whose ffn_down a K-quant mix gives its ``more`` type (use_more_bits; Q4_K_S: the first
    eighth), as :func:`gguf_weights_bytes` types them."""
    if not m.n_layers:
        return 0.0
    return (m.n_layers // 8 if fmt.name == "gguf-q4_k_s" else more_bits_layers(m.n_layers)) / m.n_layers


def gguf_expert_bytes(m: ModelSpec, fmt: WeightFormat, tp: int = 1) -> float:
    """Bytes of the routed experts' matrices, every layer, per tensor-parallel rank, in a GGUF file of ``fmt`` typed
    as :func:`gguf_weights_bytes` types them: gate and up (rows of the hidden state) in the mix's base type,
    ffn_down (rows of the expert's width) in its ``more`` type on the promoted layers, and each where its rows are
    not whole super-blocks in the quantizer's fallback (gpt-oss, hidden 2880: Q4_K -> Q5_0, Q6_K -> Q8_0), so a
    Q4_K_M gpt-oss-120b's experts average 6 bits, not the 4.84 of the format's Llama 2 7B average. A file type that
    gives the experts a type of their own (:data:`GGUF_EXPERT_TYPE`: MXFP4_MOE) has them all in it, 4.25 bits."""
    base, _, more, _ = _gguf_mix(fmt) or GGUF_MIX[fmt.name]  # a format that is no GGUF file type: KeyError
    experts = count_params(m).experts
    down = m.n_moe_layers * m.hidden * m.n_experts * m.moe_ffn_hidden if experts else 0
    if fmt.name in GGUF_EXPERT_TYPE:
        own = GGUF_EXPERT_TYPE[fmt.name]
        return ((experts - down) * ggml_bytes(own, m.hidden) + down * ggml_bytes(own, m.moe_ffn_hidden)) / tp
    share = _down_promoted_share(m, fmt)
    return ((experts - down) * ggml_bytes(base, m.hidden) + down * (
        share * ggml_bytes(more, m.moe_ffn_hidden) + (1 - share) * ggml_bytes(base, m.moe_ffn_hidden))) / tp


QK_K = 256  # weights per K-quant super-block (ggml-common.h)
# What llama.cpp's quantizer falls back to for a K-quant tensor whose rows (ne0) are not whole 256-weight
# super-blocks (src/llama-quant.cpp @8784689, convert_incompatible_tensor: Q4_K -> Q5_0, Q5_K -> Q5_1,
# Q6_K -> Q8_0, and F16 where even those 32-weight blocks do not fit)
K_QUANT_FALLBACK = {"q4_k": "q5_0", "q5_k": "q5_1", "q6_k": "q8_0"}


def ggml_bytes(ggml_type: str, ne0: int) -> float:
    """Bytes per weight of a tensor of rows of ``ne0`` weights that llama.cpp's quantizer meant for ``ggml_type``."""
    if ggml_type in K_QUANT_FALLBACK and ne0 % QK_K:
        ggml_type = K_QUANT_FALLBACK[ggml_type] if ne0 % 32 == 0 else "f16"
    return GGML_TYPE_BITS[ggml_type] / 8


# llama.cpp allocates its KV cache for n_ctx rounded up to whole KV-cell pads: llama_model::create_memory pads n_ctx
# with llama_kv_cache::get_padding, 256 cells with Flash Attention and 32 without (ggml-org/llama.cpp
# src/llama-kv-cache.cpp: 'the FA kernels require padding to avoid extra runtime boundary checks'); releases after
# PR #17046 pad n_ctx to 256 in every case (src/llama-context.cpp, cparams.n_ctx = GGML_PAD(cparams.n_ctx, 256))
GGML_KV_PAD_FLASH = 256
GGML_KV_PAD = 32


def ggml_kv_pad(s: InferSetup) -> int:
    """The KV cells llama.cpp rounds n_ctx up to a multiple of (``GGML_KV_PAD_FLASH`` with Flash Attention)."""
    return GGML_KV_PAD_FLASH if s.flash_attention else GGML_KV_PAD


def allocated_context(s: InferSetup) -> int:
    """The tokens an engine that allocates its KV cache for the whole context (llama.cpp's n_ctx) allocates it for:
    prompt + output, or more where the server was started with a longer context (``s.max_model_len``: a runner's
    default num_ctx, gpuplan.estimate.runners)."""
    return max(s.context_len, s.max_model_len or 0, 1)


def ggml_compute_buffer_bytes(m: ModelSpec, s: InferSetup, ubatch: int) -> float:
    """llama.cpp's compute buffer: ggml-alloc's peak over the worst-case graph it reserves at start,
    ``ubatch`` = min(n_ctx, n_ubatch) tokens, every one an output, attending to a full KV cache of n_ctx tokens,
    all in fp32. The largest set of tensors alive together is the larger of the output (u logits over the vocabulary
    and the normed hidden state they come from), the MLP's two intermediates (gate and up), and — without
    Flash Attention, which never materializes them — the attention scores and their softmax for every head.
    Measured against llama.cpp's own accounting (build 1691: 70.5 MiB for LLaMA-7B at n_ctx 512, 75 MiB for
    13B, 123 MiB for 65B; bench/calibration/inference_llamacpp.csv) it is within 15 %."""
    u = float(ubatch)
    width = m.moe_ffn_hidden * m.n_active_experts + m.shared_ffn_hidden if m.is_moe else m.ffn_hidden
    output = u * (m.vocab + m.hidden)
    mlp = u * 2 * width / s.tp
    scores = 0.0 if s.flash_attention else 2 * u * allocated_context(s) * m.n_heads / s.tp
    return 4.0 * max(output, mlp, scores)


def forward_peak_bytes(m: ModelSpec, s: InferSetup, chunk: float) -> tuple[float, float]:
    """(activations, logits) at the peak of one forward pass of ``chunk`` tokens, outside llama.cpp. A layer's
    transients are freed when the next layer takes its output, and the logits are made after the last layer from the
    final normed hidden state alone (huggingface/transformers src/transformers/models/qwen2/modeling_qwen2.py
    @00d4b3d2142cb4ced2f51b90614b5d26bc045015: ``Qwen2Model.forward`` reassigns ``hidden_states`` layer by layer,
    then ``self.norm``; ``Qwen2ForCausalLM.forward`` runs ``self.lm_head`` on it). So the peak is the larger of one
    layer's transients and the logits with that hidden state, never their sum. Logits: 16-bit plus the fp32 copy
    that ``logits.float()`` makes (transformers < 4.45), for every prompt token when ``s.full_logits``, else the
    last one."""
    layer = _forward_workspace_bytes(m, chunk, s.tp)
    logit_rows = s.batch * (s.prompt_len if s.full_logits else 1)
    at_logits = logit_rows * m.vocab * (BYTES_16 + 4.0) / s.tp
    last_hidden = chunk * m.hidden * BYTES_16
    if layer >= at_logits + last_hidden:
        return layer, 0.0
    return last_hidden, at_logits


def _forward_workspace_bytes(m: ModelSpec, tokens: float, tp: int) -> float:
    """Peak of live tensors inside one layer while ``tokens`` tokens go through it (no autograd): the
    residual stream, the normed input, Q/K/V, the attention output and the MLP's intermediates."""
    width = m.moe_ffn_hidden * m.n_active_experts + m.shared_ffn_hidden if m.is_moe else m.ffn_hidden
    per_token = 4 * m.hidden + (m.q_dim + 2 * m.kv_dim) / tp + (3 if m.gated_mlp else 2) * width / tp
    return tokens * per_token * BYTES_16


# Quantized formats whose kernels under transformers dequantize a whole matrix to 16-bit for a cuBLAS matmul, and the
# fewest tokens in one forward pass for which they do:
# - gptq-int4: AutoGPTQ's exllama backend allocates one fp16 temp_dq buffer per GPU at load, as large as the largest
#   quantized matrix (qweight.numel() * 8 weights), for prefill (auto_gptq/modeling/_utils.py, autogptq_post_init)
# - gptq-int8: AutoGPTQ's CUDA kernel dequantizes above kernel_switch_threshold = 128 rows (qlinear_cuda.py)
# - bnb-nf4: bitsandbytes MatMul4Bit runs F.dequantize_4bit(B) then a 16-bit matmul whenever the input has more
#   than one token; one token goes through gemv_4bit (bitsandbytes >= 0.41, autograd/_functions.py matmul_4bit)
# - int8-wo, int4-wo: ChatGLM's quantization.py calls extract_weight_to_half on every forward (THUDM/chatglm2-6b)
DEQUANT_MIN_TOKENS = {"gptq-int4": 0, "gptq-int8": 129, "bnb-nf4": 2, "bnb-nf4-dq": 2, "int8-wo": 0, "int4-wo": 0}


def dequant_buffer_bytes(m: ModelSpec, fmt: WeightFormat, tokens: float, tp: int = 1, head: bool = False) -> float:
    """The 16-bit copy of a layer's largest quantized matrix that a transformers forward pass of ``tokens``
    tokens holds under ``fmt`` (``DEQUANT_MIN_TOKENS``); 0 for formats whose kernels read packed weights. With
    ``head`` the output layer is quantized too (:attr:`InferSetup.quantized_head`) and counts among the matrices."""
    least = DEQUANT_MIN_TOKENS.get(fmt.name)
    if least is None or tokens < least:
        return 0.0
    return _largest_linear(m, head) * BYTES_16 / tp


def _largest_linear(m: ModelSpec, head: bool = False) -> int:
    """Weights of the largest linear matrix of a layer (the output layer's too with ``head``, untied)."""
    width = m.moe_ffn_hidden if m.is_moe else m.ffn_hidden
    largest = max(m.hidden * width, m.hidden * m.q_dim)
    return max(largest, m.vocab * m.hidden) if head and not m.tied_embeddings else largest


def head_saving_bytes(m: ModelSpec, fmt: WeightFormat, s: InferSetup) -> float:
    """Bytes the output layer takes less than in 16-bit when the setup quantizes it with the linear layers
    (:attr:`InferSetup.quantized_head`); 0 for a tied head (the token table stays 16-bit) and for formats that do
    not store the linear layers alone in fewer bits. Falcon-7B untied in nf4: 295.5M weights at 4.5 bits instead
    of 16, 0.42 GB less."""
    if not s.quantized_head or fmt.scope != "linear" or fmt.is_16bit:
        return 0.0
    return count_params(m).head * (BYTES_16 - fmt.bytes_per_weight) / s.tp


# bitsandbytes before 0.43 stores a 4-bit matrix's state in fp16 whatever the weights' dtype (Params4bit.cuda:
# self.data.contiguous().half() in bitsandbytes/nn/modules.py at 0.40.0, 0.41.0 and 0.42.0), and MatMul4Bit
# dequantizes to that dtype and then casts to the input's (F.dequantize_4bit(B, state).to(A.dtype),
# bitsandbytes/autograd/_functions.py at the same tags): under bf16 activations an fp16 and a bf16 copy of the matrix
# are alive together. 0.43.0 quantizes the weight in its own dtype (Params4bit._quantize), so the cast copies nothing
# (bitsandbytes-foundation/bitsandbytes, tags 0.40.0 @817bdf63 to 0.43.0)
BNB_KEEPS_DTYPE_FROM = (0, 43, 0)


def dequant_copies(fmt: WeightFormat, s: InferSetup) -> int:
    """How many 16-bit copies of the dequantized matrix a forward pass holds at once: two for a bnb 4-bit format
    with bf16 activations under a stated bitsandbytes release before :data:`BNB_KEEPS_DTYPE_FROM`, else one."""
    found = release(s.quant_release)
    bnb_4bit = fmt.name in ("bnb-nf4", "bnb-nf4-dq") and fmt.compute == "bf16"
    return 2 if bnb_4bit and found is not None and found < BNB_KEEPS_DTYPE_FROM else 1


def int8_load_peak_bytes(m: ModelSpec, fmt: WeightFormat, s: InferSetup) -> float:
    """Bytes beyond the resident weights while bitsandbytes quantizes the largest LLM.int8() matrix at load, under
    transformers' eager stack: Int8Params.cuda copies the 16-bit weight to the GPU in fp16 and double_quant writes
    its row-wise and column-wise int8 copies (CB kept, CBt dropped after): 2 + 1 + 1 bytes a weight, of which the kept
    CB is resident, so 3 beyond (bitsandbytes/nn/modules.py and functional.py double_quant at 0.40.0). A layer built
    quantized on the GPU and quantized again from the checkpoint (:attr:`InferSetup.quantized_at_build`, Lit-GPT's
    InferenceLinear8bitLt in quantize/bnb.py @03f8197) still holds its first CB then: 4. No matmul has run yet, so
    no KV cache, activation or workspace is alive beside it."""
    if fmt.name != "bnb-int8" or s.engine != Engine.HF:
        return 0.0
    return _largest_linear(m, s.quantized_head) * (4.0 if s.quantized_at_build else 3.0) / s.tp


def repeated_kv_bytes(m: ModelSpec, s: InferSetup) -> float:
    """One layer's keys and values widened to every query head, for the whole context, that a transformers decode
    step holds while the layer attends. With fewer key/value heads than query heads, ``repeat_kv`` expands the
    cache's heads and ``reshape`` copies the result into a new 16-bit tensor of ``batch x n_heads x context x
    head_dim``, once for the keys and once for the values (huggingface/transformers
    src/transformers/models/qwen2/modeling_qwen2.py at v4.38.2 and v4.46.0: Qwen2Attention, Qwen2SdpaAttention and
    Qwen2FlashAttention2 alike; models/llama/modeling_llama.py @v4.46.0 in LlamaAttention and LlamaSdpaAttention,
    not in LlamaFlashAttention2, which hands flash-attn the grouped heads: counted all the same, one layer's worth
    on the safe side). The copy is freed when the layer returns, so one layer's is alive at a time. 0 when every
    query head has its own key head (``repeat_kv`` returns the cache itself), for MLA, and outside transformers."""
    if s.engine != Engine.HF or m.is_mla or m.n_kv_heads >= m.n_heads:
        return 0.0
    return 2 * s.batch * m.q_dim * s.context_len * BYTES_16 / s.tp


def rotary_tables_bytes(m: ModelSpec, s: InferSetup) -> float:
    """The cos and sin tables that older transformers releases kept in every attention layer for all
    ``max_positions`` positions, in the 16-bit load dtype (:func:`hf_layer_rotary_tables`), for the layers on one
    GPU; 0 where the release computes them per forward. Qwen2-72B-Instruct (80 layers, head 128, 32,768 positions):
    80 x 2 x 32,768 x 128 x 2 bytes = 1.25 GiB, there from load to exit whatever the prompt."""
    if not hf_layer_rotary_tables(m, s):
        return 0.0
    return m.n_layers / s.pp * 2 * m.max_positions * m.head_dim * BYTES_16


def inference_memory(m: ModelSpec, gpu: Gpu | None, s: InferSetup, cal: Calibration | None = None,
                     describe: bool = True) -> Estimate:
    """Memory per GPU to serve ``s.batch`` sequences of ``s.context_len`` tokens.

    For pre-allocating engines (vLLM, SGLang, TensorRT-LLM) the breakdown is what the workload needs; the
    ``extra`` answers say what the engine would reserve and how many tokens of KV cache fit in it.
    ``describe=False`` leaves the assumptions and the longest context (``max_context_tokens``, a search of its
    own) out: the same numbers otherwise, for searches that only ask whether it fits or how many sequences do;
    those answers are kept per model, GPU, setup and calibration (a plan's searches ask again and again).
    """
    cal = cal or fitted()
    if describe or gpu is None:
        return _inference_memory(m, gpu, s, cal, describe)
    hit = _fit_only.get(m, gpu, cal, (s,))
    if hit is not None:
        return hit
    return _fit_only.put(m, gpu, cal, (s,), _inference_memory(m, gpu, s, cal, False))


_fit_only: IdentityMemo[Estimate] = IdentityMemo()


def memory_reads(gpu: Gpu) -> tuple[float, bool, bool]:
    """What :func:`inference_memory` reads of a GPU: its capacity; whether it shares the system's memory
    (:attr:`Gpu.shares_system_memory`: what an engine keeps in host memory takes from the same pool); and whether it
    runs Metal (Apple parts have no CUDA or HIP context: their runtime is fitted apart). GPU types that agree on all
    three size a setup alike, so a search over them may share its answers."""
    return gpu.memory_bytes, gpu.shares_system_memory, gpu.vendor == "Apple"


def _inference_memory(m: ModelSpec, gpu: Gpu | None, s: InferSetup, cal: Calibration, describe: bool) -> Estimate:
    _, unified, metal = memory_reads(gpu) if gpu is not None else (0.0, False, False)
    t = _setup_terms(m, s, cal, unified, metal)
    eng, latent, parts = t.eng, t.latent, t.parts
    capacity = _capacity_answers(m, gpu, s, t, longest=describe)
    if not describe:
        return Estimate(Breakdown("bytes", parts), cal.band("inference_memory"), (), capacity)
    fmt, workspace, ubatch, framework = t.fmt, t.workspace, t.ubatch, t.framework
    overhead, adapters = t.overhead, t.adapters
    assumptions = (
        Assumption("weight format", f"{fmt.name} = {fmt.bits_per_weight:g} bits/weight ({fmt.scope} tensors)",
                   fmt.source),
        Assumption("KV cache", f"{s.kv_dtype}, {fmt_bytes(kv_bytes_per_token(m, s.kv_dtype, s.tp, latent))}"
                   f" per token per GPU" + (" (MLA latent)" if m.is_mla and latent else ""),
                   "2·n_kv_heads·head_dim·bytes per layer; DeepSeek-V2 sec. 2.1 for MLA"),
        *((Assumption("linear-attention state", f"{fmt_bytes(linear_state_bytes(m, s.tp))} per sequence per GPU "
                      f"in {m.n_linear_layers} recurrent ({m.linear_kind}) layers, whatever the context",
                      f"vLLM MambaStateShapeCalculator.{_STATE_SHAPES[m.linear_kind]}"),) if m.n_linear_layers else ()),
        Assumption("engine", f"{eng.name}: {eng.memory_mode} memory", eng.source),
        Assumption("CUDA context (outside PyTorch)", fmt_bytes(overhead),
                   "fitted on device-level inference-memory rows (bench/fit.py)") if not metal
        else Assumption("runtime context", fmt_bytes(overhead), "no CUDA on Apple parts: the Metal runtime and the "
                        "process's own allocations, fitted on process readings on Apple silicon (bench/fit.py)"),
    ) + ((Assumption("compute buffer", f"{fmt_bytes(workspace)} in fp32 for {ubatch} tokens" if s.flash_attention
                     else f"{fmt_bytes(workspace)} in fp32 for {ubatch} tokens, with the attention scores (no Flash "
                     "Attention)", "llama.cpp reserves it at start for its worst-case graph (src/llama-context.cpp); "
                     "the token-embedding table stays in host memory (src/llama-model.cpp)"
                     + (", which this GPU shares: counted in the weights" if unified else ", not counted")),)
        if eng.ggml_graph else (
        Assumption("framework workspace (cuBLAS, buffers)", fmt_bytes(framework),
                   "fitted on PyTorch-counted inference-memory rows (bench/fit.py)"),
        Assumption("logits", "all prompt tokens" if s.full_logits else "last token only (generate)",
                   "transformers >= 4.45 keeps only the last position's logits during generation; they are made "
                   "after the last layer has freed its transients, so the peak holds them or a layer's, not both"),
    )) + _decoding_assumptions(t) + ((Assumption(
        "LoRA adapters", f"{s.lora_adapters} resident, rank {s.lora_rank}, on every linear layer, "
        f"16-bit: {fmt_bytes(adapters)} per GPU, out of the KV cache",
        "r·(in + out) per matrix (Hu et al. 2021); slots reserved per layer as vLLM's LoRA layers do"),)
        if adapters else ())
    if gpu is not None and s.launcher:  # a local runner's defaults (gpuplan.estimate.runners)
        assumptions += runner_assumptions(m, s, gpu)
    return Estimate(Breakdown("bytes", parts), cal.band("inference_memory"), assumptions, capacity)


def _decoding_assumptions(t: _SetupTerms) -> tuple[Assumption, ...]:
    """The assumptions behind the parts a transformers decoding step adds (none for a part that is 0)."""
    repeated, dequant = t.repeated, t.dequant
    said = (
        (t.previous, Assumption(
            "previous step's KV cache", "held while the next is built, at the end of decoding (beyond the prompt's "
            "activations and logits, freed by then)", "the model's own code concatenates the cache into a new tuple "
            "every step (gpuplan/data/hf_kv_cache.csv), or transformers before 4.42 passed every model's cache as a "
            "tuple between steps (huggingface/transformers PR #30536); generate keeps the last one until the forward "
            "returns")),
        (repeated, Assumption(
            "keys and values widened to every head", f"{fmt_bytes(repeated)}: one layer's copy for the whole "
            "context, at the end of decoding", "transformers' repeat_kv copies a grouped-query cache to every query "
            "head before attending (models/qwen2/modeling_qwen2.py @v4.38.2, @v4.46.0)")),
        (dequant, Assumption(
            "dequantized matrix", f"{fmt_bytes(dequant)}: the largest quantized matrix of a layer in 16-bit, for a "
            "cuBLAS matmul", "the quantization library's kernels (see DEQUANT_MIN_TOKENS); two copies where "
            "bitsandbytes before 0.43 dequantizes to fp16 and casts to bf16 (dequant_copies)")),
        (t.at_load, Assumption(
            "int8 quantization at load", f"{fmt_bytes(t.at_load)} beyond the generation's peak: the largest matrix "
            "in fp16 beside its int8 copies while bitsandbytes quantizes it", "bitsandbytes Int8Params.cuda and "
            "double_quant (bitsandbytes/nn/modules.py, functional.py at 0.40.0)")),
        (t.rotary, Assumption(
            "rotary tables in every layer", f"{fmt_bytes(t.rotary)}: cos and sin for every position the model "
            "takes, built in each attention layer at load", "transformers before 4.45 gave each Qwen2 attention layer "
            "its own rotary embedding with tables of max_position_embeddings (models/qwen2/modeling_qwen2.py "
            "@v4.38.2 to @v4.44.0; @v4.45.0 computes them per forward)")),
    )
    return tuple(a for part, a in said if part)


@dataclass(frozen=True, slots=True)
class _SetupTerms:
    """What :func:`_inference_memory` works out from the model, setup, calibration and whether the GPU's memory is
    unified, before it reads the GPU's capacity: the same on every GPU type a plan sizes the setup for."""

    eng: EngineSpec
    fmt: WeightFormat
    latent: bool
    workspace: float
    ubatch: int
    framework: float
    overhead: float
    adapters: float
    previous: float
    repeated: float
    dequant: float
    rotary: float
    parts: tuple[tuple[str, float], ...]
    fixed: float  # every part but the KV cache
    # KV-cache bytes one token / one sequence of the setup's context adds on one GPU (its pipeline stage), on
    # average over the server's sequences: under attention data parallelism a GPU caches a tp-th of them (kv_layout)
    kv_per_token: float
    kv_per_seq: float
    at_load: float = 0.0  # what loading int8 weights holds beyond the generation's peak (int8_load_peak_bytes)
    load_peak: float = 0.0  # the load's whole peak where it passes the generation's at this batch, else 0
    # (``fixed`` is the generation's alone: the load is over before any KV cache exists)


def _setup_terms(m: ModelSpec, s: InferSetup, cal: Calibration, unified: bool, metal: bool) -> _SetupTerms:
    """:class:`_SetupTerms`, kept per model, calibration, setup, shared memory and Metal runtime (a plan sizes each
    setup for every GPU type, and its batch searches ask again)."""
    hit = _setup_memo.get(m, cal, None, (s, unified, metal))
    if hit is not None:
        return hit
    return _setup_memo.put(m, cal, None, (s, unified, metal), _setup_terms_of(m, s, cal, unified, metal))


_setup_memo: IdentityMemo[_SetupTerms] = IdentityMemo()


def _setup_terms_of(m: ModelSpec, s: InferSetup, cal: Calibration, unified: bool, metal: bool) -> _SetupTerms:
    eng = get_engine(s.engine)
    fmt = weight_format(s.weight_format)
    latent = eng.mla_latent_cache
    weights = (gguf_weights_bytes(m, fmt, s.tp, s.pp) if fmt.name in GGUF_MIX
               else weights_bytes(m, fmt, s.tp, s.pp, s.attention_dp, Engine(s.engine).dense_mlp_with_attention_dp))
    block = ggml_kv_pad(s) if eng.ggml_graph else eng.kv_block_tokens  # llama.cpp: n_ctx padded to whole pads
    kv_tp, share = kv_layout(s)
    kv = kv_cache_bytes(m, rank_sequences(s, s.batch), s.context_len, s.kv_dtype, kv_tp, s.pp, latent, block)
    if eng.memory_mode == "context":
        kv = kv_cache_bytes(m, 1, allocated_context(s), s.kv_dtype, s.tp, s.pp, latent, block)
    chunk = s.batch * s.prompt_len
    budget = s.max_batched_tokens or eng.max_batched_tokens
    if budget:  # the scheduler's token budget (the setup's, else engines.csv's), or MLX's prefill step
        chunk = min(chunk, budget)
    # the runtime's own memory: Metal's is fitted on Apple parts; a CUDA or HIP context is one on every other GPU,
    # whether or not it shares the system's memory (the DGX Spark's CUDA, a Radeon APU's ROCm: none fitted apart)
    overhead = cal.get("infer_overhead_unified_bytes" if metal else "infer_overhead_bytes")
    adapters = served_adapter_bytes(m, s.lora_adapters, s.lora_rank, s.tp, s.pp)
    tail = (("overhead", overhead),) + ((("adapter", adapters),) if adapters else ())
    ubatch = min(eng.max_batched_tokens or chunk, allocated_context(s))  # llama.cpp's reserved graph
    if eng.ggml_graph:  # the input table stays on the host (the same memory when unified); one compute buffer
        # holds every activation and logit
        weights = gguf_weights_bytes(m, fmt, s.tp, s.pp, input_table=unified)
        workspace = ggml_compute_buffer_bytes(m, s, ubatch)
        logits = framework = previous = dequant = repeated = rotary = at_load = 0.0
        parts = (("weights", weights), ("kv_cache", kv), ("compute_buffer", workspace), *tail)
    else:
        workspace, logits = forward_peak_bytes(m, s, chunk)
        framework = cal.get("infer_workspace_bytes")
        weights -= head_saving_bytes(m, fmt, s)
        dequant = (dequant_buffer_bytes(m, fmt, chunk, s.tp, s.quantized_head) * dequant_copies(fmt, s)
                   if eng.engine == Engine.HF else 0.0)
        # generate still holds the previous step's cache while the forward builds the next
        # (a model whose own code returns a new tuple every step, or a transformers release before one DynamicCache
        # lasted the whole run), and the last layer widens its keys and values to every head (repeated_kv_bytes).
        # Both meet at the end of decoding, when the prompt's activations and logits are long freed, so the peak
        # holds the larger of the two moments: only what the decoding step adds beyond the prompt's is counted
        rotary = rotary_tables_bytes(m, s)
        held = kv if hf_holds_previous_cache(m, s) else 0.0
        previous = max(0.0, held - workspace - logits)
        repeated = max(0.0, held + repeated_kv_bytes(m, s) - workspace - logits) - previous
        # the load's peak holds only the weights and one matrix being quantized: it counts where it passes the
        # generation's (int8_load_peak_bytes)
        quantizing = int8_load_peak_bytes(m, fmt, s)
        at_load = max(0.0, quantizing - (kv + workspace + logits + framework + dequant + previous + repeated))
        parts = (("weights", weights), ("kv_cache", kv), ("activations", workspace), ("logits", logits),
                 ("workspace", framework), *((("dequant", dequant),) if dequant else ()),
                 *((("previous_kv_cache", previous),) if previous else ()),
                 *((("repeated_kv", repeated),) if repeated else ()),
                 *((("rotary_tables", rotary),) if rotary else ()),
                 *((("quantize_at_load", at_load),) if at_load else ()), *tail)
    resident = weights + overhead + adapters + rotary
    fixed = resident + workspace + logits + framework + previous + repeated + dequant  # generation's, without the KV
    return _SetupTerms(eng, fmt, latent, workspace, ubatch, framework, overhead, adapters, previous, repeated, dequant,
                       rotary, parts, fixed, kv_bytes_per_token(m, s.kv_dtype, kv_tp, latent) * share / s.pp,
                       kv_cache_bytes(m, share, s.context_len, s.kv_dtype, kv_tp, s.pp, latent, block), at_load,
                       resident + quantizing if at_load else 0.0)


def _capacity_answers(m: ModelSpec, gpu: Gpu | None, s: InferSetup, t: _SetupTerms, longest: bool = True
                      ) -> KvCapacity | None:
    """KV-cache capacity in tokens, concurrent sequences at this context, and (``longest``) the longest context at
    this batch (at most the model's positions), on ``gpu`` (None when no GPU was given); ``t``: the setup's terms."""
    if gpu is None:
        return None
    # the load's peak comes before any KV cache exists, so it bounds nothing the cache may take once it has passed;
    # it only decides whether the model loads at all
    mode, fixed, per_token, per_seq = t.eng.memory_mode, t.fixed, t.kv_per_token, t.kv_per_seq
    share = (s.gpu_memory_utilization or t.eng.gpu_memory_utilization or 1.0) if mode == "preallocate" else 1.0
    if t.eng.kv_share_of == "free":  # TensorRT-LLM: the KV cache takes a share of the memory the engine leaves free
        budget = (gpu.memory_bytes - fixed) * share
    else:
        budget = gpu.memory_bytes * share - fixed
    if t.load_peak > gpu.memory_bytes * share:  # the weights cannot be quantized on this GPU
        budget = gpu.memory_bytes * share - t.load_peak
    tokens = max(0.0, budget / per_token) if per_token else math.inf
    seqs = max(0.0, budget / per_seq) if per_seq else math.inf
    kv_tp = kv_layout(s)[0]
    most = (min(max_context(m, budget, int(rank_sequences(s, s.batch)), s.kv_dtype, kv_tp, s.pp, t.latent),
                m.max_positions) if longest else None)
    return KvCapacity(gpu.memory_bytes * share if mode == "preallocate" else None,
                      budget,  # negative when weights and buffers alone exceed the engine's share
                      math.floor(tokens), math.floor(seqs), most)


def max_context(m: ModelSpec, budget_bytes: float, batch: int, kv_dtype: str, tp: int, pp: int,
                latent: bool) -> int:
    """Longest context (tokens, at most 2^26) whose KV cache for ``batch`` sequences fits in ``budget_bytes``.

    The cache grows linearly with the context, more slowly once sliding-window layers reach their window, so the
    answer is read off that line and then checked against :func:`kv_cache_bytes` itself (which also decides
    the last token when rounding puts it on the boundary)."""
    if budget_bytes <= 0:
        return 0
    top = 1 << 26

    def fits(ctx: int) -> bool:
        return kv_cache_bytes(m, batch, ctx, kv_dtype, tp, pp, latent) <= budget_bytes

    if fits(top):
        return top
    window = m.sliding_window if m.n_sliding_layers and m.sliding_window else 0
    room = budget_bytes - linear_state_bytes(m, tp) * batch / pp  # the fixed part of every sequence comes first
    if room <= 0:
        return 0
    full = kv_bytes_per_token(m, kv_dtype, tp, latent, m.n_full_attention_layers, "full") * batch / pp
    sliding = kv_bytes_per_token(m, kv_dtype, tp, latent, m.n_sliding_layers, "sliding") * batch / pp if window else 0.0
    if window and room >= (full + sliding) * window:  # past the window only the full layers grow
        guess = window + (room - (full + sliding) * window) / full if full else top
    else:
        guess = room / (full + sliding)
    ctx = min(top, max(0, math.floor(guess)))
    while ctx > 0 and not fits(ctx):
        ctx -= 1
    while ctx < top and fits(ctx + 1):
        ctx += 1
    return ctx


# ---------------------------------------------------------------- training


def trainable_params(m: ModelSpec, s: TrainSetup) -> float:
    """Parameters that receive gradients under the method."""
    if s.method.trains_every_weight:
        return count_params(m).total + untied_head_params(m, s)
    if s.method.low_rank:
        magnitude = adapted_linears(m, s)[1] if s.method == Method.DORA else 0
        singular = adalora_singular_values(m, s) if s.method == Method.ADALORA else 0
        return setup_lora_params(m, s) + magnitude + singular + (embedding_params(m) if trains_embeddings(s) else 0)
    if s.method == Method.PTUNING:
        return s.prefix_len * m.n_layers * 2 * m.kv_dim
    if s.method == Method.FREEZE:
        return per_layer_params(m) * min(s.trainable_layers, m.n_layers)
    if s.method == Method.LISA:
        return per_layer_params(m) * min(s.trainable_layers, m.n_layers) + embedding_params(m) + m.hidden
    if s.method.adaption_prompt:
        return adapter_params(m, s)
    raise AssertionError(s.method)


def adapter_prompt_layers(m: ModelSpec, s: TrainSetup) -> int:
    """The layers that attend to LLaMA-Adapter's prompt: LitGPT's ``CausalSelfAttention`` gets ``adapter_wte`` and
    ``gating_factor`` where ``block_idx >= adapter_start_layer`` (Lightning-AI/litgpt litgpt/adapter.py)."""
    return max(0, m.n_layers - s.adapter_start_layer)


def adapter_modelled(m: ModelSpec) -> bool:
    """Whether LLaMA-Adapter is sized for ``m``: a dense decoder whose every layer attends with plain query, key and
    value heads (LitGPT's adapter also runs its MoE models, whose every expert's linears v2 adapts: not sized)."""
    return not (m.is_moe or m.n_linear_layers or m.is_mla or m.attn_output_gate)


def _refuse_unmodelled_adapter(m: ModelSpec) -> None:
    if not adapter_modelled(m):
        raise InputError("--method", f"LLaMA-Adapter is not modelled on {m.name}: gpuplan sizes it for dense decoders "
                         "whose layers all attend with plain query, key and value heads.",
                         "use --method lora or qlora for this model.")


def _linear_output_width(m: ModelSpec) -> int:
    """The output features of one layer's linears summed (what LLaMA-Adapter v2's ``AdapterV2Linear`` gives a bias
    and a scale each)."""
    return sum(out for _, out in lora_targets(m, "all-linear"))


def adapter_params(m: ModelSpec, s: TrainSetup) -> int:
    """LLaMA-Adapter's trainable parameters as LitGPT counts them (Lightning-AI/litgpt litgpt/adapter.py and
    litgpt/adapter_v2.py, ``adapter_filter``): in each prompt layer an ``adapter_wte`` of prompt length × hidden and a
    ``gating_factor`` of one value per head. v2 adds, on every linear including the output layer
    (``AdapterV2Linear``), a bias and a scale of the linear's output width, and trains the norms ``norm_1``,
    ``norm_2`` and ``ln_f`` (weight, and bias for LayerNorm; a model with one norm per layer has only ``norm_1``)."""
    _refuse_unmodelled_adapter(m)
    prompts = adapter_prompt_layers(m, s) * (s.adapter_prompt_len * m.hidden + m.n_heads)
    if s.method != Method.ADAPTER_V2:
        return prompts
    norm = m.hidden * (2 if m.norm_bias else 1)
    outputs = _linear_output_width(m)
    return prompts + m.n_layers * (2 * outputs + min(m.norms_per_layer, 2) * norm) + 2 * m.vocab + norm


def untied_head_params(m: ModelSpec, s: TrainSetup) -> int:
    """The output layer's own matrix where the stack unties a model's tied embeddings (``data/stacks.csv``
    ``unties_embeddings``), else 0. LitGPT's GPT makes ``lm_head`` an nn.Linear of its own beside
    ``transformer.wte`` and never ties them, and its checkpoint converter fills ``lm_head.weight`` with the
    embedding table when the Hugging Face checkpoint stores none (Lightning-AI/litgpt
    @5895df1004c3d05ef69f7aeffcfee757dbc42d58: litgpt/model.py ``GPT.__init__``,
    litgpt/scripts/convert_hf_checkpoint.py ``copy_weights_hf_llama``); loading copies that table into both
    parameters, so a full fine-tune (litgpt/finetune/full.py: AdamW over ``model.parameters()``) trains two
    vocabulary × hidden matrices, each with its gradient and optimizer states."""
    return m.vocab * m.hidden if m.tied_embeddings and stack(s.framework).unties_embeddings else 0


def trains_embeddings(s: TrainSetup) -> bool:
    """Whether the embedding and output layer get gradients: a full fine-tune, or LoRA/QLoRA with
    ``train_embeddings``."""
    return s.method.trains_every_weight or s.method == Method.LISA or (s.train_embeddings and s.method.low_rank)


def embedding_params(m: ModelSpec) -> int:
    """The embedding table and the output layer (one matrix when tied): what PEFT's ``modules_to_save`` (or
    LLaMA-Factory's ``additional_target``) trains fully next to the adapters. PEFT trains a copy and keeps the
    frozen original, so the copy's weights count on top of the base."""
    return m.vocab * m.hidden * (1 if m.tied_embeddings else 2)


def per_layer_params(m: ModelSpec) -> float:
    p = count_params(m)
    return (p.attention + p.mlp + p.experts + p.shared_experts + p.router) / m.n_layers + m.hidden * (
        m.norms_per_layer * (2 if m.norm_bias else 1))


def lora_targets(m: ModelSpec, targets: str, fused_qkv: bool = False) -> list[tuple[int, int]]:
    """(in, out) of each adapted linear in one layer that attends (q_proj also yields the output gate's logits
    where the model has one); with ``fused_qkv`` (:func:`peft_fused_qkv`) Q, K and V are one adapted module;
    kept per model and targets (a fine-tuning plan asks for them hundreds of times)."""
    hit = _lora_targets.get(m, None, None, (targets, fused_qkv))
    if hit is None:
        hit = _lora_targets.put(m, None, None, (targets, fused_qkv), tuple(_lora_targets_of(m, targets, fused_qkv)))
    return list(hit)


_lora_targets: IdentityMemo[tuple[tuple[int, int], ...]] = IdentityMemo(256)


# Model types whose Hub modeling code makes Q, K and V with one linear module: the checkpoints' fused projections
# that llama.cpp's converter maps to one attn_qkv (FUSED_QKV_GGUF: query_key_value, c_attn, Wqkv, qkv_proj), and
# Baichuan 2's W_pack, nn.Linear(hidden, 3 * hidden) (alibaba/MNN
# transformers/llm/export/llm_models/Baichuan2-7B-Chat/modeling_baichuan.py @4b3d1f8155c6efce4bebffef88de8cb3c077725e,
# a copy of Baichuan2-7B-Chat's remote code). PEFT adapts a targeted module with one A (in x r) and one B (r x out)
# (huggingface/peft src/peft/tuners/lora/layer.py @b28a09c44695163806dc2d560ec2faa1ce2949c5, LoraLayer.update_layer),
# so LoRA on the fused projection holds r * (hidden + q + 2 kv) parameters and reads one input, where separate q, k
# and v projections hold r * (3 hidden + q + 2 kv); a q-and-v target cannot leave k out of the fused module.
HUB_FUSED_QKV = FUSED_QKV_GGUF | {"baichuan"}


def peft_fused_qkv(m: ModelSpec, s: TrainSetup) -> bool:
    """Whether the setup's LoRA adapts Q, K and V as one PEFT module: the model's Hub code fuses them
    (``HUB_FUSED_QKV``) and the stack runs that code (the HF Trainer, DeepSpeed). Stacks with their own model code
    keep their own layout (LitGPT's fused QKV keeps one A per adapted projection, ``lora_A`` of r x enabled rows)."""
    return s.framework in _RUNS_HUB_MODEL_CODE and m.model_type in HUB_FUSED_QKV and not m.is_mla


def _lora_targets_of(m: ModelSpec, targets: str, fused_qkv: bool = False) -> list[tuple[int, int]]:
    attn = {"q": (m.hidden, m.q_dim * (2 if m.attn_output_gate else 1)), "k": (m.hidden, m.kv_dim),
            "v": (m.hidden, m.kv_dim), "o": (m.q_dim, m.hidden)}
    if fused_qkv and targets != "mlp":
        qkv = (m.hidden, attn["q"][1] + 2 * m.kv_dim)
        return [qkv] + ([attn["o"]] if targets != "qv" else []) + (_mlp_targets(m) if targets == "all-linear" else [])
    if targets == "qv":
        return [attn["q"], attn["v"]]
    if targets == "attention":
        return list(attn.values())
    mlp = _mlp_targets(m)
    if targets == "mlp":
        return mlp
    return list(attn.values()) + mlp


def _mlp_targets(m: ModelSpec) -> list[tuple[int, int]]:
    width = m.moe_ffn_hidden if m.is_moe else m.ffn_hidden
    return [(m.hidden, width)] * (2 if m.gated_mlp else 1) + [(width, m.hidden)]


def linear_layer_lora_targets(m: ModelSpec, targets: str) -> list[tuple[int, int]]:
    """(in, out) of each adapted linear in one Gated DeltaNet layer: it has no q/k/v/o projections, so attention
    targets (PEFT's q_proj, v_proj …) adapt nothing there; all-linear adapts in_proj_qkv, in_proj_z, in_proj_b,
    in_proj_a and out_proj (transformers ``Qwen3_5GatedDeltaNet``) besides the MLP."""
    if targets in ("qv", "attention"):
        return []
    mlp = _mlp_targets(m)
    if targets == "mlp":
        return mlp
    keys, values, heads = m.linear_key_width, m.linear_value_width, m.linear_v_heads
    if m.linear_kind == "mamba2":  # in_proj (z, x, B, C, dt in one matrix) and out_proj (NemotronHMamba2Mixer)
        return [(m.hidden, 2 * values + 2 * keys + heads), (values, m.hidden), *mlp]
    return [(m.hidden, 2 * keys + values), (m.hidden, values), (m.hidden, heads), (m.hidden, heads),
            (values, m.hidden), *mlp]


def lora_params(m: ModelSpec, rank: int, targets: str, fused_qkv: bool = False) -> float:
    """LoRA (Hu et al. 2021): r·(in + out) per adapted matrix (A: in×r, B: r×out); ``fused_qkv``: Q, K and V are
    one adapted module (:func:`peft_fused_qkv`); kept per model, rank and targets."""
    hit = _lora_params.get(m, None, None, (rank, targets, fused_qkv))
    if hit is None:
        hit = _lora_params.put(m, None, None, (rank, targets, fused_qkv), _lora_params_of(m, rank, targets, fused_qkv))
    return hit


def setup_lora_params(m: ModelSpec, s: TrainSetup) -> float:
    """The adapters' parameters of a LoRA setup: its rank and targets on the modules its stack's model code has."""
    return lora_params(m, s.lora_rank, s.lora_targets, peft_fused_qkv(m, s))


_lora_params: IdentityMemo[float] = IdentityMemo(256)


def _adapted_layers(m: ModelSpec, s: TrainSetup) -> list[tuple[int, list[tuple[int, int]]]]:
    """(layers, (in, out) of each targeted linear in one of them) for the setup's ``lora_targets``."""
    fused = peft_fused_qkv(m, s)
    layers = [(m.n_attention_layers, lora_targets(m, s.lora_targets, fused))]
    if m.n_linear_layers:
        layers.append((m.n_linear_layers, linear_layer_lora_targets(m, s.lora_targets)))
    if m.n_layers_without_ffn and s.lora_targets in ("mlp", "all-linear"):
        layers.append((-m.n_layers_without_ffn, _mlp_targets(m)))
    return layers


def adapted_linears(m: ModelSpec, s: TrainSetup) -> tuple[float, float]:
    """(weights, output features) of every linear a LoRA setup adapts, summed over the model's layers: a DoRA
    magnitude vector has one entry per output feature of each, and DoRA's forward multiplies the input by each
    adapted weight a second time (:func:`dora_activation_bytes_per_token`)."""
    layers = _adapted_layers(m, s)
    weights = sum(n * sum(i * o for i, o in shapes) for n, shapes in layers)
    outputs = sum(n * sum(o for _, o in shapes) for n, shapes in layers)
    return float(weights), float(outputs)


def adalora_singular_values(m: ModelSpec, s: TrainSetup) -> float:
    """AdaLoRA's Λ (Zhang et al. 2023): PEFT's ``SVDLinear`` adds ``lora_E`` (rank × 1) to each adapted module's
    ``lora_A`` (rank × in) and ``lora_B`` (out × rank) at the initial rank ``init_r`` (huggingface/peft
    src/peft/tuners/adalora/layer.py); pruning masks entries of Λ, so every module keeps its initial rank in memory."""
    return float(s.lora_rank * sum(n * len(shapes) for n, shapes in _adapted_layers(m, s)))


# AdaLoRA's RankAllocator.update_ipt keeps, for every trainable lora_ parameter, ``ipt``, ``exp_avg_ipt`` and
# ``exp_avg_unc``, each ``torch.zeros_like(p)`` (huggingface/peft src/peft/tuners/adalora/layer.py): three more copies
# of the adapters in their own dtype, beside the optimizer's states
ADALORA_IMPORTANCE_BUFFERS = 3


def galore_state_share(m: ModelSpec, s: TrainSetup, grad_b: float, state_b: float) -> float:
    """The optimizer states of a GaLore setup (Zhao et al. 2024, ``--method galore``) as a share of full Adam's,
    1.0 for other methods. ``GaLoreAdamW.step`` (ms-swift's copy of jiaweizzhao/GaLore's galore_torch,
    swift/trainers/optimizers/galore/adamw.py and galore_projector.py @cdb169b781c22dd06ef03e06209819ec1f4208eb)
    projects each targeted matrix's gradient with its
    ``GaLoreProjector`` (``proj_type`` std: an (out × in) gradient becomes rank × the larger side) and keeps
    ``exp_avg`` and ``exp_avg_sq`` ``zeros_like`` the projection, plus the projector's orthogonal matrix (rank ×
    the smaller side, cast back to the gradient's dtype after the fp32 SVD); every other parameter (embedding,
    output layer, norms) keeps full Adam states. The targets are ``--lora-targets`` (LLaMA-Factory's
    ``galore_target`` all and ms-swift's default: every linear of the layers, not the output layer) at rank
    ``--lora-rank``. Gradients stay full size: the step reads them after backward, as full fine-tuning does."""
    if s.method != Method.GALORE:
        return 1.0
    if m.is_moe:
        raise InputError("--method", "GaLore is not modelled on a mixture-of-experts model (each routed expert "
                         "would be projected on its own).", "use --method full or lora for this model.")
    targeted = projected = 0.0
    for n, shapes in _adapted_layers(m, s):
        for i, o in shapes:
            rank = min(s.lora_rank, i, o)
            targeted += n * i * o
            projected += n * rank * (max(i, o) * state_b + min(i, o) * grad_b)
    full = trainable_params(m, s) * state_b
    return (full - targeted * state_b + projected) / full if full else 1.0


def dora_activation_bytes_per_token(m: ModelSpec, s: TrainSetup) -> float:
    """What DoRA (Liu et al. 2024) keeps per token per layer beyond LoRA, averaged over the layers.

    PEFT's ``DoraLinearLayer.forward`` (huggingface/peft src/peft/tuners/lora/dora.py
    @0a6cd5a459262e590346d1c2856759cedd14c615) returns ``(g/‖W + s·BA‖ - 1) · (x Wᵀ) + g/‖W + s·BA‖ · s·B(A(x))``
    with the column norm detached and the magnitude ``g`` trained: the two products keep their 16-bit operands of
    the adapted linear's output width for ``g``'s gradient, the recomputed base output ``x Wᵀ`` and the adapters'
    output. The norm's full-size ``W + s·BA`` lives only inside the forward of one linear and is not kept."""
    if s.method != Method.DORA:
        return 0.0
    return 2 * act_bytes(s) * adapted_linears(m, s)[1] / m.n_layers


def _lora_params_of(m: ModelSpec, rank: int, targets: str, fused_qkv: bool = False) -> float:
    attending = m.n_attention_layers * sum(rank * (i + o) for i, o in lora_targets(m, targets, fused_qkv))
    if not m.n_linear_layers:
        return attending
    linear = m.n_linear_layers * sum(rank * (i + o) for i, o in linear_layer_lora_targets(m, targets))
    no_ffn = m.n_layers_without_ffn * sum(rank * (i + o) for i, o in _mlp_targets(m)) if targets in (
        "mlp", "all-linear") else 0  # Nemotron-H: mixer layers with no MLP after them
    return attending + linear - no_ffn


def served_adapter_bytes(m: ModelSpec, n_adapters: int, rank: int, tp: int = 1, pp: int = 1) -> float:
    """GPU memory per GPU of ``n_adapters`` resident LoRA adapters of rank ``rank`` on every linear layer, 16-bit.

    Per layer and adapted matrix A (in×r) and B (r×out) (Hu et al. 2021), the sum over layers ÷ pipeline stages.
    The engine reserves every adapter slot on every linear it can adapt (vLLM's LoRA layers stack
    ``max_loras`` × ``max_lora_rank`` buffers per layer). Under tensor parallelism vLLM (without
    --fully-sharded-loras) shards B of the column-parallel matrices (q, k, v, gate, up) and A of the row-parallel
    ones (o, down), and keeps the other factor whole on every GPU (vllm/lora/layers: ColumnParallelLinearWithLoRA
    slices lora_b; the S-LoRA "ShardedLoRA" variants, Sheng et al. 2023, slice lora_a too)."""
    if n_adapters <= 0 or rank <= 0:
        return 0.0
    def per_layer(matrices: list[tuple[int, int]], row_parallel: set[int]) -> float:
        return sum(rank * (i / tp + o if k in row_parallel else i + o / tp) for k, (i, o) in enumerate(matrices))

    attending = lora_targets(m, "all-linear")  # o and down are row-parallel (q, k, v, o come first, down last)
    total = per_layer(attending, {3, len(attending) - 1}) * m.n_attention_layers
    if m.n_linear_layers:  # out_proj (fifth, or second in Mamba-2) and down
        linear = linear_layer_lora_targets(m, "all-linear")
        out_proj = 1 if m.linear_kind == "mamba2" else 4
        total += per_layer(linear, {out_proj, len(linear) - 1}) * m.n_linear_layers
    return n_adapters * total / pp * BYTES_16


def activation_bytes_per_token(m: ModelSpec, s: TrainSetup) -> float:
    """Bytes autograd keeps per token for one layer, before recomputation (:func:`_activation_bytes_per_token`),
    kept per model and the fields of the setup it reads: a training search sizes hundreds of setups that differ
    only in their layout and micro-batch."""
    key = (s.framework, s.precision, s.method, s.base_quant, s.lora_dropout, s.lora_targets, s.flash_attention,
           s.seq_len, s.adapter_start_layer)
    found = _per_token.get(m, None, None, key)
    if found is None:
        found = _per_token.put(m, None, None, key, _activation_bytes_per_token(m, s))
    return found


_per_token: IdentityMemo[float] = IdentityMemo(1024)


def _activation_bytes_per_token(m: ModelSpec, s: TrainSetup) -> float:
    """Bytes autograd keeps per token for one layer, before recomputation.

    Saved tensors of a pre-norm decoder layer without dropout and with flash attention (without it, also the
    attention probabilities, n_heads × seq_len per token):
    attention: the norm's input, the normed input (QKV weight grads), Q, K, V, attention output;
    MLP: the norm's input, the normed input (up/gate weight grads), up and gate outputs, act(gate), the product
    (down weight grad). Tensors needed only for a frozen linear's weight gradient are not kept, unless the
    frozen linear is a bitsandbytes matmul, which keeps its input whatever needs it. What the stack's modeling
    code adds is data (``data/stacks.csv``): norms that keep an fp32 copy of their input, K/V heads expanded to
    every query head, an attention output copied to token-major order for the output projection, and the
    adapters' own copies of their inputs (``_adapter_input_bytes``).
    """
    st = stack(s.framework)
    ab = act_bytes(s)
    norm_in = ab if _layer_norm_keeps_16bit(m, s) else 4.0 if st.norm_input_fp32 else ab
    frozen = s.method.adapters
    keeps_inputs = not frozen or _bnb_base(s)
    reads_x = s.method.low_rank and not st.adapters_fp32 and s.lora_dropout == 0
    attn_needed = keeps_inputs or (reads_x and s.lora_targets in ("qv", "attention", "all-linear"))
    mlp_needed = keeps_inputs or (reads_x and s.lora_targets in ("mlp", "all-linear"))
    kv = m.q_dim if st.expands_kv_heads and m.kv_dim < m.q_dim else m.kv_dim
    attn = norm_in * m.hidden + ab * (2 * m.q_dim + 2 * kv + (m.hidden if attn_needed else 0))
    if st.mha_v_views_qkv and m.kv_dim == m.q_dim:  # V saved as a view: Q's and K's share of QKV stays with it
        attn += ab * (m.q_dim + m.kv_dim)
    if m.attn_output_gate:  # the gate's logits and its sigmoid, for the product with the attention output
        attn += ab * 2 * m.q_dim
    if keeps_inputs and st.copies_attention_output:  # the output projection's input is its own token-major copy
        attn += ab * m.q_dim
    attn += _layer_score_bytes_per_token(m, s)
    if m.is_moe:
        width = m.moe_ffn_hidden * m.n_active_experts + m.shared_ffn_hidden
    else:
        width = m.ffn_hidden
    # gate/up outputs and the activation output; an ungated MLP whose activation is one op keeps only its input
    mlp_core = (3 if m.gated_mlp else 1 if st.gelu_single_op else 2) * width
    mlp = norm_in * m.hidden + ab * (mlp_core + ((m.hidden + width) if mlp_needed else 0))
    if m.parallel_attn:
        mlp -= norm_in * m.hidden  # one shared block input
    if m.n_linear_layers:  # attention tensors averaged over the layers that attend and the linear ones
        linear = _linear_layer_activation_bytes(m, norm_in, ab, keeps_inputs or (
            reads_x and s.lora_targets == "all-linear"))
        attn = (m.n_attention_layers * attn + m.n_linear_layers * linear) / m.n_layers
    return (attn + mlp + _adapter_input_bytes(m, s) + padded_adapter_output_bytes(m, s)
            + dora_activation_bytes_per_token(m, s) + adaption_prompt_activation_bytes(m, s))


def adaption_prompt_activation_bytes(m: ModelSpec, s: TrainSetup) -> float:
    """What LLaMA-Adapter keeps per token per layer besides a frozen-base layer's tensors (Lightning-AI/litgpt
    litgpt/adapter.py, adapter_v2.py). In a prompt layer the second ``scaled_dot_product_attention`` (queries over the
    prompt's keys and values, with a boolean mask, which rules out the flash kernel: the memory-efficient one) keeps
    its output, which ``gating_factor * ay`` keeps again as the same tensor for the gate's gradient, and its fp32
    log-sum-exp, one per head; the prompt's own keys and values are batch 1 × prompt length and not counted. v2's
    ``AdapterV2Linear`` returns ``adapter_scale * (linear(x) + adapter_bias)``: the product keeps its right operand
    for the scale's gradient, one value per output of every linear; a trained RMSNorm weight keeps the normalized
    input its product reads (LitGPT's RMSNorm normalizes in fp32), where a LayerNorm's own kernel keeps nothing
    more. Averaged over the layers that keep activations (:func:`_activations`)."""
    if not s.method.adaption_prompt:
        return 0.0
    ab = act_bytes(s)
    prompt = ab * m.q_dim + 4.0 * m.n_heads
    if s.method != Method.ADAPTER_V2:
        return prompt
    outputs = _linear_output_width(m)
    norm = 0.0 if m.norm_bias else (4.0 if stack(s.framework).norm_input_fp32 else ab) * m.hidden
    return prompt * adapter_prompt_layers(m, s) / m.n_layers + ab * outputs + min(m.norms_per_layer, 2) * norm


def padded_adapter_output_bytes(m: ModelSpec, s: TrainSetup) -> float:
    """What a fused QKV LoRA that adapts q and v but not k keeps per token per layer in a stack that pads the adapters'
    output to the fused width (``data/stacks.csv`` ``lora_pads_qkv_output``: LitGPT's ``LoRAQKVLinear.zero_pad``
    index_copies it into a zero tensor): autograd keeps ``index_copy``'s source, the adapters' q and v output, to
    shape its gradient (pytorch/pytorch tools/autograd/derivatives.yaml, ``index_copy``:
    ``grad.index_select(dim, index).expand_as(source)``). Where q, k and v are all adapted nothing is padded."""
    if not (s.method.low_rank and s.lora_targets == "qv" and stack(s.framework).lora_pads_qkv_output):
        return 0.0
    return _attention_layer_share(m) * act_bytes(s) * (m.q_dim + m.kv_dim)


def _layer_norm_keeps_16bit(m: ModelSpec, s: TrainSetup) -> bool:
    """Whether the model's norms are ``torch.nn.LayerNorm`` (weight and bias) run on the 16-bit input, which they keep
    for backward as it is: a stack whose RMSNorm upcasts explicitly (``x.float()``) but whose LayerNorm is
    PyTorch's own (``data/stacks.csv`` ``layer_norm_16bit``: LitGPT's ``Config.norm_class``), trained in pure 16-bit
    (``precision`` "bf16": Lightning's bf16-true converts the module and autocasts nothing). Under autocast,
    ``layer_norm`` runs in fp32 and keeps the fp32 copy."""
    return m.norm_bias and stack(s.framework).layer_norm_16bit and s.precision == "bf16"


def _linear_layer_activation_bytes(m: ModelSpec, norm_in: float, ab: float, input_needed: bool) -> float:
    """Bytes one Gated DeltaNet layer's token mixer keeps per token for backward (transformers
    ``Qwen3_5GatedDeltaNet.forward`` with the chunked kernel of flash-linear-attention): the norm's input and, for
    weight gradients, its output; the projected q, k, v before and after the causal convolution (and its SiLU);
    the output gate z; the kernel's output, the gated norm's output (out_proj's input); the per-head decay and
    write strength in fp32. The kernel recomputes its chunk states in backward rather than keeping them."""
    conv = 2 * m.linear_key_width + m.linear_value_width
    values = m.linear_value_width
    return (norm_in * m.hidden + ab * (2 * conv + 3 * values + (m.hidden if input_needed else 0))
            + 4.0 * 2 * m.linear_v_heads)


# Korthikanti et al. 2022 sec. 4.1 count 2·a·s² bytes of softmax output per sequence for the attention
# probabilities; transformers' eager attention computes them in fp32 and keeps both that output (softmax backward)
# and its 16-bit copy (the P·V matmul): models/llama/modeling_llama.py @002272831fba584eb30dca9729c1be456836960a,
# ``softmax(attn_weights, dim=-1, dtype=torch.float32).to(query_states.dtype)``; the fp32 part is this constant
_SCORE_BYTES_EXTRA_16 = 4.0


def _score_bytes(m: ModelSpec, s: TrainSetup) -> float:
    """Bytes eager attention keeps per score (one head, one query, one key) for backward: the 16-bit softmax output,
    with the fp32 one beside it where the stack's softmax keeps that (``data/stacks.csv`` ``softmax_fp32_kept``; not
    Megatron's fused scaled masked softmax, which saves only its 16-bit output), and with softcapping (Gemma 2) the
    tanh output too, which ``tanh`` saves for its gradient: litgpt/model.py
    @2b195c7f5bb39a65dcea7e7e073fc2b0255933dd ``torch.tanh(scores / softcapping) * softcapping`` before the softmax
    (transformers' Gemma2 eager attention does the same); the scalar divide and multiply save nothing."""
    ab = act_bytes(s)
    fp32 = _SCORE_BYTES_EXTRA_16 if stack(s.framework).softmax_fp32_kept else 0.0
    return fp32 + ab + (ab if m.attn_softcap else 0.0)


def _layer_score_bytes_per_token(m: ModelSpec, s: TrainSetup) -> float:
    """Bytes one attention layer keeps per token for the attention probabilities when its attention is not flash
    attention (or softcapped in eager PyTorch): each token's row of ``seq_len`` scores per head (Korthikanti et al.
    2022, eq. 1: the 5·a·s/h term, of which 2·a·s/h is the softmax output and 3·a·s/h the dropout mask and output,
    which a run without attention dropout does not keep); 0 with flash attention."""
    if s.flash_attention and not (m.attn_softcap and stack(s.framework).softcap_eager):
        return 0.0
    return m.n_heads * s.seq_len * _score_bytes(m, s)


def score_bytes_per_token(m: ModelSpec, s: TrainSetup) -> float:
    """Of :func:`activation_bytes_per_token`, the attention probabilities (:func:`_layer_score_bytes_per_token`),
    averaged like it over the attention and linear-attention layers. Tensor parallelism splits them by heads,
    sequence parallel or not (Korthikanti et al. 2022, eq. 2: 5·a·s/(h·t) without it)."""
    scores = _layer_score_bytes_per_token(m, s)
    if m.n_linear_layers:
        scores = m.n_attention_layers * scores / m.n_layers
    return scores


def _bnb_base(s: TrainSetup) -> bool:
    """Whether the frozen base runs through bitsandbytes matmuls: MatMul4Bit and MatMul8bitLt keep their input A
    for backward whenever an input needs a gradient (TimDettmers/bitsandbytes bitsandbytes/autograd/_functions.py
    @29e3420c6de4c62086603aff47107ef378062e91, ``ctx.tensors = (A, B)``)."""
    fmt = s.base_quant or ("bnb-nf4-dq" if s.method.quantizes_base else "")
    return fmt.startswith("bnb-")


def _adapter_input_bytes(m: ModelSpec, s: TrainSetup) -> float:
    """What LoRA's branch keeps per token per layer besides the layer's own tensors: each adapter's A matmul keeps
    the input it was given. PEFT casts the input to the adapters' fp32 (a 4-byte copy per adapted module); with
    dropout each module keeps its own dropped copy (activation dtype, or fp32 in PEFT) and the dropout's mask
    (1 byte per element: ``torch.native_dropout`` returns a bool mask). Without either, the adapter reads the
    layer's input, which ``activation_bytes_per_token`` counts. A fused QKV projection has one adapter input."""
    if not s.method.low_rank:
        return 0.0
    st = stack(s.framework)
    dropout = s.lora_dropout > 0
    copy = 4.0 if st.adapters_fp32 else act_bytes(s) if dropout else 0.0
    per_element = copy + (1.0 if dropout else 0.0)
    inputs = [i for i, _ in lora_targets(m, s.lora_targets, peft_fused_qkv(m, s))]
    if st.fused_qkv and s.lora_targets in ("qv", "attention", "all-linear"):
        shared = 3 if s.lora_targets != "qv" else 2  # q, k, v (or q and v) read one input through one module
        inputs = inputs[shared - 1:]
    if not m.n_linear_layers:
        return per_element * sum(inputs)
    linear = sum(i for i, _ in linear_layer_lora_targets(m, s.lora_targets))  # per layer, averaged over the kinds
    return per_element * (m.n_attention_layers * sum(inputs) + m.n_linear_layers * linear) / m.n_layers


def act_bytes(s: TrainSetup) -> float:
    """Bytes per activation element: 4 when training in fp32, else 2 (bf16/fp16 autocast; fp8 training keeps
    16-bit activations between its float8 matmuls)."""
    return 4.0 if s.precision == "fp32" else BYTES_16


def layer_activation_bytes(m: ModelSpec, s: TrainSetup, cal: Calibration) -> float:
    """All saved activations of one layer for one micro-batch on one GPU (what a layer holds while its
    gradients are computed, recomputed or not)."""
    return _activations(m, s, cal)[1]


def _activation_scale(s: TrainSetup, cal: Calibration) -> float:
    # implementations differ in what they keep (fp32 norm inputs, attention masks, fused kernels): one
    # fitted factor for Hugging Face modeling code, one for the fused PyTorch-native stacks (torchtune,
    # torchtitan, Megatron), one for plain PyTorch model code (LitGPT, nanoGPT); torch.compile fuses more
    scale = cal.get(f"activation_scale_{s.framework.activation_family}")
    if s.compiled:
        scale *= cal.get("activation_compiled_factor")
    return scale


def activations_bytes(m: ModelSpec, s: TrainSetup, cal: Calibration) -> float:
    """Activations held at the end of the forward pass on one GPU. A 1F1B pipeline's first stage holds
    min(p, m) micro-batches in flight (m micro-batches per step), each of n_layers/p layers, so with m ≥ p the
    total does not shrink with PP (Narayanan et al. 2021 sec. 2.2)."""
    return _activations(m, s, cal)[0]


def _activations(m: ModelSpec, s: TrainSetup, cal: Calibration) -> tuple[float, float]:
    """(:func:`activations_bytes`, :func:`layer_activation_bytes`), made together: every training-memory estimate
    asks for both, which share the bytes per token and the implementation's scale."""
    par = s.parallel
    tokens = s.micro_batch * s.seq_len / par.cp
    shard = par.tp if par.sequence_parallel else 1
    scores = score_bytes_per_token(m, s)  # split by heads under TP, with sequence parallelism or without
    per_layer = ((activation_bytes_per_token(m, s) - scores) / shard + scores / par.tp) * tokens
    layers = m.n_layers / par.pp * min(par.pp, s.grad_accum)
    if s.method == Method.FREEZE:  # no graph is built through the frozen bottom layers
        layers = min(s.trainable_layers, layers)
    elif s.method == Method.ADAPTER:  # nor below LLaMA-Adapter's first prompt layer
        layers = min(adapter_prompt_layers(m, s), layers)
    if s.recompute == Recompute.FULL:
        kept = layers * tokens * m.hidden * act_bytes(s) / shard + per_layer
    elif s.recompute == Recompute.SELECTIVE:
        kept = layers * per_layer * cal.get("selective_recompute_keep")
    else:
        kept = layers * per_layer
    scale = _activation_scale(s, cal)
    if s.recompute == Recompute.SELECTIVE and s.attention_recomputed:
        return max(0.0, kept * scale - layers * attention_output_bytes(m, s, tokens)), per_layer * scale
    return kept * scale, per_layer * scale


# torchtitan's per-op selective activation checkpointing keeps the outputs of the ops on its save list
# (torchtitan/models/llama3/infra/parallelize.py ``_save_list`` @6fc499f6f5b32151a799188be2208cfb09faed30: mm,
# the flash and memory-efficient SDPA ops, reduce_scatter_tensor, max) and recomputes the rest in backward. From
# 3b85aa31f (2025-05-14, "Use cudnn backend on B200", torchtitan/models/attention.py ScaledDotProductAttention puts
# SDPBackend.CUDNN_ATTENTION first where has_cuda_capability(10, 0)) the attention on B200 ran as
# aten._scaled_dot_product_cudnn_attention, which the list named only from b39377f9f (2025-12-01, "add all SDPA
# backends to op_sac_save_list"): in between, its output was recomputed rather than kept
ATTENTION_RECOMPUTED = ("pytorch/torchtitan 3b85aa31f (cuDNN attention first on sm100) and b39377f9f (the cuDNN "
                        "SDPA op added to the per-op SAC save list)")


def attention_output_bytes(m: ModelSpec, s: TrainSetup, tokens: float) -> float:
    """The attention op's output in one layer that attends, averaged over the layers, for ``tokens`` tokens on one
    GPU: every query head's values (``n_heads × head_dim``, split over the TP ranks) in the activation dtype; what a
    selective recomputation that reruns the attention op does not keep (``TrainSetup.attention_recomputed``)."""
    v_dim = m.v_head_dim or m.head_dim
    return _attention_layer_share(m) * tokens * m.n_heads * v_dim * act_bytes(s) / s.parallel.tp


def _attention_layer_share(m: ModelSpec) -> float:
    """The share of the layers that attend (the rest are linear-attention layers of a hybrid model)."""
    return m.n_attention_layers / m.n_layers if m.n_layers else 1.0


def logits_bytes(m: ModelSpec, s: TrainSetup, per_entry: float | None = None) -> float:
    """Loss-time logits: 16-bit logits of every token, their fp32 copy and the fp32 log-softmax
    (10 bytes per vocabulary entry per token), and the shifted copy that model code making its own holds beside them
    (``SHIFTED_LOGITS_COPY``: 12 bytes for Qwen v1 and Baichuan2, 14 for ChatGLM; transformers' own models under a
    stated release before 4.49, :func:`hf_release_loss`: 12, or 14 from 4.46); a chunked loss upcasts one chunk
    (of 8) at a time. A stack whose chunked loss stays 16-bit (``data/stacks.csv`` ``chunked_loss_bf16``: LitGPT)
    keeps every chunk's logits until backward, and beside them each chunk's saved log-softmax or, once its
    backward has run, its gradient, plus one chunk's two gradients: 2 + 2 / chunks 16-bit values per entry, for
    chunks of 128 positions (:meth:`LossCase.bytes_per_entry`). A compiled loss (``loss_compiled``) materializes
    neither fp32 tensor: the 16-bit logits, and
    their 16-bit gradient made at the start of backward while every activation is still held, two 16-bit values per
    entry. A stack that keeps one logits buffer and writes their gradient over it (``logits_in_place``: llm.c's
    fused classifier) holds one 16-bit value per entry. Model code that keeps the logits 16-bit, run without
    autocast (:func:`_loss_in_16bit`), holds three 16-bit values per entry. Final-logit softcapping (Gemma 2's
    ``final_logit_softcapping``: ``tanh(logits / cap) * cap`` in LitGPT's GPT.forward, litgpt/model.py
    @2b195c7f5bb39a65dcea7e7e073fc2b0255933dd, and transformers' Gemma2ForCausalLM) adds the tanh output, which
    autograd keeps until backward: one more 16-bit value per entry, except where the model is compiled.
    ``per_entry``: those bytes per entry (``_loss_held(m, s).bytes_per_entry``), when the caller has them."""
    tokens = s.micro_batch * s.seq_len / s.parallel.cp
    if per_entry is None:
        per_entry = _loss_held(m, s).bytes_per_entry
    return tokens * m.vocab * per_entry / s.parallel.tp


@dataclass(frozen=True, slots=True)
class LossHeld:
    """What a setup's loss holds per vocabulary entry per token: its case (:func:`loss_case`) and, where the model caps
    its final logits, their tanh output beside it."""

    case: LossCase
    softcapped: bool
    bytes_per_entry: float


def _loss_held(m: ModelSpec, s: TrainSetup) -> LossHeld:
    """:class:`LossHeld` of the setup: what :func:`logits_bytes` counts and the loss assumption prints."""
    case = loss_case(m, s)
    softcapped = bool(m.final_softcap) and not s.compiled and not stack(s.framework).logits_in_place
    per_entry = case.bytes_per_entry(act_bytes(s), math.ceil(s.seq_len / HEAD_CHUNK_POSITIONS))
    if softcapped:
        per_entry += act_bytes(s)  # the capped logits' tanh output, kept for its gradient
    if s.method == Method.ADAPTER_V2:  # the output layer's AdapterV2Linear keeps its pre-scale logits for the scale
        per_entry += act_bytes(s)
    return LossHeld(case, softcapped, per_entry)


# Remote model code whose loss copies the shifted logits with ``.contiguous()`` while the logits stay referenced, so
# that at the log-softmax the copy is held beside the tensors the standard 10 bytes an entry count (16-bit logits,
# an fp32 copy, the fp32 log-softmax). Bytes the copy takes per entry, by ``model_type``:
# - "qwen": the copy is 16-bit. Qwen (v1) QWenLMHeadModel.forward keeps ``lm_logits`` and passes
#   ``lm_logits[..., :-1, :].contiguous()`` to ``CrossEntropyLoss`` (alibaba/MNN
#   transformers/llm/export/llm_models/Qwen-7B-Chat/modeling_qwen.py @4b3d1f8155c6efce4bebffef88de8cb3c077725e);
#   under autocast cross_entropy casts that copy to fp32 and keeps its fp32 log-softmax: 2 + 2 + 4 + 4 = 12.
# - "baichuan": the same as Qwen (v1). Baichuan2's BaichuanForCausalLM.forward keeps the 16-bit ``logits`` and passes
#   ``logits[..., :-1, :].contiguous()`` to ``CrossEntropyLoss`` (alibaba/MNN
#   transformers/llm/export/llm_models/Baichuan2-7B-Chat/modeling_baichuan.py @4b3d1f8155c6efce4bebffef88de8cb3c077725e,
#   a copy of Baichuan2-7B-Chat's remote code): 12.
# - "chatglm": the copy is fp32 and a 16-bit one comes back. ChatGLM3's ChatGLMForConditionalGeneration.forward
#   casts ``lm_logits.to(torch.float32)``, takes the loss on ``lm_logits[..., :-1, :].contiguous()`` and then makes
#   ``lm_logits.to(hidden_states.dtype)`` while the fp32 logits, the shifted copy and the log-softmax are held
#   (czk1997/chatglm3-copy modeling_chatglm.py @00f2a120452a7e7b874858d8216aca785743c519, a copy of
#   THUDM/chatglm3-6b's code): 4 + 4 + 4 + 2 = 14.
SHIFTED_LOGITS_COPY = {"qwen": LossCase.SHIFTED_COPY, "baichuan": LossCase.SHIFTED_COPY,
                       "chatglm": LossCase.SHIFTED_FP32_COPY}
# the stacks that run a model's own (Hub) modeling code: the HF Trainer, and DeepSpeed driving a transformers model
_RUNS_HUB_MODEL_CODE = frozenset({Framework.HF, Framework.DEEPSPEED})
# transformers' own causal-LM models (LlamaForCausalLM.forward, read in the PyPI wheels) took the loss three ways:
# - before 4.46: ``logits = logits.float()`` rebinds the name, so the 16-bit logits are freed (autograd saves
#   neither the lm_head output nor the cast's input), then ``logits[..., :-1, :].contiguous()`` copies the fp32
#   logits for ``CrossEntropyLoss``: fp32 logits, their shifted fp32 copy and the fp32 log-softmax, 4 + 4 + 4 = 12
#   (the same in 4.36.2 and 4.45.2);
# - 4.46.0 to 4.48.x: huggingface/transformers PR #34191 ("Fix Gradient Accumulation issue", first in 4.46.0) moved
#   the loss to loss/loss_utils.py ``ForCausalLMLoss``, which upcasts and shifts inside the function while the
#   model's forward still holds the 16-bit logits: 2 + 4 + 4 + 4 = 14 (4.46.0, 4.47.1, 4.48.0, 4.48.3);
# - from 4.49.0: PR #35646 ("Optimize ForCausalLMLoss by removing unnecessary contiguous() call") pads the labels by
#   one instead of copying the shifted logits: 2 + 4 + 4 = 10, the count a setup with no stated release gets.
HF_LOSS_IN_LOSS_UTILS_FROM = (4, 46, 0)
HF_LOSS_UNSHIFTED_FROM = (4, 49, 0)


def loss_case(m: ModelSpec, s: TrainSetup) -> LossCase:
    """How the setup's loss holds the logits (:class:`~gpuplan.estimate.loss.LossCase`; :func:`logits_bytes` cites
    the code of each case): decided here once, its bytes and its assumption line follow from it."""
    if stack(s.framework).logits_in_place:
        return LossCase.IN_PLACE
    if s.chunked_loss and stack(s.framework).chunked_loss_bf16:
        return LossCase.CHUNKED_16BIT
    if loss_compiled(s) and not s.chunked_loss:
        return LossCase.COMPILED
    if _loss_in_16bit(m, s):
        return LossCase.NO_UPCAST
    if s.chunked_loss:
        return LossCase.CHUNKED
    return shifted_logits_copy(m, s)


def shifted_logits_copy(m: ModelSpec, s: TrainSetup) -> LossCase:
    """The case of a loss taken in fp32 on the whole sequence: with the shifted ``.contiguous()`` copy of the logits
    that the remote model code makes (``SHIFTED_LOGITS_COPY``) or, for transformers' own models, that the stated
    release made (:func:`hf_release_loss`); :attr:`LossCase.UPCAST` for code that shifts no copy of its own."""
    if s.framework not in _RUNS_HUB_MODEL_CODE or s.precision == "fp32":
        return LossCase.UPCAST  # other stacks run their own model code; in fp32 the standard count holds an fp32 copy
    own = SHIFTED_LOGITS_COPY.get(m.model_type)
    if own is None:
        return LossCase.UPCAST if m.remote_code else hf_release_loss(s)
    return own


def _transformers_release(s: TrainSetup) -> tuple[int, ...] | None:
    """The transformers release the setup states, as a comparable tuple (None: none stated; plans run the current)."""
    return release(s.transformers_version) if s.transformers_version else None


def hf_release_loss(s: TrainSetup) -> LossCase:
    """How transformers' own causal-LM models took the loss under the release the setup states (``HF_LOSS_*_FROM``):
    the current release's :attr:`LossCase.UPCAST` when none is stated (plans run the current one)."""
    found = _transformers_release(s)
    if found is None or found >= HF_LOSS_UNSHIFTED_FROM:
        return LossCase.UPCAST
    return LossCase.HF_LOSS_UTILS if found >= HF_LOSS_IN_LOSS_UTILS_FROM else LossCase.HF_FLOAT_REBOUND


def _loss_assumption(m: ModelSpec, s: TrainSetup) -> Assumption:
    """The loss line of a training estimate: the tensors the loss holds, named by its case, and the bytes per
    vocabulary entry per token :func:`logits_bytes` counts for them."""
    loss = _loss_held(m, s)
    held = f"{loss.case.held} + the capped logits' tanh output" if loss.softcapped else loss.case.held
    return Assumption("loss", held, f"{loss.bytes_per_entry:g} bytes per vocabulary entry per token")


def loss_compiled(s: TrainSetup) -> bool:
    """Whether the cross-entropy runs under torch.compile: as the setup says, else as the stack does for a compiled
    model (``data/stacks.csv`` ``compiles_loss``: torchtitan since 2025-04). Inductor fuses the fp32 upcast,
    log-softmax and gather, and AOTAutograd's min-cut partitioner saves the 16-bit logits and a per-token
    log-sum-exp rather than the fp32 log-softmax (Horace He, "Min-cut optimal(*) recomputation (i.e. activation
    checkpointing) with AOTAutograd", dev-discuss.pytorch.org, 2022; pytorch/pytorch
    torch/_functorch/partitioners.py ``min_cut_rematerialization_partition``)."""
    if s.compiled_loss is not None:
        return s.compiled_loss
    return s.compiled and stack(s.framework).compiles_loss


# Model code that takes the cross-entropy of its 16-bit logits without casting them to fp32 (transformers' own models
# call ``logits.float()`` first): Qwen (v1) remote code, QWenLMHeadModel.forward, ``shift_logits =
# lm_logits[..., :-1, :].contiguous()`` then ``CrossEntropyLoss()`` (alibaba/MNN
# transformers/llm/export/llm_models/Qwen-7B-Chat/modeling_qwen.py @4b3d1f8155c6efce4bebffef88de8cb3c077725e, a copy
# of the Qwen-7B-Chat repository's code)
LOGITS_KEPT_16BIT = frozenset({"qwen"})


def _loss_in_16bit(m: ModelSpec, s: TrainSetup) -> bool:
    """Whether the loss runs on 16-bit logits: model code that does not upcast them (``LOGITS_KEPT_16BIT``) and a
    step without torch autocast, whose cross_entropy would run in fp32. Under DeepSpeed the model itself is 16-bit
    and neither the HF Trainer nor Accelerate enables autocast, so the log-softmax stays 16-bit too: transformers
    4.32.0 (the PyPI release Qwen's finetune.py ran on) ``Trainer.__init__`` sets ``use_cuda_amp`` only when
    ``not self.is_deepspeed_enabled`` ("deepspeed and SageMaker Model Parallel manage their own half precision"),
    and huggingface/accelerate src/accelerate/accelerator.py @v0.24.0 (00301b27) ``Accelerator.__init__`` sets
    ``native_amp`` (the autocast ``prepare_model`` wraps forward in) for fp16 and bf16 only when the distributed type
    is not DEEPSPEED or MEGATRON_LM (the same at v0.21.0 and v0.25.0). A setup that states it (``loss_16bit``)
    decides, as a training loop with its own criterion over the 16-bit logits of a model run without autocast does."""
    if s.loss_16bit is not None:
        return s.loss_16bit and s.precision != "fp32"
    return m.model_type in LOGITS_KEPT_16BIT and _deepspeed_optimizer(s) and s.precision != "fp32"


def previous_outputs_bytes(m: ModelSpec, s: TrainSetup) -> tuple[float, float]:
    """What a stack whose loop keeps the previous micro-batch's outputs (``data/stacks.csv``
    ``keeps_previous_outputs``: LitGPT) still holds while the next forward runs: (inputs the previous graph keeps,
    16-bit logits). The logits stay bound until the next forward returns; backward freed the tensors autograd
    saved, but not what a custom autograd function stored on its context: bitsandbytes' MatMul4Bit and
    MatMul8bitLt keep their input A as ``ctx.tensors`` (TimDettmers/bitsandbytes bitsandbytes/autograd/_functions.py
    @29e3420c6de4c62086603aff47107ef378062e91; PyTorch's "Extending torch.autograd" notes say tensors for backward
    belong in ``save_for_backward``, which backward releases). Through the logits' graph every quantized linear's
    input of the previous micro-batch is alive: per token and layer the attention's normed input, the reshaped
    attention output, the MLP's normed input and the product that feeds the down projection, and per token the
    output layer's input where the stack quantizes it. Checkpointed layers keep no graph, so under full
    recomputation only the logits are carried."""
    if not keeps_previous_outputs(s):
        return 0.0, 0.0
    par = s.parallel
    tokens = s.micro_batch * s.seq_len / par.cp
    # transformers before 4.46 rebinds ``logits = logits.float()`` in the forward and returns those fp32 logits
    held = FP32 if loss_case(m, s) == LossCase.HF_FLOAT_REBOUND else act_bytes(s)
    logits = tokens * m.vocab * held / par.tp
    if not (not s.method.trains_every_weight and _bnb_base(s)) or s.recompute == Recompute.FULL:
        return 0.0, logits
    width = m.moe_ffn_hidden * m.n_active_experts + m.shared_ffn_hidden if m.is_moe else m.ffn_hidden
    per_layer = m.q_dim + width + (1 if m.parallel_attn else 2) * m.hidden
    head = m.hidden if stack(s.framework).quantizes_output_layer else 0
    shard = par.tp if par.sequence_parallel else 1
    inputs = tokens * (per_layer * m.n_layers / par.pp + head) * act_bytes(s) / shard
    return inputs, logits


def keeps_previous_outputs(s: TrainSetup) -> bool:
    """Whether the loop keeps the previous step's outputs through the next forward: as the setup says, else as its
    stack's loop does (``data/stacks.csv`` ``keeps_previous_outputs``)."""
    if s.keeps_previous_outputs is not None:
        return s.keeps_previous_outputs
    return stack(s.framework).keeps_previous_outputs


def returned_kv_bytes(m: ModelSpec, s: TrainSetup) -> float:
    """Every layer's keys and values that a training forward returns beside the logits (``returns_kv_cache``):
    transformers' LlamaModel.forward takes ``use_cache`` from the config (true in Llama 2's) and turns it off only
    when its own gradient checkpointing is on, and each decoder layer then returns ``(key_states, value_states)``,
    collected into ``past_key_values`` (huggingface/transformers src/transformers/models/llama/modeling_llama.py
    in the 4.31.0 wheel, LlamaModel.forward and LlamaAttention.forward). Without recomputation those are the tensors
    attention saves anyway; under a recomputation the loop applies itself (a checkpoint wrapper around each layer)
    the layer's saved tensors are dropped but the returned keys and values stay, one 16-bit K and V per KV head,
    token and layer, until the outputs are released."""
    if not s.returns_kv_cache or s.recompute == Recompute.NONE:
        return 0.0
    par = s.parallel
    tokens = s.micro_batch * s.seq_len / par.cp
    values_per_token = kv_bytes_per_token(m, "bf16", par.tp, latent=False) / BYTES_16
    return tokens * values_per_token * act_bytes(s) / par.pp


def fsdp_root_unsharded_bytes(m: ModelSpec, s: TrainSetup) -> float:
    """What FSDP's root unit holds unsharded beyond its own shard, on a stack whose root keeps the parameters outside
    the wrapped blocks (``data/stacks.csv`` ``fsdp_root_unsharded``: LitGPT wraps each Block, so the embedding, the
    output layer and the final norm are the root's): FSDP all-gathers them for the forward and does not reshard the
    root after it, with the intention that backward uses them at once (pytorch/pytorch
    torch/distributed/fsdp/_runtime_utils.py @00ae0bc91ac2c1718d1baa193d9d299e2b82776c, ``_post_forward_reshard``:
    only a non-root unit frees its unsharded parameters after forward), so they stand in 16-bit through forward and
    backward, at both peaks. ZeRO-3 without pipeline stages (which split those parameters between the first and
    last stage), and a 16-bit base only (a quantized base's output layer is held in its own format)."""
    par = s.parallel
    if (par.zero < 3 or par.dp <= 1 or par.pp > 1 or not stack(s.framework).fsdp_root_unsharded or s.base_quant
            or s.method.quantizes_base):
        return 0.0
    outside = max(0.0, count_params(m).total + untied_head_params(m, s) - m.n_layers * per_layer_params(m))
    return outside * BYTES_16 * (1 - 1 / par.dp) / par.tp


def accumulates_unsharded_grads(s: TrainSetup) -> bool:
    """Whether gradient accumulation under FSDP holds the whole model's gradients on every GPU: a stack whose loop
    runs the accumulating micro-batches in FSDP's ``no_sync`` (``data/stacks.csv`` ``fsdp_no_sync_accumulation``:
    LitGPT, through Lightning Fabric's ``no_backward_sync``). Inside it FSDP reduces nothing and accumulates the full
    model gradients instead of gradient shards until the step's last micro-batch (pytorch/pytorch
    torch/distributed/fsdp/fully_sharded_data_parallel.py @005df1d67cc1ef418f8de75e9a9cbe860288a8ed,
    ``FullyShardedDataParallel.no_sync``), so from the second micro-batch on they stand beside the sharded
    weights and optimizer states through forward and backward."""
    return s.grad_accum > 1 and s.parallel.zero >= 2 and stack(s.framework).fsdp_no_sync_accumulation


def _deepspeed_optimizer(s: TrainSetup) -> bool:
    """Whether DeepSpeed's optimizer wraps the step: always on the DeepSpeed stack, and for the HF Trainer's stack
    with ZeRO (gpuplan's HF-based exports pass ZeRO as a DeepSpeed config). It keeps an fp32 master copy and fp32
    states of 16-bit weights whatever dtype the model was loaded in (deepspeed/runtime/zero/stage_1_and_2.py
    single_partition_of_fp32_groups, stage3.py fp32_partitioned_groups_flat, bf16_optimizer.py fp32 groups)."""
    return s.framework is Framework.DEEPSPEED or (s.framework is Framework.HF and s.parallel.zero >= 1)


def zero_bucket_bytes(s: TrainSetup) -> float:
    """DeepSpeed ZeRO-1/2's gradient reduce buffers: with contiguous_gradients (the default) every backward
    starts by allocating ``reduce_bucket_size`` elements in the parameters' 16-bit dtype, and a second buffer with
    overlap_comm, whatever the number of trainable parameters, and frees them after the micro-batch's reduction
    (deepspeed/runtime/zero/stage_1_and_2.py @v0.11.1 (e9503fe4), ``DeepSpeedZeroOptimizer.backward``:
    ``ipg_buffer``; ``independent_gradient_partition_epilogue`` → ``_release_ipg_buffers``). They are allocated
    while the loss and the logits are still held, so they stand at either peak. ZeRO-3 and FSDP bucket
    differently (not modelled)."""
    if not (_deepspeed_optimizer(s) and s.parallel.zero in (1, 2)):
        return 0.0
    width = 4.0 if s.precision == "fp32" else BYTES_16
    return (2 if s.overlap_comm else 1) * s.reduce_bucket_size * width


def state_bytes(s: TrainSetup) -> tuple[float, float, float, float]:
    """Bytes per *trainable* parameter of (weights, gradients, fp32 master copy, optimizer states; AdaLoRA's with its
    rank allocator's buffers, ``ADALORA_IMPORTANCE_BUFFERS``)."""
    if s.precision == "bf16" and _deepspeed_optimizer(s):  # 16-bit weights; fp32 master and states
        weight, grad, master, state_width = 2.0, 2.0, 4.0, 4.0
    elif s.precision == "bf16":  # pure 16-bit: states in the parameter dtype (torch AdamW keeps them so)
        weight, grad, master, state_width = 2.0, 2.0, 0.0, 2.0
    elif s.precision == "fp32":
        weight, grad, master, state_width = 4.0, 4.0, 0.0, 4.0
    elif s.framework.fp32_master:  # 16-bit params and grads + fp32 master (ZeRO paper)
        weight, grad, master, state_width = 2.0, 4.0 if s.framework.fp32_grad_buffer else 2.0, 4.0, 4.0
    else:  # torch AMP / FSDP mixed precision (also with float8 linears): fp32 params, fp32 grads
        weight, grad, master, state_width = 4.0, 4.0, 0.0, 4.0
    n_states = {"adamw": 2, "paged-adamw": 2, "adamw-8bit": 2, "paged-adamw-8bit": 2, "sgd": 0,
                "sgd-momentum": 1, "adafactor": 0}[s.optimizer]
    if "8bit" in s.optimizer:
        state_width = 1.0
    buffers = ADALORA_IMPORTANCE_BUFFERS * weight if s.method == Method.ADALORA else 0.0
    return weight, grad, master, n_states * state_width + buffers


# The HF Trainer's default ``optim`` by transformers release: "adamw_hf" (transformers' own AdamW, one parameter at a
# time) until huggingface/transformers PR #25109 ("Change default from adamw_hf to adamw_torch", merged 2023-07-26,
# first in 4.32.0); "adamw_torch" (torch.optim.AdamW with neither foreach nor fused given: foreach) from it;
# "adamw_torch_fused" where torch >= 2.8 from PR #37358 ("Defaults to adamw_torch_fused for Pytorch>=2.8", merged
# 2025-07, first in 4.54.0), which a setup with no stated release gets (plans run the current one). Both releases
# checked in the published wheels' training_args.py: default_optim is adamw_hf in 4.31.0 and adamw_torch in 4.32.0;
# 4.53.3 has no torch >= 2.8 branch, 4.54.0 sets adamw_torch_fused under it.
HF_OPTIM_TORCH_FROM = (4, 32, 0)
HF_OPTIM_FUSED_FROM = (4, 54, 0)


def adam_step(s: TrainSetup) -> str:
    """How the setup's AdamW step runs (``types.ADAM_STEPS``): the one it states, else its stack's
    (``data/stacks.csv`` ``adam_step``), the HF Trainer's by the stated transformers release (``HF_OPTIM_*``)."""
    step = s.adam_step or stack(s.framework).adam_step
    if step != "trainer":
        return step
    found = _transformers_release(s)
    if found is None or found >= HF_OPTIM_FUSED_FROM:
        return "fused"
    return "foreach" if found >= HF_OPTIM_TORCH_FROM else "per-tensor"


def optimizer_step_bytes(s: TrainSetup, state_b: float, params: float) -> float:
    """The temporaries torch's foreach AdamW holds during the step beside the gradients and states, for ``params``
    trainable parameters on the GPU with ``state_b`` bytes of Adam states each. ``_multi_tensor_adamw`` makes
    ``exp_avg_sq_sqrt = torch._foreach_sqrt(device_exp_avg_sqs)``, one tensor per parameter in the states' dtype,
    for a parameter group's parameters of one device and dtype at once, and frees it at the group's end
    (pytorch/pytorch torch/optim/adamw.py @v2.0.0; torch/optim/adam.py ``_multi_tensor_adam`` once AdamW became
    Adam with decoupled weight decay); torch.optim.AdamW takes foreach on CUDA when neither foreach nor fused is
    given (torch/optim/optimizer.py @v2.0.0, ``_default_to_fused_or_foreach``). Counted for the whole trainable
    set, which one weight-decay group holds but for norms and biases. A fused kernel (torch ``fused=True``,
    DeepSpeed's FusedAdam and CPU Adam, Apex/Transformer Engine FusedAdam) and bitsandbytes' 8-bit and paged Adam
    update in place; a per-tensor loop holds one tensor's worth (not counted). Where DeepSpeed's optimizer wraps
    the step it is taken as DeepSpeed's FusedAdam (a config's optimizer section); ZeRO/FSDP shards: the local
    shard's."""
    if (s.optimizer != "adamw" or s.fused_optimizer_step or s.parallel.offload_optimizer or _deepspeed_optimizer(s)
            or adam_step(s) != "foreach" or s.method == Method.GALORE):  # GaLoreAdamW: one parameter at a time
        return 0.0
    return state_b / 2 * params  # exp_avg and exp_avg_sq: one of the two states' width


def parameter_terms(m: ModelSpec, s: TrainSetup) -> tuple[float, float, tuple[float, float, float, float], float,
                                                             float]:
    """(all parameters, trainable ones, :func:`state_bytes`, trainable parameters per GPU before and after ZeRO /
    the distributed optimizer shards them over the data-parallel ranks), kept per model and the setup fields they
    read: a training search sizes the micro-batches of each layout, which share them. Per GPU: the dense part
    split TP × PP, a mixture-of-experts model's routed experts EP × PP (moe_train.gpu_params). They are also kept
    per model and setup object: its memory, optimizer step and communication ask for them with the same setup,
    and the identities are cheaper to look up than the fields (a layout and two enums hashed in Python)."""
    found = _setup_parameters.get(m, s, None, ())
    if found is not None:
        return found
    key = (s.parallel, s.method, s.precision, s.framework, s.optimizer, s.lora_rank, s.lora_targets,
           s.train_embeddings, s.prefix_len, s.trainable_layers, s.adapter_prompt_len, s.adapter_start_layer)
    found = _parameters.get(m, None, None, key)
    if found is None:
        train = trainable_params(m, s)
        found = _parameters.put(m, None, None, key, (
            count_params(m).total, train, state_bytes(s), gpu_params(m, s, train), gpu_params(m, s, train,
                                                                                               sharded=True)))
    return _setup_parameters.put(m, s, None, (), found)


_ParameterTerms = tuple[float, float, tuple[float, float, float, float], float, float]
_parameters: IdentityMemo[_ParameterTerms] = IdentityMemo(1024)
_setup_parameters: IdentityMemo[_ParameterTerms] = IdentityMemo()


class MemoryTerms(NamedTuple):
    """The numbers of a training-memory estimate (:func:`training_memory_terms`) before they are made into one:
    a search that sizes hundreds of setups reads only the bytes they need (``job.training_needed_bytes``) and makes
    the estimate of the few it keeps (:meth:`estimate`)."""

    parts: tuple[tuple[str, float], ...]  # the breakdown's, in bytes
    trained: tuple[float, float, float, float, float]  # TrainedParts' fields
    floor_bytes: float  # Floor.value: the step's tensors, or the load's where quantizing the base needs more
    loading: bool  # a load workspace is among the parts (the floor gives it back)

    @property
    def total(self) -> float:
        return sum([v for _, v in self.parts])  # Breakdown.total: the same sum in the same order

    def estimate(self, cal: Calibration, assumptions: tuple[Assumption, ...] = ()) -> Estimate:
        floor = Floor(self.floor_bytes, cal.band("training_memory_allocated"),
                      ("allocator_slack", *(("load_workspace",) if self.loading else ())))
        return Estimate(Breakdown("bytes", self.parts), cal.band("training_memory"), assumptions,
                        TrainedParts(*self.trained), floor)


def training_memory(m: ModelSpec, s: TrainSetup, cal: Calibration | None = None, describe: bool = True) -> Estimate:
    """Peak memory per GPU of one training / fine-tuning step. ``describe=False`` leaves the assumptions out: the
    same numbers otherwise, for searches that only ask whether it fits."""
    cal = cal or fitted()
    terms, assumptions = _training_memory(m, s, cal, describe)
    return terms.estimate(cal, assumptions)


def training_memory_terms(m: ModelSpec, s: TrainSetup, cal: Calibration, states: TrainingStates | None = None
                          ) -> MemoryTerms:
    """The numbers of ``training_memory(m, s, cal)``, not yet made into an estimate; ``states``:
    ``training_states(m, s, cal)`` or those of a setup that differs from ``s`` only in its micro-batch and gradient
    accumulation, when the caller has them (a search sizes up to four micro-batches of each layout)."""
    return _training_memory(m, s, cal, False, states)[0]


class TrainingStates(NamedTuple):
    """What a training-memory estimate reads of a setup that its micro-batch and gradient accumulation do not
    change (:func:`training_states`): the resident weights, master weights and optimizer states, the gradients
    with and without accumulation, and the fixed workspaces around them."""

    params: _ParameterTerms  # parameter_terms(m, s)
    frozen_bytes: float  # the frozen base on this GPU
    trainable_w: float  # trainable weights on this GPU, with ZeRO-3's gathered layers
    grads_one: float  # the gradients held with one micro-batch per step
    grads_accumulating: float  # with gradient accumulation (FSDP no_sync may keep them unsharded)
    master: float
    optimizer: float
    output_grad: float  # output_grad_bytes(m, s, gradient bytes per parameter)
    keeps_outputs: bool  # keeps_previous_outputs(s)
    loss_per_entry: float  # what the loss holds per vocabulary entry per token (_loss_held)
    rates: _SlackRates
    step_temp: float  # optimizer_step_bytes
    dequant: float
    buckets: float
    overhead: float
    persistent: float  # the resident tensors the allocator's reserve grows with
    transient: float  # quantize_on_load_bytes
    at_load: float  # load_pool_bytes, 0 without a load transient


def training_states(m: ModelSpec, s: TrainSetup, cal: Calibration) -> TrainingStates:
    """The parts of ``training_memory(m, s, cal)`` that do not read ``s.micro_batch`` or ``s.grad_accum``."""
    par = s.parallel
    params = parameter_terms(m, s)
    _, _, (w_b, g_b, master_b, opt_b), whole, sharded = params
    frozen_bytes = frozen_base_bytes(m, s) / (par.dp if par.zero >= 3 else 1)
    zero = par.zero
    trainable_w = w_b * (sharded if zero >= 3 else whole)
    if zero >= 3:  # layers are all-gathered one or two at a time (prefetch) in 16-bit
        trainable_w += 2 * per_layer_params(m) * BYTES_16 / par.tp + fsdp_root_unsharded_bytes(m, s)
    grads_one = g_b * (sharded if zero >= 2 else whole)
    # accumulates_unsharded_grads(s) with more than one micro-batch a step
    no_sync = zero >= 2 and stack(s.framework).fsdp_no_sync_accumulation
    grads_accumulating = g_b * (sharded if zero >= 2 and not no_sync else whole)
    if s.fused_optimizer_step:  # each parameter's gradient is applied and freed as soon as it is produced
        grads_one = min(grads_one, per_layer_params(m) * g_b / par.tp)
        grads_accumulating = min(grads_accumulating, per_layer_params(m) * g_b / par.tp)
    master = master_b * (sharded if zero >= 1 else whole)
    optimizer = opt_b * (sharded if zero >= 1 else whole) * galore_state_share(m, s, g_b, opt_b)
    if par.offload_optimizer or "paged" in s.optimizer:  # states in host or CUDA-managed memory that spills over
        optimizer, master = 0.0, 0.0
    frozen_share = _reserved_around_base(s) * frozen_bytes
    transient = quantize_on_load_bytes(m, s)
    return TrainingStates(
        params, frozen_bytes, trainable_w, grads_one, grads_accumulating, master, optimizer,
        output_grad_bytes(m, s, g_b), keeps_previous_outputs(s), _loss_held(m, s).bytes_per_entry,
        _slack_rates(s, cal),
        optimizer_step_bytes(s, opt_b, sharded if zero >= 1 else whole), _dequant_workspace(m, s),
        zero_bucket_bytes(s), cal.get("train_overhead_bytes"), frozen_share + trainable_w + master + optimizer,
        transient, load_pool_bytes(s, cal, frozen_bytes + trainable_w, transient) if transient else 0.0)


def _training_memory(m: ModelSpec, s: TrainSetup, cal: Calibration, describe: bool,
                     states: TrainingStates | None = None) -> tuple[MemoryTerms, tuple[Assumption, ...]]:
    """:func:`training_memory`'s numbers, and its assumptions where ``describe`` asks for them (else none);
    ``states``: as :func:`training_memory_terms` takes them."""
    st = states if states is not None else training_states(m, s, cal)
    par = s.parallel
    total, train, (w_b, g_b, master_b, opt_b), _, _ = st.params
    frozen_bytes, trainable_w, master, optimizer = st.frozen_bytes, st.trainable_w, st.master, st.optimizer
    grads = st.grads_accumulating if s.grad_accum > 1 else st.grads_one
    paged = "paged" in s.optimizer
    acts, layer = _activations(m, s, cal)
    logits = logits_bytes(m, s, st.loss_per_entry)
    # With zero_grad(set_to_none=True) and one micro-batch per step, gradients are created during backward
    # while activations are freed: the peak is the larger of (end of forward) and (end of backward).
    # With gradient accumulation the gradients of the previous micro-batch stay through the next forward.
    # Megatron-LM allocates its fp32 gradient buffer once, for the whole run
    coincide = s.grad_accum > 1 or s.framework.persistent_grads
    # Backward starts at the output layer: its weight gradient (vocabulary × hidden, the largest single
    # gradient of a full fine-tune) is made while every activation and the logits are still held. With
    # accumulation that gradient already lives in the kept gradients.
    first_grad = 0.0 if coincide else st.output_grad
    # at the end of backward the first layer's activations are still alive while its gradients are made
    last_layer = min(acts, layer)
    rates = st.rates
    # a loop that keeps the previous micro-batch's outputs runs this forward with them still alive
    carried_acts, carried_logits = previous_outputs_bytes(m, s) if st.keeps_outputs else (0.0, 0.0)
    # returned keys and values: this forward's, and the previous step's where the loop still holds its outputs;
    # such a loop holds this step's through backward too
    kv_now = returned_kv_bytes(m, s)
    kv_carried = kv_now if st.keeps_outputs else 0.0
    kv_in_backward = kv_carried
    at_forward_end = acts + carried_acts + logits + carried_logits + kv_now + kv_carried
    # 16-bit copies of quantized matrices that autograd saved (same shapes every step, like the gradients)
    saved_at_forward_end, saved_in_backward = saved_dequantized_bytes(m, s)
    head_copy = output_layer_cast_bytes(m, s)  # freed when backward passes the output layer, first
    grads_at_forward_end = grads if coincide else first_grad
    # what each moment holds: its tensors and the allocator's pool around them
    grad, by_length = grads + saved_in_backward, last_layer + kv_in_backward
    held_in_backward = grad + by_length + _slack(rates, by_length, grad)
    grad, by_length = grads_at_forward_end + saved_at_forward_end + head_copy, at_forward_end
    held_at_forward_end = grad + by_length + _slack(rates, by_length, grad)
    peak_in_backward = held_in_backward > held_at_forward_end
    grads_at_peak = grads if peak_in_backward else grads_at_forward_end
    saved_at_peak = saved_in_backward if peak_in_backward else saved_at_forward_end
    head_copy_at_peak = 0.0 if peak_in_backward else head_copy
    acts_at_peak, logits_at_peak = ((last_layer, 0.0) if peak_in_backward else
                                    (acts + carried_acts, logits + carried_logits))
    kv_at_peak = kv_in_backward if peak_in_backward else kv_now + kv_carried
    # after the last backward, activations and logits are freed and the optimizer step's temporaries stand beside
    # every gradient: the peak where they outweigh what backward held with the pool around it. The caching
    # allocator serves them from the blocks backward left cached, so the step adds no pool of its own beyond the
    # share of the resident tensors (universal-llm-trainer reads 40 GB reserved for Phi-3-mini's full fine-tune on
    # A100, H100 and RTX PRO 6000 alike: its bf16 weights, gradients, Adam states and one state-sized temporary
    # are 38.2 GB, and the CUDA context the rest)
    step_temp = st.step_temp
    at_step = bool(step_temp) and grads + step_temp + kv_in_backward > max(held_in_backward, held_at_forward_end)
    if at_step:
        grads_at_peak, saved_at_peak, head_copy_at_peak, acts_at_peak, logits_at_peak = grads, 0.0, 0.0, 0.0, 0.0
        kv_at_peak = kv_in_backward
    step_at_peak = step_temp if at_step else 0.0
    dequant, buckets, overhead = st.dequant, st.buckets, st.overhead
    tensors = (("weights", frozen_bytes + trainable_w), ("gradients", grads_at_peak), ("master_weights", master),
               ("optimizer", optimizer), ("activations", acts_at_peak), ("logits", logits_at_peak),
               ("dequant", dequant), *((("dequantized_saved", saved_at_peak),) if saved_at_peak else ()),
               *((("kv_cache", kv_at_peak),) if kv_at_peak else ()),
               *((("output_layer_copy", head_copy_at_peak),) if head_copy_at_peak else ()),
               *((("optimizer_temporaries", step_at_peak),) if step_at_peak else ()),
               *((("zero_buckets", buckets),) if buckets else ()))
    persistent = st.persistent
    transient_at_peak = 0.0 if at_step else grads_at_peak + saved_at_peak + head_copy_at_peak
    slack = _slack(rates, acts_at_peak + logits_at_peak + kv_at_peak, transient_at_peak, persistent)
    # what loading left cached above the step's own pool, which the step reuses (0 where loading needs less)
    resident, transient, at_load = frozen_bytes + trainable_w, st.transient, st.at_load
    loading = max(0.0, at_load - sum([v for _, v in tensors]) - slack)
    parts = (*tensors, *((("load_workspace", loading),) if loading else ()), ("allocator_slack", slack),
             ("overhead", overhead))
    # the step's tensors, or the load's where quantizing the base needs more at once
    needed = max(sum([v for _, v in parts]) - slack - loading, resident + transient + overhead)
    terms = MemoryTerms(parts, (train, total, grads, acts, logits), needed, bool(loading))
    if not describe:
        return terms, ()
    assumptions: tuple[Assumption, ...] = (
        Assumption("trainable parameters", f"{train:,.0f} of {total:,.0f} ({s.method})", _method_source(s)),
        Assumption("bytes per trainable parameter",
                   f"weights {w_b:g} + grads {g_b:g} + master {master_b:g} + optimizer {opt_b:g} ({s.precision}, "
                   f"{s.optimizer}, {s.framework})", "Rajbhandari et al. 2020 (ZeRO), sec. 3.1"),
        Assumption("parallelism", par.describe(), "ZeRO stage shards optimizer (1), gradients (2), weights (3)"),
        Assumption("activations", f"recompute {s.recompute}, flash attention {'on' if s.flash_attention else 'off'}"
                   ", fitted implementation factor", "Korthikanti et al. 2022 sec. 4.1, re-derived"),
        Assumption("modeling code", describe_stack(m, s), stack(s.framework).source),
        _loss_assumption(m, s),
        Assumption("overhead", fmt_bytes(overhead), "fitted on training-memory rows (bench/fit.py)"),
        Assumption("allocator slack", (
            f"{cal.get('allocator_slack'):.0%} of activations, logits and gradients, and "
            f"{VARYING_LENGTHS_EXTRA_POOL:.0%} of activations and logits more (sequence lengths vary between steps)"
            if s.lengths_vary else
            f"{cal.get('allocator_slack'):.0%} of activations, logits and gradients (the same shapes every step)"),
                   "PyTorch caching-allocator reserve above the allocated peak, fitted (bench/fit.py)"),
        Assumption("allocator reserve on resident tensors",
                   f"{cal.get('allocator_slack_persistent'):.0%} of weights, master weights and optimizer states"
                   + ("; none on the frozen base, which the stack loads in place" if not _reserved_around_base(s)
                      and frozen_bytes else ""),
                   "reserved or device memory above the counted tensors, growing with the resident bytes; fitted "
                   "(bench/fit.py)"),
    )
    assumptions += (Assumption(
        "peak moment", ("optimizer step: every gradient, and foreach AdamW's temporaries of "
                        f"{fmt_bytes(step_temp)}" if at_step else
                        "end of backward: gradients complete, one layer's activations left" if peak_in_backward else
                        "end of forward: activations and logits held" + (
                            ", gradients in Megatron's persistent buffer" if s.framework.fp32_grad_buffer else
                            ", gradients in llm.c's persistent buffer" if s.framework.persistent_grads else
                            ", gradients kept across micro-batches" if coincide else
                            ", the output layer's gradient made first" if first_grad else ", gradients not yet made")),
        "torch.optim.AdamW's foreach step (torch/optim/adamw.py _multi_tensor_adamw) after PyTorch's backward"
        if at_step else "PyTorch zero_grad(set_to_none=True); gradient accumulation keeps gradients"),)
    if kv_now:
        assumptions += (Assumption(
            "keys and values returned by the forward",
            f"{fmt_bytes(kv_now)} per step" + (", the previous step's held too" if kv_carried else ""),
            "transformers' use_cache left on outside its own gradient checkpointing (LlamaModel.forward)"),)
    if saved_in_backward:
        assumptions += (Assumption(
            "dequantized weights saved for backward",
            f"{fmt_bytes(saved_in_backward)} per layer in fp16, every layer whose graph is alive",
            "AutoGPTQ QuantLinear: torch.matmul(x, dequantized weight) under autograd (see SAVES_DEQUANTIZED_WEIGHT)"),)
    if paged or par.offload_optimizer:
        assumptions += (Assumption("optimizer states", "paged/offloaded: not counted on the GPU",
                                   "bitsandbytes paged optimizers use CUDA managed memory that spills to the host"),)
    assumptions += (Assumption(
        "memory needed to run", f"{fmt_bytes(needed)}: the tensors and the CUDA context; the allocator's cache "
        "above them is given back when memory runs short", ALLOCATOR_GIVES_BACK),)
    return terms, assumptions


def allocator_slack_bytes(s: TrainSetup, cal: Calibration, by_length: float, grads: float,
                          persistent: float = 0.0) -> float:
    """The caching allocator's pool above the allocated peak: a fitted share of what comes and goes every step
    (``by_length``: activations and logits, whose shapes follow the sequence length; ``grads``: gradients), with
    varying lengths one more set of the length-dependent tensors (``VARYING_LENGTHS_EXTRA_POOL``), and a smaller
    fitted share of the resident tensors (``persistent``: weights, master weights, optimizer states).

    The resident share is an empirical term, fitted on bench/cases.yaml: device and reserved readings stand above
    every counted tensor, while PyTorch's allocated peak (LitGPT's counter) needs none. Qwen's profiling table, run
    with its finetune.py LoRA (rank 64), stands 0.9-3.3 GiB above the counted tensors at 256 tokens from
    Qwen-1.8B to Qwen-72B (docs/estimators.md): growing with the model, but far less than the share fitted while
    those rows ran at rank 8 (0.22) gave the larger ones (12.2 GiB for Qwen-72B Q-LoRA). PyTorch's notes name the
    mechanisms without a formula: reserved memory is not returned to the device, and the allocator rounds and
    splits the segments it caches, including those freed while a model loads and converts its weights.

    PyTorch's caching allocator keeps freed blocks for reuse and splits a cached block to serve a smaller request
    (pytorch/pytorch c10/cuda/CUDACachingAllocator.cpp; docs/source/notes/cuda.rst, "Memory management":
    expandable segments exist because jobs whose allocation sizes change, e.g. with the batch or sequence, leave
    the pool fragmented). With the same tensor shapes every step (packed sequences, or every sample padded to
    the maximum length) each step reuses the blocks of the previous one; with dynamic padding each new length
    carves the cached blocks differently and the pool grows past the peak; gradients keep their shapes."""
    return _slack(_slack_rates(s, cal), by_length, grads, persistent)


_SlackRates = tuple[float, float, bool] | None


def _slack_rates(s: TrainSetup, cal: Calibration) -> _SlackRates:
    """What :func:`allocator_slack_bytes` reads of the setup and calibration: (the share of what comes and goes,
    the share of the resident tensors, whether lengths vary), None for exact-size device allocations made once
    (llm.c); a training-memory estimate asks three times."""
    if not stack(s.framework).caching_allocator:
        return None
    return cal.get("allocator_slack"), cal.get("allocator_slack_persistent"), s.lengths_vary


def _slack(rates: _SlackRates, by_length: float, grads: float, persistent: float = 0.0) -> float:
    """:func:`allocator_slack_bytes` with its setup and calibration read (``rates``: :func:`_slack_rates`)."""
    if rates is None:
        return 0.0
    share, resident_share, lengths_vary = rates
    extra = VARYING_LENGTHS_EXTRA_POOL * by_length if lengths_vary else 0.0
    return share * (by_length + grads) + resident_share * persistent + extra


def _reserved_around_base(s: TrainSetup) -> float:
    """1 where the frozen base's weights carry the allocator's resident reserve, 0 where they cannot: a stack that
    builds a 16-bit base in its training dtype on the GPU and copies the checkpoint into it (``data/stacks.csv``
    ``loads_base_in_place``: torchtune's recipes, whose log after model init shows 13.98 GB reserved for 13.96 GB
    allocated, LoRA on Llama-2-7B, docs/source/tutorials/qlora_finetune.rst @0914d5cf) frees no segment around
    them. A base quantized while it loads (QLoRA: the 16-bit matrices and the quantizer's temporaries are freed
    between the packed ones) keeps the reserve: the same log shows 9.13 GB reserved for a ~4 GB NF4 Llama-2-7B."""
    quantized_on_load = bool(s.base_quant) or s.method.quantizes_base
    return 0.0 if stack(s.framework).loads_base_in_place and not quantized_on_load else 1.0


def output_grad_bytes(m: ModelSpec, s: TrainSetup, grad_bytes: float) -> float:
    """The output layer's weight gradient (tied or not, vocabulary × hidden), split by vocabulary-parallel TP;
    zero when the method freezes the output layer."""
    if not trains_embeddings(s):
        return 0.0
    return m.vocab * m.hidden * grad_bytes / s.parallel.tp


def frozen_base_bytes(m: ModelSpec, s: TrainSetup) -> float:
    """The frozen model's weights on one TP × PP shard (before any ZeRO-3 sharding): 16-bit, fp32 where the stack
    loads the base in fp32 and autocasts (``fp32_base``: llm-foundry's hf_base.py loads with ``torch_dtype`` =
    ``_MASTER_WEIGHTS_PRECISION`` = float32, models/consts.py, mosaicml/llm-foundry @8c8dd48f), or quantized
    (QLoRA NF4, ChatGLM int4/int8 for P-tuning); zero for a full fine-tune."""
    if s.method.trains_every_weight:
        return 0.0
    fmt_name = s.base_quant or ("bnb-nf4-dq" if s.method.quantizes_base else None)
    if s.method in (Method.FREEZE, Method.LISA):
        frozen_params = count_params(m).total - trainable_params(m, s)
        return frozen_params * act_bytes(s) / (s.parallel.tp * s.parallel.pp)
    fmt = weight_format(fmt_name) if fmt_name else weight_format("fp32" if s.precision == "fp32" or s.fp32_base
                                                                 else "bf16")
    return weights_bytes(m, fmt, s.parallel.tp, s.parallel.pp) + _output_layer_change(m, s, fmt, fmt_name is not None)


def _output_layer_change(m: ModelSpec, s: TrainSetup, fmt: WeightFormat, quantized_base: bool) -> float:
    """How the stack's handling of the output layer changes the frozen base's bytes (``data/stacks.csv``): a
    stack that quantizes every linear stores an untied output layer in the base's format, not 16-bit; one that
    unties a tied output layer holds it as a second matrix (LitGPT loads ``lm_head.weight`` as a copy of
    ``wte.weight``)."""
    st = stack(s.framework)
    head = m.vocab * m.hidden / s.parallel.tp
    quantized = quantized_base and st.quantizes_output_layer
    head_bytes = head * (fmt.bytes_per_weight if quantized else act_bytes(s))
    if m.tied_embeddings:
        return head_bytes if st.unties_embeddings else 0.0
    return head_bytes - head * act_bytes(s) if quantized else 0.0


# Quantized formats whose training kernels under transformers dequantize a whole matrix to fp16 and multiply it with
# torch.matmul under autograd, which saves that fp16 matrix for the input's gradient: AutoGPTQ's QuantLinear
# (auto_gptq/nn_modules/qlinear/qlinear_cuda_old.py @179776bd1d97a2e7f84b72318630f43719647a11, forward: from
# kernel_switch_threshold = 128 rows on, ``weight = (scales * (weight - zeros))`` then ``out = torch.matmul(x.half(),
# weight)``; the kernel transformers' GPTQ integration trains with once exllama is disabled, as LoRA on a GPTQ
# checkpoint requires). bitsandbytes' MatMul4Bit dequantizes inside a custom autograd Function that keeps only the
# packed weight, and torchao's linear_nf4 saves the NF4 weight: neither saves a 16-bit copy.
SAVES_DEQUANTIZED_WEIGHT = frozenset({"gptq-int4", "gptq-int8"})


def saved_dequantized_bytes(m: ModelSpec, s: TrainSetup) -> tuple[float, float]:
    """The fp16 copies of a GPTQ base's matrices that autograd keeps for backward (``SAVES_DEQUANTIZED_WEIGHT``),
    on one GPU: (at the end of the forward pass, at the end of backward). Every layer whose graph is alive holds
    all its quantized matrices in fp16: at the end of the forward pass all layers of the stage, none under full
    recomputation (checkpointed layers keep no graph); while one layer's gradients are made, that layer's (the
    recomputed one, or the first)."""
    if s.method.trains_every_weight or (s.base_quant or "") not in SAVES_DEQUANTIZED_WEIGHT:
        return 0.0, 0.0
    p = count_params(m)
    per_layer = (p.attention + p.mlp + p.experts + p.shared_experts) / m.n_layers * BYTES_16 / s.parallel.tp
    layers = m.n_layers / s.parallel.pp * min(s.parallel.pp, s.grad_accum)
    return (0.0 if s.recompute == Recompute.FULL else layers * per_layer), per_layer


def output_layer_cast_bytes(m: ModelSpec, s: TrainSetup) -> float:
    """The bf16 copy of a frozen fp16 output layer that autocast makes in every forward pass, on one GPU, where the
    quantized base's other modules are stored in fp16 while training computes in bf16 (``TrainSetup.base_fp16``).
    Autocast casts a linear's fp16 weight to bf16 for the matmul in every forward (pytorch/pytorch
    aten/src/ATen/autocast_mode.cpp @cfed411fae0c18aa3d20351bc8dc8e1218db77ff, ``cached_cast`` caches only fp32
    leaves that need a gradient); the matmul
    keeps that copy to compute its input's gradient, so it lives from the output layer's forward until backward
    passes it: through the logits and the loss. transformers stores a bitsandbytes model's modules that it does not
    quantize in fp16 when ``from_pretrained`` gets no ``torch_dtype`` (src/transformers/quantizers/quantizer_bnb_4bit.py
    @d91fa5a784e416ca685d5ba76d7bc490eb008b33, ``update_dtype``; from_pretrained did the same before the quantizer
    classes), and ms-swift's Qwen (v1) loader passes none (swift/llm/utils/model.py
    @306fa15a08e625bca0d01f019e6be6ab27669461, ``get_model_tokenizer_qwen`` sets ``torch_dtype = None``) while its
    trainer runs bf16. Zero where the stack quantizes the output layer or trains it."""
    if not s.base_fp16 or s.precision == "fp16-mixed" or s.method.trains_every_weight or trains_embeddings(s):
        return 0.0
    if stack(s.framework).quantizes_output_layer and bool(s.base_quant or s.method.quantizes_base):
        return 0.0
    return m.vocab * m.hidden * BYTES_16 / s.parallel.tp


# Bytes per weight that unpacking one quantized matrix holds at once, where it is more than its 16-bit copy. AutoGPTQ's
# QuantLinear trains through its Python path (auto_gptq/nn_modules/qlinear/qlinear_cuda_old.py
# @179776bd1d97a2e7f84b72318630f43719647a11, forward): ``torch.bitwise_right_shift`` of the int32 qweight expanded to
# every weight gives an int32 per weight (4 bytes), and ``.to(torch.int8)`` (4-bit; ``torch.int16`` for 8-bit)
# copies it before the int32 is freed: 5 bytes per weight for gptq-int4, 6 for gptq-int8. The later steps hold less
# beyond the fp16 result (the int8 or int16 codes and ``weight - zeros``: 2 or 4 bytes), which autograd saves and
# ``saved_dequantized_bytes`` counts.
UNPACK_BYTES_PER_WEIGHT = {"gptq-int4": 4.0 + 1.0, "gptq-int8": 4.0 + 2.0}


def _dequant_workspace(m: ModelSpec, s: TrainSetup) -> float:
    """A quantized base is dequantized to 16-bit one matrix at a time: the largest linear of a layer, or the
    output layer (vocabulary × hidden) where the stack quantizes it too; a GPTQ base's unpacking holds more than the
    16-bit copy while it runs (``UNPACK_BYTES_PER_WEIGHT``), and so does an NF4 base with fp16 statistics
    (:func:`_nf4_cast_bytes_per_weight`)."""
    if not (s.base_quant or s.method.quantizes_base):
        return 0.0
    per_weight = UNPACK_BYTES_PER_WEIGHT.get(s.base_quant or "", BYTES_16) + _nf4_cast_bytes_per_weight(s)
    return _largest_quantized_matrix(m, s) * per_weight / s.parallel.tp


def _largest_quantized_matrix(m: ModelSpec, s: TrainSetup) -> int:
    """Weights in the largest quantized matrix: a layer's largest linear, or the output layer (vocabulary ×
    hidden) where the stack quantizes it too."""
    width = m.moe_ffn_hidden if m.is_moe else m.ffn_hidden
    largest = max(m.hidden * width, m.hidden * m.q_dim)
    if stack(s.framework).quantizes_output_layer:
        largest = max(largest, m.vocab * m.hidden)
    return largest


# Bytes per weight that torchao's NF4Tensor before 0.2 holds while it quantizes a matrix whole (pytorch/ao
# torchao/dtypes/nf4tensor.py @v0.1, ff2889540075e8c8d0a2f4b9900da1b9136ae376): ``convert_to_norm_float_weight``
# scales the blocks (``blocks / scales``: a 16-bit copy, 2 bytes) and ``quantize_tensor_nearest`` takes
# ``(value.unsqueeze(-1) - nf4).abs()``, a weights × 16 bf16 difference (32 bytes) and its absolute value (32 more)
# at once; torchtune's ``copy_`` override, through which ``load_state_dict`` fills each NF4 weight, first moves the
# checkpoint's 16-bit matrix to the GPU (``args[0][1].to(dest_tensor.device)``,
# torchtune/utils/_register_nf4_dispatch_ops.py @0914d5cfb5a34bf14a72e36b9ddebc64904763d1: 2 bytes). From 0.2 the
# comparison runs 1024² weights at a time (pytorch/ao #196, 6081796bc00e8db4e17a337ae337e66d366444e4, 2024-05-01),
# a few tens of MB whatever the matrix.
NF4_WHOLE_MATRIX_BYTES_PER_WEIGHT = 2.0 + 2.0 + 2 * 16 * BYTES_16


def quantize_on_load_bytes(m: ModelSpec, s: TrainSetup) -> float:
    """What quantizing the base holds at once while the model loads, beyond the weights already resident, where it
    is more than a step's transients (``TrainSetup.nf4_whole_matrix``; 0 otherwise): the largest matrix at
    ``NF4_WHOLE_MATRIX_BYTES_PER_WEIGHT``."""
    base = s.base_quant or ("bnb-nf4-dq" if s.method.quantizes_base else "")
    if not s.nf4_whole_matrix or s.method.trains_every_weight or "nf4" not in base:
        return 0.0
    return _largest_quantized_matrix(m, s) * NF4_WHOLE_MATRIX_BYTES_PER_WEIGHT / s.parallel.tp


def load_pool_bytes(s: TrainSetup, cal: Calibration, resident: float, transient: float) -> float:
    """The caching allocator's pool when the model has loaded: the resident weights and the quantizer's transient
    (:func:`quantize_on_load_bytes`), each with the allocator's fitted share above it, as a step's tensors carry
    (``allocator_slack``, ``allocator_slack_persistent``). PyTorch keeps the freed blocks cached and the step reuses
    them, so a reserved reading over the whole run stands at least this high: torchtune's QLoRA tutorial logs
    9.13 GB reserved right after model init and 9.29 GB while training (Llama-2-7B,
    docs/source/tutorials/qlora_finetune.rst @0914d5cf)."""
    if not stack(s.framework).caching_allocator:
        return resident + transient
    return (resident + transient + cal.get("allocator_slack") * transient
            + cal.get("allocator_slack_persistent") * resident)


def _nf4_cast_bytes_per_weight(s: TrainSetup) -> float:
    """The compute-dtype copy of a dequantized NF4 matrix, made while its fp16 dequantization is alive, where the
    base was quantized from an fp16 copy (:func:`nf4_stats_fp16`): the quantization state then records fp16,
    ``F.dequantize_4bit`` returns fp16, and bitsandbytes' MatMul4Bit casts it with ``.to(A.dtype)`` in forward and
    ``.to(grad_output.dtype)`` in backward (bitsandbytes/autograd/_functions.py @0.42.0, 4870580f); no copy when the
    compute dtype is fp16 itself (fp16 mixed precision)."""
    if not (_bnb_base(s) and nf4_stats_fp16(s)) or s.precision == "fp16-mixed":
        return 0.0
    return act_bytes(s)


def nf4_stats_fp16(s: TrainSetup) -> bool:
    """Whether the NF4 base was quantized from an fp16 copy, so that its quantization state records fp16: as the
    setup says (a stated bitsandbytes release before 0.43, whose ``Params4bit.cuda`` quantizes
    ``self.data.contiguous().half()`` whatever the checkpoint's dtype: bitsandbytes/nn/modules.py in the
    0.41.3.post2 and 0.42.0 wheels; 0.43.0 quantizes the data in its own dtype), else as the stack does
    (``data/stacks.csv`` ``nf4_stats_fp16``: Lightning Fabric's BitsandbytesPrecision casts to fp16 itself)."""
    if s.nf4_stats_fp16 is not None:
        return s.nf4_stats_fp16
    return stack(s.framework).nf4_stats_fp16


def describe_stack(m: ModelSpec, s: TrainSetup) -> str:
    """What the stack's modeling code keeps that the layer's own tensors do not say (``data/stacks.csv``)."""
    st = stack(s.framework)
    kept = [text for on, text in (
        (st.norm_input_fp32 and not _layer_norm_keeps_16bit(m, s), "norms keep an fp32 copy of their input"),
        (_layer_norm_keeps_16bit(m, s), "LayerNorm keeps its 16-bit input"),
        (st.mha_v_views_qkv and m.kv_dim == m.q_dim, "attention keeps the fused QKV output whole (V is a view)"),
        (st.gelu_single_op and not m.gated_mlp, "the ungated MLP's GELU keeps only its input"),
        (st.expands_kv_heads, "K/V expanded to every query head"),
        (s.method.low_rank and st.adapters_fp32, "fp32 adapters keep an fp32 copy of each adapted input"),
        (padded_adapter_output_bytes(m, s) > 0, "the q and v adapters' output is kept padded to the QKV width"),
        (s.method.low_rank and s.lora_dropout > 0,
         f"LoRA dropout {s.lora_dropout:g}: a dropped copy and a 1-byte mask per adapter input"),
        (_bnb_base(s), "bitsandbytes matmuls keep every quantized linear's input"),
        (not s.method.trains_every_weight and st.quantizes_output_layer
         and bool(s.base_quant or s.method.quantizes_base),
         "the output layer is quantized too"),
        (st.unties_embeddings, "a tied output layer is held (and in a full fine-tune trained) as its own matrix"),
        (st.keeps_previous_outputs, "the previous micro-batch's logits and their graph live through the next forward"),
        (accumulates_unsharded_grads(s), "FSDP's no_sync keeps the accumulated gradients unsharded until the step"),
        (fsdp_root_unsharded_bytes(m, s) > 0, "FSDP's root unit keeps the embedding and output layer unsharded"),
    ) if on]
    rest = ", ".join(kept) if kept else "only the layer's own tensors"
    return f"{s.framework} modeling code: {rest}"


def _method_source(s: TrainSetup) -> str:
    return {
        "full": "every parameter is trained",
        "lora": f"LoRA (Hu et al. 2021), rank {s.lora_rank}, targets {s.lora_targets}" + _embeddings_note(s),
        "qlora": f"QLoRA (Dettmers et al. 2023): NF4 base + LoRA rank {s.lora_rank}, targets {s.lora_targets}"
                 + _embeddings_note(s),
        "dora": f"DoRA (Liu et al. 2024): LoRA rank {s.lora_rank}, targets {s.lora_targets}, and a trained magnitude "
                "per output feature; PEFT's forward multiplies the input by each adapted weight again and keeps that "
                "product and the adapters' output" + _embeddings_note(s),
        "adalora": f"AdaLoRA (Zhang et al. 2023): P·Λ·Q adapters at initial rank {s.lora_rank}, targets "
                   f"{s.lora_targets}, with the rank allocator's three importance buffers per adapter weight; the "
                   "orthogonal regularizer's rank × rank products not counted" + _embeddings_note(s),
        "galore": f"GaLore (Zhao et al. 2024): every weight trained; Adam states of the {s.lora_targets} linears kept "
                  f"in a rank-{s.lora_rank} projection of their full-size gradients, the projection's periodic SVD "
                  "not counted in the time",
        "lisa": f"LISA (Pan et al. 2024): embedding, output layer and {s.trainable_layers} sampled layers trained at "
                "a time, with gradients and Adam states for those; backward runs through every layer to the embedding",
        "ptuning": f"P-tuning v2 (Liu et al. 2022): prefix of {s.prefix_len} per layer for K and V",
        "adapter": f"LLaMA-Adapter (Zhang et al. 2023) as LitGPT runs it: a {s.adapter_prompt_len}-token prompt and a "
                   f"zero-init gate per layer from layer {s.adapter_start_layer}",
        "adapter-v2": f"LLaMA-Adapter v2 (Gao et al. 2023) as LitGPT runs it: a {s.adapter_prompt_len}-token prompt "
                      f"and a zero-init gate per layer from layer {s.adapter_start_layer}, a bias and a scale on every "
                      "linear, norms trained",
        "freeze": f"freeze: last {s.trainable_layers} layers trained",
    }[s.method]


def _embeddings_note(s: TrainSetup) -> str:
    return "; embedding and output layer trained too (PEFT modules_to_save)" if s.train_embeddings else ""


def gib(x: float) -> float:
    return x / GiB


__all__ = ["inference_memory", "kv_cache_bytes", "lora_params", "mlp_params", "served_adapter_bytes", "training_memory",
           "weights_bytes"]
