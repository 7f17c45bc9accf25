"""Serving engines and their memory semantics, read from ``data/engines.csv``."""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from dataclasses import dataclass, replace
from functools import cache
from types import MappingProxyType

from gpuplan import types
from gpuplan.catalog.csvload import Column, read_table
from gpuplan.catalog.store import BUNDLED_DIR
from gpuplan.errors import InputError
from gpuplan.estimate import hardware

_COLUMNS = (
    Column("engine", required=True), Column("name", required=True),
    Column("memory_mode", "enum", True, ("on-demand", "preallocate", "context")),
    Column("gpu_memory_utilization", "float", positive=True, max=1),
    Column("kv_share_of", "enum", False, ("total", "free")),
    Column("max_num_seqs", "int", min=1), Column("max_batched_tokens", "int", min=1),
    Column("cuda_graph_max_batch", "int", min=1),
    Column("kv_block_tokens", "int", True, min=1), Column("mla_latent_cache", "bool", True),
    Column("half_accumulate", "bool", True), Column("prefill_dequant_fp16", "bool", True),
    Column("ggml_graph", "bool", True), Column("pp_microbatches", "bool", True),
    Column("source", required=True), Column("as_of", "date", True), Column("notes"),
)


@dataclass(frozen=True, slots=True)
class Engine:
    """One serving engine's settings and memory model (a row of ``engines.csv``)."""

    engine: str
    name: str
    memory_mode: str
    gpu_memory_utilization: float | None
    kv_share_of: str | None  # total: share of the whole GPU (vLLM); free: share of what weights leave (TRT-LLM)
    max_num_seqs: int | None
    max_batched_tokens: int | None
    cuda_graph_max_batch: int | None  # largest decode batch the server replays a CUDA graph for (None: not modelled)
    kv_block_tokens: int
    mla_latent_cache: bool
    half_accumulate: bool  # 16-bit GEMMs accumulate in FP16 (full tensor rate on GeForce parts)
    prefill_dequant_fp16: bool  # batched GEMMs on quantized weights first write a 16-bit copy (llama.cpp CUDA/HIP)
    ggml_graph: bool  # one fp32 compute buffer sized for the worst-case graph; token embeddings on the host (llama.cpp)
    pp_microbatches: bool  # under pipeline parallelism, one batch per stage is in flight (vLLM, SGLang, TensorRT-LLM)
    source: str


@cache
def engines() -> Mapping[str, Engine]:
    rows = read_table(BUNDLED_DIR / "engines.csv", _COLUMNS, ["engine"], "gpuplan/data/engines.csv")
    return MappingProxyType({r.values["engine"]: Engine(**{k: v for k, v in r.values.items()
                                                             if k not in ("as_of", "notes")}) for r in rows})


_HF_CACHE_COLUMNS = (
    Column("model_type", required=True), Column("cache", "enum", True, ("tuple",)),
    Column("source", required=True), Column("as_of", "date", True), Column("notes"),
)


@cache
def hf_tuple_cache_types() -> frozenset[str]:
    """Model types whose own modeling code (``trust_remote_code``) returns the KV cache as a new tuple of
    concatenated tensors every step (``data/hf_kv_cache.csv``): transformers' generate holds the previous step's
    tuple until the forward returns the next, so two caches are alive at the peak."""
    rows = read_table(BUNDLED_DIR / "hf_kv_cache.csv", _HF_CACHE_COLUMNS, ["model_type"],
                      "gpuplan/data/hf_kv_cache.csv")
    return frozenset(r.values["model_type"] for r in rows)


# Engines that run kernels of their own on Apple parts (llama.cpp's ggml-metal backend), a different implementation
# from their CUDA kernels: their bandwidth and compute efficiencies are fitted apart, under "<engine>_metal"
METAL_BACKEND_ENGINES = ("llamacpp",)
# Engines that reach Huawei Ascend NPUs through a hardware plugin with kernels of its own: vLLM through vllm-ascend
# (vllm-project/vllm-ascend: a platform plugin whose attention, MoE and linear ops are torch_npu / CANN operators, not
# vLLM's CUDA kernels), fitted apart under "<engine>_ascend"
ASCEND_BACKEND_ENGINES = ("vllm",)
# Where a backend has no fitted efficiencies of its own (no published row yet, or its only source held out), it takes
# those of the nearest implementation: vllm-ascend and MindIE run on the same NPU kernels library (CANN), vllm-ascend
# otherwise follows vLLM's scheduler; MLX runs Metal kernels on the same Apple GPUs as llama.cpp's ggml-metal
# (whose share of the dense GEMM rate for the expert GEMMs, f_moe, is llama.cpp's own: fitted on its CUDA rows)
EFFICIENCY_PRIORS = {"vllm_ascend": "vllm", "mindie": "vllm_ascend", "mlx": "llamacpp_metal",
                     "llamacpp_metal": "llamacpp"}


def efficiency_key(name: str, engine: str, gpu: types.Gpu | None) -> str:
    """The fitted parameter ``name`` of ``engine`` on ``gpu``: e.g. ``eta_memory_llamacpp`` on a CUDA part,
    ``eta_memory_llamacpp_metal`` on Apple silicon, ``eta_memory_vllm_ascend`` for vLLM on an Ascend NPU."""
    return f"{name}_{backend_key(engine, gpu.vendor if gpu is not None else '')}"


def backend_key(engine: str, vendor: str) -> str:
    """The name ``engine``'s efficiencies are fitted under on ``vendor``'s parts: ``llamacpp_metal``,
    ``vllm_ascend``, else the engine's own."""
    backend = ("_metal" if vendor == "Apple" and engine in METAL_BACKEND_ENGINES else
               "_ascend" if vendor == "Huawei" and engine in ASCEND_BACKEND_ENGINES else "")
    return f"{engine}{backend}"


def efficiency_keys(name: str, engine: str, gpu: types.Gpu | None) -> tuple[str, ...]:
    """:func:`efficiency_key`, then the keys of its priors (:data:`EFFICIENCY_PRIORS`), nearest first: the first one
    a calibration holds is the value used."""
    key = efficiency_key(name, engine, gpu)
    keys = [key]
    backend = key[len(name) + 1:]
    while backend in EFFICIENCY_PRIORS:
        backend = EFFICIENCY_PRIORS[backend]
        keys.append(f"{name}_{backend}")
    return tuple(keys)


@cache
def release(version: str) -> tuple[int, int, int] | None:
    """(major, minor, patch) of an engine version such as ``"0.7.3.dev138+g21f6ca217"`` or ``"v0.8"``; None when
    the text states no release ("", "nightly", a docker tag)."""
    found = re.match(r"^\s*v?(\d+)\.(\d+)(?:\.(\d+))?", version or "")
    return tuple(int(g or 0) for g in found.groups()) if found else None  # type: ignore[return-value]


# a setup that states no release runs the current one: above every release a rule starts from
_CURRENT_RELEASE = (999, 0, 0)


# A run of an engine's dated development image ("lmsysorg/sglang:dev docker image, Dec 2024") ran the code of main
# on some day of that month, so at least the last release published before the month began. SGLang's releases by
# upload date on PyPI (pypi.org/pypi/sglang/json): 0.3.6.post3 2024-11-29, 0.4.0 2024-12-03, 0.4.1 2024-12-25,
# 0.4.2 2025-01-27. As (engine, first day of the month, release published last before it).
_DATED_DEV_RELEASES = (
    ("sglang", (2024, 12), (0, 3, 6)),
    ("sglang", (2025, 1), (0, 4, 1)),
    ("sglang", (2025, 2), (0, 4, 2)),
)
_MONTHS = {m: i for i, m in enumerate(("jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov",
                                       "dec"), 1)}


@cache  # read for every setup a plan sizes, of a handful of version texts
def dated_release(engine: str, version: str) -> tuple[int, int, int] | None:
    """The release a version text that names only a month ("dev docker image, Dec 2024") ran at least: the last
    one published before that month (:data:`_DATED_DEV_RELEASES`); None where the text or the month is not known."""
    found = re.search(r"\b([A-Za-z]{3})[a-z]*\.?\s+(20\d\d)\b", version or "")
    month = _MONTHS.get(found.group(1).lower()) if found else None
    if found is None or month is None:
        return None
    return next((r for e, ym, r in _DATED_DEV_RELEASES if e == engine and ym == (int(found.group(2)), month)), None)


def running_release(s: types.InferSetup) -> tuple[int, int, int]:
    """The release ``s`` states (:func:`release`, else :func:`dated_release`), or one above every release for a
    setup that states none (plans run the current release)."""
    return release(s.engine_version) or dated_release(s.engine, s.engine_version) or _CURRENT_RELEASE


# transformers' generate() kept the KV cache of models with Cache classes (Qwen2, Llama, ...) in the legacy tuple
# format between steps until huggingface/transformers PR #30536 ("Reduce by 2 the memory requirement in generate()",
# released in v4.42.0): each forward rebuilt a DynamicCache from the tuple it was given, concatenated every layer into
# a new tensor and returned a new tuple (Qwen2Model.forward at v4.38.2: DynamicCache.from_legacy_cache, then
# to_legacy_cache), while generate still held the tuple of the previous step, so two caches were alive at the end of
# a step. From that release generate passes one DynamicCache that each step extends layer by layer.
HF_ONE_CACHE_FROM = (4, 42, 0)


def hf_holds_previous_cache(m: types.ModelSpec, s: types.InferSetup) -> bool:
    """Whether transformers' generate holds the previous step's KV cache while the forward builds the next: models
    whose own code returns a new tuple every step (:func:`hf_tuple_cache_types`), and every model under a stated
    transformers release before :data:`HF_ONE_CACHE_FROM` (plans run the current release)."""
    if s.engine != types.Engine.HF:
        return False
    if m.model_type in hf_tuple_cache_types():
        return True
    return running_release(s) < HF_ONE_CACHE_FROM


# transformers built a rotary embedding into every attention layer of these model types, and each one registered
# cos and sin tables for all max_position_embeddings positions as buffers in the load dtype when it was built
# (Qwen2RotaryEmbedding._set_cos_sin_cache, called from __init__ with max_position_embeddings, and
# Qwen2Attention.__init__'s self.rotary_emb; the same in Qwen2MoeRotaryEmbedding): src/transformers/models/qwen2/
# modeling_qwen2.py in the v4.38.2, v4.40.0, v4.42.0 and v4.44.0 wheels, qwen2_moe/modeling_qwen2_moe.py in v4.40.0
# to v4.44.0. From v4.45.0 one model-level rotary embedding computes cos and sin for the positions of each forward
# and keeps only inv_freq. As (model type, first release without the tables).
HF_LAYER_ROTARY_TABLES_UNTIL = {"qwen2": (4, 45, 0), "qwen2_moe": (4, 45, 0)}


def hf_layer_rotary_tables(m: types.ModelSpec, s: types.InferSetup) -> bool:
    """Whether a transformers run of ``m`` holds a full cos/sin table in every layer
    (:data:`HF_LAYER_ROTARY_TABLES_UNTIL`): only under a stated release before the one that dropped them (plans run
    the current release)."""
    until = HF_LAYER_ROTARY_TABLES_UNTIL.get(m.model_type)
    return s.engine == types.Engine.HF and until is not None and running_release(s) < until


# vLLM 0.8.0 made the V1 engine the default (vllm-project/vllm PR #13726, release notes of v0.8.0, 2025-03-18)
VLLM_V1_FROM = (0, 8, 0)
# vLLM's V0 scheduler without chunked prefill takes max(max_model_len, this) prompt tokens a step
# (vllm/config.py @v0.7.3, SchedulerConfig.__post_init__ and _DEFAULT_MAX_NUM_BATCHED_TOKENS)
_VLLM_V0_MIN_BUDGET = 2048
# V0 with chunked prefill takes 512 prompt tokens a step unless told otherwise (vLLM docs "Performance and Tuning"
# of the V0 releases: "512 is the default max_num_batched_tokens for chunked prefill")
_VLLM_V0_CHUNK_BUDGET = 512


def vllm_v0(s: types.InferSetup) -> bool:
    """Whether the setup runs vLLM's V0 engine: a stated release below 0.8.0."""
    if s.engine != types.Engine.VLLM or not s.engine_version:  # plans run the current release: no version to read
        return False
    found = release(s.engine_version)
    return found is not None and found < VLLM_V1_FROM


# vLLM V1 chooses its scheduler's defaults by entry point (vllm/usage/usage_lib.py UsageContext: the offline ``LLM``
# class, which ``vllm bench throughput`` runs, or the OpenAI API server of ``vllm serve``) and by the GPU it finds
# (``current_platform.get_device_total_memory()`` and the device name). Read in vllm/engine/arg_utils.py of each
# release's wheel (``EngineArgs._set_default_args_v1``, later ``get_batch_defaults``); as (max_num_batched_tokens of
# the LLM class, of the API server, max_num_seqs):
# - 0.8.0-0.8.3: a device named H100 or H200 16,384 / 8,192, any other 8,192 / 2,048; 1,024 sequences on every GPU
#   (vllm-project/vllm PR #12369);
# - 0.8.4: the same tiers, 256 sequences outside H100/H200 (PR #16158, "Revert the default max_num_seqs to V0
#   values for most hardware");
# - 0.8.5: the large tier (16,384 / 8,192, 1,024) for any device of at least 70 GiB (PR #17073), else 8,192 / 2,048,
#   256;
# - 0.9.0 on: the same, less devices named A100 (PR #17885: a 2,048-token budget serves Llama 70B on A100 TP 2 36 %
#   faster than 8,192);
# - 0.28.0 on: devices of at least 160 GiB (B200, B300, MI300X) 16,384 for both entry points, 1,024 sequences.
# 0.33.0 also keeps compute capability 12.1 (GB10, DGX Spark) in the small tier: no such part is in the catalog.
# V0 (before 0.8.0) keeps engines.csv's values. Plans run the current release.
VLLM_LLM_CLASS = "vllm-llm-class"  # InferSetup.launcher of a run through vLLM's offline LLM class
_VLLM_SEQS_BY_TIER_FROM = (0, 8, 4)
_VLLM_MEMORY_TIER_FROM = (0, 8, 5)
_VLLM_NOT_A100_FROM = (0, 9, 0)
_VLLM_LARGEST_TIER_FROM = (0, 28, 0)
_VLLM_LARGE_BYTES = 70 * 2**30  # binary, as vLLM's GiB_bytes
_VLLM_LARGEST_BYTES = 160 * 2**30
_VLLM_TOKENS = {"largest": (16384, 16384), "large": (16384, 8192), "small": (8192, 2048)}  # (LLM class, API server)


def vllm_tier(s: types.InferSetup, gpu: types.Gpu) -> str:
    """Which of vLLM's default tiers ``gpu`` falls in under the release of ``s`` (the current one when unstated):
    "largest", "large" or "small" (see the release table above)."""
    found = running_release(s)
    name, size = gpu.name.lower(), gpu.memory_bytes
    if found < _VLLM_MEMORY_TIER_FROM:
        return "large" if "h100" in name or "h200" in name else "small"
    if found >= _VLLM_LARGEST_TIER_FROM and size >= _VLLM_LARGEST_BYTES:
        return "largest"
    excluded = found >= _VLLM_NOT_A100_FROM and "a100" in name
    return "large" if size >= _VLLM_LARGE_BYTES and not excluded else "small"


# SGLang's ``ServerArgs.__post_init__`` picks ``chunked_prefill_size`` (the prompt tokens one scheduler puts in a
# forward pass) from the memory the device reports in MiB (nvidia-smi / amd-smi ``memory.total``) when the server
# is started without one (python/sglang/srt/server_args.py of each release's wheel):
# - 0.4.0-0.4.3.post2 (read at 0.4.0, 0.4.1, 0.4.2.post4, 0.4.3.post2): 2,048 under 25,000 MiB, else 8,192;
#   ``--enable-dp-attention`` sets dp_size = tp_size and halves it, per DP rank, each rank scheduling its own;
# - 0.4.6 (0.4.6.post2): the same tiers (16,384 only for a prefill/decode-disaggregated server); under attention DP
#   each of the dp_size ranks takes chunked_prefill_size // dp_size;
# - 0.5.3 on (0.5.3, 0.5.4.post2, 0.5.5.post1, 0.5.6.post2, ``_handle_gpu_memory_settings``): 2,048 under 35 GiB,
#   4,096 under 60 GiB, 8,192 under 160 GiB (H100, H200, A100 80GB), 16,384 above (B200, MI300X); 4,096 where no
#   memory is read; attention DP as in 0.4.6.
# Releases 0.4.4-0.4.5 and 0.5.0-0.5.2 were not read and take the rule of the nearest earlier read one. The budget
# gpuplan schedules is the whole pass over every rank: per-rank chunk x DP ranks (gpuplan's attention DP runs one
# rank per TP rank). Other platforms (Ascend NPUs from 0.5.4) keep engines.csv's.
_SGLANG_CHUNK_TIERS_FROM = (0, 5, 3)
_SGLANG_DP_SPLIT_FROM = (0, 4, 6)
_SGLANG_CHUNK_TIERS_GIB = ((35, 2048), (60, 4096), (160, 8192))  # (below GiB, tokens); larger: 16,384
_SGLANG_CHUNK_SMALL_MIB = 25_000  # before 0.5.3: 2,048 below, 8,192 from


def sglang_chunk(s: types.InferSetup, gpu: types.Gpu) -> int:
    """Prompt tokens SGLang's release of ``s`` (the current one when unstated) puts in one forward pass on ``gpu``
    by default, over every attention-DP rank (the table above)."""
    chunk = _sglang_server_chunk(s, gpu)
    if not s.attention_dp or s.tp < 2:
        return chunk
    if running_release(s) < _SGLANG_DP_SPLIT_FROM:
        return chunk // 2 * s.tp
    return chunk // s.tp * s.tp


def _sglang_server_chunk(s: types.InferSetup, gpu: types.Gpu) -> int:
    """The ``chunked_prefill_size`` SGLang's release of ``s`` picks on ``gpu``, before attention DP splits it."""
    mib = gpu.memory_bytes / 2**20
    if running_release(s) >= _SGLANG_CHUNK_TIERS_FROM:
        return next((tokens for below, tokens in _SGLANG_CHUNK_TIERS_GIB if mib < below * 1024), 16384)
    return 2048 if mib < _SGLANG_CHUNK_SMALL_MIB else 8192


# SGLang's ``ServerArgs.__post_init__`` picks ``mem_fraction_static`` (the share of the GPU's memory for weights and
# the KV pool, so it sets how many sequences run at once) when the server is started without one
# (python/sglang/srt/server_args.py of each release's wheel):
# - 0.4.0-0.4.3.post2 (read at 0.4.0, 0.4.1, 0.4.3.post2): by tp_size: 0.79 from TP 16, 0.81 from 8, 0.85 from 4,
#   0.87 from 2, else 0.88; 0.3.6.post3 the same but 0.82 from TP 8 (earlier releases take it too);
# - 0.4.6 (0.4.6.post2): the same table over tp_size x pp_size on parts of 81,920 MiB or less, 0.88 on larger ones;
#   above 96 GiB then min(f + 48 GiB x (1 - f) / memory, (memory - 18 GiB) / memory);
# - 0.5.3 on (0.5.3, 0.5.6.post2, ``_handle_gpu_memory_settings``): (memory - reserve) / memory, rounded to 0.001,
#   reserve in MiB = 512 + 1.5 x max(chunked_prefill_size, 2,048) + 2 x cuda_graph_max_bs + tp x pp / 8 x 1,024
#   (+ 3 x cuda_graph_max_bs x dp_size under attention DP, + 1.5 x that again above a 300 graph batch), at least
#   10,240 on parts over 60 GiB; the chunk is the server's, before attention DP splits it.
# Releases 0.4.4-0.4.5 and 0.5.0-0.5.2 were not read and take the rule of the nearest earlier read one. Not modelled:
# speculative decoding's extra reserve, multimodal models' lower share, ROCm aiter's x 0.85 beyond 8,192 positions.
_SGLANG_FRACTION_BY_TP = ((16, 0.79), (8, 0.81), (4, 0.85), (2, 0.87))  # (from parallel size, share); else 0.88
_SGLANG_FRACTION_TP8_BEFORE_040 = 0.82
_SGLANG_FRACTION_BY_MEMORY_FROM = (0, 4, 6)
_SGLANG_FRACTION_RESERVE_FROM = (0, 5, 3)


def _sglang_fraction_by_tp(parallel: int) -> float:
    return next((share for least, share in _SGLANG_FRACTION_BY_TP if parallel >= least), 0.88)


def sglang_mem_fraction(s: types.InferSetup, gpu: types.Gpu) -> float:
    """The ``mem_fraction_static`` SGLang's release of ``s`` (the current one when unstated) picks on ``gpu`` (the
    table above); ``s.max_batched_tokens`` is the server's stated prompt chunk, if any."""
    found, mib = running_release(s), gpu.memory_bytes / 2**20
    if found >= _SGLANG_FRACTION_RESERVE_FROM:
        chunk = s.max_batched_tokens or _sglang_server_chunk(s, gpu)
        graph = _sglang_graph_max(s, gpu)
        reserve = 512 + max(chunk, 2048) * 1.5 + graph * 2 + s.tp * s.pp / 8 * 1024
        if s.attention_dp and s.tp > 1:
            reserve += graph * s.tp * (3 + (1.5 if graph > 300 else 0))
        if mib > 60 * 1024:
            reserve = max(reserve, 10 * 1024)
        return round((mib - reserve) / mib, 3)
    if found < (0, 4, 0) and 8 <= s.tp < 16:
        return _SGLANG_FRACTION_TP8_BEFORE_040
    if found < _SGLANG_FRACTION_BY_MEMORY_FROM:
        return _sglang_fraction_by_tp(s.tp)
    share = _sglang_fraction_by_tp(s.tp * s.pp) if mib <= 81920 else 0.88
    if mib > 96 * 1024:
        share = min(share + 48 * 1024 * (1 - share) / mib, (mib - 18 * 1024) / mib)
    return share


def with_engine_defaults(s: types.InferSetup, gpu: types.Gpu) -> types.InferSetup:
    """``s`` with the scheduler limits its engine release picks on ``gpu`` filled in where ``s`` states none
    (``max_batched_tokens``, ``max_num_seqs``): vLLM V1's depend on the GPU and on the entry point (the API server
    unless ``s.launcher`` is :data:`VLLM_LLM_CLASS`); SGLang's prompt chunk on the GPU's memory and attention DP
    (:func:`sglang_chunk`) and its memory share (``gpu_memory_utilization``: :func:`sglang_mem_fraction`) on NVIDIA
    and AMD parts; other engines and vLLM V0 keep ``engines.csv``'s."""
    if s.engine == types.Engine.SGLANG and gpu.vendor in _GRAPH_VENDORS:
        if s.max_batched_tokens and s.gpu_memory_utilization:
            return s
        return replace(s, max_batched_tokens=s.max_batched_tokens or sglang_chunk(s, gpu),
                       gpu_memory_utilization=s.gpu_memory_utilization or sglang_mem_fraction(s, gpu))
    if s.engine != types.Engine.VLLM or vllm_v0(s) or (s.max_batched_tokens and s.max_num_seqs):
        return s
    tier = vllm_tier(s, gpu)
    offline, server = _VLLM_TOKENS[tier]
    seqs = 1024 if tier != "small" or running_release(s) < _VLLM_SEQS_BY_TIER_FROM else 256
    tokens = offline if s.launcher == VLLM_LLM_CLASS else server
    return replace(s, max_batched_tokens=s.max_batched_tokens or tokens, max_num_seqs=s.max_num_seqs or seqs)


def token_budget(m: types.ModelSpec, s: types.InferSetup) -> int | None:
    """Prompt tokens the engine's scheduler puts in one forward pass: the engine's ``max_batched_tokens``, except
    where the release that ran did otherwise. vLLM before 0.8 (V0) with chunked prefill (:func:`v0_chunked_prefill`)
    takes passes of 512 tokens; without it, and always for MLA models
    (vllm/config.py @v0.7.3, VllmConfig.__post_init__: "MLA is enabled; forcing chunked prefill and prefix caching
    to be disabled"), it takes max_num_batched_tokens = max(max_model_len, 2048), so a pass takes whole prompts up to
    the served context length: ``--max-model-len`` where the server was started with one (``s.max_model_len``),
    else the model's. A wave of arriving prompts is prefilled in passes that large, and every prompt of a pass
    gets its first token when the whole pass ends. A budget on the setup (``s.max_batched_tokens``: stated by the
    run, or filled by :func:`with_engine_defaults`) comes first."""
    if s.max_batched_tokens:  # stated by the run, or its release's default
        return s.max_batched_tokens
    chunked = v0_chunked_prefill(m, s)
    if chunked is not None:
        return _VLLM_V0_CHUNK_BUDGET if chunked else max(s.max_model_len or m.max_positions, _VLLM_V0_MIN_BUDGET)
    return engine(s.engine).max_batched_tokens


def v0_chunked_prefill(m: types.ModelSpec, s: types.InferSetup) -> bool | None:
    """Whether vLLM's V0 engine chunks the prompts of ``s``: never for an MLA model, else as the run says
    (``s.chunked_prefill``); None for a setup that is not V0's or does not say. V0's own default (off, but on for a
    served context above 32K tokens under conditions that changed between releases: vllm/engine/arg_utils.py
    ``use_long_context``) is not guessed: such a setup keeps ``engines.csv``'s budget."""
    if not vllm_v0(s):
        return None
    return False if m.is_mla else s.chunked_prefill


def prefill_only_steps(m: types.ModelSpec, s: types.InferSetup) -> bool:
    """Whether a step that prefills carries no decodes: vLLM's V0 scheduler without chunked prefill schedules the
    waiting prompts first and, when it scheduled any, runs no decode in that step (vllm/core/scheduler.py
    ``_schedule_default``: "Don't schedule decodes if prefills are scheduled", vllm-project/vllm
    @0dce2b29aaaa36d3b7e5d80302b1018c1c296eee). Running sequences then wait out the whole prompt step, and a new
    prompt waits only for the decode step under way, never carrying one."""
    return v0_chunked_prefill(m, s) is False


# SGLang's MLA prompt path by release (python/sglang/srt/models/deepseek_v2.py, DeepseekV2AttentionMLA.forward, read
# in the 0.3.6.post3, 0.4.0, 0.4.1, 0.4.2.post4 and 0.4.3.post2 wheels): up to 0.4.0 it has only the absorbed path
# (forward_absorb), which attends against the cached latent; 0.4.1 added forward_normal (decompressed keys and
# values) for extend batches whose extend_prefix_lens sum to 0, and without --enable-flashinfer-mla (off by default)
# runs forward_absorb for any batch in which one request continues from cached tokens: a chunk of a prompt begun
# in an earlier pass or a radix-cache match (on by default). A server's radix tree holds the prompts it has
# served, and a new prompt that shares its first tokens with them (a tokenizer's BOS, a chat template's opening)
# starts from those cached tokens, so once it has served one request nearly every prompt pass runs the absorbed
# path. From 0.4.6 the backend decides (dispatch_attn_forward_method: FA3 on Hopper prefills with decompressed
# heads when the cached prefix is 0 or at least 8,192 tokens), which is not modelled here.
_SGLANG_PREFIX_RULE_UNTIL = (0, 4, 6)


def prefills_mla_in_latent(m: types.ModelSpec, s: types.InferSetup) -> bool:
    """Whether the engine of ``s`` prefills an MLA model's prompts with the absorbed (latent) attention rather than
    decompressed heads: SGLang before 0.4.6 (the table above)."""
    return m.is_mla and s.engine == types.Engine.SGLANG and running_release(s) < _SGLANG_PREFIX_RULE_UNTIL


# The routed experts of a block-FP8 checkpoint (DeepSeek-V3/R1, weight_block_size [128, 128]) served with its FP8
# weights run the Triton fused-MoE kernel (fused_experts with use_fp8_w8a8 and block_shape) in vLLM 0.7.x
# (layers/quantization/fp8.py Fp8MoEMethod) and in SGLang up to 0.4.3.post2 (layers/moe/fused_moe_triton), with
# tuned configs for E=256 on H100/H200 (both wheels' configs/; SGLang 0.4.1 carries none and runs the default tile).
# vllm-project/vllm PR #13932 (2025-02-26) timed that kernel on DeepSeek-V3's expert shapes on one H100
# (benchmarks/kernels/benchmark_moe.py --dtype fp8_w8a8, E 256, top-8, K 7,168): 48-64 TFLOP/s at TP 8 (1,024 and
# 2,048 tokens) and at most 80 TFLOP/s at TP 1 (3,072 tokens), 3-4 % of the FP8 peak. Its best figure bounds the
# experts' rate on an NVIDIA GPU for the releases up to that measurement (vLLM before 0.8.0, SGLang before 0.4.4);
# later releases changed the kernel's configs and backends (DeepGEMM MoE), which the figure does not describe. No
# figure of the ROCm build of the kernel was found, so AMD parts keep the fitted rate.
TRITON_BLOCK_FP8_MOE_FLOPS_PER_S = 80e12
_TRITON_BLOCK_FP8_MOE_UNTIL = {"vllm": (0, 8, 0), "sglang": (0, 4, 4)}


def triton_block_fp8_moe_cap(m: types.ModelSpec, s: types.InferSetup, gpu: types.Gpu) -> float | None:
    """FLOP/s per GPU the routed experts reach at most where the release of ``s`` runs them through the Triton
    fused-MoE kernel on block-FP8 weights on an NVIDIA part (the table above); None elsewhere. A setup that states
    no release runs the current one, which the cap does not describe."""
    until = _TRITON_BLOCK_FP8_MOE_UNTIL.get(str(s.engine))
    if (until is None or not m.is_moe or m.weight_block is None or s.weight_format != "fp8"
            or gpu.vendor != "NVIDIA" or running_release(s) >= until):
        return None
    return TRITON_BLOCK_FP8_MOE_FLOPS_PER_S


def sequence_cap(s: types.InferSetup) -> int | None:
    """The most sequences the engine runs at once under ``s``: the setup's ``max_num_seqs``, else the engine's
    default (``engines.csv``); None for an engine with no cap (transformers, llama.cpp: as many as memory holds)."""
    return s.max_num_seqs or engine(s.engine).max_num_seqs


def step_overhead_keys(s: types.InferSetup, keys: tuple[str, ...]) -> tuple[str, ...]:
    """The fitted per-layer step overhead's keys for the setup's release: vLLM's V0 engine (before 0.8) first
    looks up ``layer_overhead_s_vllm_v0`` (its scheduler, input preparation and sampler run in Python on every
    step; V1 moved them to a persistent batch and a separate process, vLLM blog "vLLM V1", 2025-01-27), then the
    engine's own keys, so until a fit holds a V0 value the V1 one stands in."""
    return ("layer_overhead_s_vllm_v0", *keys) if vllm_v0(s) else keys


def request_overhead_keys(s: types.InferSetup, gpu: types.Gpu | None) -> tuple[str, ...]:
    """The fitted fixed latency per request's keys for the setup's engine, backend and release: vLLM's V0 engine
    (before 0.8) first looks up its backend's key with ``_v0`` (``request_overhead_s_vllm_v0``), then the backend's
    own keys (:func:`efficiency_keys`), so until a fit holds a V0 value the V1 one stands in.

    The path of a request to its first token is not the same code in the two generations. V0's OpenAI server drove
    the ``AsyncLLMEngine`` in its own asyncio loop (scheduler, model runner and detokenizer stepped in the server's
    process: vllm-project/vllm RFC #6797), or from 0.5.4 (PR #6883, ``--disable-frontend-multiprocessing`` to turn it
    off) one engine process that detokenizes itself and returns whole ``RequestOutput`` objects over ZMQ. V1 splits a
    request between the API server's process (tokenization, output processing and detokenization) and a separate
    engine-core process with a busy loop, over ZMQ both ways (vllm/v1/engine/async_llm.py and core_client.py)."""
    keys = efficiency_keys("request_overhead_s", s.engine, gpu)
    return (f"{keys[0]}_v0", *keys) if vllm_v0(s) else keys


# TensorRT-LLM 1.0 made the PyTorch backend (tensorrt_llm/_torch/pyexecutor) the default of trtllm-serve and the LLM
# API (tensorrt_llm/commands/serve.py get_llm_args: backend="pytorch"; TorchLlmArgs.init_backend); before it they
# ran a built TensorRT engine in the C++ executor, whose steps have no Python on their path
TRTLLM_PYTORCH_FROM = (1, 0, 0)
TRTLLM_BENCH = "trtllm-bench"


def trtllm_pytorch(s: types.InferSetup) -> bool:
    """Whether the setup runs TensorRT-LLM's PyTorch backend: no release stated (plans run the current one), 1.0 or
    later (``TRTLLM_PYTORCH_FROM``), or a 0.x release whose text names the PyTorch backend."""
    if s.engine != types.Engine.TRTLLM:
        return False
    if not s.engine_version:
        return True
    found = release(s.engine_version)
    return (found is not None and found >= TRTLLM_PYTORCH_FROM) or "pytorch" in s.engine_version.lower()


# The Apple M5 GPU's matrix units (its Neural Accelerators, ``Gpu.matrix_fp16_flops_per_s``) are reached only through
# Metal 4 tensor operations (MetalPerformancePrimitives matmul2d); other Metal kernels run on the ALUs. An engine uses
# them where its release does:
# - MLX from 0.30.0 (ml-explore/mlx PR #2772 "Add Neural Accelerator Support", commit 54f1cc6e, 2025-11-19, first
#   tagged v0.30.0): on GPU generation 17 (M5) or later under macOS 26.2 or later, in a build made with the macOS 26.2
#   SDK (its macOS 26 wheels), its 16-bit GEMMs, its quantized GEMMs (K a multiple of 64), its gathered (MoE) GEMMs
#   and its prefill attention run NAX kernels (mlx/backend/metal/device.h is_nax_available, matmul.cpp, quantized.cpp,
#   scaled_dot_product_attention.cpp at 54f1cc6e);
# - llama.cpp from PR #16634 ("metal : initial Metal4 tensor API support", Oct 2025): its matrix-matrix kernels
#   (mul_mm, mul_mm_id; not its mat-vec or flash-attention kernels), where a start-up probe compiles the tensor
#   kernels; builds before PR #27461 (release b10734, Aug 2026) leave the Metal language version of that compile at
#   the SDK's default, so a binary built against an older SDK fails the probe and silently runs the ALU kernels
#   (llama.cpp issue #27473). A stated build before b10734, or an unstated one, is read as without; the PR's own
#   branch, run on an M5 in its thread, as with (pp512 of a 7B Q4_0 at 608 t/s, about 8.8 TFLOP/s, twice the ALU
#   peak).
MLX_NAX_FROM = (0, 30, 0)
LLAMACPP_TENSOR_BUILD = 10734
_TENSOR_PR_BRANCH = "PR #16634"


def metal_tensor_gemm(s: types.InferSetup) -> bool:
    """Whether the setup's GEMMs run on Metal 4 tensor operations, where the part has matrix units: MLX of no stated
    release (plans run the current one) or 0.30.0 and later; llama.cpp of no stated build, b10734 and later, or PR
    #16634's branch."""
    version = s.engine_version.strip()
    if s.engine == types.Engine.MLX:
        found = release(version)
        return not version or (found is not None and found >= MLX_NAX_FROM)
    if s.engine == types.Engine.LLAMACPP:
        build = re.fullmatch(r"b(\d+)", version)
        return (not version or _TENSOR_PR_BRANCH in version
                or (build is not None and int(build.group(1)) >= LLAMACPP_TENSOR_BUILD))
    return False


def metal_tensor_attention(s: types.InferSetup) -> bool:
    """Whether the setup's prefill attention runs on the matrix units too: MLX's does (steel_attention_nax), llama.cpp's
    flash-attention kernels do not."""
    return s.engine == types.Engine.MLX and metal_tensor_gemm(s)


# The host seconds per running sequence of a decode step (:func:`host_sequence_key`) belong to an engine's step
# loop, not to its kernels: TensorRT-LLM's PyTorch backend prepares every step in Python on the host (the executor
# loop, tensorrt_llm/_torch/pyexecutor/py_executor.py, schedules the requests and updates each one's state, and
# model_engine.py ``_prepare_tp_inputs`` builds the step's inputs and attention metadata in a loop over the
# scheduled requests), work that grows with the sequences it runs. Its built-engine predecessor ran that loop in
# C++ (the executor of releases before 1.0).
#
# vLLM and SGLang spend host time per running sequence too (scheduling, block tables, input preparation, sampling
# and output processing). vLLM's V0 engine (before 0.8) runs it between GPU steps: its profile of Llama-3-8B on one
# H100 found the GPU busy ~38 % of the time (vLLM blog "vLLM v0.6.0: 2.7x Throughput Improvement and 5x Latency
# Reduction", 2024-09-05; 0.6 made output processing asynchronous, the scheduling and input preparation stay
# serial). V1 (the default from 0.8) keeps a persistent batch and detokenises in another process ("vLLM V1" blog,
# 2025-01-27), yet its EngineCore still schedules, launches the step and waits for its sampled tokens before it
# schedules the next (vllm/v1/engine/core.py ``EngineCore.step``), so its smaller host time also adds to the step,
# until async scheduling, which schedules step n + 1 while the GPU runs step n, became the default in 0.14.0 (release
# notes of v0.14.0, vllm-project/vllm PR #27614; not under pipeline parallelism). SGLang's overlap scheduler (the
# default from 0.4, LMSYS blog "SGLang v0.4: Zero-Overhead Batch Scheduler", 2024-12-04; ``event_loop_overlap``)
# prepares batch n + 1 while the GPU runs batch n, as TensorRT-LLM's PyTorch backend does: there a step lasts the
# longer of the two.
VLLM_ASYNC_SCHEDULING_FROM = (0, 14, 0)
HOST_SEQUENCE_KEY = "host_seq_s_trtllm_pytorch"
HOST_SEQUENCE_KEY_VLLM_V0 = "host_seq_s_vllm_v0"
HOST_SEQUENCE_KEY_VLLM = "host_seq_s_vllm"
HOST_SEQUENCE_KEY_SGLANG = "host_seq_s_sglang"
HOST_SEQUENCE_KEYS = (HOST_SEQUENCE_KEY, HOST_SEQUENCE_KEY_VLLM_V0, HOST_SEQUENCE_KEY_VLLM, HOST_SEQUENCE_KEY_SGLANG)


def host_sequence_key(s: types.InferSetup) -> str | None:
    """The fitted parameter that holds the setup's host seconds per running sequence of a decode step, or None
    for an engine whose step loop is not modelled so (``HOST_SEQUENCE_KEYS``)."""
    if trtllm_pytorch(s):
        return HOST_SEQUENCE_KEY
    if s.engine == types.Engine.VLLM:
        return HOST_SEQUENCE_KEY_VLLM_V0 if vllm_v0(s) else HOST_SEQUENCE_KEY_VLLM
    if s.engine == types.Engine.SGLANG:
        return HOST_SEQUENCE_KEY_SGLANG
    return None


def host_overlaps_step(s: types.InferSetup) -> bool:
    """Whether the engine prepares step n + 1 on the host while the GPU runs step n (TensorRT-LLM's PyTorch backend,
    SGLang's overlap scheduler, vLLM from 0.14 without pipeline parallelism: ``VLLM_ASYNC_SCHEDULING_FROM``), so that
    a step lasts the longer of the two; an earlier vLLM's host time adds to the step, unless the server was started
    with ``--async-scheduling`` (``s.async_scheduling``; 0.10 added the flag: vllm-project/vllm PR #19970). No stated
    release: the current one."""
    if s.engine != types.Engine.VLLM:
        return True
    if s.async_scheduling is not None:
        return s.async_scheduling and s.pp <= 1
    return running_release(s) >= VLLM_ASYNC_SCHEDULING_FROM and s.pp <= 1


# vLLM V1 captures CUDA graphs per count of scheduled tokens and pads a step to the next captured size; a step of
# more tokens than the largest runs the compiled model without a graph. Read in each release's wheel:
# - 0.8.x: [1, 2, 4] + 8, 16, ..., 512, less the sizes above max_num_batched_tokens (vllm/config.py
#   ``VllmConfig._set_cudagraph_sizes``, 0.8.3);
# - 0.10.x-0.11: [1, 2, 4] + multiples of 8 up to min(2 x max_num_seqs, 512), the same filter (vllm/config/__init__.py
#   ``_set_cudagraph_sizes``, vllm/config/scheduler.py ``cuda_graph_sizes``, 0.10.2 and 0.11.0);
# - 0.13.0: [1, 2, 4] + 8, ..., 248 + 256, 272, ... up to min(2 x max_num_seqs, 512, max_num_batched_tokens)
#   (vllm/config/vllm.py ``_set_cudagraph_sizes``).
# A decode step has one token per sequence and never more sequences than max_num_seqs, so under every release the
# largest graphed decode batch is min(512, max_num_batched_tokens); the runner pads a batch of 130 to the 136 graph
# (a few idle rows, not modelled). V0 (before 0.8) captured the padded max_num_seqs (vllm/worker/model_runner.py
# ``_get_max_graph_batch_size``, 0.6.3: up to 8,192), so every batch its scheduler runs replays a graph.
_VLLM_GRAPH_MAX = 512

# SGLang pads a decode batch to the next captured size up to ``cuda_graph_max_bs``; a larger batch runs
# ``forward_decode`` op by op (model_executor/cuda_graph_runner.py ``can_run``: batch_size <= max_bs). The largest
# captured batch, by release (python/sglang/srt/server_args.py and cuda_graph_runner.py
# ``get_batch_sizes_to_capture`` of each wheel):
# - before 0.4.6 (read at 0.4.3.post2): 160, or 8 (TP below 4) and 80 on GPUs under 25,000 MiB; ROCm builds add the
#   sizes 168-256;
# - 0.4.6 (0.4.6.post2): 160, plus 168-256 on GPUs over 96 GiB; cuda_graph_max_bs set only under 25,000 MiB;
# - 0.5.3 on (0.5.3, 0.5.4.post2, 0.5.6.post2): ``cuda_graph_max_bs`` by GPU memory (MiB) and TP: under 20 GiB 8;
#   under 35 GiB 16 (0.5.3) or 24 (0.5.4 on) below TP 4, else 80; under 60 GiB 32 / 160; under 160 GiB 256 / 512;
#   larger 512 (``_handle_gpu_memory_settings``). Releases 0.5.0-0.5.2 were not read and take 0.4.6's rule.
_SGLANG_GRAPH_TIERS_FROM = (0, 5, 3)
_SGLANG_WIDER_SMALL_FROM = (0, 5, 4)
_SGLANG_256_ABOVE_FROM = (0, 4, 6)
_SGLANG_TIERS_GIB = ((20, 8, 8), (35, 16, 80), (60, 32, 160), (160, 256, 512))  # (below GiB, TP < 4, TP >= 4)
# the capture rules above are the CUDA/ROCm model runners'
_GRAPH_VENDORS = ("NVIDIA", "AMD")


def _vllm_graph_max(s: types.InferSetup) -> int | None:
    """The largest decode batch vLLM replays a graph for, None for V0 (every batch its scheduler allows)."""
    if vllm_v0(s):
        return None
    budget = s.max_batched_tokens or engine(s.engine).max_batched_tokens
    return min(_VLLM_GRAPH_MAX, budget) if budget else _VLLM_GRAPH_MAX


def _sglang_graph_max(s: types.InferSetup, gpu: types.Gpu | None) -> int:
    """The largest decode batch SGLang's release of ``s`` captures on ``gpu`` (the table above); 160 where the GPU
    is unknown (the releases' own fallback)."""
    found = running_release(s)
    mib = gpu.memory_bytes / 2**20 if gpu is not None else None
    small = s.tp < 4
    if found >= _SGLANG_GRAPH_TIERS_FROM:
        if mib is None:
            return 160
        for below_gib, low_tp, high_tp in _SGLANG_TIERS_GIB:
            if mib < below_gib * 1024:
                wider = below_gib == 35 and found >= _SGLANG_WIDER_SMALL_FROM
                return (24 if wider else low_tp) if small else high_tp
        return 512
    if mib is not None and mib < 25_000:
        return 8 if small else 80
    rocm = gpu is not None and gpu.vendor.lower() == "amd"
    wide = rocm if found < _SGLANG_256_ABOVE_FROM else mib is not None and mib > 96 * 1024
    return 256 if wide else 160


def graph_batches(s: types.InferSetup, gpu: types.Gpu | None = None) -> frozenset[int] | None:
    """Decode batch sizes the engine replays a captured CUDA graph for, where its other steps launch every kernel
    from Python one by one (op by op, "eager"); None where every decode step replays one or the engine's fitted step
    overhead covers every step (prompt-carrying steps: :func:`prompt_steps_eager`).

    TensorRT-LLM's PyTorch backend under ``trtllm-serve`` keeps ``CudaGraphConfig``'s defaults: ``max_batch_size``
    0, read as 128, without padding, so graphs exist for exactly 1–31, 32, 64 and 128 sequences (plus the powers of
    two from 256 below a larger maximum) and a decode batch of any other size, like every step that carries a
    prompt, runs eager (tensorrt_llm/llmapi/llm_args.py ``CudaGraphConfig._generate_cuda_graph_batch_sizes`` and
    ``TorchLlmArgs.validate_cuda_graph_config``; the field's description: graphs "are enabled for batches that
    consist of decoding requests *only*"). ``trtllm-bench`` instead captures padded graphs up to the batch it runs
    (``enable_padding`` with its ``max_batch_size``): no decode step of its runs eager, though under the PyTorch
    backend its passes that carry prompt tokens still do (:func:`prompt_steps_eager`); a release before 1.0 ran a
    TensorRT engine, without eager steps. A stated release of 0.x that names the PyTorch backend ran it.

    vLLM V1 and SGLang pad a decode batch to the next captured size, so every batch up to the largest captured one
    replays a graph and larger ones run op by op (``_VLLM_GRAPH_MAX`` and ``_SGLANG_TIERS_GIB`` above: SGLang's
    largest depends on ``gpu``'s memory and the TP degree). vLLM V0 captured up to its max_num_seqs: None; so is
    either engine on a part other than NVIDIA's or AMD's, whose platform plugin runs its own model runner.

    A server started with CUDA graphs off (``cuda_graphs`` False) replays none: SGLang's ``--disable-cuda-graph``
    leaves ``ModelRunner.init_cuda_graphs`` without a ``CudaGraphRunner``, so every decode batch runs the model's
    forward op by op — and ``--enable-torch-compile``, which SGLang applies only to the batches that runner
    captures, changes nothing then (python/sglang/srt/model_executor/model_runner.py ``init_cuda_graphs`` and
    cuda_graph_runner.py, v0.4.x); vLLM's ``--enforce-eager`` likewise."""
    if not s.cuda_graphs:
        return frozenset()
    if s.engine in (types.Engine.VLLM, types.Engine.SGLANG) and gpu is not None and gpu.vendor not in _GRAPH_VENDORS:
        return None  # another platform's model runner (vllm-ascend, XPU): its own graph rules, not read
    if s.engine == types.Engine.VLLM:
        top = _vllm_graph_max(s)
        return None if top is None else _padded_sizes(top)
    if s.engine == types.Engine.SGLANG:
        return _padded_sizes(_sglang_graph_max(s, gpu))
    top = engine(s.engine).cuda_graph_max_batch
    if top is None or s.launcher == TRTLLM_BENCH or not trtllm_pytorch(s):
        return None
    sizes = {*range(1, 32), 32, 64, 128}
    sizes |= {2 ** i for i in range(8, max(8, math.ceil(math.log2(top))))}
    return frozenset(b for b in sizes | {top} if b <= top)


@cache
def _padded_sizes(top: int) -> frozenset[int]:
    """Every decode batch from 1 to ``top``: an engine that pads a batch to its next captured size replays a graph
    for each (one set per size, shared: a plan asks for it per setup and GPU)."""
    return frozenset(range(1, top + 1))


def prompt_steps_eager(s: types.InferSetup) -> bool:
    """Whether a step that carries prompt tokens pays the op-by-op host time of :func:`graph_batches`' other steps:
    under TensorRT-LLM's PyTorch backend, whatever launched it (its graphs hold decode-only batches:
    ``CudaGraphConfig`` in tensorrt_llm/llmapi/llm_args.py, graphs "are enabled for batches that consist of
    decoding requests *only*"; ``trtllm-bench``'s padded graphs too), not in a release before 1.0 that ran a built
    TensorRT engine in the C++ executor; and on a server started without graphs. vLLM V1 captures by scheduled
    tokens, prompt steps of up to 512 tokens included (piecewise graphs around attention, vLLM docs "CUDA Graphs"),
    and a larger pass is GPU-bound; SGLang's prompt (extend) steps run without
    a graph, a host cost its fitted per-layer overhead has always carried (bench/fit.py fits it on TTFT rows too)."""
    return not s.cuda_graphs or trtllm_pytorch(s)


def engine_name(name: str, field: str = "--engine") -> types.Engine:
    """The engine ``name`` (or an alias: "llama.cpp", "tensorrt-llm") stands for."""
    return types.Engine(engine(name, field).engine)


# the other names an engine goes by
_ALIASES = MappingProxyType({"transformers": "hf", "huggingface": "hf", "tensorrt-llm": "trtllm", "trt-llm": "trtllm",
                             "llama.cpp": "llamacpp", "llama-cpp": "llamacpp", "mlx-lm": "mlx", "mlx_lm": "mlx"})


def engine(name: str, field: str = "--engine") -> Engine:
    table = engines()
    key = _ALIASES.get(name.lower(), name.lower())
    if key not in table:
        raise InputError(field, f"unknown engine '{name}'.", f"use one of: {', '.join(table)}.")
    return table[key]


def runs_on(engine_name: str, vendor: str, architecture: str, chip: str | None = None) -> bool:
    """Whether ``engine_name`` supports a part of this vendor, architecture and chip (``data/runs_on.csv``)."""
    return hardware.runs_on("engine", engine_name, vendor, architecture, chip)
