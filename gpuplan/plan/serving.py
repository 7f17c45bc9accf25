"""Serving that stays up: the cheapest fleet that meets latency targets at peak load with a failure domain lost.

Stages, one after the other:

1. **Replica configurations** — every GPU type with a usable offer, at the smallest tensor-parallel size that
   holds the model and the next one, and, for a model no 8-GPU node holds, TP 8 within a node × PP across
   nodes of 8-GPU cluster offers (the network between nodes is the calibration's named assumption).
2. **Capacity per replica** — for each configuration and request-size bucket, the largest arrival rate whose
   TTFT and TPOT (p50 and p99) stay within the targets under the load-dependent latency model
   (:mod:`gpuplan.estimate.load`: continuous batching, Little's law, M/D/1 queueing of prompts).
3. **Pools** — each usable offer in each zone of its region is a pool of identical replicas; a pool belongs to
   failure domains (its zone, its provider region, and for spot its spot pool).
4. **Mix** — a mixed-integer program picks how many instances of each pool to
   rent so that, in every failure scenario (nothing lost, or any one domain lost), the replicas left can be
   assigned the peak traffic of every bucket: the Mélange formulation (Griggs et al. 2024, "Mélange: Cost
   Efficient Large Language Model Serving by Exploiting GPU Heterogeneity", sec. 4) with one assignment per
   failure scenario. A replica given several buckets shares its time: Σ_b rate_b / capacity_b ≤ 1. One bucket is
   searched exactly in pure Python (:mod:`gpuplan.plan.mixsearch`); several, or a search past its node limit, go
   to scipy.optimize.milp (HiGHS), imported only then.
5. **Availability** — :mod:`gpuplan.plan.availability` turns the fleet into an expected availability; if it is
   below the target the peak is raised by a headroom step and the mix solved again.

The result carries, per group, what an exporter needs (GPU, count, TP/PP, engine, quantization, replicas,
zones, spot) and every assumption with its source.
"""

from __future__ import annotations

import datetime as dt
import math
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field, replace
from itertools import pairwise
from typing import Any, TypeVar

from gpuplan.catalog import Catalog
from gpuplan.errors import InfeasibleError, InputError, close_matches
from gpuplan.estimate import load
from gpuplan.estimate.calibration import Calibration, fitted
from gpuplan.estimate.engines import with_engine_defaults
from gpuplan.estimate.infer_speed import decode_step_seconds, max_batch, prefill_seconds
from gpuplan.estimate.job import JobEstimate, check_inference, inference_setup, largest_batch
from gpuplan.estimate.memory import inference_memory, weights_bytes
from gpuplan.estimate.quant import native_format, weight_format
from gpuplan.estimate.runners import kernel_engine, runner_key, served_format, with_runner_defaults
from gpuplan.listing import match_gpus, price_age, resolve_providers
from gpuplan.memo import IdentityMemo
from gpuplan.plan import availability as av
from gpuplan.plan import compliance, mixsearch, traffic
from gpuplan.plan.costing import fleet_cost_per_hour, hourly_cost, hourly_price, token_costs
from gpuplan.plan.quiet import c_stdout_to_stderr
from gpuplan.types import STALE_AFTER_DAYS, Engine, Gpu, InferSetup, Job, ModelSpec, Offer, Task
from gpuplan.units import HOUR

TOLERATE = ("zone", "region", "none")
MAX_ADAPTERS = 10_000
MAX_ADAPTER_RANK = 512  # the largest --max-lora-rank vLLM 0.33 accepts (gpuplan/data/flags/vllm.json)
GUARD_MODES = ("serial", "parallel")
DEFAULT_TTFT_P99_S = 5.0  # gpuplan's target when none is given: a queue that stays bounded (docs/serving.md)
HEADROOM_STEPS = (0.0, 0.1, 0.25, 0.5, 1.0)  # peak raised by these shares until the availability target holds
REGIONS_PER_CONFIG = 2  # cheapest (provider, region) places kept per configuration and pricing
CONFIGS_KEPT = 6  # configurations kept for the mix, the cheapest per unit of capacity first
SINGLE_TYPES_TRIED = 2  # GPU types tried alone for the comparison, cheapest per capacity first
PRUNE_FACTOR = 3.0  # a configuration whose optimistic cost per request/s is this many times the best is skipped
# Each solve stops after this many branch-and-bound nodes (a count, so the same input gives the same fleet on a
# busy machine as on an idle one; a wall-clock limit did not) with HiGHS's best mix and its optimality gap reported;
# the fleets here close in a dozen nodes. The time limit only guards against a pathological solve.
MILP_NODE_LIMIT = 5_000
MILP_TIME_LIMIT_S = 60.0
MIP_GAP = 1e-3  # the cost is known to 0.1 %: well within the price data's own error
# A mix of one request size is first searched exactly in pure Python (gpuplan/plan/mixsearch.py), so a plain plan
# needs no scipy; a mix of more pools, or a search past this many nodes (about 0.1 s), goes to the MILP (the
# bench's 18- and 34-pool fleets need thousands of nodes, where HiGHS takes some 50 ms)
SEARCH_NODE_LIMIT = 2_000
SEARCH_MAX_POOLS = 16
PRESOLVE = False  # HiGHS presolve is slower here


# ---------------------------------------------------------------- inputs


@dataclass(frozen=True, slots=True)
class Bucket:
    """Requests of one size: ``share`` of the traffic has ``prompt_len`` prompt and ``output_len`` output tokens."""

    prompt_len: int
    output_len: int
    share: float = 1.0

    def __post_init__(self) -> None:
        if self.prompt_len < 1 or self.output_len < 1:
            raise InputError("--bucket", f"{self.prompt_len}:{self.output_len} has an empty prompt or output.",
                             "give PROMPT:OUTPUT:SHARE with positive token counts, e.g. 512:128:0.7.")
        if not 0 < self.share <= 1:
            raise InputError("--bucket", f"a share of {self.share:g} is not a part of the traffic.",
                             "give a share above 0 and at most 1; the shares add up to 1.")


@dataclass(frozen=True, slots=True)
class Targets:
    """Latency targets; None: no target at that percentile. TPOT p50 is the mean step (the load model's)."""

    ttft_p50_s: float | None = None
    ttft_p99_s: float | None = None
    tpot_p50_s: float | None = None
    tpot_p99_s: float | None = None

    def __post_init__(self) -> None:
        for field_, low, high in (("--ttft-p99", self.ttft_p50_s, self.ttft_p99_s),
                                  ("--tpot-p99", self.tpot_p50_s, self.tpot_p99_s)):
            if low is not None and high is not None and high < low:
                raise InputError(field_, f"the p99 target ({high:g} s) is below the p50 one ({low:g} s); the 99th "
                                 "percentile is never faster than the median.",
                                 f"give {field_} at least the p50 target, or drop one of them.")

    def effective(self) -> Targets:
        """These targets, with gpuplan's default p99 TTFT when no TTFT target is given."""
        if self.ttft_p50_s is None and self.ttft_p99_s is None:
            return replace(self, ttft_p99_s=DEFAULT_TTFT_P99_S)
        return self

    def met(self, s: load.LoadSpeed) -> bool:
        pairs = ((self.ttft_p50_s, s.ttft_p50_s), (self.ttft_p99_s, s.ttft_p99_s),
                 (self.tpot_p50_s, s.tpot_median_s), (self.tpot_p99_s, s.tpot_p99_s))
        return not s.saturated and all(t is None or v <= t for t, v in pairs)


@dataclass(frozen=True, slots=True)
class ServeRequest:
    """What the platform team asks for. Rates in requests/s; money in ``currency`` per hour."""

    mean_rps: float
    peak_rps: float | None = None  # None: the mean (flat traffic)
    buckets: tuple[Bucket, ...] = (Bucket(1000, 300),)
    targets: Targets = Targets()
    availability: float = 0.999  # a fraction
    tolerate: str = "zone"  # the failure domain whose loss the fleet survives: zone | region | none
    market: str | None = None
    users: str = "global"  # where the users are: cn (mainland China) or global; cn brings the compliance checklist
    providers: tuple[str, ...] = ()
    regions: tuple[str, ...] = ()
    gpus: tuple[str, ...] = ()
    exclude_gpus: tuple[str, ...] = ()
    spot: bool = False  # spot capacity allowed in the mix
    allow_marketplace: bool = False
    tiers: tuple[str, ...] = ()  # pricing tiers the fleet may rent (--tier); empty: on-demand, + spot/marketplace
    prefix_hit: float = 0.0  # share of prompt tokens served from the prefix cache
    engine: str = "vllm"
    quant: str | None = None
    currency: str = "USD"
    budget_per_hour: float | None = None
    max_instances_per_offer: int | None = None
    profile: tuple[float, ...] = ()  # 24 hourly mean rates (hour 0 first); () = none. Its mean is mean_rps
    adapters: int = 0  # LoRA adapters served on the same base (multi-LoRA), every one resident on each replica
    adapter_rank: int = 16  # the largest adapter's rank
    guard: str = "none"  # a guard preset (gpuplan/data/guards.csv), api, api:SERVICE, or none
    guard_mode: str = "serial"  # serial: the guard checks the prompt before the prefill; parallel: alongside it

    def __post_init__(self) -> None:
        if self.profile:
            traffic.check_profile(self.profile)
            if not math.isclose(self.mean_rps, traffic.mean_rate(self.profile), rel_tol=1e-9):
                raise InputError("--profile", f"the mean rate ({self.mean_rps:g}/s) is not the profile's mean "
                                 f"({traffic.mean_rate(self.profile):g}/s).",
                                 "give --profile alone: its mean is the mean rate (or use serve_request).")
        if not (math.isfinite(self.mean_rps) and self.mean_rps > 0):
            raise InputError("--rps", f"a rate of {self.mean_rps:g} requests/s serves nobody.",
                             "give the mean request rate, e.g. --rps 5.")
        if self.peak_rps is not None and not self.peak_rps >= self.mean_rps:
            raise InputError("--peak-rps", f"the peak ({self.peak_rps:g}/s) is below the mean ({self.mean_rps:g}/s).",
                             "give a peak at least the mean, or leave --peak-rps out.")
        if not 0 < self.availability < 1:
            raise InputError("--availability", f"{self.availability * 100:g} % cannot be planned: no fleet is "
                             "never down (and 0 % is no target).",
                             "give a percentage below 100, e.g. --availability 99.9.")
        if self.tolerate not in TOLERATE:
            raise InputError("--tolerate", f"'{self.tolerate}' is not a failure domain.",
                             "use zone, region or none.")
        compliance.check_users(self.users)
        if not 0 <= self.prefix_hit < 1:
            raise InputError("--prefix-hit", f"{self.prefix_hit:g} is not a share of the prompt below 1.",
                             "give a share from 0 to 0.99, e.g. 0.3.")
        if abs(sum(b.share for b in self.buckets) - 1) > 1e-6:
            raise InputError("--bucket", f"the bucket shares add up to {sum(b.share for b in self.buckets):g}.",
                             "make the shares of all --bucket options add up to 1.")
        if not 0 <= self.adapters <= MAX_ADAPTERS:
            raise InputError("--adapters", f"{self.adapters} adapters cannot be served.",
                             f"give 0 (none) to {MAX_ADAPTERS:,} LoRA adapters.")
        if self.adapters and not 1 <= self.adapter_rank <= MAX_ADAPTER_RANK:
            raise InputError("--adapter-rank", f"a rank of {self.adapter_rank} is not one an engine serves.",
                             f"give the largest adapter's rank, 1 to {MAX_ADAPTER_RANK}, e.g. 16.")
        if self.adapters and not kernel_engine(self.engine, self.quant or "").multi_lora:
            raise InputError("--adapters", f"multi-LoRA serving is planned on vLLM or SGLang, not '{self.engine}'.",
                             "plan with --engine vllm (or sglang), or drop --adapters.")
        if self.budget_per_hour is not None and self.budget_per_hour <= 0:
            raise InputError("--budget", "the budget must be positive.", "give an amount per hour, e.g. 20USD.")
        if self.guard != "none":  # always a value --guard takes: a request without a guard does not import guard
            from gpuplan.plan.guard import check_guard

            check_guard(self.guard)
        if self.guard_mode not in GUARD_MODES:
            raise InputError("--guard-mode", f"'{self.guard_mode}' is not a way to run the guard.",
                             "use serial (the guard checks the prompt before the prefill) or parallel.")

    @property
    def peak(self) -> float:
        """The rate the fleet is sized for: the peak given, the profile's busiest hour when that is higher."""
        given = self.peak_rps if self.peak_rps is not None else self.mean_rps
        return max(given, *self.profile) if self.profile else given


def parse_buckets(texts: Sequence[str], prompt: int, output: int) -> tuple[Bucket, ...]:
    """Buckets from ``PROMPT:OUTPUT:SHARE`` texts; none given: one bucket of ``prompt`` + ``output`` tokens."""
    if not texts:
        return (Bucket(prompt, output, 1.0),)
    out = []
    for text in texts:
        parts = text.split(":")
        try:
            p, o, share = int(parts[0]), int(parts[1]), float(parts[2])
        except (ValueError, IndexError):
            raise InputError("--bucket", f"'{text}' is not PROMPT:OUTPUT:SHARE.",
                             "give e.g. --bucket 512:128:0.7 --bucket 4096:512:0.3.") from None
        if len(parts) != 3 or not math.isfinite(share):
            raise InputError("--bucket", f"'{text}' is not PROMPT:OUTPUT:SHARE.",
                             "give e.g. --bucket 512:128:0.7 --bucket 4096:512:0.3.")
        if p > 10_000_000 or o > 10_000_000:
            raise InputError("--bucket", f"'{text}' is longer than any model's context.",
                             "give prompt and output token counts below 10,000,000.")
        out.append(Bucket(p, o, share))
    return tuple(out)


def parse_percentiles(texts: Sequence[str]) -> tuple[Bucket, ...]:
    """Buckets from ``PCT:PROMPT:OUTPUT`` texts (:func:`percentile_buckets`)."""
    points = []
    for text in texts:
        parts = text.split(":")
        try:
            pct, p, o = float(parts[0]), int(parts[1]), int(parts[2])
        except (ValueError, IndexError):
            raise InputError("--percentile", f"'{text}' is not PCT:PROMPT:OUTPUT.",
                             "give e.g. --percentile 50:500:150 --percentile 90:2000:400 --percentile 99:8000:1000.") \
                from None
        if len(parts) != 3:
            raise InputError("--percentile", f"'{text}' is not PCT:PROMPT:OUTPUT.",
                             "give e.g. --percentile 50:500:150 --percentile 90:2000:400 --percentile 99:8000:1000.")
        points.append((pct, p, o))
    return percentile_buckets(points)


def percentile_buckets(points: Sequence[tuple[float, int, int]]) -> tuple[Bucket, ...]:
    """Request sizes from length percentiles: each (PCT, PROMPT, OUTPUT) says PCT % of the requests have at most
    PROMPT prompt and OUTPUT output tokens. The requests between two points are a bucket of that share at the upper
    point's lengths (the longest in it, so the plan errs slow), those above the top point count at its lengths; a
    request's prompt and output are taken to rise together."""
    if not points:
        raise InputError("--percentile", "no percentile was given.", "give e.g. --percentile 50:500:150.")
    pts = sorted(points)
    for pct, p, o in pts:
        if not (math.isfinite(pct) and 0 < pct <= 100):
            raise InputError("--percentile", f"{pct:g} is not a percentile above 0 and at most 100.",
                             "give percentiles such as 50, 90 and 99.")
        if not (1 <= p <= 10_000_000 and 1 <= o <= 10_000_000):
            raise InputError("--percentile", f"the lengths at p{pct:g} ({p}, {o}) are not 1 to 10,000,000 tokens.",
                             "give prompt and output token counts from 1 to 10,000,000.")
    for (a, pa, oa), (b, pb, ob) in pairwise(pts):
        if a == b:
            raise InputError("--percentile", f"p{a:g} is given twice.", "give each percentile once.")
        if pb < pa or ob < oa:
            raise InputError("--percentile", f"the lengths fall from p{a:g} ({pa}, {oa}) to p{b:g} ({pb}, {ob}); a "
                             "higher percentile is never shorter.", "give lengths that grow with the percentile.")
    out, below = [], 0.0
    for i, (pct, p, o) in enumerate(pts):
        top = 100.0 if i == len(pts) - 1 else pct
        out.append(Bucket(p, o, (top - below) / 100))
        below = pct
    return tuple(out)


def serve_request(mean_rps: float | None, peak_rps: float | None, buckets: tuple[Bucket, ...], targets: Targets,
                  availability_pct: float, profile: Sequence[float] | None = None, **options: Any) -> ServeRequest:
    """A request from user-level values (availability in percent; with a daily ``profile`` the mean rate is its
    mean, so ``mean_rps`` is None); the CLI and the HTTP API share it."""
    if not (math.isfinite(availability_pct) and 0 < availability_pct < 100):
        raise InputError("--availability", f"{availability_pct:g} % cannot be planned: no fleet is never down, and "
                         "at or below 0 % is no target.", "give a percentage below 100, e.g. --availability 99.9.")
    rates = traffic.check_profile(profile) if profile is not None else ()
    if rates and mean_rps is not None:
        raise InputError("--profile", "both a mean rate (--rps) and a daily profile were given.",
                         "give one of them: the profile's mean is the mean rate.")
    mean = traffic.mean_rate(rates) if rates else (1.0 if mean_rps is None else mean_rps)
    return ServeRequest(mean, peak_rps, buckets, targets, availability_pct / 100, profile=rates, **options)


# ---------------------------------------------------------------- configurations and their capacity


@dataclass(frozen=True, slots=True)
class ReplicaConfig:
    """One way to run a replica; ``capacity_per_s[b]`` is the most requests/s of bucket b it serves within the
    targets (0: it cannot serve that bucket); ``prefill_share[b]`` the share of its GPU time that prompts take
    at that rate."""

    gpu: str
    tp: int
    pp: int
    quant: str
    engine: str
    capacity_per_s: tuple[float, ...]
    prefill_share: tuple[float, ...]
    max_num_seqs: int
    network: str = ""  # between nodes, when pp > 1
    ttft_p99_s: tuple[float, ...] = ()  # at that rate, per bucket: the worst the targets allow it to reach
    tpot_p99_s: tuple[float, ...] = ()
    latency_band: tuple[float, float] | None = None  # true ÷ estimated latency, p10 and p90 (docs/accuracy.md)
    lora_adapters: int = 0  # resident LoRA adapters (multi-LoRA), 0: none
    lora_rank: int = 0  # the rank reserved per adapter
    ttft_p50_s: tuple[float, ...] = ()  # at that rate, per bucket
    tpot_mean_s: tuple[float, ...] = ()
    mig: str = ""  # a MIG profile (1g.10gb ...): the replica is one slice of a GPU
    slices_per_gpu: int = 1  # replicas one GPU holds (MIG slices)
    ep: int = 1  # expert parallelism: the replica is ``ep`` ranks of data-parallel attention and E/ep experts each

    @property
    def n_gpus(self) -> int:
        return self.tp * self.pp * self.ep

    @property
    def nodes(self) -> int:
        return max(1, math.ceil(self.n_gpus / 8)) if self.n_gpus > 8 else 1

    def describe(self) -> str:
        if self.mig:
            return f"{self.gpu} MIG {self.mig} (×{self.slices_per_gpu} per GPU) {self.quant}"
        over = f" over {self.nodes} nodes" if self.nodes > 1 else ""
        if self.ep > 1:
            return f"{self.n_gpus}× {self.gpu} DP{self.ep} attention × EP{self.ep}{over} {self.quant}"
        layout = f"TP{self.tp}" + (f" × PP{self.pp}{over}" if self.pp > 1 else "")
        lora = f" + {self.lora_adapters} LoRA r{self.lora_rank}" if self.lora_adapters else ""
        return f"{self.n_gpus}× {self.gpu} {layout} {self.quant}{lora}"


def _setups(m: ModelSpec, gpu: Gpu, job: Job, fmt: str, engine: str, multinode: bool,
            lora: tuple[int, int] = (0, 0)) -> list[InferSetup]:
    """The smallest TP (1, 2, 4, 8) that holds the model (and ``lora`` = (adapters, rank) resident) and the
    next; with ``multinode``, TP 8 × PP 2 and 4."""
    out: list[InferSetup] = []
    adapters = {"lora_adapters": lora[0], "lora_rank": lora[1]}
    for tp in (1, 2, 4, 8):
        s = with_runner_defaults(m, inference_setup(job, tp, engine, fmt, **adapters), gpu)
        if _holds(m, gpu, job, s):
            out.append(s)
            if len(out) == 2:
                return out
    if out or not multinode:
        return out
    for pp in (2, 4):
        s = with_runner_defaults(m, replace(inference_setup(job, 8, engine, fmt, **adapters), pp=pp), gpu)
        if _holds(m, gpu, job, s):
            return [s]
    return []


def _holds(m: ModelSpec, gpu: Gpu, job: Job, s: InferSetup) -> bool:
    try:
        check_inference(m, gpu, s)
    except InfeasibleError:
        return False
    cal = fitted()
    one = s.with_batch(1)
    return JobEstimate(job, m, gpu, s.n_gpus, one, inference_memory(m, gpu, one, cal, describe=False), None,
                       None).fits and \
        max_batch(m, gpu, s, cal) >= 1


def replica_rate(m: ModelSpec, gpu: Gpu, s: InferSetup, targets: Targets, cal: Calibration, ep_ranks: int = 1
                 ) -> tuple[float, load.LoadSpeed | None]:
    """The largest arrival rate (requests/s) at which ``s`` meets ``targets``, and the load state there; 0 and the
    state at a trickle of requests when not even that meets them. The latencies grow with the rate, so a
    bisection finds it. ``ep_ranks`` > 1: a replica of that many expert-parallel ranks (:mod:`gpuplan.estimate.ep`).
    Kept per configuration and targets: a guarded fleet's plans (the main model alone, with its guard beside it)
    ask for the same configurations again."""
    s = with_engine_defaults(s, gpu)
    hit = _rates.get(m, gpu, cal, (s, targets, ep_ranks))
    if hit is not None:
        return hit
    return _rates.put(m, gpu, cal, (s, targets, ep_ranks), _replica_rate(m, gpu, s, targets, cal, ep_ranks))


_rates: IdentityMemo[tuple[float, load.LoadSpeed | None]] = IdentityMemo()


# An expert-parallel replica's load and capacity come from gpuplan.estimate.ep, imported when one is first looked
# at: a dense model's plan never needs it.
def _at_rate(m: ModelSpec, gpu: Gpu, s: InferSetup, ep_ranks: int, rate: float, cal: Calibration) -> load.LoadSpeed:
    if ep_ranks > 1:
        from gpuplan.estimate import ep

        return ep.at_rate(m, gpu, s, ep_ranks, rate, cal)
    return load.at_rate(m, gpu, s, rate, cal)


def _capacity(m: ModelSpec, gpu: Gpu, s: InferSetup, ep_ranks: int, cal: Calibration) -> float:
    if ep_ranks > 1:
        from gpuplan.estimate import ep

        return ep.capacity(m, gpu, s, ep_ranks, cal)
    return load.capacity(m, gpu, s, cal)


def _replica_rate(m: ModelSpec, gpu: Gpu, s: InferSetup, targets: Targets, cal: Calibration, ep_ranks: int
                  ) -> tuple[float, load.LoadSpeed | None]:
    """:func:`replica_rate` made afresh, each rate's load state computed once (the bisection ends on a rate it
    has tried)."""
    states: dict[float, load.LoadSpeed] = {}

    def state(rate: float) -> load.LoadSpeed:
        found = states.get(rate)
        if found is None:
            found = states[rate] = _at_rate(m, gpu, s, ep_ranks, rate, cal)
        return found

    top = _capacity(m, gpu, s, ep_ranks, cal)
    if top <= 0:
        return 0.0, None
    lo, hi = top * 1e-3, top * 0.999
    trickle = state(lo)
    if not targets.met(trickle):
        return 0.0, replace(trickle, saturated=True)  # the state at a trickle, marked as not meeting the targets
    if targets.met(state(hi)):
        return hi, state(hi)
    for _ in range(14):
        mid = (lo + hi) / 2
        if targets.met(state(mid)):
            lo = mid
        else:
            hi = mid
    return lo, state(lo)


@dataclass(frozen=True, slots=True)
class Miss:
    """A configuration that holds the model but meets no target even at a trickle: its latencies there."""

    config: str
    ttft_p50_s: float
    ttft_p99_s: float
    tpot_p50_s: float
    tpot_p99_s: float


def configurations(m: ModelSpec, gpus: Sequence[Gpu], r: ServeRequest, multinode_gpus: set[str],
                   cal: Calibration, unit_price: Callable[[str, int], float | None]
                   ) -> tuple[list[ReplicaConfig], list[Miss]]:
    """The configurations worth pricing: each that serves a bucket within the targets, computed cheapest first by
    an optimistic cost (the cheapest offer's price per replica ÷ the rate the replica serves with no latency
    target), stopping at configurations that cannot come within ``PRUNE_FACTOR`` of the best one found."""
    targets, fmt, engine, job = _basics(m, r)
    shares = [b.share for b in r.buckets]
    ranked: list[tuple[float, Gpu, InferSetup, int]] = []
    for gpu in gpus:
        setups = _setups(m, gpu, job, fmt, engine, gpu.name in multinode_gpus, reserved_lora(r))
        layouts = [(x, 1) for x in setups]
        if gpu.name in multinode_gpus and all(x.pp > 1 for x in setups):  # no node holds it: EP across nodes too
            layouts += _ep_layouts(m, gpu, job, fmt, engine, r)
        for s, ranks in layouts:
            n = s.n_gpus * ranks
            price = unit_price(gpu.name, n)
            if price is None:
                continue
            tops = [_rate_bound(m, gpu, _bucket_setup(s, b, r), cal, ranks) for b in r.buckets]
            served = [(sh, t) for sh, t in zip(shares, tops, strict=True) if t > 0]
            if served:
                ranked.append((price * sum(sh / t for sh, t in served) / sum(sh for sh, _ in served), gpu, s,
                               ranks))
    out: list[ReplicaConfig] = []
    misses: list[Miss] = []
    best = math.inf
    for optimistic, gpu, s, ranks in sorted(ranked, key=lambda x: x[0]):
        if optimistic > PRUNE_FACTOR * best or len(out) >= CONFIGS_KEPT:
            break
        c = _config(m, gpu, s, r, targets, fmt, engine, job, cal, misses, ranks)
        if c is None:
            continue
        out.append(c)
        mixed = _mix_capacity(c, shares)
        if mixed > 0 and all(x > 0 for x in c.capacity_per_s):
            best = min(best, (unit_price(gpu.name, c.n_gpus) or math.inf) / mixed)
    return out, misses


EP_RANKS = (16, 32)  # expert-parallel replicas tried across nodes of 8 GPUs: two and four nodes


def _ep_layouts(m: ModelSpec, gpu: Gpu, job: Job, fmt: str, engine: str, r: ServeRequest
                ) -> list[tuple[InferSetup, int]]:
    """The smallest expert-parallel replica (:mod:`gpuplan.estimate.ep`: data-parallel attention, the routed
    experts split over the ranks) of ``EP_RANKS`` whose ranks each hold their part of the MoE model ``m``, as
    (one rank's setup, ranks); none for a dense model, an engine without expert parallelism, or LoRA adapters."""
    if not m.is_moe or engine not in (Engine.VLLM, Engine.SGLANG) or r.adapters:
        return []
    from gpuplan.estimate import ep

    s = ep.rank_setup(inference_setup(job, 1, engine, fmt))
    for ranks in EP_RANKS:
        if ep.splits(m, ranks) and _holds(ep.rank_model(m, ranks), gpu, job, s):
            return [(s, ranks)]
    return []


def _basics(m: ModelSpec, r: ServeRequest) -> tuple[Targets, str, str, Job]:
    """The targets, weight format, engine and sizing job every configuration of ``m`` for ``r`` shares."""
    runner = runner_key(r.engine)  # a local runner keeps its name (its defaults apply) and serves its library's format
    fmt = weight_format(r.quant or served_format(r.engine, m.native_dtype)).name
    engine = runner or (Engine.LLAMACPP if fmt.startswith("gguf") else Engine.MLX if fmt.startswith("mlx")
                        else r.engine)
    longest = max(r.buckets, key=lambda b: b.prompt_len + b.output_len)
    job = Job(task=Task.SERVE, prompt_len=longest.prompt_len, output_len=longest.output_len, weight_format=fmt)
    return r.targets.effective(), fmt, engine, job


def one_gpu_config(m: ModelSpec, gpu: Gpu, r: ServeRequest, cal: Calibration, misses: list[Miss]
                   ) -> ReplicaConfig | None:
    """The replica of ``m`` on one ``gpu`` (TP 1) for ``r``, or None when it does not hold the model or meets
    no target (then ``misses`` says why)."""
    targets, fmt, engine, job = _basics(m, r)
    s = with_runner_defaults(m, inference_setup(job, 1, engine, fmt), gpu)  # a local runner's defaults
    if not _holds(m, gpu, job, s):
        return None
    return _config(m, gpu, s, r, targets, fmt, engine, job, cal, misses)


def _rate_bound(m: ModelSpec, gpu: Gpu, s: InferSetup, cal: Calibration, ep_ranks: int = 1) -> float:
    """An upper bound of :func:`load.capacity` from two steps: prompts cannot take more than all of the GPU
    (1 / prefill time) and the batch cannot exceed what the engine holds (cap / (O × step at cap)); an
    expert-parallel replica's own capacity (:func:`gpuplan.estimate.ep.capacity`)."""
    if ep_ranks > 1:
        return _capacity(m, gpu, s, ep_ranks, cal)
    cap = max_batch(m, gpu, s, cal)
    if cap < 1:
        return 0.0
    step, _ = decode_step_seconds(m, gpu, s, cap, s.prompt_len + s.output_len / 2, cal)
    return min(1 / prefill_seconds(m, gpu, s, s.prompt_len, cal), cap / (s.output_len * step))


def _bucket_setup(s: InferSetup, b: Bucket, r: ServeRequest) -> InferSetup:
    """``s`` for bucket ``b``: prompt tokens found in the prefix cache skip prefill and share their KV blocks."""
    return replace(s, prompt_len=max(1, round(b.prompt_len * (1 - r.prefix_hit))), output_len=b.output_len)


def _config(m: ModelSpec, gpu: Gpu, s: InferSetup, r: ServeRequest, targets: Targets, fmt: str, engine: str,
            job: Job, cal: Calibration, misses: list[Miss], ep_ranks: int = 1) -> ReplicaConfig | None:
    """The replica of ``s`` (with ``ep_ranks`` > 1: one rank's setup of an expert-parallel replica) and its
    capacity per bucket, or None when it meets no target (then ``misses`` says why)."""
    part = m  # what one GPU (one rank) holds
    if ep_ranks > 1:
        from gpuplan.estimate import ep

        part = ep.rank_model(m, ep_ranks)
    seqs = max(1, largest_batch(part, gpu, job, s, cal, None, max_batch(part, gpu, s, cal)))  # per rank
    caps, shares, ttfts, tpots, ttft50s, tpot50s = [], [], [], [], [], []
    trickle = None
    band = None
    for b in r.buckets:
        rate, state = replica_rate(m, gpu, replace(_bucket_setup(s, b, r), max_num_seqs=seqs), targets, cal,
                                   ep_ranks)
        caps.append(rate)
        ok = state is not None and rate > 0
        shares.append(state.prefill_share if state and ok else 0.0)
        ttfts.append(state.ttft_p99_s if state and ok else math.inf)
        tpots.append(state.tpot_p99_s if state and ok else math.inf)
        ttft50s.append(state.ttft_p50_s if state and ok else math.inf)
        tpot50s.append(state.tpot_mean_s if state and ok else math.inf)
        if state and state.band:
            band = (state.band.low, state.band.high)
        trickle = trickle or (state if rate <= 0 else None)
    if not any(c > 0 for c in caps):
        if trickle is not None:
            name = f"{s.n_gpus * ep_ranks}× {gpu.name}" + (f" (TP{s.tp})" if s.tp > 1 else "") + (
                f" (EP{ep_ranks})" if ep_ranks > 1 else "")
            misses.append(Miss(name, trickle.ttft_p50_s, trickle.ttft_p99_s, trickle.tpot_median_s,
                              trickle.tpot_p99_s))
        return None
    multinode = s.pp > 1 or s.n_gpus * ep_ranks > 8
    net = f"{cal.get('network_bytes_per_s_per_gpu') * 8 / 1e9:.0f} Gb/s per GPU between nodes" if multinode else ""
    return ReplicaConfig(gpu.name, s.tp, s.pp, fmt, engine, tuple(caps), tuple(shares), seqs, net, tuple(ttfts),
                         tuple(tpots), band, s.lora_adapters, s.lora_rank, tuple(ttft50s),
                         tuple(tpot50s), ep=ep_ranks)


def reserved_lora(r: ServeRequest) -> tuple[int, int]:
    """(adapters, rank) each replica reserves: vLLM reserves its slots at a --max-lora-rank it accepts, the
    smallest of its choices at least the adapters' rank (vllm.json); SGLang at the rank itself."""
    if not r.adapters:
        return 0, 0
    if r.engine != Engine.VLLM:
        return r.adapters, r.adapter_rank
    from gpuplan.export.registry import flags

    choices = sorted(int(c) for c in flags("vllm")["options"]["--max-lora-rank"]["choices"])
    return r.adapters, next(c for c in choices if c >= r.adapter_rank)


# ---------------------------------------------------------------- pools and the mix


@dataclass(frozen=True, slots=True)
class Pool:
    """Identical replicas of one configuration from one offer in one zone. One unit is what is rented together:
    one instance (holding ``replicas_per_unit`` replicas) or, across nodes, the instances of one replica."""

    config: int  # index into the configurations
    cost_per_unit: float  # per hour, in the plan's currency
    replicas_per_unit: float
    domains: frozenset[str]
    cap_units: int | None = None
    offer: Offer | None = None
    zone: str = ""
    instances_per_unit: int = 1


@dataclass(frozen=True, slots=True)
class Mix:
    """A solution: units rented per pool, and the traffic each configuration takes per bucket when nothing is
    lost (requests/s)."""

    units: tuple[int, ...]
    routing: tuple[tuple[float, ...], ...]
    cost_per_hour: float
    seconds: float
    gap: float = 0.0  # HiGHS's relative optimality gap (0: proven optimal within MIP_GAP)


def scenarios(pools: Sequence[Pool], tolerate: str) -> list[frozenset[str]]:
    """The failure scenarios a fleet must survive: nothing lost, and each domain of the tolerated kind (and every
    spot pool) lost alone."""
    if tolerate == "none":
        return [frozenset()]
    kinds = ("zone:", "spot:") if tolerate == "zone" else ("zone:", "region:", "spot:")
    domains = sorted({d for p in pools for d in p.domains if d.startswith(kinds)})
    return [frozenset()] + [frozenset([d]) for d in domains]


def solve_mix(capacity: Sequence[Sequence[float]], demand: Sequence[float], pools: Sequence[Pool],
              failures: Sequence[frozenset[str]], budget: float | None = None) -> Mix | None:
    """The cheapest units per pool such that, in every scenario of ``failures`` (the domains lost), the replicas
    left can take ``demand[b]`` requests/s of every bucket b, ``capacity[i][b]`` being what one replica of
    configuration i takes of bucket b alone (0: cannot). None when no mix does (within ``budget``).

    With several buckets each scenario has its own assignment, so scenarios are added as the solution violates
    them (constraint generation: solve with the scenarios so far, check every other one with an LP, add those
    it fails, solve again); the answer is the same as with all of them at once.

    Kept per problem (what the solver reads of it) for one :func:`plan_serving`: a guarded fleet's plans (the main
    model alone and with its guard beside it) pose the same problems again."""
    key = (tuple(map(tuple, capacity)), tuple(demand), budget, tuple(failures),
           tuple((p.config, p.cost_per_unit, p.replicas_per_unit, p.domains, p.cap_units) for p in pools))
    return _kept(_mixes, key, lambda: _solve_mix(capacity, demand, pools, failures, budget))


_mixes: dict[tuple[Any, ...], Mix | None] = {}
_V = TypeVar("_V")


def _kept(store: dict[tuple[Any, ...], _V], key: tuple[Any, ...], make: Callable[[], _V]) -> _V:
    """``store[key]``, made by ``make`` the first time: a store of one plan's solver answers (:func:`plan_serving`
    empties it), emptied at 1,024 entries."""
    if key not in store:
        if len(store) >= 1024:
            store.clear()
        store[key] = make()
    return store[key]


def _solve_mix(capacity: Sequence[Sequence[float]], demand: Sequence[float], pools: Sequence[Pool],
               failures: Sequence[frozenset[str]], budget: float | None) -> Mix | None:
    """:func:`solve_mix` made afresh."""
    start = time.perf_counter()
    # scenarios that take the same pools are one scenario, and one inside another is implied by it
    lost_sets = _maximal(frozenset(p for p, pool in enumerate(pools) if pool.domains & lost) for lost in failures)
    if len(demand) == 1:
        mix = _solve_sets(capacity, demand, pools, lost_sets, budget)
    else:
        active = lost_sets[:1]
        while True:
            mix = _solve_sets(capacity, demand, pools, active, budget)
            if mix is None:
                break
            failed = [s for s in lost_sets if s not in active and not _survives(capacity, demand, pools, mix, s)]
            if not failed:
                break
            active += failed
    return replace(mix, seconds=time.perf_counter() - start) if mix else None


def _survives(capacity: Sequence[Sequence[float]], demand: Sequence[float], pools: Sequence[Pool], mix: Mix,
              lost: frozenset[int]) -> bool:
    if not any(mix.units[p] for p in lost):
        return True  # it loses nothing the solution rents: as good as the scenario with nothing lost
    left = [0.0] * len(capacity)
    for p, (units, pool) in enumerate(zip(mix.units, pools, strict=True)):
        if p not in lost:
            left[pool.config] += units * pool.replicas_per_unit
    return serves(capacity, demand, left)


def _solve_sets(capacity: Sequence[Sequence[float]], demand: Sequence[float], pools: Sequence[Pool],
                lost_sets: Sequence[frozenset[int]], budget: float | None) -> Mix | None:
    """:func:`solve_mix` for scenarios given as the sets of pools each loses (the first loses none)."""
    start = time.perf_counter()
    if len(demand) == 1 and len(pools) <= SEARCH_MAX_POOLS:
        units, finished = mixsearch.cheapest_units(
            [p.replicas_per_unit * capacity[p.config][0] for p in pools], [p.replicas_per_unit for p in pools],
            [p.cost_per_unit for p in pools], [p.cap_units for p in pools], demand[0], lost_sets, budget,
            SEARCH_NODE_LIMIT)
        if finished:
            return None if units is None else _one_bucket_mix(capacity, demand, pools, units, start, 0.0)
    return _milp_sets(capacity, demand, pools, lost_sets, budget)


def _one_bucket_mix(capacity: Sequence[Sequence[float]], demand: Sequence[float], pools: Sequence[Pool],
                    units: tuple[int, ...], start: float, gap: float) -> Mix:
    """The mix of ``units`` for one bucket: its traffic goes to the replicas in proportion to what they take."""
    up = [sum(u * p.replicas_per_unit for u, p in zip(units, pools, strict=True) if p.config == i) *
          capacity[i][0] for i in range(len(capacity))]
    routing = tuple((demand[0] * x / sum(up),) if sum(up) > 0 else (0.0,) for x in up)
    total = fleet_cost_per_hour((u, p.cost_per_unit) for u, p in zip(units, pools, strict=True))
    return Mix(units, routing, total, time.perf_counter() - start, gap)


def _milp_sets(capacity: Sequence[Sequence[float]], demand: Sequence[float], pools: Sequence[Pool],
               lost_sets: Sequence[frozenset[int]], budget: float | None) -> Mix | None:
    """:func:`_solve_sets` as a MILP (scipy.optimize.milp, HiGHS), imported only here: it costs a process about
    1.2 s of CPU."""
    import numpy as np
    from scipy.optimize import Bounds, LinearConstraint, milp
    from scipy.sparse import coo_matrix

    start = time.perf_counter()
    n_cfg, n_b, n_p = len(capacity), len(demand), len(pools)
    x_index: dict[tuple[int, int, int], int] = {}
    if n_b > 1:
        for f in range(len(lost_sets)):
            for i in range(n_cfg):
                for b in range(n_b):
                    if capacity[i][b] > 0:
                        x_index[(f, i, b)] = n_p + len(x_index)
    n_var = n_p + len(x_index)
    rows: list[int] = []
    cols: list[int] = []
    vals: list[float] = []
    lo: list[float] = []
    hi: list[float] = []

    def add(entries: list[tuple[int, float]], low: float, high: float) -> None:
        r = len(lo)
        for c, v in entries:
            rows.append(r)
            cols.append(c)
            vals.append(v)
        lo.append(low)
        hi.append(high)

    for f, gone in enumerate(lost_sets):
        # a service keeps one replica up in every scenario, however little its traffic: a demand below the
        # solver's feasibility tolerance (1e-7) would otherwise be met by no replica at all
        add([(p, pool.replicas_per_unit) for p, pool in enumerate(pools) if p not in gone], 1.0, np.inf)
        if n_b == 1:  # one bucket: the replicas left carry it, no assignment needed
            add([(p, pool.replicas_per_unit * capacity[pool.config][0]) for p, pool in enumerate(pools)
                 if p not in gone and capacity[pool.config][0] > 0], demand[0], np.inf)
            continue
        for b in range(n_b):  # every bucket's traffic is placed
            add([(x_index[(f, i, b)], 1.0) for i in range(n_cfg) if (f, i, b) in x_index], demand[b], np.inf)
        for i in range(n_cfg):  # on replicas that are up: Σ_b x/c ≤ replicas left
            entries = [(x_index[(f, i, b)], 1 / capacity[i][b]) for b in range(n_b) if (f, i, b) in x_index]
            entries += [(p, -pool.replicas_per_unit) for p, pool in enumerate(pools)
                        if pool.config == i and p not in gone]
            if entries:
                add(entries, -np.inf, 0.0)
    cost = np.zeros(n_var)
    cost[:n_p] = [p.cost_per_unit for p in pools]
    if budget is not None:
        add([(p, pool.cost_per_unit) for p, pool in enumerate(pools)], -np.inf, budget)
    a = coo_matrix((vals, (rows, cols)), shape=(len(lo), n_var)).tocsr()
    upper = np.full(n_var, np.inf)
    upper[:n_p] = [p.cap_units if p.cap_units is not None else np.inf for p in pools]
    integrality = np.zeros(n_var)
    integrality[:n_p] = 1
    with c_stdout_to_stderr():  # HiGHS prints a debug line with C's printf on some of these problems
        res = milp(cost, constraints=LinearConstraint(a, np.array(lo), np.array(hi)), integrality=integrality,
                   bounds=Bounds(np.zeros(n_var), upper),
                   options={"node_limit": MILP_NODE_LIMIT, "time_limit": MILP_TIME_LIMIT_S,
                            "presolve": PRESOLVE, "mip_rel_gap": MIP_GAP})
    if res.x is None or res.status not in (0, 1):
        return None
    units = tuple(round(float(v)) for v in res.x[:n_p])
    gap = float(getattr(res, "mip_gap", 0.0) or 0.0) if res.status == 1 else 0.0
    if n_b == 1:
        return _one_bucket_mix(capacity, demand, pools, units, start, gap)
    routing = tuple(tuple(float(res.x[x_index[(0, i, b)]]) if (0, i, b) in x_index else 0.0
                          for b in range(n_b)) for i in range(n_cfg))
    total = fleet_cost_per_hour((u, p.cost_per_unit) for u, p in zip(units, pools, strict=True))
    return Mix(units, routing, total, time.perf_counter() - start, gap)


def _maximal(sets: Iterable[frozenset[int]]) -> list[frozenset[int]]:
    """Nothing lost, then the lost sets no other contains (surviving a larger loss survives every part of it)."""
    unique = sorted(set(sets), key=len, reverse=True)
    kept: list[frozenset[int]] = []
    for s in unique:
        if s and not any(s < k for k in kept):
            kept.append(s)
    return [frozenset(), *kept]


def serves(capacity: Sequence[Sequence[float]], demand: Sequence[float], replicas: Sequence[float]) -> bool:
    """Whether ``replicas[i]`` replicas of each configuration can take ``demand`` (an LP feasibility check).

    Kept per question for one :func:`plan_serving`, as :func:`solve_mix`: the scenarios of a mix's constraint
    generation often leave the same replicas, and each check is a solver call (about 2 ms)."""
    whole = tuple(math.floor(n + 1e-9) for n in replicas)
    return _kept(_served, (tuple(map(tuple, capacity)), tuple(demand), whole), lambda: _solve_sets(
        capacity, demand, [Pool(i, 0.0, 1.0, frozenset(), n) for i, n in enumerate(whole)], [frozenset()], None)
        is not None)


_served: dict[tuple[Any, ...], bool] = {}


# ---------------------------------------------------------------- results


@dataclass(frozen=True, slots=True)
class FleetGroup:
    """Replicas of one configuration from one offer in one zone: what an exporter turns into one service."""

    config: ReplicaConfig
    provider: str
    instance_type: str
    region: str
    zone: str
    pricing: str  # on-demand | spot | reserved | marketplace
    instances: int
    replicas: int
    cost_per_hour: float
    offer_source: str
    offer_as_of: str
    market: str = ""  # the offer's market: cn = a mainland-China region
    offer: Offer | None = field(default=None, compare=False)  # the offer rented (the exporters read it)

    @property
    def spot(self) -> bool:
        return self.pricing == "spot"

    def as_dict(self) -> dict[str, Any]:
        c = self.config
        return {"config": c.describe(), "gpu": c.gpu, "n_gpus": c.n_gpus, "tp": c.tp, "pp": c.pp, "ep": c.ep,
                "nodes": c.nodes,
                "engine": c.engine, "quant": c.quant, "max_num_seqs": c.max_num_seqs, "lora_adapters": c.lora_adapters,
                "lora_rank": c.lora_rank or None, "provider": self.provider,
                "instance_type": self.instance_type, "region": self.region, "zone": self.zone,
                "pricing": self.pricing, "spot": self.spot, "instances": self.instances, "replicas": self.replicas,
                "cost_per_hour": self.cost_per_hour, "network": c.network or None,
                "capacity_per_replica_per_s": list(c.capacity_per_s), "ttft_p99_s_at_capacity": list(c.ttft_p99_s),
                "tpot_p99_s_at_capacity": list(c.tpot_p99_s), "mig": c.mig or None, "offer_source": self.offer_source,
                "offer_as_of": self.offer_as_of, "market": self.market,
                "commit_months": self.offer.commit_months if self.offer else None, **self._age()}

    def _age(self) -> dict[str, Any]:
        """How old the rented price is (the listings' ``dated``, ``price_age`` and ``stale``), offer known."""
        if self.offer is None:
            return {}
        today = dt.date.today()
        return {"offer_dated": self.offer.dated, "offer_price_age": price_age(self.offer, today),
                "offer_stale": self.offer.is_stale(today)}


@dataclass(frozen=True, slots=True)
class Fleet:
    """The instances rented, how the traffic is routed over them, and what they cost and keep up."""

    groups: tuple[FleetGroup, ...]
    cost_per_hour: float
    routing: tuple[tuple[str, int, float], ...]  # (GPU configuration, bucket index, requests/s) with nothing lost
    headroom: float  # share the peak was raised by
    availability: float
    solve_seconds: float
    gap: float = 0.0  # the solver's optimality gap when it stopped at its time limit
    sources: tuple[tuple[Pool, int], ...] = field(default=(), compare=False)  # the pools rented and units of each

    @property
    def gpu_types(self) -> tuple[str, ...]:
        return tuple(sorted({g.config.gpu for g in self.groups}))

    def routed(self, config: ReplicaConfig, n_buckets: int) -> tuple[float, ...]:
        """Requests/s of each bucket routed to ``config``'s replicas with nothing lost."""
        name = config.describe()
        return tuple(sum(x for c, b, x in self.routing if c == name and b == i) for i in range(n_buckets))

    def replica_rate(self, config: ReplicaConfig, shares: Sequence[float]) -> tuple[float, float]:
        """(the most requests/s one replica of ``config`` takes of the traffic routed to it — of ``shares`` when
        none is routed there, a spare for failures —, the requests/s each replica is given with nothing lost)."""
        routed = self.routed(config, len(shares))
        n = sum(g.replicas for g in self.groups if g.config == config)
        mixed = routed if sum(routed) > 0 else tuple(shares)
        return _mix_capacity(config, [x / sum(mixed) for x in mixed]), sum(routed) / n if n else 0.0

    def as_dict(self) -> dict[str, Any]:
        return {"groups": [g.as_dict() for g in self.groups], "cost_per_hour": self.cost_per_hour,
                "routing": [{"config": c, "bucket": b, "requests_per_s": x} for c, b, x in self.routing],
                "headroom": self.headroom, "availability": self.availability,
                "violation_minutes_per_month": av.violation_minutes_per_month(self.availability),
                "gpu_types": list(self.gpu_types), "solve_seconds": self.solve_seconds, "optimality_gap": self.gap}


@dataclass(frozen=True, slots=True)
class ServePlan:
    """The answer to a serving request: the fleet at peak and at the mean rate, the configurations looked at,
    costs per token, assumptions and notes."""

    model: str
    request: ServeRequest
    fleet: Fleet | None  # at peak
    average: Fleet | None  # the same rules at the mean rate (what an autoscaler runs most of the day)
    single_type: Fleet | None  # the best fleet of one GPU configuration
    configs: tuple[ReplicaConfig, ...]
    recovery: av.Recovery
    cost_per_m_input: float | None
    cost_per_m_output: float | None
    assumptions: tuple[dict[str, str], ...]
    notes: tuple[str, ...] = ()
    nothing_fits: str = ""
    seconds: float = 0.0
    scenarios: int = 0
    pools: int = 0
    extra: dict[str, Any] = field(default_factory=dict)
    checklist: compliance.Checklist | None = None  # China compliance (market or users cn)
    day: traffic.DayCost | None = None  # the daily profile followed by the peak fleet scaled down, when given
    guard: Any = None  # gpuplan.plan.guard.GuardPlan: the content-safety guard, None without one

    @property
    def saving_per_hour(self) -> float | None:
        if self.fleet is None or self.single_type is None:
            return None
        return self.single_type.cost_per_hour - self.fleet.cost_per_hour

    @property
    def cost_per_hour_peak(self) -> float | None:
        """The fleet at peak, and the guard's fleet or moderation service at peak."""
        if self.fleet is None:
            return None
        return self.fleet.cost_per_hour + (self.guard.cost_per_hour_peak if self.guard else 0.0)

    @property
    def cost_per_hour_average(self) -> float | None:
        if self.average is None:
            return None
        return self.average.cost_per_hour + (self.guard.cost_per_hour_average if self.guard else 0.0)

    @property
    def availability(self) -> float | None:
        """The service's expected availability: the fleet's, times the guard's fleet's when it has its own."""
        if self.fleet is None:
            return None
        return self.fleet.availability * (self.guard.availability if self.guard else 1.0)

    def as_dict(self) -> dict[str, Any]:
        r = self.request
        return {
            "model": self.model, "currency": r.currency,
            "request": {"mean_rps": r.mean_rps, "peak_rps": r.peak, "availability": r.availability,
                        "tolerate": r.tolerate, "users": r.users, "spot": r.spot,
                        "allow_marketplace": r.allow_marketplace, "tiers": list(allowed_tiers(r)),
                        "prefix_hit": r.prefix_hit, "engine": r.engine, "quant": r.quant,
                        "profile": list(r.profile) or None, "adapters": r.adapters,
                        "adapter_rank": r.adapter_rank if r.adapters else None,
                        "guard": r.guard, "guard_mode": r.guard_mode,
                        "buckets": [{"prompt_len": b.prompt_len, "output_len": b.output_len, "share": b.share}
                                    for b in r.buckets],
                        "targets": {"ttft_p50_s": r.targets.ttft_p50_s, "ttft_p99_s": r.targets.effective().ttft_p99_s,
                                    "tpot_p50_s": r.targets.tpot_p50_s, "tpot_p99_s": r.targets.tpot_p99_s}},
            "fleet": self.fleet.as_dict() if self.fleet else None,
            "average_load_fleet": self.average.as_dict() if self.average else None,
            "single_type_fleet": self.single_type.as_dict() if self.single_type else None,
            "saving_per_hour": self.saving_per_hour,
            "cost_per_hour_peak": self.cost_per_hour_peak,
            "cost_per_hour_average": self.cost_per_hour_average,
            "cost_per_million_input_tokens": self.cost_per_m_input,
            "cost_per_million_output_tokens": self.cost_per_m_output,
            "expected_availability": self.availability,
            "violation_minutes_per_month": (av.violation_minutes_per_month(self.availability)
                                            if self.availability is not None else None),
            "recovery_seconds": {"provisioning": self.recovery.provisioning_s,
                                 "weight_load": self.recovery.weight_load_s, "warmup": self.recovery.warmup_s,
                                 "total": self.recovery.total_s},
            "configurations": [{"config": c.describe(), "gpu": c.gpu, "tp": c.tp, "pp": c.pp, "ep": c.ep,
                                "quant": c.quant,
                                "lora_adapters": c.lora_adapters, "lora_rank": c.lora_rank or None,
                                "engine": c.engine, "network": c.network or None,
                                "capacity_per_replica_per_s": list(c.capacity_per_s)} for c in self.configs],
            "assumptions": list(self.assumptions), "notes": list(self.notes),
            "nothing_fits": self.nothing_fits or None, "seconds": self.seconds, "scenarios": self.scenarios,
            "pools": self.pools,
            "compliance": self.checklist.as_dict() if self.checklist else None,
            "daily_profile": self.day.as_dict() if self.day else None,
            "guard": self.guard.as_dict() if self.guard else None,
        }


# ---------------------------------------------------------------- the planner


def _zones(catalog: Catalog, offer: Offer) -> int:
    """Zones of the offer's region a fleet can spread over: the provider's zones per region (providers.csv);
    where that is not published, one (a zone lost is the region lost: the safe reading)."""
    return catalog.provider(offer.provider).zones_per_region or 1


def _units(offer: Offer, n: int) -> tuple[float, int] | None:
    """(replicas per unit, instances per unit) of ``offer`` for replicas of ``n`` GPUs, or None."""
    count = offer.gpu_count
    if count == n:
        return 1.0, 1
    if n > 8 and count == 8 and n % 8 == 0 and offer.pricing != "marketplace":
        return 1.0, n // 8
    if n < count <= 8 and count == int(count) and int(count) % n == 0:
        return float(int(count) // n), 1
    return None


def _unit_prices(catalog: Catalog, offers: Sequence[Offer], r: ServeRequest) -> Callable[[str, int], float | None]:
    """The cheapest hourly price of one replica of ``n`` GPUs of a type among ``offers`` (None: none fits)."""
    cheapest: dict[tuple[str, int], float] = {}
    of_gpu: dict[str, list[Offer]] = {}  # the offers of each GPU type in their order: asked for ~70 times a plan
    for o in offers:
        of_gpu.setdefault(o.gpu, []).append(o)

    def price(gpu: str, n: int) -> float | None:
        if (gpu, n) not in cheapest:
            per = [hourly_cost(hourly_price(catalog, o, r.currency), u[1]) / u[0] for o in of_gpu.get(gpu, ())
                   for u in [_units(o, n)] if u is not None]
            cheapest[(gpu, n)] = min(per) if per else math.inf
        value = cheapest[(gpu, n)]
        return None if math.isinf(value) else value

    return price


def allowed_tiers(r: ServeRequest) -> tuple[str, ...]:
    """The pricing tiers a fleet may rent: those ``--tier`` names (naming any replaces the default), else
    on-demand; ``--spot`` and ``--allow-marketplace`` add theirs. A reserved (committed) price joins only when
    named: it is paid for its whole term, whether or not the instance runs."""
    tiers = list(r.tiers or ("on-demand",))
    tiers += [t for t, on in (("spot", r.spot), ("marketplace", r.allow_marketplace)) if on and t not in tiers]
    return tuple(tiers)


def _offers(catalog: Catalog, r: ServeRequest) -> list[Offer]:
    providers = resolve_providers(catalog, r.providers, platforms=False) if r.providers else None
    tiers = allowed_tiers(r)
    out = []
    for o in catalog.offers:
        if (r.market and o.market != r.market) or (providers is not None and o.provider not in providers):
            continue
        if o.pricing not in tiers:
            continue
        if "marketplace" not in tiers and not catalog.provider(o.provider).production_grade:
            continue  # notebook platforms are not production serving (providers.csv tier), unless marketplace is
        if r.regions and o.region not in r.regions:
            continue
        out.append(o)
    return out


def check_regions(catalog: Catalog, r: ServeRequest) -> None:
    known = sorted({o.region for o in catalog.offers if not r.market or o.market == r.market})
    for region in r.regions:
        if region not in known:
            hint = close_matches(region, known)
            did = f" Did you mean {', '.join(repr(h) for h in hint)}?" if hint else ""
            raise InputError("--region", f"no offer is in region '{region}'.{did}",
                             "run 'gpuplan offers' to see the regions offers are in, or drop --region.")


def _pools(catalog: Catalog, r: ServeRequest, configs: Sequence[ReplicaConfig], offers: Sequence[Offer],
           recovery_s: float) -> list[Pool]:
    """The pools of every configuration: per pricing, the cheapest offers in its ``REGIONS_PER_CONFIG`` cheapest
    (provider, region) places, in each zone."""
    pools: list[Pool] = []
    for i, c in enumerate(configs):
        best: dict[tuple[str, str, str], tuple[float, Offer, float, int]] = {}
        for o in offers:
            if o.gpu != c.gpu:
                continue
            units = _units(o, c.n_gpus)
            if units is None:
                continue
            per_unit = hourly_cost(hourly_price(catalog, o, r.currency), units[1])
            key = (o.provider, o.region, o.pricing)
            if key not in best or per_unit / units[0] < best[key][0] / best[key][2]:
                best[key] = (per_unit, o, units[0], units[1])
        for pricing in ("on-demand", "spot", "reserved", "marketplace"):
            places = sorted((v for k, v in best.items() if k[2] == pricing), key=lambda v: v[0] / v[2])
            for per_unit, o, reps, inst in places[:REGIONS_PER_CONFIG]:
                reps *= c.slices_per_gpu  # MIG: each GPU of the instance holds several slices
                cap = 1 if o.pricing == "marketplace" else r.max_instances_per_offer
                zones = _zones(catalog, o)
                for z in range(zones):
                    zone = f"{o.region}/zone-{z + 1}" if zones > 1 else o.region
                    domains = {f"zone:{o.provider}/{zone}", f"region:{o.provider}/{o.region}"}
                    if o.pricing == "spot":
                        domains.add(f"spot:{o.provider}/{o.region}/{o.instance_type}")
                    if o.pricing == "marketplace":
                        domains.add(f"host:{o.provider}/{o.instance_type}/{o.region}")
                    pools.append(Pool(i, per_unit, reps, frozenset(domains), cap, o, zone, inst))
    return pools


def _domain_q(catalog: Catalog, pools: Sequence[Pool], recovery_s: float) -> dict[str, float]:
    """The chance each failure domain is out: a zone (or a marketplace host) at the provider's single-instance
    SLA, a region at its multi-zone SLA (providers.csv; availability.csv's defaults where none is published),
    a spot pool at its preemption rate × recovery."""
    q: dict[str, float] = {}
    for p in pools:
        assert p.offer is not None
        terms = catalog.provider(p.offer.provider)
        zone = av.zone_unavailability(terms.sla_pct)
        for d in p.domains:
            kind = d.split(":", 1)[0]
            q[d] = {"zone": zone, "region": av.region_unavailability(terms.sla_multi_zone_pct),
                    "spot": av.spot_pool_unavailability(recovery_s), "host": zone}[kind]
    return q


def _mix_capacity(c: ReplicaConfig, shares: Sequence[float]) -> float:
    """Requests/s of the traffic mix ``shares`` (per bucket) one replica takes: the harmonic combination."""
    used = [(s, cap) for s, cap in zip(shares, c.capacity_per_s, strict=True) if s > 0]
    if not used or any(cap <= 0 for _, cap in used):
        served = [(s, cap) for s, cap in used if cap > 0]
        used = served
    if not used:
        return 0.0
    total = sum(s for s, _ in used)
    return total / sum(s / cap for s, cap in used)


def _fleet(catalog: Catalog, mix: Mix, pools: Sequence[Pool], configs: Sequence[ReplicaConfig], r: ServeRequest,
           headroom: float, recovery_s: float, rate: float) -> Fleet:
    groups = []
    for u, p in zip(mix.units, pools, strict=True):
        if u <= 0:
            continue
        assert p.offer is not None
        c = configs[p.config]
        groups.append(FleetGroup(c, p.offer.provider, p.offer.instance_type, p.offer.region, p.zone,
                                 p.offer.pricing, u * p.instances_per_unit, int(u * p.replicas_per_unit),
                                 hourly_cost(p.cost_per_unit, u), p.offer.source, p.offer.as_of.isoformat(),
                                 p.offer.market, p.offer))
    routing = tuple((configs[i].describe(), b, x) for i, row in enumerate(mix.routing) for b, x in enumerate(row)
                    if x > 1e-9)
    availability = _availability(catalog, mix, pools, configs, r, recovery_s, rate)
    sources = tuple((p, u) for u, p in zip(mix.units, pools, strict=True) if u > 0)
    return Fleet(tuple(groups), mix.cost_per_hour, routing, headroom, availability, mix.seconds, mix.gap, sources)


def _availability(catalog: Catalog, mix: Mix, pools: Sequence[Pool], configs: Sequence[ReplicaConfig],
                  r: ServeRequest, recovery_s: float, rate: float) -> float:
    """P(the replicas up carry ``rate``), times the router's availability."""
    shares = [b.share for b in r.buckets]
    groups, chosen = [], []
    for u, p in zip(mix.units, pools, strict=True):
        if u <= 0:
            continue
        c = configs[p.config]
        routed = mix.routing[p.config]
        mixed = routed if sum(routed) > 0 else shares
        w = _mix_capacity(c, [x / sum(mixed) for x in mixed])
        groups.append(av.Group(int(u * p.replicas_per_unit), w, av.replica_unavailability(c.n_gpus, recovery_s),
                               p.domains))
        chosen.append(p)
    if not groups:
        return 0.0
    inside = av.fleet_availability(groups, _domain_q(catalog, chosen, recovery_s), rate)
    router = min(av.router_availability(p.offer.provider) for p in chosen if p.offer is not None)
    return inside * router


def _solve(configs: Sequence[ReplicaConfig], pools: Sequence[Pool], r: ServeRequest, rate: float,
           recovery_s: float, catalog: Catalog, from_headroom: float = 0.0) -> tuple[Fleet | None, int]:
    """The cheapest fleet for ``rate`` that meets the availability target (raising the peak by headroom steps
    until it does; the last step's fleet when none does), and how many scenarios it was checked against."""
    failures = scenarios(pools, r.tolerate)
    capacity = [c.capacity_per_s for c in configs]
    fleet = None
    total_s = 0.0
    for h in (x for x in HEADROOM_STEPS if x >= from_headroom):
        demand = [rate * (1 + h) * b.share for b in r.buckets]
        mix = solve_mix(capacity, demand, pools, failures, r.budget_per_hour)
        if mix is None:
            break
        total_s += mix.seconds
        fleet = _fleet(catalog, mix, pools, configs, r, h, recovery_s, rate)
        if fleet.availability >= r.availability:
            break
    if fleet is not None:
        fleet = replace(fleet, solve_seconds=total_s)
    return fleet, len(failures)


def plan_serving(catalog: Catalog, m: ModelSpec, r: ServeRequest, cal: Calibration | None = None) -> ServePlan:
    """The cheapest fleet serving ``r`` on ``m``, the best single-configuration fleet to compare, the fleet at
    the mean rate, the cost per million tokens and the expected availability; with ``r.guard``, the guard model
    (or moderation service) sized alongside it (:mod:`gpuplan.plan.guard`)."""
    cal = cal or fitted()
    _mixes.clear()  # the mixes are kept for the fleets of one plan (a plan's timings are its own solves)
    _served.clear()
    if r.guard != "none":
        from gpuplan.plan import guard

        return guard.plan_guarded(catalog, m, r, cal)
    return plan_fleet(catalog, m, r, cal)


Configure = Callable[[ModelSpec, Sequence[Gpu], ServeRequest, set[str], Calibration,
                      Callable[[str, int], float | None]], tuple[list[ReplicaConfig], list["Miss"]]]


def plan_fleet(catalog: Catalog, m: ModelSpec, r: ServeRequest, cal: Calibration,
               configure: Configure | None = None) -> ServePlan:
    """:func:`plan_serving` for one model, its guard left out; ``configure`` replaces :func:`configurations`
    (a guard on MIG slices, or a model sharing its GPUs with a guard)."""
    start = time.perf_counter()
    check_regions(catalog, r)
    if r.adapters and m.is_moe:
        raise InputError("--adapters", f"{m.name} is a mixture-of-experts model; LoRA adapters on its experts are "
                         "not modelled.", "plan a dense model, or drop --adapters.")
    offers = _offers(catalog, r)
    allowed = match_gpus(catalog, r.gpus, "--gpus") if r.gpus else set(catalog.gpus)
    denied = match_gpus(catalog, r.exclude_gpus, "--exclude-gpus") if r.exclude_gpus else set()
    offered = {o.gpu for o in offers}
    gpus = [catalog.gpus[n] for n in sorted((allowed - denied) & offered)
            if catalog.gpus[n].memory_bandwidth_bytes_per_s and catalog.gpus[n].half_flops_per_s > 0]
    multinode = {o.gpu for o in offers if o.gpu_count == 8 and o.pricing != "marketplace"}
    checkpoint = weights_bytes(m, weight_format(native_format(m.native_dtype)))
    rec = av.recovery(checkpoint, r.engine)
    configs, misses = (configure or configurations)(m, gpus, r, multinode, cal, _unit_prices(catalog, offers, r))
    pools = _pools(catalog, r, configs, offers, rec.total_s)
    configs, pools = _keep_cheapest(configs, pools, r)
    assumptions = _assumptions(rec, configs, r, cal)
    if not pools:
        why = _why_nothing(gpus, configs, misses, r)
        return ServePlan(m.name, r, None, None, None, tuple(configs), rec, None, None, assumptions, (), why,
                         time.perf_counter() - start, checklist=compliance.checklist(r.market, r.users, []))
    fleet, n_scen = _solve(configs, pools, r, r.peak, rec.total_s, catalog)
    average = None
    if fleet is not None and r.peak > r.mean_rps:
        average, _ = _solve(configs, pools, r, r.mean_rps, rec.total_s, catalog, fleet.headroom)
    elif fleet is not None:
        average = fleet
    single = _best_single(configs, pools, r, rec.total_s, catalog, fleet.headroom if fleet else 0.0)
    cost_in, cost_out = _token_costs(average or fleet, configs, r)
    notes = _notes(fleet, single, r)
    why = "" if fleet else _why_nothing(gpus, configs, misses, r)
    places = [(g.market, f"{g.provider} {g.region}") for g in fleet.groups] if fleet else []
    day = follow_profile(catalog, fleet, configs, r, rec.total_s) if fleet and r.profile else None
    return ServePlan(m.name, r, fleet, average, single, tuple(configs), rec, cost_in, cost_out, assumptions,
                     notes, why, time.perf_counter() - start, n_scen, len(pools),
                     checklist=compliance.checklist(r.market, r.users, places), day=day)


QUIET_SHARE = 1e-6  # an hour of no traffic is planned at this share of the peak: the fleet it keeps only survives


def follow_profile(catalog: Catalog, fleet: Fleet, configs: Sequence[ReplicaConfig], r: ServeRequest,
                   recovery_s: float) -> traffic.DayCost:
    """The day of ``r.profile`` on the peak ``fleet`` scaled down by groups (gpuplan.plan.traffic says why this
    reading): each hour, the cheapest part of the fleet — at most its units of each pool rented — that carries
    the hour's rate in every failure scenario and meets the availability target (the fleet's own availability
    when that is below the target); the whole fleet for an hour no smaller part serves. An hour of no traffic
    keeps the smallest part that survives the tolerated loss: scaling to zero would make the first request
    wait a recovery."""
    # a reserved (committed) unit is paid for its term whether it runs or not: it costs nothing more to keep it
    # up in a quiet hour, and its price is paid every hour
    committed = [p.offer is not None and p.offer.pricing == "reserved" for p, _ in fleet.sources]
    pools = [replace(p, cap_units=u, cost_per_unit=0.0 if fixed else p.cost_per_unit)
             for (p, u), fixed in zip(fleet.sources, committed, strict=True)]
    paid = fleet_cost_per_hour((u, p.cost_per_unit) for (p, u), fixed in zip(fleet.sources, committed, strict=True)
                               if fixed)
    wanted = min(r.availability, fleet.availability)
    by_rate: dict[float, float] = {}
    quiet, quiet_cost = fleet, fleet.cost_per_hour
    for rate in sorted(set(r.profile)):
        cost = fleet.cost_per_hour
        if rate < r.peak:
            scaled, _ = _solve(configs, pools, replace(r, availability=wanted), max(rate, QUIET_SHARE * r.peak),
                               recovery_s, catalog)
            if scaled is not None and scaled.availability >= wanted and scaled.cost_per_hour + paid < cost:
                cost = scaled.cost_per_hour + paid
                if cost < quiet_cost:
                    quiet, quiet_cost = scaled, cost
        by_rate[rate] = cost
    if quiet is fleet:  # no part of the fleet serves a quieter hour for less: every hour keeps all of it
        kept = tuple(int(u * p.replicas_per_unit) for p, u in fleet.sources)  # per group, as fleet.groups
    else:  # the cheapest hour's fleet was solved over ``pools``, whose objects its sources are
        units = {id(p): u for p, u in quiet.sources}
        kept = tuple(int(units.get(id(p), 0) * p.replicas_per_unit) for p in pools)
    tokens = sum(b.share * (b.prompt_len + b.output_len) for b in r.buckets)
    return traffic.DayCost(r.profile, tuple(by_rate[x] for x in r.profile), fleet.cost_per_hour, tokens, kept)


def _keep_cheapest(configs: list[ReplicaConfig], pools: list[Pool], r: ServeRequest
                   ) -> tuple[list[ReplicaConfig], list[Pool]]:
    """The ``CONFIGS_KEPT`` configurations with the lowest cost per request/s of the traffic mix, their pools
    renumbered."""
    shares = [b.share for b in r.buckets]
    unit_cost: dict[int, float] = {}
    for p in pools:
        w = _mix_capacity(configs[p.config], shares) * p.replicas_per_unit
        if w > 0:
            unit_cost[p.config] = min(unit_cost.get(p.config, math.inf), p.cost_per_unit / w)
    # a configuration that alone serves a bucket no cheaper one serves is kept too
    keep = sorted(unit_cost, key=unit_cost.__getitem__)[:CONFIGS_KEPT]
    for b in range(len(shares)):
        if not any(configs[i].capacity_per_s[b] > 0 for i in keep):
            extra = [i for i in unit_cost if configs[i].capacity_per_s[b] > 0]
            keep += extra[:1]
    index = {old: new for new, old in enumerate(keep)}
    kept_pools = [replace(p, config=index[p.config]) for p in pools if p.config in index]
    return [configs[i] for i in keep], kept_pools


def _best_single(configs: Sequence[ReplicaConfig], pools: Sequence[Pool], r: ServeRequest, recovery_s: float,
                 catalog: Catalog, from_headroom: float) -> Fleet | None:
    """The cheapest fleet of one GPU type only (all its pools: zones and pricing may still mix), its headroom
    search starting where the mix's ended (to bound the work)."""
    best = None
    for gpu in list(dict.fromkeys(c.gpu for c in configs))[:SINGLE_TYPES_TRIED]:  # cheapest first
        idx = [i for i, c in enumerate(configs) if c.gpu == gpu]
        if not all(any(configs[i].capacity_per_s[b] > 0 for i in idx) for b in range(len(r.buckets))):
            continue
        mapping = {old: new for new, old in enumerate(idx)}
        sub = [replace(p, config=mapping[p.config]) for p in pools if p.config in mapping]
        fleet, _ = _solve([configs[i] for i in idx], sub, r, r.peak, recovery_s, catalog, from_headroom)
        if fleet is not None and (best is None or fleet.cost_per_hour < best.cost_per_hour):
            best = fleet
    return best


def _token_costs(fleet: Fleet | None, configs: Sequence[ReplicaConfig], r: ServeRequest
                 ) -> tuple[float | None, float | None]:
    """$ per million input and output tokens at the mean rate, the fleet's hourly cost split by the GPU time
    prompts (prefill) and outputs (decode) take on the replicas the traffic is routed to."""
    if fleet is None:
        return None, None
    by_name = {c.describe(): c for c in configs}
    prefill = decode = 0.0
    for name, b, x in fleet.routing:
        c = by_name[name]
        busy = x / c.capacity_per_s[b]  # replica-equivalents this traffic keeps busy
        prefill += busy * c.prefill_share[b]
        decode += busy * (1 - c.prefill_share[b])
    if prefill + decode <= 0:
        return None, None
    tokens_in = r.mean_rps * HOUR * sum(b.share * b.prompt_len for b in r.buckets)
    tokens_out = r.mean_rps * HOUR * sum(b.share * b.output_len for b in r.buckets)
    return token_costs(fleet.cost_per_hour, tokens_in, tokens_out, prefill / (prefill + decode))


def _notes(fleet: Fleet | None, single: Fleet | None, r: ServeRequest) -> tuple[str, ...]:
    notes = _price_age_notes(fleet)
    if fleet and fleet.gap > MIP_GAP:
        notes.append(f"the mix solver stopped at its limit of {MILP_NODE_LIMIT:,} nodes: the fleet is within "
                     f"{fleet.gap:.1%} of the cheapest")
    if fleet and fleet.availability < r.availability:
        notes.append(f"availability target not reached: {fleet.availability:.4%} expected with "
                     f"+{fleet.headroom:.0%} headroom against {r.availability:.3%} asked")
    if fleet and len(fleet.gpu_types) > 1:
        by_size = len(r.buckets) > 1 and len({(c, b) for c, b, _ in fleet.routing}) > len({c for c, _, _ in
                                                                                       fleet.routing})
        if by_size or len(r.buckets) > 1:
            notes.append(f"the mix sends requests by size to {', '.join(fleet.gpu_types)}: it needs a length-aware "
                         "router (prompt + output buckets as in the routing table)")
        else:
            notes.append(f"the mix spreads one kind of request over {', '.join(fleet.gpu_types)}: the router "
                         "weights each replica by the rate it serves (routing table), not round-robin")
    return tuple(notes)


def _price_age_notes(fleet: Fleet | None, today: dt.date | None = None) -> list[str]:
    """One note per rented offer whose price is undated or older than STALE_AFTER_DAYS (as every listing flags
    it): a fleet planned on a 2023 price says so."""
    today = today or dt.date.today()
    notes: list[str] = []
    for o in dict.fromkeys(g.offer for g in (fleet.groups if fleet else ()) if g.offer is not None):
        where = f"{o.provider} {o.instance_type} ({o.region}, {o.pricing})"
        date, age = o.as_of.isoformat(), o.age_days(today)
        if o.dated and o.is_stale(today):
            notes.append(f"price of {where}: as of {date}, {age} days old (over {STALE_AFTER_DAYS}): check it")
        elif not o.dated and o.is_stale(today):
            notes.append(f"price of {where}: undated (read on {date}), read {age} days ago (over {STALE_AFTER_DAYS}): "
                         "check it")
        elif not o.dated:
            notes.append(f"price of {where}: undated (read on {date})")
    return notes


def _why_nothing(gpus: Sequence[Gpu], configs: Sequence[ReplicaConfig], misses: Sequence[Miss],
                 r: ServeRequest) -> str:
    if not gpus:
        return ("no offer is left after the market, providers, regions, spot and marketplace choices. To fix: "
                "allow more providers or regions, --spot, or --allow-marketplace.")
    if not configs and misses:
        return _latency_miss(misses, r.targets.effective())
    if not configs:
        return ("nothing holds the model on the GPUs offered (8 GPUs per node, or TP 8 × PP across 8-GPU cluster "
                "offers). To fix: quantize (--quant fp8 or awq-int4), or allow larger GPUs or more providers.")
    if r.budget_per_hour is not None:
        return "no fleet survives the failure scenarios within the budget. To fix: raise --budget."
    return ("no fleet survives the failure scenarios with these offers. To fix: allow more regions or providers, "
            "or --tolerate none.")


def _latency_miss(misses: Sequence[Miss], t: Targets) -> str:
    from gpuplan.units import fmt_seconds

    parts = []
    for target, attr, option, what in ((t.ttft_p50_s, "ttft_p50_s", "--ttft", "first token"),
                                       (t.ttft_p99_s, "ttft_p99_s", "--ttft-p99", "p99 first token"),
                                       (t.tpot_p50_s, "tpot_p50_s", "--tpot", "token step"),
                                       (t.tpot_p99_s, "tpot_p99_s", "--tpot-p99", "p99 token step")):
        if target is None:
            continue
        best = min(misses, key=lambda x: float(getattr(x, attr)))
        value = float(getattr(best, attr))
        if value > target:
            parts.append(f"the quickest {what} is {fmt_seconds(value)} on {best.config} (target {option} "
                         f"{fmt_seconds(target)})")
    what = "; ".join(parts) or "no configuration meets the latency targets together"
    return (f"configurations fit in memory, but none meets the latency targets even at a trickle of requests: "
            f"{what}. To fix: relax the targets, use shorter prompts, or allow faster GPUs.")


def _assumptions(rec: av.Recovery, configs: Sequence[ReplicaConfig], r: ServeRequest, cal: Calibration
                 ) -> tuple[dict[str, str], ...]:
    def row(name: str, scope: str = "default") -> dict[str, str]:
        f = av.figure(name, scope)
        return {"name": f"{f.name} ({f.scope})", "value": f"{f.value:g} {f.unit}", "source": f"{f.source}, {f.as_of}"}

    out = [row("gpu_interruptions_per_gpu_hour"), row("instance_sla_pct"), row("multizone_sla_pct"), row("lb_sla_pct"),
           row("spot_interruptions_per_month"), row("warmup_seconds", "vllm"),
           {"name": "recovery", "value": f"{rec.total_s:.0f} s = provisioning {rec.provisioning_s:.0f} s + weight "
            f"load {rec.weight_load_s:.0f} s + warm-up {rec.warmup_s:.0f} s",
            "source": "gpuplan.plan.costing (STARTUP_SECONDS, WEIGHTS_DOWNLOAD_BYTES_PER_S) + availability.csv"},
           {"name": "latency model", "value": "continuous batching, Little's law, M/D/1 prompt queue (p99 by "
            "Kingman's exponential tail)", "source": "gpuplan.estimate.load"},
           {"name": "mixed buckets", "value": "a replica given several buckets shares its time linearly",
            "source": "Griggs et al. 2024 (Mélange), sec. 4"},
           {"name": "zones and SLAs", "value": "zones per region and single-/multi-zone SLAs from the provider table "
            "(one zone per region, and availability.csv's defaults, where a provider publishes none); marketplace "
            "and notebook tiers left out" + (" (allowed here)" if r.allow_marketplace else ""),
            "source": "gpuplan/data/providers.csv"}]
    if r.targets.ttft_p50_s is None and r.targets.ttft_p99_s is None:
        out.append({"name": "default TTFT target", "value": f"p99 ≤ {DEFAULT_TTFT_P99_S:g} s",
                    "source": "gpuplan.plan.serving.DEFAULT_TTFT_P99_S (no --ttft given)"})
    if r.adapters:
        n, rank = reserved_lora(r)
        out.append({"name": "multi-LoRA", "value": f"{n} adapters of rank {rank} resident on every replica, on every "
                    "linear layer in 16-bit (r·(in + out) per matrix), out of the KV cache; requests spread evenly "
                    "over them; each token adds its adapter's FLOPs, each decode step reads every distinct adapter "
                    "of its batch once", "source": "Hu et al. 2021 (LoRA); Chen et al. 2023 'Punica' "
                    "(arXiv:2310.18547, SGMV) and Sheng et al. 2023 'S-LoRA' (arXiv:2311.03285, MBGMV): batched "
                    "kernels over adapters; vLLM LoRA layers for the slots and their sharding"})
    if r.prefix_hit:
        out.append({"name": "prefix cache", "value": f"{r.prefix_hit:.0%} of prompt tokens skip prefill and share "
                    "their KV blocks", "source": "request"})
    if any(c.nodes > 1 for c in configs):
        net = cal.get("network_bytes_per_s_per_gpu") * 8 / 1e9
        out.append({"name": "network between nodes", "value": f"{net:.0f} Gb/s per GPU (pipeline stages pass "
                    "hidden states once per step: a few MB, well under 1 % of a step; expert-parallel ranks send "
                    "every token to the ranks of its experts and back, over it between nodes and NVLink within "
                    "one)", "source": "gpuplan/data/fitted/params.json network_bytes_per_s_per_gpu"})
    if any(c.ep > 1 for c in configs):
        out.append({"name": "expert parallelism", "value": "data-parallel attention on every rank for its own "
                    "sequences, the routed experts split evenly over the ranks, uniform routing; per MoE layer a "
                    "dispatch and a combine of top-k × hidden × 2 bytes per token (16-bit), the off-node share "
                    "over the network and the rest over NVLink, one after the other (errs slow)",
                    "source": "gpuplan.estimate.ep; DeepSeek-V3 Technical Report (arXiv:2412.19437), sec. 3.4"})
    return tuple(out)
