"""Exact parameter counts from a :class:`ModelSpec`, as an itemised breakdown.

The count mirrors the module layout of the transformers model class (``sum(p.numel())`` on the meta
device, tied weights once); the test suite checks it against transformers for every bundled preset whose
class ships in transformers, and against published counts for remote-code models.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

from gpuplan.types import ModelSpec


@dataclass(frozen=True, slots=True)
class ParamBreakdown:
    """A model's parameters counted by part."""

    embeddings: int
    attention: int
    mlp: int  # dense MLP layers
    experts: int  # all routed experts
    shared_experts: int  # always-active MoE parts: shared experts, a latent MoE's in and out projections
    router: int
    norms: int
    head: int  # LM head (0 when tied) and other output parts
    active_experts: int  # routed expert parameters one token uses

    @property
    def total(self) -> int:
        return (self.embeddings + self.attention + self.mlp + self.experts + self.shared_experts + self.router
                + self.norms + self.head)

    @property
    def active(self) -> int:
        """Parameters that touch one token: all but the routed experts not chosen."""
        return self.total - self.experts + self.active_experts

    @property
    def non_embedding(self) -> int:
        return self.total - self.embeddings

    def as_dict(self) -> dict[str, int]:
        return {"embeddings": self.embeddings, "attention": self.attention, "mlp": self.mlp,
                "experts": self.experts, "shared_experts": self.shared_experts, "router": self.router,
                "norms": self.norms, "head": self.head, "total": self.total, "active": self.active}


def attention_params(m: ModelSpec) -> int:
    """One layer's attention projections (+ biases, + per-head q/k norms)."""
    if m.is_mla:
        return _mla_params(m)
    q_out = m.q_dim * (2 if m.attn_output_gate else 1)  # the output gate's logits come from q_proj too
    q = m.hidden * q_out + (q_out if m.qkv_bias else 0)
    kv = 2 * (m.hidden * m.kv_dim + (m.kv_dim if m.qkv_bias else 0))
    out = m.q_dim * m.hidden + (m.hidden if m.out_bias else 0)
    qk_norm = 2 * m.head_dim if m.qk_norm else 0
    return q + kv + out + qk_norm


def global_attention_params(m: ModelSpec) -> int:
    """One full-attention layer of a model whose full layers differ from its sliding ones (Gemma 4, transformers
    models/gemma4/modeling_gemma4.py ``Gemma4TextAttention``, 5.24.0: ``global_head_dim``-sized heads,
    ``num_global_key_value_heads`` KV heads, no v_proj when ``attention_k_eq_v``; q and k norms with a scale, the v
    norm without). Other models: :func:`attention_params`."""
    if not m.global_head_dim:
        return attention_params(m)
    q_dim, kv_dim = m.n_heads * m.global_head_dim, (m.global_kv_heads or m.n_kv_heads) * m.global_head_dim
    kv = (1 if m.global_k_eq_v else 2) * m.hidden * kv_dim
    return 2 * m.hidden * q_dim + kv + (2 * m.global_head_dim if m.qk_norm else 0)


def linear_attention_params(m: ModelSpec) -> int:
    """One Gated DeltaNet layer (transformers models/qwen3_5/modeling_qwen3_5.py ``Qwen3_5GatedDeltaNet``, 5.24.0;
    Qwen3-Next fuses the same projections as in_proj_qkvz and in_proj_ba): q, k, v and the output gate z from the
    hidden state, a decay logit a and a write strength b per value head, a depthwise causal convolution over q, k,
    v without bias, per-head dt_bias and A_log, a gated RMSNorm over a value head, and the output projection."""
    if not m.n_linear_layers:
        return 0
    if m.linear_kind == "mamba2":
        return _mamba2_params(m)
    keys, values, heads = m.linear_key_width, m.linear_value_width, m.linear_v_heads
    conv_channels = 2 * keys + values
    projections = m.hidden * (conv_channels + values + 2 * heads) + values * m.hidden
    return projections + conv_channels * m.linear_conv_kernel + 2 * heads + m.linear_v_dim


def _mamba2_params(m: ModelSpec) -> int:
    """One Mamba-2 layer (transformers models/nemotron_h/modeling_nemotron_h.py ``NemotronHMamba2Mixer``, 5.24.0):
    in_proj from the hidden state to the gate z, the convolution's input x, B, C (x is ``mamba_num_heads ×
    mamba_head_dim`` wide, B and C ``n_groups × ssm_state_size`` each) and a step size dt per head; a depthwise causal
    convolution over x, B, C with its bias; per-head dt_bias, A_log and D; a gated RMSNorm over x's width; out_proj
    (without biases: the reader refuses ``use_bias``)."""
    values, heads = m.linear_value_width, m.linear_v_heads
    conv_channels = 2 * m.linear_key_width + values
    projections = m.hidden * (values + conv_channels + heads) + values * m.hidden
    return projections + conv_channels * (m.linear_conv_kernel + 1) + 3 * heads + values


def _mla_params(m: ModelSpec) -> int:
    """DeepSeek-V2/V3 multi-head latent attention (DeepSeek-V2 paper, sec. 2.1)."""
    v_dim = m.v_head_dim or m.head_dim
    if m.q_lora_rank:
        q = m.hidden * m.q_lora_rank + m.q_lora_rank + m.q_lora_rank * m.n_heads * m.head_dim
    else:
        q = m.hidden * m.n_heads * m.head_dim
    kv_a = m.hidden * (m.kv_lora_rank + m.qk_rope_head_dim) + m.kv_lora_rank
    kv_b = m.kv_lora_rank * m.n_heads * (m.qk_nope_head_dim + v_dim)
    out = m.n_heads * v_dim * m.hidden
    # DeepSeek-V3.2's lightning indexer (transformers models/deepseek_v32 ``DeepseekV32Indexer``, 5.24.0): queries
    # from the low-rank query, one shared key head from the hidden state with a LayerNorm, a weight per head
    indexer = (m.q_lora_rank * m.index_heads * m.index_head_dim + m.hidden * m.index_head_dim
               + 2 * m.index_head_dim + m.hidden * m.index_heads) if m.is_sparse_attention else 0
    return q + kv_a + kv_b + out + indexer


def mlp_params(m: ModelSpec, width: int) -> int:
    """One MLP of inner ``width``: gated (gate, up, down) or plain (up, down), with optional biases."""
    n_in = 2 if m.gated_mlp else 1
    weights = (n_in + 1) * m.hidden * width
    biases = (n_in * width + m.hidden) if m.mlp_bias else 0
    return weights + biases


def expert_params(m: ModelSpec) -> int:
    """One routed expert: an MLP ``moe_ffn_hidden`` wide over the hidden state, or over the latent space of a latent
    MoE (transformers ``NemotronHExperts``, 5.24.0: up and down projections of ``moe_latent_size`` × width)."""
    if not m.moe_latent:
        return mlp_params(m, m.moe_ffn_hidden)
    return (3 if m.gated_mlp else 2) * m.moe_latent * m.moe_ffn_hidden


def count_params(m: ModelSpec) -> ParamBreakdown:
    """The itemised count of ``m``, computed once per architecture: the estimators ask for it tens of thousands
    of times in one plan. The same spec object is answered by identity first (hashing a spec of 40 fields was
    12 % of a guarded serving plan); equal specs built apart share the value cache."""
    hit = _by_id.get(id(m))
    if hit is not None and hit[0] is m:  # the entry holds ``m``, so its id cannot have been reused
        return hit[1]
    try:
        found = _cached_count(m)
    except TypeError:  # a spec holding an unhashable value (a hand-built one): count it without the cache
        return _count(m)
    if len(_by_id) >= 1024:
        _by_id.clear()
    _by_id[id(m)] = (m, found)
    return found


_by_id: dict[int, tuple[ModelSpec, ParamBreakdown]] = {}


@lru_cache(maxsize=1024)
def _cached_count(m: ModelSpec) -> ParamBreakdown:
    return _count(m)


def _count(m: ModelSpec) -> ParamBreakdown:
    norm = m.hidden * (2 if m.norm_bias else 1)
    n_moe = m.n_moe_layers
    n_dense = m.n_layers - n_moe - m.n_layers_without_ffn
    embeddings = m.vocab * m.hidden + m.learned_positions * m.hidden + m.token_types * m.hidden
    expert = expert_params(m) if m.is_moe else 0
    shared = mlp_params(m, m.shared_ffn_hidden) if m.shared_ffn_hidden else 0
    shared += 2 * m.hidden * m.moe_latent  # a latent MoE's projections in and out: used by every token
    router = n_moe * (m.hidden * m.n_experts + (m.hidden if m.shared_expert_gate else 0))
    n_norms = m.n_layers * m.norms_per_layer - m.n_layers_without_ffn  # a layer without FFN has no FFN norm
    norms = n_norms * norm + (norm if m.final_norm else 0) + (norm if m.embed_norm else 0)
    head = 0 if m.tied_embeddings else m.vocab * m.hidden
    head += (m.vocab if m.lm_head_bias else 0) + m.extra_params
    return ParamBreakdown(
        embeddings=embeddings,
        attention=(m.n_sliding_layers * attention_params(m) + m.n_full_attention_layers * global_attention_params(m)
                   + m.n_linear_layers * linear_attention_params(m)),
        mlp=n_dense * mlp_params(m, m.ffn_hidden),
        experts=n_moe * m.n_experts * expert,
        shared_experts=n_moe * shared,
        router=router,
        norms=norms,
        head=head,
        active_experts=n_moe * m.n_active_experts * expert,
    )
