"""Expert parallelism for serving a mixture-of-experts model over many GPUs: attention data-parallel, the
routed experts split over the ranks, an all-to-all dispatch and combine around every MoE layer.

The layout (vLLM ``--data-parallel-size D --enable-expert-parallel``; SGLang ``--tp-size D --ep-size D
--enable-dp-attention --dp-size D``): D ranks of one GPU each. Every rank keeps the attention, the dense layers,
the shared experts, the embeddings and the head whole and runs them for its own sequences only, with their KV
cache (for MLA the latent, stored once per sequence instead of once per tensor-parallel GPU); the E routed
experts of each MoE layer are split E/D per rank. Before each MoE layer every token is sent to the ranks of its
top-k experts (dispatch) and the k outputs are sent back (combine): per token and MoE layer
k × hidden × bytes each way (DeepSeek-AI 2024, "DeepSeek-V3 Technical Report", arXiv:2412.19437, sec. 3.4:
cross-node all-to-all over InfiniBand and intra-node NVLink; DeepEP's dispatch/combine kernels). With the
experts spread evenly, a share (nodes − 1)/nodes of a token's k destinations is on other nodes and goes over
the network, (GPUs per node − 1)/D on other GPUs of its node over NVLink, the rest stays on its own GPU.

Per rank and decode step of B sequences (the same roofline as :mod:`gpuplan.estimate.infer_speed`, with its
fitted efficiencies):

- weights read: the rank's whole non-expert part, and of its E/D experts those that the B × D tokens of all
  ranks reach (1 − (1 − k/E)^(B·D) each, uniform routing); the dense and the expert GEMMs each take the max of
  their bytes and FLOPs, summed (separate kernels, :mod:`gpuplan.estimate.infer_speed`);
- GEMM FLOPs: B tokens through the dense part and k experts each (with every rank's tokens spread evenly over
  the experts, a rank computes on average B × k expert-token products: D·B·k/E tokens per expert × E/D experts);
- attention: its own sequences' KV cache;
- all-to-all: dispatch and combine of B tokens in every MoE layer, each paying a collective latency, the
  network and NVLink parts one after the other (errs slow; DeepEP overlaps them with compute, which is not
  counted);
- the engine's per-layer overhead, in dense-layer equivalents of the kernels launched
  (:func:`gpuplan.estimate.infer_speed.layer_launches`).

Memory per rank is :func:`gpuplan.estimate.memory.inference_memory` of the rank's share of the model
(:func:`rank_model`: E/D experts per layer, the router kept whole), at TP 1.

The load on a replica of D ranks spreads evenly (the engines' data-parallel balancing): each rank serves a D-th
of the requests, its TTFT and TPOT from the same queueing as :mod:`gpuplan.estimate.load` (continuous batching,
Little's law, M/D/1 prompt queue with Kingman's tail).

Not modelled: expert load imbalance (EPLB replicates hot experts; uniform routing is assumed), dispatch in FP8
(the plan counts 16-bit both ways: errs slow), a rank's prefill and decode tokens sharing one all-to-all.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

from gpuplan.errors import InfeasibleError
from gpuplan.estimate import load
from gpuplan.estimate.calibration import Calibration
from gpuplan.estimate.engines import engine as get_engine
from gpuplan.estimate.infer_speed import (
    compute_peak,
    gemm_flops_split,
    layer_launches,
    lora_flops_per_token,
    prefill_logit_rows,
    prompt_attention_flops_per_token,
)
from gpuplan.estimate.links import links
from gpuplan.estimate.memory import BYTES_16, inference_memory, kv_read_bytes, weights_bytes
from gpuplan.estimate.params import count_params
from gpuplan.estimate.quant import weight_format
from gpuplan.types import Gpu, InferSetup, ModelSpec

GPUS_PER_NODE = 8
ACTIVATION_BYTES = BYTES_16  # dispatch and combine in 16-bit (DeepSeek-V3 dispatches FP8: this errs slow)
_ITERATIONS = 40


@dataclass(frozen=True, slots=True)
class Layout:
    """``ranks`` GPUs, each one data-parallel attention rank and one expert-parallel rank."""

    ranks: int
    gpus_per_node: int = GPUS_PER_NODE

    @property
    def nodes(self) -> int:
        return math.ceil(self.ranks / self.gpus_per_node)

    @property
    def off_node_share(self) -> float:
        """Share of a token's expert destinations on other nodes."""
        return (self.nodes - 1) / self.nodes

    @property
    def on_node_share(self) -> float:
        """Share of a token's expert destinations on other GPUs of its own node."""
        return (min(self.ranks, self.gpus_per_node) - 1) / self.ranks


def splits(m: ModelSpec, ranks: int) -> bool:
    """Whether ``m``'s routed experts split evenly over ``ranks`` (the engines place E/D experts per rank)."""
    return m.is_moe and m.n_experts % ranks == 0 and ranks > 1


def rank_model(m: ModelSpec, ranks: int) -> ModelSpec:
    """The part of ``m`` one rank holds: E/D routed experts per MoE layer, everything else whole (the router of
    every layer too: its E columns are kept as extra parameters)."""
    if not splits(m, ranks):
        raise InfeasibleError("--gpus", f"{m.name}'s {m.n_experts} experts do not split over {ranks} ranks.",
                              "plan expert parallelism over a number of GPUs that divides the experts.")
    hit = _ranks.get((id(m), ranks))
    if hit is not None and hit[0] is m:  # the entry holds ``m``, so its id cannot have been reused
        return hit[1]
    local = m.n_experts // ranks
    router_kept = m.n_moe_layers * m.hidden * (m.n_experts - local)
    part = replace(m, n_experts=local, n_active_experts=min(m.n_active_experts, local),
                   extra_params=m.extra_params + router_kept)
    if len(_ranks) >= 256:
        _ranks.clear()
    _ranks[(id(m), ranks)] = (m, part)  # one object per model and rank count: its parameter count is cached too
    return part


_ranks: dict[tuple[int, int], tuple[ModelSpec, ModelSpec]] = {}  # rank_model's answers by (id(model), ranks)


def rank_setup(s: InferSetup) -> InferSetup:
    """A rank runs TP 1 and PP 1: the whole attention for its own sequences."""
    return replace(s, tp=1, pp=1)


def max_batch(m: ModelSpec, gpu: Gpu, s: InferSetup, ranks: int, cal: Calibration) -> int:
    """Most sequences one rank runs at once (its KV cache, its engine's cap)."""
    from gpuplan.estimate.infer_speed import max_batch as one

    return one(rank_model(m, ranks), gpu, rank_setup(s), cal)


def rank_memory_fits(m: ModelSpec, gpu: Gpu, s: InferSetup, ranks: int, cal: Calibration) -> bool:
    """Whether one rank holds its part of the model and at least one sequence of the setup's length."""
    mem = inference_memory(rank_model(m, ranks), gpu, replace(rank_setup(s), batch=1), cal, describe=False)
    return mem.capacity is not None and mem.capacity.max_concurrent_seqs >= 1


def all_to_all_seconds(m: ModelSpec, gpu: Gpu, lay: Layout, tokens: float, cal: Calibration) -> float:
    """Dispatch and combine of ``tokens`` tokens of one rank in every MoE layer: k × hidden × 2 bytes per token
    each way, over the network for the off-node share and NVLink for the on-node one, a collective latency for
    each of the two."""
    size = tokens * m.n_active_experts * m.hidden * ACTIVATION_BYTES
    link = links(gpu, cal, min(lay.ranks, lay.gpus_per_node))
    per_collective = (cal.get("allreduce_latency_s") + size * lay.off_node_share / link.inter_node +
                      size * lay.on_node_share / link.intra_node)
    return 2 * m.n_moe_layers * per_collective


def _eff(cal: Calibration, engine: str, name: str) -> float:
    return cal.get(f"{name}_{engine}")


def _bandwidth(gpu: Gpu) -> float:
    if not gpu.memory_bandwidth_bytes_per_s:
        raise InfeasibleError("--gpu", f"the memory bandwidth of {gpu.name} is not in the catalog, so its decode "
                              "speed cannot be estimated.", "add memory_bandwidth_gb_s for it in a --catalog folder.")
    return gpu.memory_bandwidth_bytes_per_s


def step_weight_bytes(m: ModelSpec, s: InferSetup, ranks: int, tokens_per_rank: float) -> float:
    """Weight bytes one rank streams in a forward pass of ``tokens_per_rank`` tokens: its non-expert part (an
    untied embedding table only for the rows gathered), and its experts that any rank's tokens reach."""
    return sum(_step_bytes(m, s, ranks, tokens_per_rank))


def _step_bytes(m: ModelSpec, s: InferSetup, ranks: int, tokens_per_rank: float) -> tuple[float, float]:
    """(dense, routed-expert) parts of :func:`step_weight_bytes`: separate kernels, each its own roofline."""
    fmt = weight_format(s.weight_format)
    mine = rank_model(m, ranks)
    total = weights_bytes(mine, fmt)
    local_experts = count_params(mine).experts * fmt.bytes_per_weight
    touched = 1.0 - (1.0 - m.n_active_experts / m.n_experts) ** max(tokens_per_rank * ranks, 1.0)
    embed_bytes = fmt.bytes_per_weight if fmt.scope == "all" else 4.0 if fmt.name == "fp32" else BYTES_16
    embeddings = 0.0 if m.tied_embeddings else count_params(m).embeddings * embed_bytes
    return max(0.0, total - local_experts - embeddings), local_experts * touched


def _gemm_seconds(m: ModelSpec, gpu: Gpu, s: InferSetup, ranks: int, tokens: float, attention_flops: float,
                  cal: Calibration, logit_rows: float | None = None) -> float:
    """One rank's GEMMs over ``tokens`` of its tokens: the roofline of the dense GEMMs (with ``attention_flops``;
    the LM head on ``logit_rows`` positions, default every token) plus that of its grouped expert GEMMs (B × k
    expert-token products: module docstring)."""
    eng = get_engine(s.engine)
    peak, _ = compute_peak(gpu, weight_format(s.weight_format), eng)
    rate = peak * _eff(cal, s.engine, "eta_compute")
    bandwidth = _bandwidth(gpu) * _eff(cal, s.engine, "eta_memory")
    dense_flops, expert_flops = gemm_flops_split(m, eng, cal)
    dense_bytes, expert_bytes = _step_bytes(m, s, ranks, tokens)
    skipped_head = 0.0 if logit_rows is None else (tokens - logit_rows) * 2.0 * m.vocab * m.hidden
    flops = tokens * (dense_flops + lora_flops_per_token(m, s)) - skipped_head + attention_flops
    dense = max(dense_bytes / bandwidth, flops / rate)
    return dense + max(expert_bytes / bandwidth, tokens * expert_flops / rate)


def decode_step_seconds(m: ModelSpec, gpu: Gpu, s: InferSetup, ranks: int, batch: float, context: float,
                        cal: Calibration) -> float:
    """One decode step of ``batch`` sequences on every rank (module docstring)."""
    eng = get_engine(s.engine)
    kv = batch * kv_read_bytes(m, context, s.kv_dtype, 1, eng.mla_latent_cache)
    attention = kv / (_bandwidth(gpu) * _eff(cal, s.engine, "eta_kv"))
    overhead = layer_launches(m) * _eff(cal, s.engine, "layer_overhead_s")
    gemms = _gemm_seconds(m, gpu, s, ranks, batch, 0.0, cal)
    return gemms + attention + all_to_all_seconds(m, gpu, Layout(ranks), batch, cal) + overhead


def prefill_seconds(m: ModelSpec, gpu: Gpu, s: InferSetup, ranks: int, tokens: float, cal: Calibration) -> float:
    """Seconds one rank takes to prefill ``tokens`` prompt tokens of its own, in passes of the engine's token
    budget (chunked prefill), each a roofline of its FLOPs and the weights it reaches, plus its all-to-all."""
    budget = s.max_batched_tokens or get_engine(s.engine).max_batched_tokens
    passes = max(1, math.ceil(tokens / budget)) if budget else 1
    per_pass = tokens / passes
    attention = per_pass * prompt_attention_flops_per_token(m, s)
    gemms = _gemm_seconds(m, gpu, s, ranks, per_pass, attention, cal, prefill_logit_rows(s, per_pass))
    overhead = layer_launches(m) * _eff(cal, s.engine, "layer_overhead_s")
    comm = all_to_all_seconds(m, gpu, Layout(ranks), per_pass, cal)
    return passes * (gemms + overhead + comm)


# ---------------------------------------------------------------- under load (one rank's share of the requests)


def _iteration(m: ModelSpec, gpu: Gpu, s: InferSetup, ranks: int, batch: float, rho: float,
               cal: Calibration) -> float:
    step = decode_step_seconds(m, gpu, s, ranks, max(batch, 1.0), s.prompt_len + s.output_len / 2, cal)
    return step / max(1.0 - rho, 1e-9)


def _longest_iteration(m: ModelSpec, gpu: Gpu, s: InferSetup, ranks: int, batch: float, cal: Calibration) -> float:
    budget = s.max_batched_tokens or get_engine(s.engine).max_batched_tokens
    if not budget:
        return math.inf
    step = decode_step_seconds(m, gpu, s, ranks, max(batch, 1.0), s.prompt_len + s.output_len / 2, cal)
    return max(step, prefill_seconds(m, gpu, s, ranks, float(budget), cal))


def capacity(m: ModelSpec, gpu: Gpu, s: InferSetup, ranks: int, cal: Calibration) -> float:
    """The largest request rate (requests/s) the whole replica of ``ranks`` ranks keeps up with: ``ranks`` × one
    rank's, cap / (O × t_decode(cap) + cap × T_prefill) as in :func:`gpuplan.estimate.load.capacity`."""
    cap = max_batch(m, gpu, s, ranks, cal)
    if cap < 1:
        return 0.0
    t_p = prefill_seconds(m, gpu, s, ranks, s.prompt_len, cal)
    t_full = _iteration(m, gpu, s, ranks, float(cap), 0.0, cal)
    return ranks * cap / (s.output_len * t_full + cap * t_p)


def at_rate(m: ModelSpec, gpu: Gpu, s: InferSetup, ranks: int, rate: float, cal: Calibration) -> load.LoadSpeed:
    """The replica's steady state at ``rate`` requests/s, each rank given ``rate / ranks``: the queueing of
    :func:`gpuplan.estimate.load.at_rate` on one rank's physics (throughput and capacity are the replica's)."""
    per = rate / ranks
    cap = max_batch(m, gpu, s, ranks, cal)
    t_p = prefill_seconds(m, gpu, s, ranks, s.prompt_len, cal)
    rho = per * t_p
    batch = _steady_batch(m, gpu, s, ranks, per, rho, cap, cal) if cap >= 1 and rho < 1 else None
    if batch is None:
        limit = capacity(m, gpu, s, ranks, cal)
        full = float(max(cap, 1))
        busy = min(limit / ranks * t_p, 0.999)
        tpot = min(_iteration(m, gpu, s, ranks, full, busy, cal), _longest_iteration(m, gpu, s, ranks, full, cal))
        return load.LoadSpeed(rate, full * ranks, busy, math.inf, math.inf, math.inf, tpot, tpot,
                              limit * s.output_len, True, limit, cal.band("inference_latency"))
    rho = min(rho, 0.999)
    t_iter = min(_iteration(m, gpu, s, ranks, batch, rho, cal), _longest_iteration(m, gpu, s, ranks, batch, cal))
    chunk = s.max_batched_tokens or get_engine(s.engine).max_batched_tokens or s.prompt_len
    decode_share = math.ceil(s.prompt_len / chunk) * _iteration(m, gpu, s, ranks, batch, 0.0, cal)
    wait_mean = rho * t_p / (2 * (1 - rho)) if rho > 0 else 0.0
    service = t_p + decode_share + t_iter / 2
    busiest = min(float(cap), batch + load.Z99 * math.sqrt(batch))
    tpot_p99 = min(_iteration(m, gpu, s, ranks, busiest, rho, cal),
                   _longest_iteration(m, gpu, s, ranks, busiest, cal))
    return load.LoadSpeed(rate, batch * ranks, rho, wait_mean + service,
                          _wait_quantile(wait_mean, rho, 0.50) + service,
                          _wait_quantile(wait_mean, rho, 0.99) + service, t_iter, tpot_p99, rate * s.output_len,
                          False, math.nan, cal.band("inference_latency"))


def _steady_batch(m: ModelSpec, gpu: Gpu, s: InferSetup, ranks: int, rate: float, rho: float, cap: int,
                  cal: Calibration) -> float | None:
    """One rank's B = rate × O × t(B), or None when no B up to its cap satisfies it (overload)."""
    if rate * s.output_len * _iteration(m, gpu, s, ranks, cap, rho, cal) > cap:
        return None
    lo, hi = 0.0, float(cap)
    for _ in range(_ITERATIONS):
        mid = (lo + hi) / 2
        if rate * s.output_len * _iteration(m, gpu, s, ranks, mid, rho, cal) > mid:
            lo = mid
        else:
            hi = mid
    return hi


def _wait_quantile(mean: float, rho: float, p: float) -> float:
    """p-quantile of an M/D/1 wait (as :mod:`gpuplan.estimate.load`): 0 with probability 1 − ρ, else exponential
    with mean E[W]/ρ (Kingman)."""
    if mean <= 0 or rho <= 0 or p <= 1 - rho:
        return 0.0
    return mean / rho * math.log(rho / (1 - p))
