"""The batch and token limits ``trtllm-bench`` picks for itself when a run does not pass them.

TensorRT-LLM's offline benchmark, given a dataset and no ``--max_batch_size`` / ``--max_num_tokens``, sizes its
scheduler from the model, the GPUs and the dataset's mean lengths: ``calc_engine_setting`` and
``finetune_setting`` in NVIDIA/TensorRT-LLM ``tensorrt_llm/bench/build/tuning.py``, called by
``get_benchmark_engine_settings`` (``tensorrt_llm/bench/build/build.py``) from ``trtllm-bench build --dataset``
(the TensorRT engine flow of the 0.1x perf overviews) and, for the PyTorch backend, from ``get_settings``
(``tensorrt_llm/bench/benchmark/utils/general.py``). Four stored revisions of ``tuning.py`` were read (commits
04cba882 and the three found by content; the tags themselves could not be checked out here): they agree on every
step below and differ only in the bytes per weight of NVFP4 (0.5 from the revision that added the
``BYTES_PER_ELEM`` table; the first counts every non-FP8 weight at 2) and in a Mamba-cache term for hybrid models,
which no model here has. ``trtllm-serve`` does not run this heuristic: a server keeps the LLM API's own limits.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from gpuplan.estimate.params import count_params
from gpuplan.types import Gpu, ModelSpec

# tuning.py BYTES_PER_ELEM: what the heuristic counts per weight and per cached K/V element (any other format: 2)
_BYTES_PER_ELEM = {"fp8": 1.0, "nvfp4": 0.5}
_MAX_REQUESTS = 4096  # "Cap total batch size to avoid decoder buffer size becoming too large"
_MAX_TOKENS = 32768  # "Cap num tokens to avoid TRT activation buffer becoming too large"
_MIN_TOKENS = 2048  # "Set min to 2048 to ensure Ctx/Gen overlap efficiency"
DEFAULT_KV_FRACTION = 0.95  # calc_engine_setting's kv_cache_gpu_mem_fraction default


def config_head_size(config: Mapping[str, Any]) -> int:
    """The head size the heuristic reads from a Hugging Face ``config.json``: its ``head_size``, ``head_dim`` or
    ``attention_head_dim`` (or ``text_config.head_dim``), else ``hidden_size // num_attention_heads``
    (``ModelConfig.set_values_if_none``, ``tensorrt_llm/bench/build/dataclasses.py`` @04cba882). An MLA config
    states none (DeepSeek-V3/R1: ``qk_nope_head_dim`` 128, ``qk_rope_head_dim`` 64, ``v_head_dim`` 128, and 7,168 /
    128 heads), so the heuristic sizes its cache at 56 per head: not the latent cache the model keeps (576 per
    token and layer), nor the 192 of a query head that :class:`~gpuplan.types.ModelSpec` holds."""
    text = config.get("text_config") or {}
    stated = config.get("head_size") or config.get("head_dim") or config.get("attention_head_dim") \
        or text.get("head_dim")
    if stated:
        return int(stated)
    hidden = config.get("hidden_size") or config.get("n_embd") or text.get("hidden_size") or 0
    heads = config.get("num_attention_heads") or config.get("n_head") or text.get("num_attention_heads") or 1
    return int(hidden) // int(heads)


def requests_in_cache(m: ModelSpec, gpu: Gpu, weight_format: str, kv_dtype: str, tp: int, pp: int,
                      context_len: int, kv_fraction: float = DEFAULT_KV_FRACTION,
                      head_size: int | None = None) -> float:
    """Requests of ``context_len`` tokens the heuristic expects the KV cache to hold: the total memory of the
    ``tp × pp`` GPUs (NVML's total, in GiB) less the weights at the format's bytes per weight, times
    ``kv_fraction``, over 2 × layers × max(tp, KV heads) × head size bytes per token. ``head_size``: the one the
    model's config.json gives the heuristic (:func:`config_head_size`); ``m.head_dim`` where none is passed."""
    weights_bytes = count_params(m).total * _BYTES_PER_ELEM.get(weight_format, 2.0)
    cache_bytes = (gpu.memory_bytes * tp * pp - weights_bytes) * kv_fraction
    per_token = 2 * m.n_layers * max(tp, m.n_kv_heads) * (head_size or m.head_dim) \
        * _BYTES_PER_ELEM.get(kv_dtype, 2.0)
    return cache_bytes / (per_token * context_len)


def _round_batch(raw: float) -> int:
    if raw < 256:
        return max(64, 32 * math.ceil(raw / 32))
    if raw < 1024:
        return 128 * math.ceil(raw / 128)
    return 256 * math.ceil(raw / 256)


def _round_tokens(raw: float) -> int:
    if raw < 4096:
        return max(_MIN_TOKENS, 256 * math.ceil(raw / 256))
    if raw < 8192:
        return 512 * math.ceil(raw / 512)
    return 1024 * math.ceil(raw / 1024)


def bench_limits(m: ModelSpec, gpu: Gpu, weight_format: str, kv_dtype: str, tp: int, pp: int, isl: int, osl: int,
                 kv_fraction: float = DEFAULT_KV_FRACTION, pytorch: bool = False,
                 head_size: int | None = None) -> tuple[int, int]:
    """``(max_batch_size, max_num_tokens)`` that trtllm-bench runs a dataset of ``isl``/``osl`` tokens with.

    The batch is the requests the cache holds (at most 4,096), per pipeline stage, rounded up to a multiple of 32
    (at least 64), 128 (from 256) or 256 (from 1,024); the token budget is that raw batch × (1 + isl / osl), at
    most 32,768, rounded up to 256, 512 or 1,024 and at least 2,048. The PyTorch backend (``pytorch``) runs
    without chunked prefill unless asked, so ``get_settings`` raises the budget to the longest prompt plus the
    batch. Only the GPU's memory enters, so the limits do not depend on the fitted calibration."""
    raw_bs = min(requests_in_cache(m, gpu, weight_format, kv_dtype, tp, pp, isl + osl, kv_fraction, head_size),
                 _MAX_REQUESTS) / pp
    max_bs = _round_batch(raw_bs)
    max_tokens = _round_tokens(min(raw_bs * (1 + isl / max(osl, 1)), _MAX_TOKENS))
    if pytorch:
        max_tokens = max(max_tokens, isl + max_bs)
    return max_bs, max_tokens


def running_limits(max_batch_size: int, max_num_tokens: int, tp: int, pp: int,
                   attention_dp: bool = False) -> tuple[int, int]:
    """``(sequences running at once, prompt tokens in one forward pass)`` of the whole model under the engine's
    ``max_batch_size`` and ``max_num_tokens``, which bound one scheduled batch: under pipeline parallelism the
    executor keeps ``pp`` micro-batches in flight, each scheduled to those limits (PyExecutor._executor_loop_pp,
    ``tensorrt_llm/_torch/pyexecutor/py_executor.py``; the heuristic divides its batch by ``pp`` for that reason),
    and with attention data parallelism each of the ``tp`` ranks schedules its own batch and pass."""
    ranks = tp if attention_dp else 1
    return max_batch_size * pp * ranks, max_num_tokens * ranks
