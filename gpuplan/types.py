"""Frozen domain types shared by the catalog, the estimators, the planner and the renderers.

Quantities are in base units (bytes, seconds, FLOPs, FLOP/s, bytes/s); names carry the unit. Money is an
amount plus its currency, never a bare float. Derived values are properties, not stored fields.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass, field, fields
from enum import StrEnum
from functools import lru_cache
from operator import attrgetter
from typing import TypeVar

from gpuplan.units import GiB, MiB

DTYPES = ("fp32", "tf32", "fp16", "bf16", "fp8", "int8", "fp4")
# GPU rental prices move within weeks (the bundled offers of one GPU span several-fold over their dates): an offer
# whose price is older than this is flagged wherever it is shown.
STALE_AFTER_DAYS = 90


_Row = TypeVar("_Row")


def pickled_by_position(cls: type[_Row]) -> type[_Row]:
    """Give a frozen slotted dataclass a ``__getstate__``/``__setstate__`` that look its fields up once per class.

    The pair dataclasses adds to such a class (``dataclasses._dataclass_setstate``) looks the class's fields up again
    for every object it unpickles: reading the cached catalog's 1,180 rows back spent two thirds of its ~25 ms there
    (cProfile). The state is the same (the field values in field order); only the lookup moves to class creation."""
    names = tuple(f.name for f in fields(cls))  # type: ignore[arg-type]
    setters = tuple(vars(cls)[n].__set__ for n in names)  # the slots' member descriptors

    def __getstate__(self: _Row) -> list[object]:
        return [getattr(self, n) for n in names]

    def __setstate__(self: _Row, state: list[object]) -> None:
        for put, value in zip(setters, state, strict=True):
            put(self, value)

    cls.__getstate__ = __getstate__  # type: ignore[assignment]
    cls.__setstate__ = __setstate__  # type: ignore[attr-defined]
    return cls



@pickled_by_position
@dataclass(frozen=True, slots=True)
class Gpu:
    """One accelerator model (a row of ``gpus.csv``)."""

    name: str
    vendor: str
    segment: str  # datacenter | workstation | consumer | tpu | npu
    architecture: str
    chip: str | None
    form_factor: str
    memory_type: str | None
    memory_nominal_gb: float
    memory_visible_mib: float | None
    memory_bandwidth_bytes_per_s: float | None  # None: not published; speed estimates need it
    fp32_flops_per_s: float | None
    tf32_flops_per_s: float | None
    fp16_flops_per_s: float | None
    bf16_flops_per_s: float | None
    fp8_flops_per_s: float | None
    int8_ops_per_s: float | None
    fp4_flops_per_s: float | None
    interconnect: str
    interconnect_bytes_per_s: float | None
    pcie_gen: int | None
    tdp_w: float | None
    launch_year: int | None
    export_status: str
    export_rule: str
    export_rule_date: dt.date | None
    source: str
    verification: str
    date_checked: dt.date
    notes: str = ""
    sm_count: int | None = None  # streaming multiprocessors (NVIDIA); None: not in the catalog
    boost_clock_hz: float | None = None  # the SMs' rated boost clock
    # dense FP16/BF16 rate of matrix units only some engines reach (Apple M5: the GPU Neural Accelerators, through
    # Metal 4 tensor operations); None: the part has none. Which setups use it: gpuplan.estimate.engines
    matrix_fp16_flops_per_s: float | None = None

    @property
    def sm_cycles_per_s(self) -> float | None:
        """SM clock cycles the whole part runs per second at its boost clock (SMs × clock); None if either is
        unknown."""
        return self.sm_count * self.boost_clock_hz if self.sm_count and self.boost_clock_hz else None

    @property
    def memory_bytes(self) -> float:
        """Capacity a program can allocate: the driver-visible figure when published, else the nominal one
        (vendors' "80 GB" HBM is 80 GiB of cells; the driver may show a little less)."""
        if self.memory_visible_mib is not None:
            return self.memory_visible_mib * MiB
        return self.memory_nominal_gb * GiB

    @property
    def memory_is_measured(self) -> bool:
        return self.memory_visible_mib is not None

    @property
    def shares_system_memory(self) -> bool:
        """Whether the GPU and the CPU share one memory (Apple silicon, AMD APUs, the DGX Spark): gpus.csv marks
        its ``memory_type`` ``unified``. What an engine keeps in host memory then takes from the same pool."""
        return "unified" in (self.memory_type or "").replace("(", " ").replace(")", " ").split()

    def peak_flops_per_s(self, dtype: str) -> float | None:
        """Dense tensor rate for ``dtype`` (None if the part has no such path)."""
        return {
            "fp32": self.fp32_flops_per_s, "tf32": self.tf32_flops_per_s, "fp16": self.fp16_flops_per_s,
            "bf16": self.bf16_flops_per_s, "fp8": self.fp8_flops_per_s, "int8": self.int8_ops_per_s,
            "fp4": self.fp4_flops_per_s,
        }[dtype]

    @property
    def half_flops_per_s(self) -> float:
        """The 16-bit tensor rate training and inference use: bf16 where supported, else fp16; parts whose
        fp16 is slower than fp32 (Pascal P40/P4) run at the fp32 rate."""
        half = self.bf16_flops_per_s or self.fp16_flops_per_s or 0.0
        return max(half, self.fp32_flops_per_s or 0.0)

    @property
    def fp16_acc16_flops_per_s(self) -> float:
        """FP16 tensor rate with FP16 accumulation (what a GEMM in cuBLAS's CUBLAS_COMPUTE_16F mode gets).
        GeForce parts run FP32 accumulation at half the FP16-accumulate rate, so there it is twice
        ``fp16_tflops`` (NVIDIA Ampere GA102 whitepaper, table 2: RTX 3090 FP16 tensor 142 TFLOPS with FP16
        accumulate, 71 with FP32; Ada Lovelace whitepaper, appendix A: RTX 4090 330.3 vs 165.2); datacenter and
        workstation parts run both at the full rate."""
        half = self.half_flops_per_s
        if self.vendor == "NVIDIA" and self.segment == "consumer" and self.fp16_flops_per_s:
            return max(half, 2 * self.fp16_flops_per_s)
        return half

    @property
    def supports_bf16(self) -> bool:
        return self.bf16_flops_per_s is not None

    @property
    def has_fast_interconnect(self) -> bool:
        return self.interconnect_bytes_per_s is not None and self.interconnect.lower() != "none"

    @property
    def sold_in_china(self) -> bool:
        """Legally sold into mainland China under the rule in ``export_rule`` (not legal advice)."""
        return self.export_status in ("unrestricted", "china-compliant", "domestic")


@dataclass(frozen=True, slots=True)
class Money:
    """An amount of money in one currency."""

    amount: float
    currency: str  # USD | CNY


@pickled_by_position
@dataclass(frozen=True, slots=True)
class Offer:
    """One rentable instance at one price (a row of ``offers/<provider>.csv``)."""

    provider: str
    instance_type: str
    gpu: str
    gpu_count: float
    vcpus: float | None
    ram_bytes: float | None
    region: str
    market: str  # cn | global
    price_per_hour: float
    currency: str
    pricing: str  # on-demand | spot | reserved | marketplace
    billing_granularity_s: float | None
    included_disk_bytes: float | None
    storage_price_per_gb_month: float | None
    gpu_mapping: str  # stated | inferred
    source: str
    as_of: dt.date
    notes: str = ""
    commit_months: int | None = None  # the term of a reserved/committed price; None for the other tiers
    dated: bool = True  # False: the source states no date and as_of is the day it was read
    file: str = field(default="", compare=False)
    line: int = field(default=0, compare=False)

    @property
    def price_per_gpu_hour(self) -> float:
        return self.price_per_hour / self.gpu_count

    def age_days(self, today: dt.date) -> int:
        """Days since ``as_of``; for an undated source, the least the price can be (read that long ago)."""
        return (today - self.as_of).days

    def is_stale(self, today: dt.date) -> bool:
        return self.age_days(today) > STALE_AFTER_DAYS

    @property
    def key(self) -> tuple[str, str, str, str]:
        return (self.provider, self.instance_type, self.region, self.pricing)


@pickled_by_position
@dataclass(frozen=True, slots=True)
class PurchasePrice:
    """What one GPU costs to buy in one market (a row of ``purchase_prices.csv``)."""

    gpu: str
    market: str
    price: float
    currency: str
    price_kind: str
    memory_nominal_gb: float | None
    source: str
    as_of: dt.date
    notes: str = ""


@pickled_by_position
@dataclass(frozen=True, slots=True)
class Platform:
    """A free or cheap notebook platform tier (Kaggle, Colab, AutoDL ...)."""

    platform: str
    tier: str
    market: str
    gpu: str
    gpu_count: float
    price_per_month: float | None
    price_per_hour: float | None
    currency: str
    weekly_gpu_hours: float | None
    session_max_hours: float | None
    idle_timeout_min: float | None
    guaranteed: bool
    source: str
    as_of: dt.date
    notes: str = ""


PRODUCTION_TIERS = ("hyperscaler", "gpu-cloud")


@pickled_by_position
@dataclass(frozen=True, slots=True)
class ProviderTerms:
    """What renting from one provider commits it to (a row of ``providers.csv``). ``None`` = not published or
    not found; each fact comes with the page it was read from."""

    provider: str
    tier: str  # hyperscaler | gpu-cloud | marketplace | notebook
    sla_pct: float | None  # monthly uptime a single instance is covered by
    sla_multi_zone_pct: float | None  # ... instances spread over two or more zones
    preemption_notice_s: float | None  # warning before a spot/preemptible instance is reclaimed
    min_billing_s: float | None  # shortest time any run is billed for
    egress_usd_per_gb: float | None  # internet egress, first paid tier (0: the provider charges none)
    zones_per_region: int | None
    skypilot_cloud: str  # the name `sky launch --cloud` takes; "" when SkyPilot cannot launch it
    source: str
    as_of: dt.date
    sla_source: str = ""
    preemption_source: str = ""
    billing_source: str = ""
    egress_source: str = ""
    zones_source: str = ""
    skypilot_source: str = ""
    notes: str = ""

    @property
    def production_grade(self) -> bool:
        """Whether the provider runs the hardware it rents under a contract (hyperscalers and GPU clouds), as
        opposed to a marketplace of third-party hosts or a notebook platform."""
        return self.tier in PRODUCTION_TIERS

    @property
    def skypilot_launches(self) -> bool:
        return bool(self.skypilot_cloud)


@pickled_by_position
@dataclass(frozen=True, slots=True)
class FxRate:
    """Units of ``quote`` one unit of ``base`` buys on ``date`` (a row of ``fx.csv``)."""

    date: dt.date
    base: str
    quote: str
    rate: float
    source: str


@pickled_by_position
@dataclass(frozen=True, slots=True)
class ModelEntry:
    """Provenance of a bundled model preset (a row of ``models/index.csv``)."""

    name: str
    hf_repo: str
    family: str
    remote_code: bool
    published_params: float | None
    source: str
    as_of: dt.date
    notes: str
    path: str
    head_stored: bool | None = None  # the checkpoint stores lm_head.weight though tied (ModelSpec.head_stored)


@dataclass(frozen=True, slots=True)
class ModelSpec:
    """The architecture of a transformer, read from a Hugging Face ``config.json``.

    Enough to count parameters exactly and to size weights, KV cache, activations and FLOPs. Flags describe
    the parts whose presence changes the count (biases, norms, learned positions, ...).
    """

    name: str
    model_type: str
    n_layers: int
    hidden: int
    n_heads: int
    n_kv_heads: int
    head_dim: int
    ffn_hidden: int  # dense MLP width (per gated branch for gated MLPs)
    vocab: int
    gated_mlp: bool = True  # SwiGLU/GeGLU: three matrices; else two
    tied_embeddings: bool = False
    max_positions: int = 2048
    native_dtype: str = "bf16"
    positional: str = "rope"  # rope | alibi | learned | none
    learned_positions: int = 0  # rows of a learned position table
    token_types: int = 0  # BERT token-type embeddings
    norm_bias: bool = False  # LayerNorm (weight+bias) vs RMSNorm (weight)
    norms_per_layer: int = 2
    final_norm: bool = True
    embed_norm: bool = False  # a norm right after the embedding (BLOOM, BERT)
    qkv_bias: bool = False
    out_bias: bool = False
    mlp_bias: bool = False
    qk_norm: bool = False  # per-head q/k norms (Qwen3, Gemma 3)
    lm_head_bias: bool = False
    # the checkpoint stores lm_head.weight although tie_word_embeddings is set (Qwen3-0.6B and -1.7B): engines that
    # tie at load keep one table, but llama.cpp's converter writes both into a GGUF (token_embd and output), which
    # its quantizer then types apart (:func:`gguf_weights_bytes`); from models/index.csv ``head_stored``
    head_stored: bool = False
    v_head_dim: int | None = None  # MLA: value head size when it differs from head_dim
    # a block-wise quantized checkpoint (config quantization_config.weight_block_size, DeepSeek-V3/R1's FP8 [128,
    # 128]): (rows, columns) of the weight tiles that share one scale; None: per-tensor or per-channel scales, or none
    weight_block: tuple[int, int] | None = None
    # MoE
    n_experts: int = 0
    n_active_experts: int = 0
    n_shared_experts: int = 0
    moe_ffn_hidden: int = 0
    shared_ffn_hidden: int = 0  # total width of the shared expert(s) when given as one block
    n_dense_layers: int = 0  # leading dense layers (DeepSeek first_k_dense_replace)
    moe_every: int = 1  # every k-th layer is MoE (Qwen2-MoE decoder_sparse_step)
    router_bias: bool = False  # e_score_correction_bias (DeepSeek-V3)
    shared_expert_gate: bool = False  # Qwen-MoE's sigmoid gate on the shared expert
    # latent MoE (Nemotron 3 Super / Ultra moe_latent_size): the routed experts work on a projection of the hidden
    # state this wide, projected in and out once per MoE layer (0: experts see the hidden state)
    moe_latent: int = 0
    # group-limited routing (config n_group, topk_group: DeepSeek-V2 "device-limited", DeepSeek-V3 "node-limited"):
    # the routed experts form n_expert_groups groups of consecutive experts and a token's top-k are chosen within
    # its best n_routed_groups of them; 1 and 1 (the default): top-k over all experts
    n_expert_groups: int = 1
    n_routed_groups: int = 1
    # MLA (DeepSeek V2/V3)
    q_lora_rank: int = 0
    kv_lora_rank: int = 0
    qk_rope_head_dim: int = 0
    qk_nope_head_dim: int = 0
    # DeepSeek Sparse Attention (DeepSeek-V3.2): a lightning indexer scores every cached position with index_heads
    # heads of index_head_dim and each query attends only its index_topk best
    index_heads: int = 0
    index_head_dim: int = 0
    index_topk: int = 0
    # attention span
    sliding_window: int | None = None
    n_sliding_layers: int = 0
    # Gemma 4: the full-attention (non-sliding) layers have their own head size and KV heads (0: as the others), and
    # with global_k_eq_v no v_proj (the values are the keys, attention_k_eq_v)
    global_head_dim: int = 0
    global_kv_heads: int = 0
    global_k_eq_v: bool = False
    # Gated DeltaNet linear-attention layers (Qwen3-Next, Qwen3.5; Yang et al. 2024, "Gated Delta Networks"):
    # no KV cache, a fixed recurrent state per sequence instead; the other n_layers - n_linear_layers attend
    n_linear_layers: int = 0
    linear_k_heads: int = 0
    linear_v_heads: int = 0
    linear_k_dim: int = 0  # head size of the linear layers' queries and keys
    linear_v_dim: int = 0  # head size of their values
    linear_conv_kernel: int = 0  # causal depthwise convolution over q, k, v (its last kernel - 1 inputs are state)
    linear_state_dtype: str = "fp32"  # of the recurrent state (config mamba_ssm_dtype; the conv state is 16-bit)
    attn_output_gate: bool = False  # a sigmoid gate on the attention output from q_proj (twice as wide)
    # tanh caps (Gemma 2: config attn_logit_softcapping, final_logit_softcapping): scores and logits become
    # cap · tanh(x / cap); 0: none
    attn_softcap: float = 0.0
    final_softcap: float = 0.0
    # which recurrent layer the n_linear_layers are: "gated_deltanet" (Qwen3-Next, Qwen3.5) or "mamba2" (Nemotron-H;
    # Dao & Gu 2024, "Transformers are SSMs"): a Mamba-2 layer maps onto the fields above as linear_v_heads =
    # mamba_num_heads of linear_v_dim = mamba_head_dim, linear_k_heads = n_groups of linear_k_dim = ssm_state_size
    # (B and C are shared by the heads of a group as keys and queries are by GDN's value heads)
    linear_kind: str = "gated_deltanet"
    # token-mixer layers (attention or linear) that have no FFN after them: Nemotron-H stacks single blocks
    # (hybrid_override_pattern) and has fewer FFN blocks than mixer blocks; taken from the MoE layers of a MoE
    n_layers_without_ffn: int = 0
    parallel_attn: bool = False
    encoder_only: bool = False
    extra_params: int = 0  # parameters of parts the flags above do not describe (e.g. a BERT pooler)
    notes: tuple[str, ...] = ()
    remote_code: bool = False  # config.json has auto_map: servers load the repository's code (--trust-remote-code)
    vision_tower: bool = False  # a multimodal checkpoint read for its text model: servers skip the vision encoder

    @property
    def is_moe(self) -> bool:
        return self.n_experts > 0

    @property
    def is_group_limited(self) -> bool:
        """A token's experts come from some of the expert groups only (``n_routed_groups`` of ``n_expert_groups``)."""
        return self.n_routed_groups < self.n_expert_groups

    @property
    def is_mla(self) -> bool:
        return self.kv_lora_rank > 0

    @property
    def is_sparse_attention(self) -> bool:
        return self.index_topk > 0

    @property
    def n_moe_layers(self) -> int:
        if not self.is_moe:
            return 0
        # layers i in n_dense_layers..n_layers-1 with (i + 1) a multiple of moe_every: the multiples up to n_layers
        # less those up to n_dense_layers
        return max(0, self.n_layers // self.moe_every - self.n_dense_layers // self.moe_every
                   - self.n_layers_without_ffn)

    @property
    def n_attention_layers(self) -> int:
        """Layers that attend over the context and keep a KV cache (all but the linear-attention ones)."""
        return self.n_layers - self.n_linear_layers

    @property
    def linear_key_width(self) -> int:
        return self.linear_k_heads * self.linear_k_dim

    @property
    def linear_value_width(self) -> int:
        return self.linear_v_heads * self.linear_v_dim

    @property
    def n_full_attention_layers(self) -> int:
        """Attending layers that are not sliding-window layers."""
        return self.n_attention_layers - self.n_sliding_layers

    @property
    def q_dim(self) -> int:
        return self.n_heads * self.head_dim

    @property
    def kv_dim(self) -> int:
        return self.n_kv_heads * self.head_dim


# ---------------------------------------------------------------- workloads

class Method(StrEnum):
    """How a fine-tune trains (the value is what the command line, the API and JSON use)."""

    FULL = "full"
    LORA = "lora"
    QLORA = "qlora"
    DORA = "dora"
    ADALORA = "adalora"
    GALORE = "galore"
    LISA = "lisa"
    ADAPTER = "adapter"
    ADAPTER_V2 = "adapter-v2"
    PTUNING = "ptuning"
    FREEZE = "freeze"

    @property
    def adapters(self) -> bool:
        """Trains a small part (adapters, a prefix or the last layers) of a frozen base."""
        return not self.trains_every_weight

    @property
    def trains_every_weight(self) -> bool:
        """Every weight gets a gradient and an update: full fine-tuning, and GaLore (Zhao et al. 2024), which is
        full fine-tuning with Adam's states kept in a low-rank projection of the targeted linears' gradients."""
        return self in (Method.FULL, Method.GALORE)

    @property
    def low_rank(self) -> bool:
        """LoRA adapters (on a 16-bit or, for QLoRA, an NF4 base; DoRA's carry a magnitude vector too; AdaLoRA's are
        P·Λ·Q with --lora-rank its initial rank): --lora-rank and --lora-targets apply."""
        return self in (Method.LORA, Method.QLORA, Method.DORA, Method.ADALORA)

    @property
    def trains_base(self) -> bool:
        """Trains the base model's own weights (all of them, or freeze's last layers): no adapter work rides on a
        frozen base."""
        return self in (Method.FULL, Method.GALORE, Method.LISA, Method.FREEZE)

    @property
    def new_weights(self) -> bool:
        """Trains weights the base does not have (LoRA adapters, a P-tuning prefix, LLaMA-Adapter's prompts), kept
        in 16-bit."""
        return self in (Method.LORA, Method.QLORA, Method.DORA, Method.ADALORA, Method.PTUNING, Method.ADAPTER,
                        Method.ADAPTER_V2)

    @property
    def adaption_prompt(self) -> bool:
        """LLaMA-Adapter as LitGPT runs it (Zhang et al. 2023; v2, Gao et al. 2023, adds a bias and a scale to every
        linear and trains the norms): learnable prompts attended through a zero-init gate in the upper layers."""
        return self in (Method.ADAPTER, Method.ADAPTER_V2)

    @property
    def takes_base_quant(self) -> bool:
        """--quant sets its frozen base's format (LoRA, P-tuning, LLaMA-Adapter: LitGPT's --quantize bnb.nf4)."""
        return self in (Method.LORA, Method.PTUNING, Method.ADAPTER, Method.ADAPTER_V2)

    @property
    def quantizes_base(self) -> bool:
        """Loads the frozen base quantized (QLoRA: bitsandbytes NF4 with double quantization) unless told how."""
        return self is Method.QLORA


# Megatron-Core's selective recomputation choices (TransformerConfig.recompute_modules, NVIDIA/Megatron-LM
# megatron/core/transformer/transformer_config.py @cd4afffa648426a959dc7cb1e24b5ce7d0c3ff54)
RECOMPUTE_MODULES = ("core_attn", "moe_act", "layernorm", "mla_up_proj", "mlp", "moe", "shared_experts",
                     "gdn_norm_out")


class Recompute(StrEnum):
    """Activation recomputation (gradient checkpointing); ``full`` here is not the fine-tuning method."""

    NONE = "none"
    SELECTIVE = "selective"
    FULL = "full"


class Engine(StrEnum):
    """An inference engine."""

    HF = "hf"
    VLLM = "vllm"
    SGLANG = "sglang"
    TRTLLM = "trtllm"
    LLAMACPP = "llamacpp"
    MINDIE = "mindie"
    MLX = "mlx"

    @property
    def tensor_parallel(self) -> bool:
        """Splits layers over GPUs (llama.cpp splits whole layers: pipeline only; mlx-lm runs on one Mac)."""
        return self not in (Engine.LLAMACPP, Engine.MLX)

    @property
    def reads_gguf(self) -> bool:
        """Runs GGUF files, and only those or unquantized weights (llama.cpp)."""
        return self is Engine.LLAMACPP

    @property
    def loads_bnb(self) -> bool:
        """Loads bitsandbytes-quantized weights (TensorRT-LLM, llama.cpp, MLX and MindIE have their own formats)."""
        return self not in (Engine.TRTLLM, Engine.LLAMACPP, Engine.MLX, Engine.MINDIE)

    @property
    def multi_lora(self) -> bool:
        """Serves many LoRA adapters on one base (vLLM --enable-lora, SGLang --lora-paths)."""
        return self in (Engine.VLLM, Engine.SGLANG)

    @property
    def dense_mlp_with_attention_dp(self) -> bool:
        """Under attention data parallelism also keeps every linear layer outside the routed experts whole on every
        rank: the dense MLP layers and the shared experts run data-parallel with the attention (TensorRT-LLM's
        PyTorch flow builds them with TP size 1 under ``enable_attention_dp``). SGLang's ``--enable-dp-attention``
        leaves them tensor-parallel."""
        return self is Engine.TRTLLM

    @property
    def prompts_rank_by_rank_with_attention_dp(self) -> bool:
        """Under attention data parallelism prefills one rank's prompts at a time while the other ranks wait at the
        MoE layers' collectives: TensorRT-LLM's scheduler hands new requests to the ranks round-robin and each rank
        takes its contexts as soon as it has room, so in an iteration one rank runs a context while the others
        decode, and the iteration lasts the context (NVIDIA/TensorRT-LLM
        docs/source/blogs/tech_blog/blog10_ADP_Balance_Strategy.md @9320afe9870c, "Baseline Behavior": total time
        ``time(ctx) × N``). Its fix, ``attention_dp_config.enable_balance``, is off by default (llm_args.py
        ``AttentionDpConfig``), and gpuplan plans with the defaults. SGLang's DP attention is not modelled so."""
        return self is Engine.TRTLLM

    @property
    def decodes_ride_prompt_passes(self) -> bool:
        """Runs the running requests' decodes in the same forward pass as a new prompt's chunk, so they share its
        weight reads: vLLM (V1's scheduler puts running and waiting requests' tokens in one step,
        vllm/v1/core/sched/scheduler.py ``schedule``; V0 with chunked prefill likewise) and TensorRT-LLM's in-flight
        batching ("sequences in the context phase can be processed together with sequences in the generation
        phase", TensorRT-LLM docs, "Paged Attention, IFB, and Request Scheduling"). SGLang runs a prefill batch
        without the running decodes unless ``--enable-mixed-chunk`` (off by default, server_args.py
        ``enable_mixed_chunk``); the other engines are not examined."""
        return self in (Engine.VLLM, Engine.TRTLLM)


class Framework(StrEnum):
    """A training stack: the code that runs a training step (``TrainSetup.framework``, data/stacks.csv ``stack``).
    A named framework of data/frameworks.csv (LLaMA-Factory, TRL, LitGPT …) runs on one of these."""

    HF = "hf"
    PYTORCH = "pytorch"
    DEEPSPEED = "deepspeed"
    MEGATRON = "megatron"
    TORCHTITAN = "torchtitan"
    TORCHTUNE = "torchtune"
    LLMC = "llmc"
    LLM_FOUNDRY = "llm-foundry"

    @property
    def efficiency_class(self) -> str:
        """The fitted utilisation it runs at (``u_<class>`` in the fitted parameters): hand-optimised kernels
        (Megatron-LM, llm.c, llm-foundry's MPT layers), torchtitan, or eager PyTorch (HF Trainer, torchtune,
        DeepSpeed, plain PyTorch)."""
        return ("megatron" if self in (Framework.MEGATRON, Framework.LLMC, Framework.LLM_FOUNDRY) else
                "torchtitan" if self is Framework.TORCHTITAN else "eager")

    @property
    def optimised(self) -> bool:
        """Not eager PyTorch: its own fused kernels or torchtitan's compiled, overlapped step."""
        return self.efficiency_class != "eager"

    @property
    def activation_family(self) -> str:
        """Whose modeling code keeps the activations (one fitted activation scale each): Hugging Face's,
        the fused PyTorch-native stacks' (torchtune, torchtitan, Megatron, llm-foundry) or plain PyTorch model code
        (LitGPT, nanoGPT, llm.c)."""
        return ("native" if self in (Framework.TORCHTUNE, Framework.TORCHTITAN, Framework.MEGATRON,
                                     Framework.LLM_FOUNDRY) else
                "pytorch" if self in (Framework.PYTORCH, Framework.LLMC) else "hf")

    @property
    def fp32_grad_buffer(self) -> bool:
        """Gradients accumulate in one fp32 buffer allocated for the whole run (Megatron-LM's
        DistributedDataParallel grad buffer), not made and freed per step."""
        return self is Framework.MEGATRON

    @property
    def persistent_grads(self) -> bool:
        """Gradients live in one buffer allocated once for the whole run, not made and freed per step: Megatron-LM's
        fp32 one (``fp32_grad_buffer``) and llm.c's 16-bit one (karpathy/llm.c train_gpt2.cu
        @2346cdac931f544d63ce816f7e3f5479a917eef5: ``gpt2_backward`` allocates ``grads_memory`` on its first call,
        in ``floatX``, and never frees it)."""
        return self in (Framework.MEGATRON, Framework.LLMC)

    @property
    def per_expert_gemms(self) -> bool:
        """A mixture-of-experts layer's local experts run as one GEMM launch each (Transformer Engine's grouped
        linear under Megatron-Core: gpuplan.estimate.moe_train.expert_gemm_launches), not as one grouped kernel
        (torchtitan's ``torch._grouped_mm``)."""
        return self is Framework.MEGATRON

    @property
    def fp32_master(self) -> bool:
        """Mixed precision keeps 16-bit parameters and an fp32 master copy (the ZeRO paper's layout), not fp32
        parameters under autocast. llm.c's too: ``floatX`` parameters and gradients, and ``use_master_weights`` (1
        by default) keeps an fp32 copy beside its fp32 AdamW m and v, all three sharded by its ZeRO-1 (karpathy/llm.c
        train_gpt2.cu @2346cdac931f544d63ce816f7e3f5479a917eef5, ``gpt2_update``: ``shard_num_parameters`` floats
        each)."""
        return self in (Framework.DEEPSPEED, Framework.MEGATRON, Framework.LLMC)


METHODS = tuple(Method)
OPTIMIZERS = ("adamw", "adamw-8bit", "paged-adamw", "paged-adamw-8bit", "sgd", "sgd-momentum", "adafactor")
PRECISIONS = ("bf16-mixed", "fp16-mixed", "fp8-mixed", "fp4-mixed", "bf16", "fp32")
# the attention kernel families a stack runs on Hopper and newer (data/stacks.csv attention_kernel)
ATTENTION_FAMILIES = ("flash2", "cudnn")
# how an AdamW step runs (data/stacks.csv adam_step): "foreach" (torch.optim.AdamW's default on CUDA: each operation on
# every parameter at once, with parameter-sized temporaries), "fused" (one kernel in place), "per-tensor" (one
# parameter at a time), "trainer" (the HF Trainer's default optim, by transformers release)
ADAM_STEPS = ("foreach", "fused", "per-tensor", "trainer")
# what TrainSetup.attention_kernel may state besides "" (the stack's family): a family, or FlashAttention 1.x
ATTENTION_KERNELS = ("flash1", *ATTENTION_FAMILIES)
# how the expert-parallel all-to-alls move a routed token (TrainSetup.ep_dispatcher)
EP_DISPATCHERS = ("alltoall", "deepep")
_KERNEL_FIELD = ("", *ATTENTION_KERNELS)  # what TrainSetup.attention_kernel may hold ("": the stack's)
_ADAM_STEP_FIELD = ("", *ADAM_STEPS[:3])  # and TrainSetup.adam_step ("": as the stack does)
RECOMPUTE = tuple(Recompute)
ENGINES = tuple(Engine)
KV_DTYPES = ("bf16", "fp16", "fp8")
FRAMEWORKS = tuple(Framework)


def _as_enums(setup: object, fields: tuple[tuple[str, type[StrEnum]], ...]) -> None:
    """Each of ``fields`` of a frozen ``setup`` as its enum: a member stays, a string that is a member's value
    becomes that member, anything else is an InputError naming ``Class.field`` and the valid values."""
    for name, kind in fields:
        value = getattr(setup, name)
        if type(value) is not kind:
            given = value if isinstance(value, str) else repr(value)
            object.__setattr__(setup, name, choice(kind, given, f"{type(setup).__name__}.{name}"))


@dataclass(frozen=True, slots=True)
class Parallelism:
    """How a job is split over GPUs. ``zero`` 0-3 is the DeepSpeed stage (FSDP full-shard = 3) over the
    data-parallel group; ``cp`` is context parallelism; ``ep`` expert parallelism: a mixture-of-experts model's
    routed experts split over ``ep`` of the TP × CP × DP GPUs of a pipeline stage (it adds no GPUs;
    :mod:`gpuplan.estimate.moe_train`); ``vp`` the model chunks each pipeline stage holds under Megatron's
    interleaved 1F1B schedule (``--num-layers-per-virtual-pipeline-stage``; 1: plain 1F1B)."""

    tp: int = 1
    pp: int = 1
    dp: int = 1
    cp: int = 1
    zero: int = 0
    ep: int = 1
    vp: int = 1
    sequence_parallel: bool = True
    offload_optimizer: bool = False

    @property
    def n_gpus(self) -> int:
        return self.tp * self.pp * self.dp * self.cp

    def describe(self) -> str:
        return _describe_parallelism(self)


@lru_cache(maxsize=1024)
def _describe_parallelism(par: Parallelism) -> str:
    """:meth:`Parallelism.describe`, made once per layout: every training-memory estimate names its layout."""
    degrees = (("tp", par.tp), ("pp", par.pp), ("vp", par.vp), ("dp", par.dp), ("cp", par.cp), ("ep", par.ep))
    parts = [f"{k.upper()}{v}" for k, v in degrees if v > 1]
    if par.zero:
        parts.append(f"ZeRO-{par.zero}")
    if par.offload_optimizer:
        parts.append("optimizer offload")
    return " ".join(parts) or "1 GPU"


@dataclass(frozen=True, slots=True)
class TrainSetup:
    """A training or fine-tuning step: what is trained, how, and at what size per GPU."""

    method: Method = Method.FULL
    micro_batch: int = 1  # sequences per GPU per micro-step
    seq_len: int = 2048
    grad_accum: int = 1
    precision: str = "bf16-mixed"
    optimizer: str = "adamw"
    recompute: Recompute = Recompute.NONE
    flash_attention: bool = True
    # the attention kernel: "flash2" (FlashAttention-2, PyTorch SDPA's flash backend), "cudnn" (cuDNN fused
    # attention or FlashAttention-3, which use Hopper's asynchronous tensor-core instructions), "flash1"
    # (FlashAttention 1.x and its Triton port, as llm-foundry's attn_impl "triton" ran until 2023, which Dao 2023,
    # FlashAttention-2, sec. 4.1, measures 1.3-2.5× slower) or "": the one the stack runs (data/stacks.csv)
    attention_kernel: str = ""
    chunked_loss: bool = False  # loss computed in chunks: logits never held in fp32 for the whole sequence
    lora_rank: int = 16
    lora_targets: str = "all-linear"  # all-linear | attention | qv | mlp
    lora_dropout: float = 0.0  # dropout on each adapter's input (PEFT's LoraConfig default 0.0)
    prefix_len: int = 128  # P-tuning v2 prefix length
    base_quant: str | None = None  # frozen base format for LoRA/P-tuning ("int4-wo", "int8-wo", "bnb-nf4-dq")
    # an unquantized frozen base held in fp32 and run under autocast (llm-foundry loads every weight in fp32:
    # data/frameworks.csv adapter_base_fp32); False: in the 16-bit compute format
    fp32_base: bool = False
    # the NF4 base is quantized one whole matrix at a time while the model loads (torchao's NF4Tensor before 0.2, which
    # torchtune pinned until 2024-06-26; later releases quantize 1024² weights at a time): see memory.load_pool_bytes
    nf4_whole_matrix: bool = False
    # the quantized base's other modules (embeddings, norms, the output layer) are stored in fp16 while training
    # computes in bf16 under autocast: transformers stores them in fp16 when from_pretrained gets a bitsandbytes
    # config and no torch_dtype (see memory.output_layer_cast_bytes); False: in the compute format
    base_fp16: bool = False
    # the bitsandbytes NF4 base's quantization state records fp16: bitsandbytes before 0.43 quantizes from a
    # ``.half()`` copy whatever the checkpoint's dtype (see memory.nf4_stats_fp16); None: as the stack does
    # (data/stacks.csv nf4_stats_fp16)
    nf4_stats_fp16: bool | None = None
    train_embeddings: bool = False  # LoRA/QLoRA that also trains the embedding and output layer (new tokens)
    trainable_layers: int = 2  # freeze: train the last k layers; LISA: k sampled layers active at a time
    # LLaMA-Adapter: prompt tokens per adapted layer and the first adapted layer (LitGPT's adapter Config defaults,
    # adapter_prompt_length 10 and adapter_start_layer 2: Lightning-AI/litgpt litgpt/adapter.py)
    adapter_prompt_len: int = 10
    adapter_start_layer: int = 2
    parallel: Parallelism = Parallelism()
    framework: Framework = Framework.HF
    compiled: bool = False
    # the loss runs under torch.compile; None: as the stack does for a compiled model (data/stacks.csv compiles_loss)
    compiled_loss: bool | None = None
    # the cross-entropy takes the model's 16-bit logits with no fp32 upcast (a loop with its own criterion that passes
    # no labels to the model and runs without autocast); None: as the model code and stack do (memory._loss_in_16bit)
    loss_16bit: bool | None = None
    fused_optimizer_step: bool = False  # optimizer step inside backward: gradients freed layer by layer
    # how the AdamW step runs, one of ADAM_STEPS but "trainer"; "": as the stack does (data/stacks.csv adam_step)
    adam_step: str = ""
    # sequence lengths change from one micro-step to the next (dynamic padding, no packing): the caching allocator
    # then keeps blocks of every size it has seen, and its pool grows past the allocated peak
    lengths_vary: bool = True
    # DeepSpeed ZeRO-1/2: the gradient reduce bucket (elements) that backward copies gradients into, one buffer or,
    # with overlap_comm, two; DeepSpeed's defaults 5e8 and off below stage 3 (deepspeed/runtime/zero/config.py @v0.11.1)
    reduce_bucket_size: int = 500_000_000
    overlap_comm: bool = False
    # the data-parallel gradients are all-reduced after the step's last backward and, under ZeRO-1, the updated 16-bit
    # weights all-gathered after the optimizer step, neither behind compute: DeepSpeed's PipelineEngine, which turns
    # the engine's backward-hook reduction off and runs both as instructions of its schedule (GPT-NeoX builds its model
    # as a pipeline for any pipe-parallel-size ≥ 1; gpuplan.estimate.train_time.dp_overlap_window), and Megatron-LM's
    # distributed optimizer before --overlap-grad-reduce, which reduce-scatters after the backward and all-gathers
    # after the optimizer step
    dp_after_backward: bool = False
    # how the expert-parallel all-to-alls move a routed token: "alltoall" (Megatron-Core's alltoall dispatcher, one
    # copy per routed expert) or "deepep" (DeepEP / HybridEP kernels, Megatron-Core's flex dispatcher: one copy per
    # destination GPU, one per destination node over the network; gpuplan.estimate.moe_train.link_shares)
    ep_dispatcher: str = "alltoall"
    # the pipeline schedule pairs one micro-batch's forward chunk with another's backward chunk and runs each one's
    # expert-parallel all-to-alls and pipeline sends behind the other's compute: DeepSeek's DualPipe (DeepSeek-AI 2024,
    # DeepSeek-V3 Technical Report, arXiv:2412.19437, sec. 3.2.1; gpuplan.estimate.train_time.behind_compute)
    dualpipe: bool = False
    # Megatron-Core's EP communication overlap (--overlap-moe-expert-parallel-comm, Megatron-Bridge's moe_a2a_overlap):
    # its combined 1F1B schedule runs one micro-batch's forward beside another's backward, each one's all-to-alls
    # behind the other's compute, in the steady phase only (gpuplan.estimate.train_time.ep_overlap_exposed)
    ep_overlap: bool = False
    # the routed experts run through Transformer Engine's fused grouped MLP (Megatron-Core's
    # use_transformer_engine_op_fuser with NVTE_CUTEDSL_FUSED_GROUPED_MLP=1; Megatron-Bridge's
    # cutedsl_fused_grouped_mlp): one CuTe DSL grouped kernel per GEMM for all local experts, not one cuBLAS GEMM per
    # expert (gpuplan.estimate.moe_train.expert_gemm_launches)
    fused_grouped_mlp: bool = False
    # the submodules a selective recomputation reruns, Megatron-Core's ``recompute_modules`` (one of
    # RECOMPUTE_MODULES each); (): recomputation as ``recompute`` alone says (gpuplan.estimate.flops.recomputed_flops)
    recompute_modules: tuple[str, ...] = ()
    # a per-op selective recomputation reruns the attention op in backward instead of keeping its output: torchtitan
    # keeps the outputs of the ops on its save list, which named the flash and memory-efficient SDPA ops but not the
    # cuDNN one that it chose first on B200 from 2025-05-14 to 2025-12-01 (gpuplan.estimate.memory.ATTENTION_RECOMPUTED)
    attention_recomputed: bool = False
    # the transformers release whose model code ran ("4.36.2"; "": the current one, as plans run): where a release
    # took the loss otherwise, the estimate follows the one that ran (gpuplan.estimate.memory.shifted_logits_copy)
    transformers_version: str = ""
    # the model's forward returns every layer's keys and values besides the logits: transformers' ``use_cache``, on
    # in most models' configs, which LlamaModel.forward turns off in training only under transformers' own gradient
    # checkpointing (gpuplan.estimate.memory.returned_kv_bytes)
    returns_kv_cache: bool = False
    # the loop keeps the previous step's outputs bound until the next forward has returned (``outputs =
    # model(**batch)`` at the top of the loop); None: as the stack's loop does (data/stacks.csv keeps_previous_outputs)
    keeps_previous_outputs: bool | None = None
    # multi-token prediction depths trained beside the model (Megatron-Core's ``mtp_num_layers``; DeepSeek-AI 2024,
    # DeepSeek-V3 Technical Report, arXiv:2412.19437, sec. 2.2): each depth runs one more transformer block, a 2h→h
    # projection and the shared output head with its own loss (gpuplan.estimate.flops.mtp_forward_flops_per_token)
    mtp_layers: int = 0

    def __post_init__(self) -> None:
        """``method``, ``recompute`` and ``framework`` may be given as their values (``"lora"``): read once here;
        ``attention_kernel`` and ``ep_dispatcher`` must name a kernel or dispatcher the estimators know."""
        _as_enums(self, _TRAIN_ENUMS)
        if (self.attention_kernel in _KERNEL_FIELD and self.ep_dispatcher in EP_DISPATCHERS
                and self.adam_step in _ADAM_STEP_FIELD and not self.recompute_modules and self.mtp_layers >= 0):
            return  # the usual setup, its choices known at a glance: a training search makes hundreds
        from gpuplan.errors import check_choice

        check_choice("TrainSetup.attention_kernel", self.attention_kernel or None, ATTENTION_KERNELS)
        check_choice("TrainSetup.ep_dispatcher", self.ep_dispatcher, EP_DISPATCHERS)
        check_choice("TrainSetup.adam_step", self.adam_step or None, ADAM_STEPS[:3])
        for module in self.recompute_modules:
            check_choice("TrainSetup.recompute_modules", module, RECOMPUTE_MODULES)
        if self.mtp_layers < 0:
            from gpuplan.errors import InputError

            raise InputError("TrainSetup.mtp_layers", f"TrainSetup.mtp_layers is {self.mtp_layers}; a count of "
                             "multi-token prediction depths is 0 or more.", "give 0 (no MTP) or the recipe's depth.")

    def resized(self, parallel: Parallelism, micro_batch: int, grad_accum: int) -> TrainSetup:
        """``dataclasses.replace(self, parallel=parallel, micro_batch=micro_batch, grad_accum=grad_accum)``, without
        running ``__init__`` again: ``__post_init__`` reads none of those three fields, so what it checked and
        converted of ``self`` holds for the copy. A training search makes hundreds of setups that differ only in
        them; ``__init__`` sets 42 frozen fields one ``object.__setattr__`` at a time, which was a tenth of a cold
        pretraining plan (bench/speed.py), and the copy takes about a third of its time."""
        out = object.__new__(TrainSetup)
        values = list(_train_values(self))
        values[_AT_PARALLEL], values[_AT_MICRO_BATCH], values[_AT_GRAD_ACCUM] = parallel, micro_batch, grad_accum
        for put, value in zip(_TRAIN_SETTERS, values, strict=True):
            put(out, value)
        return out

    @property
    def tokens_per_micro_batch(self) -> int:
        return self.micro_batch * self.seq_len

    @property
    def reruns_moe(self) -> bool:
        """The MoE layers' forward, all-to-alls included, runs again in backward: a full recomputation, or a
        selective one that names ``moe`` (Megatron-Core checkpoints the whole ``MoELayer``)."""
        return self.recompute == Recompute.FULL or (self.recompute == Recompute.SELECTIVE
                                                    and "moe" in self.recompute_modules)


@dataclass(frozen=True, slots=True)
class InferSetup:
    """An inference configuration: engine, weight format, batch and lengths."""

    engine: Engine = Engine.VLLM
    weight_format: str = "bf16"
    kv_dtype: str = "bf16"  # bf16 | fp16 | fp8
    batch: int = 1
    prompt_len: int = 1024
    output_len: int = 256
    tp: int = 1
    pp: int = 1
    gpu_memory_utilization: float | None = None  # pre-allocation share; None: the engine's default (engines.csv)
    max_num_seqs: int | None = None  # engine cap on concurrent sequences
    full_logits: bool = False  # logits for every prompt position (scoring, old transformers generate)
    lora_adapters: int = 0  # LoRA adapters resident on the GPUs, any of which a batch may mix (multi-LoRA)
    lora_rank: int = 0  # the rank the engine reserves per adapter (its largest adapter's)
    # False: the engine materializes the attention scores (llama.cpp without Flash Attention: builds before it
    # existed, or run with -fa off); only llama.cpp's compute buffer reads it
    flash_attention: bool = True
    # the engine's release ("0.7.3"; "": the current one): where a release changed the scheduler or its defaults,
    # the estimators follow the one that ran (gpuplan.estimate.engines.token_budget, step_overhead_key)
    engine_version: str = ""
    # how the engine was started: "" its serving command with the defaults a plan runs (trtllm-serve, vllm serve),
    # "trtllm-bench" TensorRT-LLM's offline benchmark, which captures CUDA graphs for every decode batch it runs
    # (gpuplan.estimate.engines.graph_batches; passes carrying prompt tokens still run eager), "vllm-llm-class"
    # vLLM's offline LLM class (vllm bench throughput), whose batch defaults differ from the server's
    # (gpuplan.estimate.engines.with_engine_defaults)
    launcher: str = ""
    # False: the server was started with CUDA graphs off (SGLang --disable-cuda-graph, vLLM --enforce-eager), so
    # every decode step launches its kernels op by op (gpuplan.estimate.engines.graph_batches)
    cuda_graphs: bool = True
    # True: attention data parallelism (TensorRT-LLM ``enable_attention_dp``, SGLang ``--enable-dp-attention``): each
    # of the tp ranks schedules and runs the attention of its own share of the sequences, so the host work of a step
    # is split over the ranks (gpuplan.estimate.infer_speed.host_step_seconds)
    attention_dp: bool = False
    # True: TensorRT-LLM's attention-DP balancing (``attention_dp_config.enable_balance``), which holds new contexts
    # until every rank has one, so the ranks prefill together instead of one after another
    # (gpuplan.estimate.infer_speed.prompts_rank_by_rank); off by default, as plans run
    attention_dp_balance: bool = False
    # the longest sequence the server admits (vLLM ``--max-model-len``); None: the model's own context length. Only
    # the scheduler's prompt budget of a release that ties it to this length reads it
    # (gpuplan.estimate.engines.token_budget)
    max_model_len: int | None = None
    # the scheduler's token budget per forward pass (vLLM ``--max-num-batched-tokens``, TensorRT-LLM
    # ``max_num_tokens`` as trtllm-bench picks it: gpuplan.estimate.trtllm_bench); None: the engine's default
    # (gpuplan.estimate.engines.with_engine_defaults, token_budget)
    max_batched_tokens: int | None = None
    # whether the engine schedules step n + 1 while the GPU runs step n (vLLM ``--async-scheduling`` /
    # ``--no-async-scheduling``); None: its release's default (gpuplan.estimate.engines.host_overlaps_step)
    async_scheduling: bool | None = None
    # whether the server prefills in chunks mixed with decodes (vLLM ``--enable-chunked-prefill``); None: its
    # release's default. Only vLLM's V0 engine (before 0.8) reads it, whose scheduler without it runs prompt-only
    # steps (gpuplan.estimate.engines.prefill_only_steps); V1 always chunks
    chunked_prefill: bool | None = None
    # True: the output layer is quantized with the linear layers (Lit-GPT's quantization() swaps every
    # torch.nn.Linear, lm_head included), where transformers keeps it 16-bit (gpuplan.estimate.memory.head_saving_bytes)
    quantized_head: bool = False
    # the quantization library's release for the bnb formats (bitsandbytes "0.40.0"; "": the current one): before
    # 0.43 a 4-bit matrix dequantizes to fp16 whatever the activations (gpuplan.estimate.memory.dequant_copies)
    quant_release: str = ""
    # True: the int8 layers are quantized when built on the GPU and again from the checkpoint at load (Lit-GPT's
    # InferenceLinear8bitLt), so a matrix's first int8 copy is alive while the second is made
    # (gpuplan.estimate.memory.int8_load_peak_bytes)
    quantized_at_build: bool = False
    # the release of the runner named by ``launcher`` ("ollama", "lmstudio": gpuplan.estimate.runners), whose defaults
    # changed by release (Ollama "0.6.7"; "": the current one)
    runner_release: str = ""

    def __post_init__(self) -> None:
        """``engine`` may be given as its value (``"vllm"``): read once here."""
        _as_enums(self, _INFER_ENUMS)

    @property
    def context_len(self) -> int:
        return self.prompt_len + self.output_len

    def with_batch(self, batch: int) -> InferSetup:
        """``dataclasses.replace(self, batch=batch)``, made directly: batch searches make thousands a plan."""
        if batch == self.batch:
            return self
        return InferSetup(self.engine, self.weight_format, self.kv_dtype, batch, self.prompt_len, self.output_len,
                          self.tp, self.pp, self.gpu_memory_utilization, self.max_num_seqs, self.full_logits,
                          self.lora_adapters, self.lora_rank, self.flash_attention, self.engine_version,
                          self.launcher, self.cuda_graphs, self.attention_dp, self.attention_dp_balance,
                          self.max_model_len,
                          self.max_batched_tokens, self.async_scheduling, self.chunked_prefill,
                          self.quantized_head, self.quant_release, self.quantized_at_build,
                          self.runner_release)

    @property
    def n_gpus(self) -> int:
        return self.tp * self.pp


_TRAIN_ENUMS: tuple[tuple[str, type[StrEnum]], ...] = (
    ("method", Method), ("recompute", Recompute), ("framework", Framework))
# TrainSetup.resized: every field's value read at once, and set through its slot (bypassing the frozen __setattr__)
_TRAIN_NAMES = tuple(f.name for f in fields(TrainSetup))
_train_values = attrgetter(*_TRAIN_NAMES)
_TRAIN_SETTERS = tuple(getattr(TrainSetup, name).__set__ for name in _TRAIN_NAMES)
_AT_PARALLEL, _AT_MICRO_BATCH, _AT_GRAD_ACCUM = (_TRAIN_NAMES.index(name) for name in
                                                 ("parallel", "micro_batch", "grad_accum"))
_INFER_ENUMS: tuple[tuple[str, type[StrEnum]], ...] = (("engine", Engine),)


# ---------------------------------------------------------------- jobs

class Task(StrEnum):
    """What the user wants done."""

    FINETUNE = "finetune"
    PRETRAIN = "pretrain"
    INFER = "infer"
    SERVE = "serve"

    @property
    def is_training(self) -> bool:
        return self in (Task.FINETUNE, Task.PRETRAIN)

    @property
    def per_hour(self) -> bool:
        """Runs continuously and is priced per hour (a service), not per run."""
        return self is Task.SERVE


class Market(StrEnum):
    """Where offers are sold: mainland China (priced in CNY) or the rest of the world."""

    CN = "cn"
    GLOBAL = "global"

    @property
    def currency(self) -> str:
        return "CNY" if self is Market.CN else "USD"


class Objective(StrEnum):
    """What a plan ranks by."""

    COST = "cost"
    TIME = "time"
    VALUE = "value"  # work per money, the seeds' 性价比

    @property
    def by_money(self) -> bool:
        """Money decides (a default longest run applies: a run of years that saves a fraction is not a plan)."""
        return self is not Objective.TIME


TASKS = tuple(Task)
MARKETS = tuple(Market)
OBJECTIVES = tuple(Objective)
E = TypeVar("E", bound=StrEnum)


def choice(kind: type[E], value: str | E, field: str) -> E:
    """``value`` as a member of ``kind``; anything else is an InputError naming ``field`` and the choices."""
    if isinstance(value, kind):
        return value
    from gpuplan.errors import check_choice

    check_choice(field, value, tuple(kind))
    return kind(value)


@dataclass(frozen=True, slots=True)
class Job:
    """What the user wants done. Sizes are in tokens and requests; time limits in seconds.

    - finetune: ``samples`` × ``tokens_per_sample`` × ``epochs`` training tokens (or ``tokens``), with ``method``;
    - pretrain: ``tokens`` training tokens;
    - infer: a batch job of ``requests`` prompts of ``prompt_len`` tokens, ``output_len`` tokens each;
    - serve: steady traffic of ``rps`` requests per second within ``ttft_s`` / ``tpot_s`` targets.
    """

    task: Task
    method: Method = Method.FULL
    samples: float = 0.0
    tokens_per_sample: float = 0.0
    epochs: float = 1.0
    tokens: float = 0.0
    seq_len: int = 2048
    global_batch: int = 0  # sequences per optimizer step (0: choose)
    prompt_len: int = 1024
    output_len: int = 256
    batch: int = 0  # concurrent sequences (0: infer runs as many as the engine holds; 1 without requests)
    requests: float = 0.0
    rps: float = 0.0
    ttft_s: float | None = None
    tpot_s: float | None = None
    weight_format: str | None = None  # inference quantization (None: the model's 16-bit format)
    lora_rank: int = 16
    lora_targets: str = "all-linear"
    base_quant: str | None = None
    framework: str | None = None  # the training framework the user runs (its defaults apply); None: unstated
    train_embeddings: bool = False  # LoRA/QLoRA also trains the embedding and output layer (PEFT modules_to_save)
    seq_len_auto: bool = False  # seq_len was chosen, not given: it may be shortened to fit a model

    def __post_init__(self) -> None:
        """Counts and durations may be given as the CLI's text (``samples="20k"``, ``ttft_s="2s"``): read once
        here, so every field holds its base unit."""
        from gpuplan.units import parse_count, parse_seconds

        object.__setattr__(self, "task", choice(Task, self.task, "--task"))
        object.__setattr__(self, "method", choice(Method, self.method, "--method"))
        for name in ("samples", "tokens_per_sample", "tokens", "requests", "epochs", "rps"):
            value = getattr(self, name)
            if isinstance(value, str):
                object.__setattr__(self, name, parse_count(value, name))
        for name in ("ttft_s", "tpot_s"):
            value = getattr(self, name)
            if isinstance(value, str):
                object.__setattr__(self, name, parse_seconds(value, name))

    def for_model(self, m: ModelSpec) -> Job:
        """This job on ``m``: a chosen sequence length is cut to the positions the model supports (as trainers
        truncate samples); a given one is kept, and checked later."""
        if self.seq_len_auto and self.seq_len > m.max_positions:
            from dataclasses import replace

            return replace(self, seq_len=m.max_positions)
        return self

    @property
    def train_tokens(self) -> float:
        if self.tokens:
            return self.tokens
        return self.samples * self.tokens_per_sample * self.epochs

    @property
    def is_training(self) -> bool:
        return self.task.is_training
