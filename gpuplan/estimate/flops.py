"""FLOPs per token of forward and training passes, from the architecture.

Forward: 2 FLOPs per multiply-accumulate of every weight a token touches (2·N_active, LM head included,
embedding lookup excluded) plus attention scores and the weighted sum over the context: 2·2·n_heads·d·c
per layer for a token that attends c positions (Kaplan et al. 2020, table 1; PaLM, Chowdhery et al. 2022,
appendix B). Causal training attends (s+1)/2 positions on average; flash attention skips the masked half.
Backward costs two forwards when weight gradients are needed and one when they are not (frozen base in
LoRA / QLoRA / P-tuning v2: only input gradients); full recomputation adds one more forward. Multi-token
prediction adds, per depth, one more block's and the output head's forward (:func:`mtp_forward_flops_per_token`),
trained like the rest.
"""

from __future__ import annotations

from gpuplan.estimate.memory import adapted_linears, per_layer_params, setup_lora_params
from gpuplan.estimate.params import count_params, global_attention_params, mlp_params
from gpuplan.types import Method, ModelSpec, Recompute, TrainSetup


def matmul_params(m: ModelSpec) -> float:
    """Weights a token multiplies with: active parameters minus embedding tables and norms."""
    p = count_params(m)
    head = m.vocab * m.hidden  # the LM head is a matmul even when tied to the embedding
    return p.attention + p.mlp + p.active_experts + p.shared_experts + p.router + head


def fp8_excluded_params(m: ModelSpec) -> float:
    """Of :func:`matmul_params`, the weights whose matmuls stay 16-bit in FP8 training: the LM head and the MoE
    router. Megatron-Core's output layer is its own ``tensor_parallel.ColumnParallelLinear``, not a Transformer
    Engine module, so the FP8 recipe (applied to the transformer layers) does not reach it
    (NVIDIA/Megatron-LM ``megatron/core/models/gpt/gpt_model.py`` @007562f9413e6bf1ab2fa4e13596ad67c7cab383),
    and its router scores tokens in 16 or 32 bits (``TopKRouter``); torchtitan's float8 converter leaves the
    output projection out (``module_filter_fn=lambda mod, fqn: fqn != "output"``)."""
    return float(m.vocab * m.hidden + count_params(m).router)


def attention_flops_per_token(m: ModelSpec, context: float) -> float:
    """QK^T and AV for one token attending ``context`` positions, all layers (sliding layers capped), plus the
    state update of linear-attention layers, which does not grow with the context: in the recurrent form of the
    gated delta rule (Yang et al. 2024, "Gated Delta Networks", eq. 10) each value head reads S·k, writes the
    rank-one correction into S and reads S·q, three k_dim × v_dim products (2 FLOPs each multiply-add). A Mamba-2
    layer's recurrence (Dao & Gu 2024, "Transformers are SSMs", eq. 2 with scalar A: h_t = a_t·h_{t-1} + B_t x_t^T,
    y_t = C_t^T h_t; transformers ``NemotronHMamba2Mixer.torch_forward``'s cached step, 5.24.0) is two
    ssm_state_size × mamba_head_dim products per head."""
    v_dim = m.v_head_dim or m.head_dim
    per_position = 2 * m.n_heads * (m.head_dim + v_dim)
    full = (m.n_attention_layers - m.n_sliding_layers) * context
    sliding = m.n_sliding_layers * min(context, m.sliding_window or context)
    products = 2 if m.linear_kind == "mamba2" else 3
    linear = m.n_linear_layers * m.linear_v_heads * products * 2 * m.linear_k_dim * m.linear_v_dim
    if m.global_head_dim:  # Gemma 4: the full layers' heads are global_head_dim wide (keys and values)
        return per_position * sliding + 2 * m.n_heads * 2 * m.global_head_dim * full + linear
    if m.is_sparse_attention:  # DeepSeek Sparse Attention: the indexer's q·k and weighted sum over every position,
        # then attention over the index_topk it picks (DeepSeek-V3.2-Exp report, sec. 2.1)
        index = 2 * m.index_heads * (m.index_head_dim + 1) * context
        full = m.n_attention_layers * min(context, m.index_topk)
        return per_position * full + m.n_attention_layers * index
    return per_position * (full + sliding) + linear


def latent_attention_flops_per_token(m: ModelSpec, context: float) -> float:
    """QK^T and AV of an MLA model computed against the cached latent instead of per-head keys and values: with
    W^UK absorbed into the query and W^UV into the output (DeepSeek-V2 report, Liu et al. 2024, sec. 2.1.2), each
    head's query is ``kv_lora_rank + qk_rope_head_dim`` wide against every position and its output
    ``kv_lora_rank`` (DeepSeek-V3: 576 and 512 against 192 and 128 decompressed, 3.4 times the FLOPs). The two
    absorbed products cost what the decompression they replace costs, so only the attention changes. Models
    without MLA attend as :func:`attention_flops_per_token` says."""
    if not m.is_mla:
        return attention_flops_per_token(m, context)
    per_position = 2 * m.n_heads * (2 * m.kv_lora_rank + m.qk_rope_head_dim)
    return per_position * m.n_attention_layers * context


def forward_flops_per_token(m: ModelSpec, context: float) -> float:
    return 2 * matmul_params(m) + attention_flops_per_token(m, context)


def mtp_matmul_params(m: ModelSpec) -> float:
    """Weights a token multiplies with in one multi-token prediction depth (DeepSeek-AI 2024, DeepSeek-V3 Technical
    Report, arXiv:2412.19437, sec. 2.2): the projection M_k of the concatenated hidden state and next token's
    embedding (2h → h), one transformer block and the shared output head. The block's attention is a full-attention
    layer's and its FFN the model's last layer's, MoE or dense, as Megatron-Bridge counts it
    (NVIDIA-NeMo/Megatron-Bridge ``src/megatron/bridge/training/utils/flop_utils.py``
    @6124fbe38a68eea9c4f4be3aa5e084bd5d461d98: ``num_moe_layers += last_layer_is_moe * mtp_num_layers``, logits
    ``× (1 + mtp_num_layers)``)."""
    p = count_params(m)
    ffn = ((p.active_experts + p.shared_experts + p.router) / m.n_moe_layers if m.n_moe_layers
           else mlp_params(m, m.ffn_hidden))
    return 2 * m.hidden * m.hidden + global_attention_params(m) + ffn + m.vocab * m.hidden


def mtp_attention_flops_per_token(m: ModelSpec, context: float) -> float:
    """QK^T and AV of one multi-token prediction depth's block for a token attending ``context`` positions."""
    v_dim = m.v_head_dim or m.head_dim
    return 2 * m.n_heads * (m.head_dim + v_dim) * context


def mtp_forward_flops_per_token(m: ModelSpec, depths: int, context: float) -> float:
    """Forward FLOPs per token of ``depths`` multi-token prediction depths (0: none)."""
    if depths <= 0:
        return 0.0
    return depths * (2 * mtp_matmul_params(m) + mtp_attention_flops_per_token(m, context))


def train_flops_per_token(m: ModelSpec, s: TrainSetup) -> float:
    """FLOPs the hardware executes per training token (model FLOPs plus recomputation)."""
    context = (s.seq_len + 1) / 2
    fwd = forward_flops_per_token(m, context) + mtp_forward_flops_per_token(m, s.mtp_layers, context)
    if s.method.trains_every_weight:  # GaLore projects gradients only after backward made them
        total = 3 * fwd
    elif s.method.low_rank:
        adapter = 6 * setup_lora_params(m, s)
        total = 2 * fwd + adapter  # forward + input gradients through the frozen base
        if s.train_embeddings:  # the output layer's weight gradient (the embedding's is a scatter-add)
            total += 2 * m.vocab * m.hidden
        if s.method == Method.DORA:  # PEFT's DoRA multiplies x by each adapted weight again: forward + input grad
            total += (6 if s.recompute == Recompute.FULL else 4) * adapted_linears(m, s)[0]  # full: one more forward
    elif s.method == Method.LISA:  # input gradients through every layer (the embedding trains); weight gradients
        layers = min(s.trainable_layers, m.n_layers) * per_layer_params(m)  # of the active layers and the head
        total = 2 * fwd + 2 * (layers + m.vocab * m.hidden)
    elif s.method == Method.PTUNING:
        prefix = attention_flops_per_token(m, s.prefix_len)
        total = 2 * (fwd + prefix)
    elif s.method.adaption_prompt:  # forward, then input gradients down to the lowest trained layer
        total = adaption_prompt_flops(m, s, fwd)
    else:  # freeze: gradients stop below the first trainable layer
        share = min(s.trainable_layers, m.n_layers) * per_layer_params(m) / matmul_params(m)
        total = fwd * (1 + 2 * share) + 2 * 2 * m.vocab * m.hidden
    if s.recompute == Recompute.FULL:
        total += fwd
    elif s.recompute == Recompute.SELECTIVE:
        rerun = ("core_attn",) if s.attention_recomputed and "core_attn" not in s.recompute_modules else ()
        total += recomputed_flops(m, s.recompute_modules + rerun, context)
    return total


def adaption_prompt_flops(m: ModelSpec, s: TrainSetup, fwd: float) -> float:
    """LLaMA-Adapter's FLOPs per training token (Lightning-AI/litgpt litgpt/adapter.py): the forward plus, in each
    prompt layer, every head's attention over the prompt (QK^T and AV over ``adapter_prompt_len`` keys), then the
    input gradients of both, as many again (a frozen base, as for LoRA and P-tuning). v1 trains nothing below
    ``adapter_start_layer``, so backward stops there (each layer's share of the matmul weights, as for freeze); v2
    trains every layer's biases, scales and norms and
    runs backward through all of them. The trained vectors' own gradients are elementwise and not counted, nor the
    prompt's projection, which runs once per step on ``adapter_prompt_len`` positions."""
    v_dim = m.v_head_dim or m.head_dim
    prompt = 2 * m.n_heads * (m.head_dim + v_dim) * s.adapter_prompt_len * max(0, m.n_layers - s.adapter_start_layer)
    below = 0.0
    if s.method == Method.ADAPTER:
        below = min(s.adapter_start_layer, m.n_layers) * per_layer_params(m) / matmul_params(m)
    return fwd + prompt + fwd * (1 - below) + prompt


def recomputed_flops(m: ModelSpec, modules: tuple[str, ...], context: float) -> float:
    """Forward FLOPs per token that a selective recomputation of Megatron-Core's ``recompute_modules`` runs again
    in backward (NVIDIA/Megatron-LM ``megatron/core/transformer/transformer_config.py``
    @cd4afffa648426a959dc7cb1e24b5ce7d0c3ff54): ``core_attn`` the attention over the context, ``mlp`` the dense MLP
    layers, ``moe`` the whole MoE layer (router, the token's routed experts, shared experts), ``shared_experts``
    those alone, ``mla_up_proj`` multi-head latent attention's query and key/value up-projections; ``moe_act``,
    ``layernorm`` and ``gdn_norm_out`` rerun element-wise kernels only, no matmul."""
    p = count_params(m)
    total = attention_flops_per_token(m, context) if "core_attn" in modules else 0.0
    total += 2 * p.mlp if "mlp" in modules else 0.0
    if "moe" in modules:
        total += 2 * (p.router + p.active_experts + p.shared_experts)
    elif "shared_experts" in modules:
        total += 2 * p.shared_experts
    if "mla_up_proj" in modules and m.kv_lora_rank:
        v_dim = m.v_head_dim or m.head_dim
        up = m.q_lora_rank * m.n_heads * m.head_dim + m.kv_lora_rank * m.n_heads * (m.qk_nope_head_dim + v_dim)
        total += 2 * m.n_attention_layers * up
    return total


def total_params(m: ModelSpec) -> int:
    return count_params(m).total
