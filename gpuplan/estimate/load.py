"""Serving under load: TTFT and TPOT when requests arrive at a rate (open loop) or from N clients (closed loop).

A continuously batching engine (Yu et al. 2022, Orca; Kwon et al. 2023, vLLM) runs one iteration after another;
each iteration decodes one token for every running sequence and, with chunked prefill (Agrawal et al. 2024,
Sarathi-Serve), also processes up to ``max_batched_tokens`` prompt tokens of newly arrived requests. In steady
state at ``rate`` requests/s with prompt length P and output length O:

- prefill share of the GPU: ρ = rate × T_prefill(P) (T_prefill from :func:`prefill_seconds`);
- an iteration at decode batch B lasts t(B) = t_decode(B) / (1 − ρ): decode work, stretched by the prompt work
  interleaved with it;
- Little's law: B = rate × O × t(B) — solved as a fixed point (t grows with B: KV reads and, past the roofline
  knee, compute);
- TPOT = t(B); TTFT = queueing + the prompt's own prefill + what the running decodes add to its passes (rows
  of the same forward pass where the engine mixes them, :func:`_carrying_pass`) + half an iteration of waiting
  for the running one to end (where prompt steps carry no decodes, vLLM V0 without chunked prefill, none carried
  and a plain decode step to wait out); the median TTFT takes the prefill of the median prompt, below the mean
  one for a skewed dataset.
Queueing of prompts is an M/D/1 queue at load ρ (Pollaczek–Khinchine: mean wait ρ·T/(2(1 − ρ))); its p99 uses
the exponential tail of the waiting time, W_q(p) = E[W]/ρ × ln(ρ / (1 − p)) (Kingman's approximation). The number
of running sequences of an M/G/∞ system is Poisson with mean B, so TPOT p99 is at least t at B's p99 (normal
approximation B + 2.33·√B); a request's own TPOT also spreads with the number of prompts prefilled while it
decodes, Poisson too, which dominates its median and p99 for short answers (:func:`_stalled_tpot`).
A closed loop of N clients is the same system with rate = N / (TTFT + O × TPOT), solved together.

The per-iteration physics is :mod:`gpuplan.estimate.infer_speed`'s, whose efficiencies ``bench/fit.py`` fits;
this module adds only queueing theory. Closed-loop clients sending requests of one length stay in lockstep and
arrive in waves (:func:`_waves`). When the rate exceeds what the
configuration serves (ρ ≥ 1 or B beyond the KV cache / engine cap) the answer says saturated: TTFT is unbounded
(the queue grows), TPOT is that of the engine running flat out, and the throughput is the capacity.
"""

from __future__ import annotations

import heapq
import math
from collections.abc import Sequence
from dataclasses import dataclass, replace

from gpuplan.estimate.calibration import Calibration, fitted
from gpuplan.estimate.engines import prefill_only_steps, request_overhead_keys, token_budget
from gpuplan.estimate.infer_speed import (
    decode_attention_seconds,
    decode_step_seconds,
    max_batch,
    prefill_seconds,
    require_batch,
)
from gpuplan.estimate.result import Band
from gpuplan.types import Engine, Gpu, InferSetup, ModelSpec

Z99 = 2.326  # standard normal 99th percentile
_ITERATIONS = 40


@dataclass(frozen=True, slots=True)
class LoadSpeed:
    """Latency and throughput of one configuration at one load."""

    rate_per_s: float  # request arrivals per second
    batch: float  # mean running sequences
    prefill_share: float  # ρ: share of GPU time spent on prompts
    ttft_mean_s: float
    ttft_p50_s: float
    ttft_p99_s: float
    tpot_mean_s: float
    tpot_p99_s: float
    output_tokens_per_s: float
    saturated: bool  # the load exceeds what the configuration serves
    capacity_per_s: float  # the largest rate it serves (requests/s)
    band: Band | None = None
    itl_p50_s: float | None = None  # median gap between two tokens of one request (None: tpot_mean_s)
    tpot_p50_s: float | None = None  # median over requests of a request's mean TPOT (None: tpot_mean_s)
    completed_per_s: float | None = None  # requests finished per second over a finite run (None: a steady state)

    @property
    def served_per_s(self) -> float:
        """Requests finished per second, what a benchmark prints as its request throughput: over a finite run its
        count over its duration (:attr:`completed_per_s`); in a steady state the arrival rate, or the capacity where
        the load exceeds it (an overloaded engine finishes requests no faster than it serves them)."""
        if self.completed_per_s is not None:
            return self.completed_per_s
        return self.capacity_per_s if self.saturated else self.rate_per_s

    @property
    def itl_median_s(self) -> float:
        """The median inter-token gap, what bench_serving reports as median ITL: :attr:`itl_p50_s`, or the mean
        TPOT where the state does not tell them apart."""
        return self.tpot_mean_s if self.itl_p50_s is None else self.itl_p50_s

    @property
    def tpot_median_s(self) -> float:
        """The median of the requests' own TPOTs (bench_serving's median TPOT): :attr:`tpot_p50_s`, or the mean."""
        return self.tpot_mean_s if self.tpot_p50_s is None else self.tpot_p50_s


def _iteration(m: ModelSpec, gpu: Gpu, s: InferSetup, batch: float, rho: float, cal: Calibration) -> float:
    ctx = s.prompt_len + s.output_len / 2
    step, _ = decode_step_seconds(m, gpu, s, max(batch, 1.0), ctx, cal)
    return step / max(1.0 - rho, 1e-9)


def _bounded_iteration(m: ModelSpec, gpu: Gpu, s: InferSetup, batch: float, busy: float, cal: Calibration) -> float:
    """:func:`_iteration` at ``batch`` with ``busy`` of the time prefilling, at most :func:`_longest_iteration`."""
    return min(_iteration(m, gpu, s, batch, busy, cal), _longest_iteration(m, gpu, s, batch, cal))


def _longest_iteration(m: ModelSpec, gpu: Gpu, s: InferSetup, batch: float, cal: Calibration) -> float:
    """The longest an iteration lasts when the engine caps the tokens of one forward pass (``max_batched_tokens``):
    one pass over the whole budget, the running decodes plus prompt chunks filling the rest (Agrawal et al. 2024,
    Sarathi-Serve, sec. 4.2: stall-free batching under a token budget bounds every iteration's latency). Prompt
    work stretches decode iterations (t_decode / (1 − ρ)) only up to this; inf for an engine without a budget."""
    budget = token_budget(m, s)
    if not budget:
        return math.inf
    ctx = s.prompt_len + s.output_len / 2
    step, _ = decode_step_seconds(m, gpu, s, max(batch, 1.0), ctx, cal)
    return max(step, prefill_seconds(m, gpu, s, float(budget), cal))


def _steady_batch(m: ModelSpec, gpu: Gpu, s: InferSetup, rate: float, rho: float, cap: int,
                  cal: Calibration) -> float | None:
    """B = rate × O × t(B), or None when no B up to the engine's cap satisfies it (overload)."""
    if rate * s.output_len * _iteration(m, gpu, s, cap, rho, cal) > cap:
        return None
    lo, hi = 0.0, float(cap)
    for _ in range(_ITERATIONS):  # g(B) = rate·O·t(B) − B is positive at 0 and negative at cap: bisect
        mid = (lo + hi) / 2
        if rate * s.output_len * _iteration(m, gpu, s, mid, rho, cal) > mid:
            lo = mid
        else:
            hi = mid
    return hi


def request_seconds(s: InferSetup, gpu: Gpu | None, cal: Calibration) -> float:
    """The engine's fixed latency per request outside the GPU's work, added to every request's TTFT (and so to its
    end-to-end latency): the OpenAI-compatible API server parses the request, renders the chat template and
    tokenizes the prompt in its own process, hands the request to the engine core over IPC, which admits it at the
    start of the next scheduler step, and detokenizes and streams the first token back (vLLM V1:
    vllm/entrypoints/openai/serving_chat.py, vllm/v1/engine/async_llm.py and core_client.py, @v0.11.0). It does not
    grow with the prompt or the load, so it is what a one-client run with a short prompt measures above its prefill.
    Fitted per backend as ``request_overhead_s_<backend>`` (vllm-ascend's own worker apart from vLLM's CUDA servers,
    ``bench/fit.py`` ``fit_request_overhead``), and for vLLM's V0 engine (before 0.8, whose request path differs:
    :func:`~gpuplan.estimate.engines.request_overhead_keys`) apart as ``request_overhead_s_vllm_v0``; a release or
    backend without a value of its own takes the next key's (V0 takes V1's, a backend its prior's), 0 where none
    holds one."""
    keys = request_overhead_keys(s, gpu)
    return next((cal.values[k] for k in keys if k in cal.values), 0.0)


def _prefill_one(m: ModelSpec, gpu: Gpu, s: InferSetup, cal: Calibration) -> float:
    return prefill_seconds(m, gpu, s, s.prompt_len, cal)


def median_prompt_tokens(mean_tokens: float, length_cv2: float) -> float:
    """Median prompt length of a dataset whose lengths have mean ``mean_tokens`` and squared coefficient of
    variation ``length_cv2``, read as a gamma law of shape 1/c² (:func:`gamma_length_quantile` at z = 0):
    mean × (1 − c²/9)³ — 0.70 × the mean for c² = 1 (the exponential's exact ln 2 = 0.69), the mean itself for c² = 0.
    A right-skewed set of prompts such as ShareGPT's has most prompts below its mean."""
    return gamma_length_quantile(mean_tokens, length_cv2, 0.0)


def gamma_length_quantile(mean_tokens: float, length_cv2: float, z: float) -> float:
    """The length at the standard normal deviate ``z`` of a gamma law of mean ``mean_tokens`` and squared coefficient
    of variation ``length_cv2`` (shape 1/c²; c² = 1: the exponential; c² = 0: one length), by Wilson & Hilferty
    (1931, the cube-root normal approximation of a gamma variate): mean × (1 − c²/9 + z·√(c²/9))³, 0 below."""
    a = length_cv2 / 9.0
    return mean_tokens * max(1.0 - a + z * math.sqrt(a), 0.0) ** 3


def capacity(m: ModelSpec, gpu: Gpu, s: InferSetup, cal: Calibration | None = None) -> float:
    """Largest request rate (requests/s) with a steady state: prompts below full GPU share and the running
    batch within the KV cache and the engine's sequence cap.

    A steady state exists while the full engine keeps up, rate × O × t(cap) ≤ cap with
    t(cap) = t_decode(cap) / (1 − rate × T_prefill): solved for the rate, cap / (O × t_decode(cap) + cap × T_prefill)
    — below 1 / T_prefill, so prompts never take the whole GPU."""
    cal = cal or fitted()
    cap = max_batch(m, gpu, s, cal)
    if cap < 1:
        return 0.0
    return _capacity_at(m, gpu, s, cap, _prefill_one(m, gpu, s, cal), cal)


def _capacity_at(m: ModelSpec, gpu: Gpu, s: InferSetup, slots: int, t_p: float, cal: Calibration) -> float:
    """The request rate that ``slots`` running sequences serve: slots / (O × t_decode(slots) + slots × T_prefill)."""
    t_full = _iteration(m, gpu, s, float(slots), 0.0, cal)
    return slots / (s.output_len * t_full + slots * t_p)


def at_rate(m: ModelSpec, gpu: Gpu, s: InferSetup, rate: float, cal: Calibration | None = None,
            length_cv2: float = 0.0, n_requests: int | None = None) -> LoadSpeed:
    """Steady state at ``rate`` requests/s (Poisson arrivals); ``length_cv2`` is the squared coefficient of
    variation of prompt lengths (0 for fixed lengths), which scales the queueing wait by (1 + c²) and makes the
    median request's prefill that of the median prompt (:func:`median_prompt_tokens`).

    Past capacity there is no steady state and TTFT grows without bound — unless the run is finite. A benchmark
    that sends ``n_requests`` N at λ never holds more than N in flight, nor more than have arrived (N/λ seconds of
    arrivals): its running batch is the fluid one of :func:`_finite_batch`, whatever the engine's cap, so a run of
    N within the cap is served from that batch (its excess load lengthens TPOT) and reports its requests over its
    duration, the last request's drain included (:func:`_finite_run`). Only where that batch would exceed the
    engine's cap do requests wait for a slot: the fluid approximation of an overloaded queue (Newell 1982,
    "Applications of Queueing Theory", ch. 2; Kleinrock 1976, Queueing Systems vol. 2, ch. 2, the fluid and
    diffusion approximations), in which the engine drains at its capacity μ while requests arrive at λ, so the
    k-th waits about k·(1/μ − 1/λ) once the batch is full (:func:`_overload_waits`) and the run ends one latency
    after the last request's admission, about N/μ."""
    cal = cal or fitted()
    cap = require_batch(m, gpu, s, cal)  # a setup that holds no sequence has no load state: say what to change
    t_p = _prefill_one(m, gpu, s, cal)
    rho = rate * t_p
    slots = min(cap, n_requests) if n_requests else cap
    batch = None
    if rho < 1:
        batch = (_finite_batch(m, gpu, s, rate, rho, n_requests, slots, cal) if n_requests else
                 _steady_batch(m, gpu, s, rate, rho, cap, cal))
    if batch is None:
        return _overloaded(m, gpu, s, rate, slots, t_p, n_requests, cal)
    state = _state(m, gpu, s, rate, batch, t_p, cap, cal, length_cv2)
    if not n_requests:
        return state
    limit = _capacity_at(m, gpu, s, cap, t_p, cal)
    if rate > limit:  # a finite burst past what the full engine serves, held in a batch of at most what it sent
        state = replace(state, saturated=True, capacity_per_s=limit)
    # the last request arrives as the arrivals end: it decodes while the batch drains and no prompt stretches its
    # steps, so the run ends one TTFT and O − 1 steps at the batch it sees after the last arrival
    life = s.output_len * _iteration(m, gpu, s, batch, rho, cal)
    last = seen_batch(rate, life, n_requests, last=True)
    step = _bounded_iteration(m, gpu, s, last, 0.0, cal)
    return _finite_run(state, s, n_requests, n_requests / rate + state.ttft_mean_s + (s.output_len - 1) * step)


def _finite_batch(m: ModelSpec, gpu: Gpu, s: InferSetup, rate: float, rho: float, n_requests: int, slots: int,
                  cal: Calibration) -> float | None:
    """Mean running batch seen by a request of a finite run of ``n_requests`` sent at ``rate``, or None where it
    would exceed the ``slots`` the engine runs at once (then requests wait for a slot, :func:`_overloaded`): the
    fluid run's :func:`seen_batch` with each request's life O × t(B), solved for B as a fixed point by bisection
    (t grows with B)."""

    def seen(batch: float) -> float:
        return seen_batch(rate, s.output_len * _iteration(m, gpu, s, batch, rho, cal), n_requests)

    if seen(float(slots)) > slots:
        return None
    lo, hi = 0.0, float(slots)
    for _ in range(_ITERATIONS):
        mid = (lo + hi) / 2
        if seen(mid) > mid:
            lo = mid
        else:
            hi = mid
    return hi


def seen_batch(rate: float, life_s: float, n_requests: int, last: bool = False) -> float:
    """The running batch that a request of a deterministic fluid run sees on average over its ``life_s`` in the
    engine: ``n_requests`` N arriving evenly at ``rate`` λ over T = N/λ, each staying ``life_s`` L (Kleinrock 1976,
    Queueing Systems vol. 2, ch. 2). The batch ramps up as λτ, holds min(λL, N) and drains, and the mean over
    requests of what each sees is ∫B² dτ / ∫B dτ: λL(1 − L/3T) for L ≤ T, N(1 − T/3L) past it. ``last``: what
    the last request sees, arriving at T as the batch drains: λL/2 for L ≤ T, N(1 − T/2L) past it. Never more than
    N, nor more than have arrived."""
    arrivals_s = n_requests / rate
    if life_s <= arrivals_s:
        return rate * life_s * (0.5 if last else 1 - life_s / (3 * arrivals_s))
    return n_requests * (1 - arrivals_s / ((2 if last else 3) * life_s))


def _overloaded(m: ModelSpec, gpu: Gpu, s: InferSetup, rate: float, slots: int, t_p: float,
                n_requests: int | None, cal: Calibration) -> LoadSpeed:
    """Past capacity: the engine runs flat out at ``slots`` sequences (its cap, or the ``n_requests`` a finite run
    sent where fewer), admitting prompts at the rate it serves them, so TPOT stays finite. An endless stream's
    queue grows without bound (TTFT is unbounded) and it serves its capacity; a finite run's requests wait their
    fluid lags (:func:`_overload_waits`) and it reports its requests over its duration, from the first sent to the
    last finished: the last one admitted after its wait and served one latency later."""
    limit = _capacity_at(m, gpu, s, slots, t_p, cal)
    full = float(slots)
    busy = min(limit * t_p, 0.999)
    tpot = _bounded_iteration(m, gpu, s, full, busy, cal)
    mean = p50 = p99 = math.inf
    run_s = None
    if n_requests and limit > 0:
        # the same service as a steady state's (:func:`_state`), at the full batch: its prefill, the decodes of the
        # running batch that its prefill iterations carry, half an iteration to be admitted, the request's fixed
        # latency
        service = (t_p + _prefill_decodes(m, gpu, s, full, cal) + _step_under_way(m, gpu, s, full, tpot, cal) / 2
                   + request_seconds(s, gpu, cal))
        waits = _overload_waits(n_requests, rate, limit, slots)
        mean, p50, p99 = (service + w for w in waits[:3])
        # the last request is admitted after its wait and served one latency later, its steps those of a batch that
        # drains from full while no prompt arrives (half of it on average, as :func:`seen_batch` for L ≤ T); but
        # the engine never finishes requests faster than its capacity: the fluid lags let the backlog fill the batch
        # as if it had drained at μ from the first request on
        step = _bounded_iteration(m, gpu, s, full / 2, 0.0, cal)
        run_s = max((n_requests - 1) / rate + waits[3] + service + (s.output_len - 1) * step, n_requests / limit)
    # the engine admits prompts at the rate it serves them, so a request's gaps are the full batch's iterations, a
    # share of them carrying a prompt (:func:`_median_gap`), and its own TPOT spreads with the prompts admitted while
    # it decodes (:func:`_stalled_tpot`), as in a steady state
    itl_p50 = _median_gap(m, gpu, s, limit, full, tpot, cal)
    tpot_p50 = _stalled_tpot(m, gpu, s, limit, full, tpot, t_p, 0.50, cal)
    state = LoadSpeed(rate, full, busy, mean, p50, p99, tpot, tpot, limit * s.output_len, True, limit,
                      cal.band("inference_latency"), itl_p50, tpot_p50)
    return state if run_s is None else _finite_run(state, s, n_requests or 0, run_s)


def _overload_waits(n_requests: int, rate: float, limit: float, cap: int) -> tuple[float, float, float, float]:
    """Mean, median, p99 and last of the admission waits of a finite run of ``n_requests`` sent at ``rate`` above the
    capacity ``limit`` to an engine that runs up to ``cap`` sequences at once.

    Fluid approximation of an overloaded queue (Newell 1982, ch. 2): requests leave at the capacity μ while they
    arrive at λ, so the backlog grows as (λ − μ)·t. A continuously batching engine admits every waiting request
    while its running set has room (vLLM V1's scheduler takes waiting requests until ``len(self.running) ==
    self.max_num_running_reqs`` or the KV cache cannot allocate, vllm/v1/core/sched/scheduler.py ``schedule``
    @b4622cf924bc72504aed99e486062d6633fde39e; vLLM V0's ``_schedule_default`` and SGLang's prefill-first
    ``get_next_batch_to_run`` likewise prefill what fits), so the backlog first fills the running batch — it shows
    in TPOT, not TTFT — and requests wait for a slot only once the batch is full, at t₁ = cap / (λ − μ): the
    first n₀ = λ·t₁ requests wait for none. The k-th (k = 0 … N − 1) waits (k − n₀)·(1/μ − 1/λ) after that, the
    lag of the fluid queue, whose mean over the run is m(m + 1)/2 / N lags with m = N − 1 − n₀ requests waiting, and
    whose p-quantile is p·N − n₀ lags (0 where negative)."""
    lag = max(0.0, 1 / limit - 1 / rate)
    if lag <= 0:
        return 0.0, 0.0, 0.0, 0.0
    absorbed = cap * rate / (rate - limit)
    waiting = max(0.0, n_requests - 1 - absorbed)
    mean = waiting * (waiting + 1) / 2 / n_requests * lag
    return (mean, max(0.0, 0.5 * n_requests - absorbed) * lag, max(0.0, 0.99 * n_requests - absorbed) * lag,
            waiting * lag)


def _finite_run(state: LoadSpeed, s: InferSetup, n_requests: int, run_s: float) -> LoadSpeed:
    """``state`` with the throughputs a finite benchmark run of ``n_requests`` reports: the requests and their
    output tokens over the run's duration ``run_s``, from the first request sent to the last one finished (vLLM's
    bench_serving: ``benchmark_duration`` ends when every request's task has returned, and request and output
    throughput are the completed requests and their tokens divided by it, benchmarks/benchmark_serving.py
    ``benchmark`` and ``calculate_metrics`` @8668d7c05027b98ac66bd5540955dd2ce3a0f318). The last request arrives
    at about n/λ and finishes one latency later, so a run below capacity reports n × O / (n/λ + latency), less
    than λ × O by the drain of its last request; the shorter the run, the larger that share."""
    return replace(state, output_tokens_per_s=n_requests * s.output_len / run_s,
                   completed_per_s=n_requests / run_s)


def _state(m: ModelSpec, gpu: Gpu, s: InferSetup, rate: float, batch: float, t_p: float, cap: int,
           cal: Calibration, length_cv2: float = 0.0, clients: int | None = None) -> LoadSpeed:
    """Latencies at a known steady state (``rate`` arrivals/s, ``batch`` running sequences) of an open stream, or
    of ``clients`` closed-loop clients (:func:`_decoding_at_arrival`). ``others`` is the share of the prompt work that
    belongs to other requests and so stretches this one's decode steps: 1 for an open stream, (n − 1)/n for n
    clients (a lone client's prefill never overlaps its decode)."""
    others = 1.0 if clients is None else (clients - 1) / clients
    rho = min(rate * t_p, 0.999)
    t_iter = _iteration(m, gpu, s, batch, rho * others, cal)
    # an arrival that finds no other sequence decoding starts its prefill at once and carries no decodes
    busy, seen = _decoding_at_arrival(batch, clients)
    decode_share = busy * _prefill_decodes(m, gpu, s, seen, cal)
    queued = rho * others  # the prompt work of the other requests, which this one can queue behind
    wait_mean = (1 + length_cv2) / 2 * queued * t_p / (1 - queued) if queued > 0 else 0.0
    t_iter = min(t_iter, _longest_iteration(m, gpu, s, batch, cal))
    service = t_p + decode_share + busy * _step_under_way(m, gpu, s, batch, t_iter, cal) / 2 + request_seconds(
        s, gpu, cal)
    # the median request's own prefill is that of the median prompt: bench_serving's median TTFT is the median
    # over requests (np.median of their TTFTs, benchmarks/benchmark_serving.py ``calculate_metrics``
    # @8668d7c05027b98ac66bd5540955dd2ce3a0f318), and a request's prefill grows with its prompt
    median = median_prompt_tokens(s.prompt_len, length_cv2)
    service_p50 = service if median >= s.prompt_len else (
        service - t_p + prefill_seconds(m, gpu, s, median, cal))
    busiest = min(float(cap), batch + Z99 * math.sqrt(batch))
    tpot_p99 = _bounded_iteration(m, gpu, s, busiest, rho * others, cal)
    tpot_p50, stalled_p99 = (_stalled_tpot(m, gpu, s, rate * others, batch, t_iter, t_p, p, cal) for p in (0.50, 0.99))
    itl_p50 = _median_gap(m, gpu, s, rate * others, batch, t_iter, cal)
    return LoadSpeed(rate, batch, rho, wait_mean + service, _wait_quantile(wait_mean, queued, 0.50) + service_p50,
                     _wait_quantile(wait_mean, queued, 0.99) + service, t_iter, max(tpot_p99, stalled_p99),
                     rate * s.output_len, False, math.nan, cal.band("inference_latency"), itl_p50, tpot_p50)


def _decoding_at_arrival(batch: float, clients: int | None) -> tuple[float, float]:
    """(Probability that a request arriving at a steady state with ``batch`` sequences decoding on average finds at
    least one other decoding, their mean number when it does.) Only then does its prefill wait for the iteration
    under way and carry decodes (:func:`_state`). Poisson arrivals see the time average (Wolff 1982, "Poisson
    arrivals see time averages", Oper. Res. 30(2)), and sequences that arrive as a Poisson stream and decode for a
    time of any law are in number Poisson-distributed with mean ``batch`` (the M/G/∞ queue, Kleinrock 1975,
    Queueing Systems vol. 1, sec. 2.7): P(none) = e^(−batch). n closed-loop clients: each of the n − 1 others is
    decoding a share batch/n of the time, independently: P(none) = (1 − batch/n)^(n − 1) — 1 for a lone client,
    whose own decode never overlaps its next prompt."""
    if clients is None:
        busy, mean = 1.0 - math.exp(-batch), batch
    else:
        share = min(batch / max(clients, 1), 1.0)
        busy, mean = 1.0 - (1.0 - share) ** (clients - 1), (clients - 1) * share
    return busy, (max(1.0, mean / busy) if busy > 0 else 1.0)


def _step_under_way(m: ModelSpec, gpu: Gpu, s: InferSetup, batch: float, t_iter: float, cal: Calibration) -> float:
    """The iteration an arriving prompt waits out before it is scheduled: one that mixes decodes with other prompts'
    chunks (``t_iter``, decode work stretched by prompt work), or, where prompt steps carry no decodes
    (:func:`~gpuplan.estimate.engines.prefill_only_steps`), a plain decode step of ``batch`` sequences: the prompt
    steps ahead of it are the queue whose wait the Pollaczek–Khinchine term already counts."""
    return _iteration(m, gpu, s, batch, 0.0, cal) if prefill_only_steps(m, s) else t_iter


def _carrying_pass(m: ModelSpec, gpu: Gpu, s: InferSetup, batch: float, chunk: float, cal: Calibration) -> float:
    """Seconds of an iteration that runs a prompt chunk of ``chunk`` tokens while ``batch`` sequences decode.

    Where the engine runs both in one forward pass (``Engine.decodes_ride_prompt_passes``), each decode is one more
    row of that pass's GEMMs, whose weights are streamed, kernels launched and all-reduces paid once for all rows:
    decode-maximal batching piggybacks the decodes on a prefill chunk that has already fetched the weights, so a
    decode costs a fraction of a decode-only step (Agrawal et al. 2023, "SARATHI: Efficient LLM Inference by
    Piggybacking Decodes with Chunked Prefills", sec. 3). The pass lasts a prefill of the chunk and the decodes'
    rows, plus the decodes' attention over their own KV cache (a kernel of its own). Elsewhere the iteration counts
    the chunk's prefill and a whole decode step of ``batch`` sequences, as before this was examined."""
    if not Engine(s.engine).decodes_ride_prompt_passes:
        return prefill_seconds(m, gpu, s, chunk, cal) + _iteration(m, gpu, s, batch, 0.0, cal)
    ctx = s.prompt_len + s.output_len / 2
    return prefill_seconds(m, gpu, s, chunk + batch, cal) + decode_attention_seconds(m, gpu, s, batch, ctx, cal)


def _prefill_decodes(m: ModelSpec, gpu: Gpu, s: InferSetup, batch: float, cal: Calibration) -> float:
    """Seconds that the running batch's decodes add to a prompt's prefill passes (:func:`_carrying_pass` less the
    chunk's prefill alone, for each chunk of the engine's token budget the prompt takes); none where prompt steps
    carry no decodes (:func:`~gpuplan.estimate.engines.prefill_only_steps`: vLLM V0 without chunked prefill)."""
    if prefill_only_steps(m, s):
        return 0.0
    chunk = min(s.prompt_len, token_budget(m, s) or s.prompt_len)
    added = _carrying_pass(m, gpu, s, batch, chunk, cal) - prefill_seconds(m, gpu, s, chunk, cal)
    return math.ceil(s.prompt_len / chunk) * max(added, 0.0)


def _stalled_tpot(m: ModelSpec, gpu: Gpu, s: InferSetup, rate: float, batch: float, t_iter: float, t_p: float,
                  p: float, cal: Calibration) -> float:
    """The p-quantile over requests of a request's own TPOT when other requests' prompts arrive at ``rate``.

    A request's TPOT is its decode time over its gaps, (e2e − TTFT) / (O − 1) (vLLM's bench_serving
    ``calculate_metrics``, benchmarks/benchmark_serving.py @8668d7c05027b98ac66bd5540955dd2ce3a0f318), and its decode
    time is O − 1 plain steps plus the prefill of every prompt that arrives while it decodes: K prompts, the
    arrivals of a Poisson stream in (O − 1) × t_iter seconds, so K is Poisson with that mean (for closed-loop
    clients, the superposed requests of the others, which Palm–Khintchine's theorem makes Poisson as they grow in
    number). The mean of t_decode + K × T_prefill / (O − 1) is t_iter; its quantiles spread with K's, widely when
    O is short (a six-token answer that sees two prompts instead of none takes three times its steps). A gap is
    never longer than one pass over the engine's token budget (:func:`_longest_iteration`)."""
    gaps = max(s.output_len - 1, 1)
    step = _iteration(m, gpu, s, batch, 0.0, cal)
    stalls = poisson_quantile(rate * gaps * t_iter, p)
    return min(step + stalls * t_p / gaps, max(t_iter, _longest_iteration(m, gpu, s, batch, cal)))


def poisson_quantile(mean: float, p: float) -> int:
    """The smallest k with P(K ≤ k) ≥ p for K Poisson of ``mean``; past a mean of 500 (where e^−mean nears the
    float's range) the normal approximation with continuity correction, mean + z_p·√mean − ½, rounded up."""
    if mean <= 0:
        return 0
    if mean > 500:
        import statistics  # imported here: only a long queue needs it, and it costs each CLI process ~3 ms

        return max(0, math.ceil(mean + statistics.NormalDist().inv_cdf(p) * math.sqrt(mean) - 0.5))
    k, term = 0, math.exp(-mean)
    total = term
    while total < p:
        k += 1
        term *= mean / k
        total += term
    return k


def _median_gap(m: ModelSpec, gpu: Gpu, s: InferSetup, rate: float, batch: float, t_iter: float,
                cal: Calibration) -> float:
    """Median gap between two tokens of a running request when prompts arrive at ``rate``.

    An iteration either carries a prompt chunk (of at most ``max_batched_tokens``) or decodes only; the mean
    TPOT spreads the prompt work over all of them (t_decode / (1 − ρ)), but a request's gaps are the iterations
    themselves. Chunks arrive at rate × ⌈P / chunk⌉ per second and iterations run at 1 / t_iter per second, so a
    share q = rate × ⌈P / chunk⌉ × t_iter of the iterations carries one (vLLM's scheduler adds waiting prompts'
    chunks to the running decodes' step, vllm/v1/core/sched/scheduler.py ``schedule``; SGLang runs a prefill
    batch between decode batches, ``get_next_batch_to_run``). Below q = 1/2 the median gap is a decode-only
    iteration, t_decode(B); above it, one that also carries a chunk (:func:`_carrying_pass`), never longer
    than the engine's token budget lets an iteration be (:func:`_longest_iteration`). bench_serving's median ITL
    is this gap; its mean ITL and TPOT are the mean (:attr:`LoadSpeed.tpot_mean_s`)."""
    plain = _iteration(m, gpu, s, batch, 0.0, cal)
    chunk = min(s.prompt_len, token_budget(m, s) or s.prompt_len)
    if rate * math.ceil(s.prompt_len / chunk) * t_iter < 0.5:
        return plain
    return min(max(_carrying_pass(m, gpu, s, batch, chunk, cal), plain), _longest_iteration(m, gpu, s, batch, cal))


def _wait_quantile(mean: float, rho: float, p: float) -> float:
    """p-quantile of the queueing wait: zero with probability 1 − ρ, else exponential with mean E[W]/ρ."""
    if mean <= 0 or rho <= 0 or p <= 1 - rho:
        return 0.0
    return mean / rho * math.log(rho / (1 - p))


def at_concurrency(m: ModelSpec, gpu: Gpu, s: InferSetup, clients: int, cal: Calibration | None = None,
                   lockstep: bool = False, length_cv2: float = 0.0) -> LoadSpeed:
    """Steady state of ``clients`` closed-loop clients, each sending its next request when the last ends.

    The engine runs at most its cap of them (the rest wait in its queue); with n running, each cycle takes
    TTFT + O × TPOT, so the rate X solves X × cycle(X) = n (bisection: the cycle grows with X) and the decode
    batch is Little's B = X × O × TPOT. ``lockstep``: every request has the same prompt and output length, so the
    clients, which start together, keep arriving together (:func:`_waves`); otherwise ``length_cv2`` is the squared
    coefficient of variation of the prompt lengths, as for :func:`at_rate`."""
    cal = cal or fitted()
    cap = require_batch(m, gpu, s, cal)  # not an infinite TTFT: a setup that holds no sequence is refused
    n = min(clients, cap)
    if lockstep:
        return _waves(m, gpu, s, clients, n, cap, cal)
    t_p = _prefill_one(m, gpu, s, cal)
    others = (n - 1) / n

    def at(rate: float) -> LoadSpeed:
        found = _steady_batch(m, gpu, s, rate, min(rate * t_p * others, 0.999), n, cal)
        batch = max(1.0, float(n) if found is None else found)
        return _state(m, gpu, s, rate, batch, t_p, cap, cal, length_cv2, n)

    # n clients each send when their last request ends: rate × cycle(rate) = n, where the cycle (TTFT + O × TPOT)
    # grows with the rate; bisect on the rate below where prompts alone would take the whole GPU
    lo, hi = 0.0, 0.999 / t_p if t_p > 0 else n / (s.output_len * _iteration(m, gpu, s, 1.0, 0.0, cal))
    for _ in range(_ITERATIONS):
        mid = (lo + hi) / 2
        state = at(mid)
        if mid * (state.ttft_mean_s + s.output_len * state.tpot_mean_s) < n:
            lo = mid
        else:
            hi = mid
    state = at(lo)
    if clients > n:  # clients beyond the engine's cap wait in its queue for a free slot
        extra = (clients - n) / max(state.rate_per_s, 1e-12)
        state = replace(state, ttft_mean_s=state.ttft_mean_s + extra, ttft_p50_s=state.ttft_p50_s + extra,
                        ttft_p99_s=state.ttft_p99_s + extra)
    return state


def _pass_end(tokens: int, total: int, budget: int | None) -> int:
    """Prompt tokens processed when the forward pass that holds a prompt's last token (the ``tokens``-th of the
    wave) ends: the engine packs the queued prompts into passes of ``budget`` tokens and returns a prompt's first
    token only after the whole pass that completes it (vLLM's scheduler fills each step to
    ``max_num_batched_tokens``, vllm/v1/core/sched/scheduler.py ``schedule``; SGLang's ``PrefillAdder`` fills a
    batch to ``chunked_prefill_size``), so the prompts of one pass share its end. Without a budget each prompt
    is its own pass."""
    if not budget:
        return tokens
    return min(total, math.ceil(tokens / budget) * budget)


def _waves(m: ModelSpec, gpu: Gpu, s: InferSetup, clients: int, n: int, cap: int, cal: Calibration) -> LoadSpeed:
    """Closed loop in lockstep: ``n`` clients (of ``clients``; the engine holds ``n``) start together and send
    requests of one prompt and one output length, so all of a wave's requests finish in the same iteration and
    the next wave's n prompts arrive together (the benchmark clients, e.g. vLLM's and SGLang's bench_serving
    with fixed lengths, launch their first n requests at once).

    The engine prefills a wave's prompts in arrival order, in passes of at most ``max_batched_tokens`` tokens,
    before the wave decodes: the k-th prompt's first token comes when the pass that completes it ends,
    T(k) = prefill(t_k) with t_k the prompt tokens up to that pass's end (:func:`_pass_end`,
    :func:`prefill_seconds`), so TTFT spreads from T(1) to T(n) — the p-quantile is T(⌈p·n⌉). A request that
    got its first token early waits while the rest of its wave is prefilled (the scheduler runs waiting prefills
    before running decodes: vLLM's default scheduler, vllm/core/scheduler.py ``_schedule_default``; SGLang's
    ``get_next_batch_to_run`` likewise prefers a new prefill batch), so its TPOT is
    t_decode(n) + (T(n) − T(k)) / (O − 1). A wave lasts T(n) + (O − 1) × t_decode(n)."""
    ctx = s.prompt_len + s.output_len / 2
    step, _ = decode_step_seconds(m, gpu, s, float(n), ctx, cal)
    ends = [_pass_end(k * s.prompt_len, n * s.prompt_len, token_budget(m, s))
            for k in range(1, n + 1)]
    fixed = request_seconds(s, gpu, cal)
    done = {t: prefill_seconds(m, gpu, s, t, cal) + fixed for t in set(ends)}
    firsts = [done[t] for t in ends]
    steps = max(s.output_len - 1, 1)
    wave = firsts[-1] + steps * step
    tpots = sorted(step + (firsts[-1] - t) / steps for t in firsts)
    rate = n / wave
    extra = (clients - n) / rate if clients > n else 0.0  # clients beyond the cap wait a whole wave each

    def quantile(values: list[float], p: float) -> float:
        return values[min(len(values) - 1, max(0, math.ceil(p * len(values)) - 1))]

    # a mean never exceeds the largest value, which a float sum of equal values can by one rounding
    tpot_mean = min(math.fsum(tpots) / n, tpots[-1])
    # all of a request's gaps but the one in which it waits for the rest of its wave are plain steps, so the
    # median gap is a step (bench_serving's median ITL), and the requests' own TPOTs have their own median
    return LoadSpeed(rate, float(n), firsts[-1] / wave, sum(firsts) / n + extra, quantile(firsts, 0.50) + extra,
                     quantile(firsts, 0.99) + extra, tpot_mean, quantile(tpots, 0.99), rate * s.output_len,
                     False, math.nan, cal.band("inference_latency"), step if steps > 1 else tpot_mean,
                     quantile(tpots, 0.50))


def finite_run(m: ModelSpec, gpu: Gpu, s: InferSetup, output_lens: Sequence[int],
               cal: Calibration | None = None) -> float:
    """Output tokens/s of a finite offline run: ``len(output_lens)`` requests with prompts of ``s.prompt_len``, all
    sent at once, the i-th generating ``output_lens[i]`` tokens (a benchmark client such as ``vllm bench serve``
    without a request rate; vllm/benchmarks/serve.py sends every request at once when the rate is inf).

    The engine prefills the prompts (passes of its token budget, :func:`prefill_seconds`) and runs at most its
    cap of sequences; a finished sequence's slot goes to the next queued request in arrival order. Iterations are
    synchronous, so the run lasts prefill(N × prompt) + Σ over steps of t_decode(B_j), B_j the sequences running at
    step j (list scheduling over the cap's slots). With one output length and N = cap this is :func:`speed`'s
    wave, N × O / (prefill + O × t_decode(N)). With mixed lengths the batch drains: the longest requests finish
    alone at small batch while the GPU idles most of its capacity, so a run of 1,000 ShareGPT requests makes far
    fewer tokens/s than the steady state at the full batch (its benchmark prints the peak rate beside the mean)."""
    cal = cal or fitted()
    n = len(output_lens)
    if n < 1:
        raise ValueError("finite_run needs at least one request")
    cap = require_batch(m, gpu, s, cal)
    total = math.fsum(output_lens)
    return _run_rate(m, gpu, s, n, total, _running_counts(output_lens, min(cap, n)), cal)


def uniform_run(m: ModelSpec, gpu: Gpu, s: InferSetup, n_requests: int, cal: Calibration | None = None) -> float:
    """:func:`finite_run` of ``n_requests`` requests that all generate ``s.output_len`` tokens (a synthetic
    fixed-length dataset such as trtllm-bench's ``prepare_dataset.py token-norm-dist`` with stdev 0), without
    walking the requests: the slots run full waves, then the last wave's remainder alone."""
    cal = cal or fitted()
    if n_requests < 1:
        raise ValueError("uniform_run needs at least one request")
    slots = min(require_batch(m, gpu, s, cal), n_requests)
    waves = -(-n_requests // slots)
    last = n_requests - (waves - 1) * slots
    o = s.output_len
    running = [(slots, waves * o)] if last == slots else [(slots, (waves - 1) * o), (last, o)]
    return _run_rate(m, gpu, s, n_requests, float(n_requests * o), running, cal)


def _run_rate(m: ModelSpec, gpu: Gpu, s: InferSetup, n: int, total: float, running: list[tuple[int, int]],
              cal: Calibration) -> float:
    """Output tokens/s of a run of ``n`` prompts and ``total`` output tokens whose decode steps run at the
    (sequences, steps) counts of ``running``."""
    ctx = s.prompt_len + total / n / 2
    step: dict[int, float] = {}
    decode = 0.0
    for batch, steps in running:
        if batch not in step:
            step[batch] = decode_step_seconds(m, gpu, s, float(batch), ctx, cal)[0]
        decode += steps * step[batch]
    seconds = prefill_seconds(m, gpu, s, float(n * s.prompt_len), cal) + decode
    return total / seconds


def _running_counts(output_lens: Sequence[int], slots: int) -> list[tuple[int, int]]:
    """(sequences running, decode steps at that count) over a run in which ``slots`` sequences run at once and each
    freed slot takes the next request in order (every sequence emits one token per step)."""
    ends = [int(o) for o in output_lens[:slots]]
    heapq.heapify(ends)
    events = list(ends)
    for o in output_lens[slots:]:
        start = heapq.heappop(ends)
        heapq.heappush(ends, start + int(o))
        events.append(start + int(o))
    events.sort()
    counts: list[tuple[int, int]] = []
    now, alive = 0, slots
    for i, end in enumerate(events):
        if end > now and counts and counts[-1][0] == alive:
            counts[-1] = (alive, counts[-1][1] + end - now)
        elif end > now:
            counts.append((alive, end - now))
        now = max(now, end)
        # a slot stays busy until the queue is empty: the count drops once the last request has been admitted
        if len(events) - i - 1 < slots:
            alive -= 1
    return counts
