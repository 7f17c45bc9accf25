"""From a job to ranked GPU + offer choices.

enumerate GPU types × counts × parallel layouts → keep what fits (with the held-out error margin) → estimate time →
match offers (and free platforms) → cost each (price × billed time + storage + spot overhead) → rank by
cost, time or value → Pareto front → explain the pick. When nothing fits, say by how much and price the
cheapest changes that would make it fit.
"""

from __future__ import annotations

import contextlib
import contextvars
import datetime as dt
import math
import time
from collections import Counter
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from gpuplan.catalog import Catalog
from gpuplan.catalog.schemas import PRICINGS
from gpuplan.errors import BudgetError, GpuplanError, InfeasibleError, InputError, check_choice
from gpuplan.estimate.calibration import Calibration, fitted, speed_calibrated
from gpuplan.estimate.frameworks import framework as get_framework
from gpuplan.estimate.job import (
    JobEstimate,
    check_training,
    estimate_inference,
    estimate_training,
    inference_setup,
    training_setup,
)
from gpuplan.estimate.memory import training_memory, weights_bytes
from gpuplan.estimate.params import count_params
from gpuplan.estimate.quant import native_format, weight_format
from gpuplan.estimate.result import Assumption, Estimate
from gpuplan.estimate.train_time import train_seconds, train_time
from gpuplan.i18n import lang, say, using
from gpuplan.listing import match_gpus, price_age, resolve_providers, stale_note
from gpuplan.plan.costing import SPOT_OVERHEAD, Cost, rental_cost, startup_seconds
from gpuplan.requests import estimate_options, settings_text
from gpuplan.types import Gpu, Job, ModelSpec, Offer, Parallelism, Platform, TrainSetup
from gpuplan.units import DAY, GB, HOUR, WEEK, fmt_bytes, fmt_money, fmt_seconds

OBJECTIVES = ("cost", "time", "value")
DEFAULT_TIERS = ("on-demand", "spot")  # reserved needs a commitment; marketplace hosts are third parties
NODE_COUNTS = (1, 2, 4, 8)


@dataclass(frozen=True)
class Constraints:
    """What the user allows. ``spot``: None = both, True = spot only, False = no spot."""

    market: str | None = None
    providers: tuple[str, ...] = ()
    gpus: tuple[str, ...] = ()
    exclude_gpus: tuple[str, ...] = ()
    max_gpus: int | None = None
    budget: float | None = None  # in ``currency``
    deadline_s: float | None = None
    spot: bool | None = None
    currency: str = "USD"
    engine: str = "vllm"
    quant: str | None = None
    objective: str = "cost"
    top: int = 10
    headroom: float | None = None  # least memory margin; None: each estimate's held-out band
    platforms: bool = True
    spot_overhead: float = SPOT_OVERHEAD
    tiers: tuple[str, ...] = ()  # pricing tiers to plan with; () = DEFAULT_TIERS

    def __post_init__(self) -> None:
        check_choice("--objective", self.objective, OBJECTIVES)
        for tier in self.tiers:
            check_choice("--tier", tier, PRICINGS)
        if self.max_gpus is not None and self.max_gpus < 1:
            raise InputError("--max-gpus", f"{self.max_gpus} GPUs is not a limit.", "give 1 or more.")
        if self.budget is not None and self.budget <= 0:
            raise InputError("--budget", "the budget must be positive.", "give an amount such as 500USD.")
        if self.deadline_s is not None and self.deadline_s <= 0:
            raise InputError("--deadline", "the deadline must be in the future.", "give a duration such as 2d.")
        if self.headroom is not None and not 0 <= self.headroom < 0.5:
            raise InputError("--headroom", f"{self.headroom:.0%} headroom is out of range.", "use 0 to 0.5.")

    @property
    def pricings(self) -> tuple[str, ...]:
        """The pricing tiers offers may have: on-demand and spot unless ``tiers`` asks for others (a committed
        price never stands in for an on-demand one)."""
        return self.tiers or DEFAULT_TIERS


@dataclass(frozen=True)
class Candidate:
    """One priced way to run the job."""

    estimate: JobEstimate
    seconds: float  # wall time of the work (training/batch job); 1 hour for serving (priced per hour)
    cost: Cost
    where: str  # provider or platform
    offer: Offer | None = None
    platform: Platform | None = None
    calendar_seconds: float = 0.0  # elapsed time including platform quota waits
    notes: tuple[str, ...] = ()

    @property
    def value_score(self) -> float:
        """Money per unit of work at the offer's rate (the seeds' 性价比, performance per price): hourly
        price × hours of work, without fixed costs (storage, billing minimums). Lower is better."""
        if self.offer is None:
            return self.cost.total
        return hourly_price_of(self) * self.cost.instances * self.seconds / HOUR

    def label(self) -> str:
        where = self.platform.platform + " " + self.platform.tier if self.platform else self.where
        inst = self.offer.instance_type if self.offer else "notebook"
        return f"{self.estimate.describe()} on {where} ({inst})"

    def as_dict(self) -> dict[str, Any]:
        d: dict[str, Any] = {
            "gpu": self.estimate.gpu.name, "n_gpus": self.estimate.n_gpus, "replicas": self.estimate.replicas,
            "config": self.estimate.describe(), "provider": self.where, "seconds": self.seconds,
            "human_time": fmt_seconds(self.seconds), "calendar_seconds": self.calendar_seconds or self.seconds,
            "cost": self.cost.as_dict(), "memory_needed_bytes": self.estimate.needed_bytes,
            "memory_available_bytes": self.estimate.capacity_bytes, "notes": list(self.notes),
            "estimate": self.estimate.as_dict(), "settings": settings_text(self.estimate),
            "estimate_options": estimate_options(self.estimate),
        }
        if self.offer:
            o = self.offer
            d["offer"] = {"provider": o.provider, "instance_type": o.instance_type, "region": o.region,
                          "market": o.market, "pricing": o.pricing, "price_per_hour": o.price_per_hour,
                          "currency": o.currency, "gpu_count": o.gpu_count, "source": o.source,
                          "as_of": o.as_of.isoformat(), "commit_months": o.commit_months, "dated": o.dated,
                          "price_age": price_age(o, dt.date.today()), "stale": o.is_stale(dt.date.today())}
        if self.platform:
            p = self.platform
            d["platform"] = {"platform": p.platform, "tier": p.tier, "weekly_gpu_hours": p.weekly_gpu_hours,
                             "session_max_hours": p.session_max_hours, "source": p.source,
                             "as_of": p.as_of.isoformat()}
        return d


@dataclass
class PlanResult:
    job: Job
    model: ModelSpec
    constraints: Constraints
    ranked: list[Candidate]
    pareto: list[Candidate]
    explanation: str
    considered: int
    fitting_configs: int
    nothing_fits: str = ""
    suggestions: list[dict[str, Any]] = field(default_factory=list)
    platforms: list[Candidate] = field(default_factory=list)  # free/cheap notebook platforms that fit
    assumptions: list[dict[str, str]] = field(default_factory=list)
    too_long: int = 0  # priced plans over the default longest run (:func:`max_seconds`), left out
    explanation_zh: str = ""  # the explanation in Chinese (the web page shows it; JSON carries both)
    alternatives: list[dict[str, Any]] = field(default_factory=list)  # cheaper changes to a plan that fits

    @property
    def pick(self) -> Candidate | None:
        return self.ranked[0] if self.ranked else None

    def as_dict(self) -> dict[str, Any]:
        return {
            "model": self.model.name, "task": self.job.task, "objective": self.constraints.objective,
            "currency": self.constraints.currency, "pick": self.pick.as_dict() if self.pick else None,
            "ranked": [c.as_dict() for c in self.ranked], "pareto": [c.as_dict() for c in self.pareto],
            "explanation": self.explanation, "explanation_zh": self.explanation_zh,
            "configs_considered": self.considered, "configs_that_fit": self.fitting_configs,
            "nothing_fits": self.nothing_fits or None,
            "suggestions": self.suggestions, "alternatives": self.alternatives, "assumptions": self.assumptions,
            "platforms": [c.as_dict() for c in self.platforms], "max_seconds": max_seconds(self.constraints),
        }


# ---------------------------------------------------------------- enumeration


def candidate_gpus(catalog: Catalog, c: Constraints) -> list[Gpu]:
    allowed = match_gpus(catalog, c.gpus, "--gpus") if c.gpus else set(catalog.gpus)
    denied = match_gpus(catalog, c.exclude_gpus, "--exclude-gpus") if c.exclude_gpus else set()
    out = []
    for name in sorted(allowed - denied):
        g = catalog.gpus[name]
        if g.memory_bandwidth_bytes_per_s and (g.half_flops_per_s or 0) > 0:
            out.append(g)
    if not out:
        raise InputError("--gpus", "no GPU is left after --gpus/--exclude-gpus.", "allow more GPUs.")
    return out


def _counts(c: Constraints, job: Job) -> list[int]:
    limit = c.max_gpus or (2048 if job.task == "pretrain" else 64)  # the CLI and API defaults
    counts = [n for n in NODE_COUNTS if n <= limit]
    n = 16
    while n <= limit:
        counts.append(n)
        n *= 2
    return counts


def _training_layouts(m: ModelSpec, n: int, job: Job) -> list[Parallelism]:
    """Data parallel, FSDP/ZeRO-3, and tensor parallel inside a node (+ FSDP across) for ``n`` GPUs."""
    if n == 1:
        return [Parallelism()]
    layouts = [Parallelism(dp=n, zero=3)]
    adapters = job.method in ("lora", "qlora", "ptuning", "freeze")
    if adapters or count_params(m).total < 3e9:
        layouts.insert(0, Parallelism(dp=n, zero=0))
    if adapters:  # PEFT/bitsandbytes stacks shard with FSDP/ZeRO; tensor parallelism is for full training
        return layouts
    tp = min(8, n)
    if tp > 1 and m.n_heads % tp == 0 and (m.n_kv_heads % tp == 0 or tp % m.n_kv_heads == 0):
        layouts.append(Parallelism(tp=tp, dp=n // tp, zero=1 if n > tp else 0))
        if n >= 64 and job.task == "pretrain":
            for pp in (2, 4, 8, 16):
                if n % (tp * pp) == 0 and m.n_layers >= pp:
                    dp = n // (tp * pp)
                    layouts.append(Parallelism(tp=tp, pp=pp, dp=dp, zero=1 if dp > 1 else 0))
    return layouts


def _best_training(m: ModelSpec, gpu: Gpu, job: Job, n: int, c: Constraints, cal: Calibration,
                   reasons: Counter[tuple[str, str]], sized: dict[TrainSetup, _Sized]
                   ) -> tuple[JobEstimate | None, JobEstimate | None]:
    """(fastest estimate that fits, None) for ``n`` × ``gpu``, or (None, smallest-shortfall estimate) when none
    fits; why others cannot run is counted in ``reasons``. ``sized`` holds the plan's training-memory estimates
    by setup (they do not depend on the GPU); only a setup that fits gets a time estimate."""
    best: tuple[float, TrainSetup, _Sized] | None = None  # the fastest setup that fits: (seconds, setup, memory)
    closest: tuple[TrainSetup, float] | None = None  # the setup that misses by the least, and by how much
    for par in _training_layouts(m, n, job):
        _check_budget()
        # the framework the user runs fixes recomputation (its default); without one, try both
        for recompute in ((None,) if job.framework else ("none", "full")):
            for mb in (8, 4, 2, 1):
                try:
                    setup = training_setup(job, par, mb, recompute, gpu=gpu)
                    check_training(m, gpu, job, setup)
                except InfeasibleError as err:
                    reasons[(err.message, err.fix)] += 1
                    if err.field == "--global-batch":
                        continue  # a smaller micro-batch may fit the batch
                    break
                size = sized.get(setup)
                if size is None:
                    size = sized[setup] = _Sized.of(m, gpu, job, setup, cal, c.headroom)
                if not size.fits(gpu):
                    if closest is None or size.shortfall_bytes(gpu) < closest[1]:
                        closest = (setup, size.shortfall_bytes(gpu))
                    continue
                seconds = size.seconds(m, gpu, job, setup, cal)
                if best is None or seconds < best[0]:
                    best = (seconds, setup, size)
                break  # the largest micro-batch that fits is the fastest for this layout
            if best is not None and best[1].parallel == par:
                break  # no need to recompute when it already fits without
    if best is not None:  # only the winner is described in full (its assumptions and breakdown)
        _, setup, size = best
        return size.estimate(m, gpu, job, setup, cal, c.headroom), None
    if closest is None:
        return None, None
    return None, estimate_training(m, gpu, job, closest[0], cal, c.headroom)  # shown in full, time included


@dataclass(frozen=True, slots=True)
class _Sized:
    """One training setup's memory as every GPU type sees it (it does not depend on the GPU): the estimate
    :func:`estimate_training` reports and the bytes it needs with its margin. The test suite checks that what
    is built from it equals :func:`estimate_training`."""

    memory: Estimate
    needed_bytes: float
    kv_shortfall_bytes: float

    @classmethod
    def of(cls, m: ModelSpec, gpu: Gpu, job: Job, s: TrainSetup, cal: Calibration, headroom: float | None
           ) -> _Sized:
        mem = training_memory(m, s, cal)
        if job.framework:
            fw = get_framework(job.framework)
            mem = replace(mem, assumptions=(*mem.assumptions, Assumption("framework", fw.describe(), fw.source)))
        probe = JobEstimate(job, m, gpu, s.parallel.n_gpus, s, mem, None, None, 1, headroom)
        return cls(mem, probe.needed_bytes, probe.kv_shortfall_bytes)

    def fits(self, gpu: Gpu) -> bool:  # JobEstimate.fits
        return self.needed_bytes <= gpu.memory_bytes and self.kv_shortfall_bytes <= 0

    def shortfall_bytes(self, gpu: Gpu) -> float:  # JobEstimate.shortfall_bytes
        return max(0.0, self.needed_bytes - gpu.memory_bytes, self.kv_shortfall_bytes)

    def seconds(self, m: ModelSpec, gpu: Gpu, job: Job, s: TrainSetup, cal: Calibration) -> float:
        """What ``self.estimate(...).seconds`` is, without describing the estimate."""
        return train_seconds(m, gpu, s, job.train_tokens, cal) if job.train_tokens > 0 else math.inf

    def estimate(self, m: ModelSpec, gpu: Gpu, job: Job, s: TrainSetup, cal: Calibration,
                 headroom: float | None) -> JobEstimate:
        """What ``estimate_training(m, gpu, job, s, cal, headroom)`` returns (after ``check_training``)."""
        time = train_time(m, gpu, s, job.train_tokens, cal) if job.train_tokens > 0 else None
        return JobEstimate(job, m, gpu, s.parallel.n_gpus, s, self.memory, time, None, 1, headroom)


def _best_inference(m: ModelSpec, gpu: Gpu, job: Job, tp: int, c: Constraints, cal: Calibration,
                    reasons: Counter[tuple[str, str]]) -> tuple[JobEstimate | None, JobEstimate | None]:
    fmt = c.quant or job.weight_format or native_format(m.native_dtype)
    engine = c.engine if not weight_format(fmt).name.startswith("gguf") else "llamacpp"
    if engine == "llamacpp" and tp > 1:
        return None, None
    try:
        setup = inference_setup(job, tp, engine, weight_format(fmt).name)
        e = estimate_inference(m, gpu, job, setup, cal, c.headroom)
    except InfeasibleError as err:
        reasons[(err.message, err.fix)] += 1
        return None, None
    if e.fits and (job.task != "serve" or e.replicas >= 1):
        return e, None
    return None, e


# ---------------------------------------------------------------- pricing


def _usable_offers(catalog: Catalog, c: Constraints, providers: set[str] | None,
                   serving: bool) -> dict[str, list[Offer]]:
    """Offers per GPU within the market, providers, pricing tiers and spot choice. Serving leaves spot out unless
    ``--spot`` or ``--tier spot`` asks for it (a preempted server drops its traffic)."""
    no_spot = c.spot is False or (serving and c.spot is None and "spot" not in c.tiers)
    out: dict[str, list[Offer]] = {}
    for o in catalog.offers:
        if (c.market and o.market != c.market) or (providers is not None and o.provider not in providers):
            continue
        if (o.pricing not in c.pricings or (c.spot is True and o.pricing != "spot")
                or (no_spot and o.pricing == "spot")):
            continue
        out.setdefault(o.gpu, []).append(o)
    return out


def _instances_per_replica(o: Offer, n: int, serving: bool) -> float | None:
    """Instances of ``o`` one replica of ``n`` GPUs takes: 1 when the instance has exactly ``n``, n/8 8-GPU
    instances for multi-node (not marketplace listings: independent hosts, no cluster fabric), and for serving
    a fraction when several replicas share a larger instance (8 × TP1 on 8 GPUs); None when ``o`` cannot."""
    if n <= 8 and o.gpu_count == n:
        return 1
    if n > 8 and o.gpu_count == 8 and n % 8 == 0 and o.pricing != "marketplace":
        return n // 8
    if serving and n < o.gpu_count <= 8 and o.gpu_count == int(o.gpu_count) and int(o.gpu_count) % n == 0:
        return n / o.gpu_count
    return None


def _checkpoint_bytes(m: ModelSpec) -> float:
    """Size of the published weights (FP8 for DeepSeek-V3, 16-bit for most): what the instance downloads."""
    return weights_bytes(m, weight_format(native_format(m.native_dtype)))


def _disk_bytes(m: ModelSpec, job: Job) -> float:
    """Weights, data and checkpoints the instance must hold."""
    params = count_params(m).total
    weights = _checkpoint_bytes(m)
    data = job.train_tokens * 4.0 if job.is_training else 0.0  # token ids as int32
    checkpoint = 0.0
    if job.task == "pretrain" or (job.task == "finetune" and job.method in ("full", "freeze")):
        checkpoint = params * 16.0  # weights + optimizer states of one resumable checkpoint
    return weights + data + checkpoint


LARGE_FLEET_GPUS = 64  # beyond this a listed price says nothing about availability


def _price(catalog: Catalog, e: JobEstimate, c: Constraints, offers: dict[str, list[Offer]],
           cal: Calibration, offer_notes: dict[Offer, tuple[tuple[str, ...], str]] | None = None
           ) -> list[Candidate]:
    """Every usable offer of ``e``'s GPU that can hold it, costed. ``offer_notes`` keeps the notes that depend on
    the offer alone across the estimates of one plan."""
    job = e.job
    serving = job.task == "serve"
    if not math.isfinite(e.seconds) and not serving:
        return []
    startup = 0.0 if serving else startup_seconds(_checkpoint_bytes(e.model))
    seconds = HOUR if serving else e.seconds + startup
    disk = _disk_bytes(e.model, job)
    first = [say(f"incl. {fmt_seconds(startup)} start-up", f"含 {fmt_seconds(startup)} 启动")] if startup else []
    uncalibrated = [] if speed_calibrated(e.gpu.vendor) else [
        say(f"speed fitted on NVIDIA runs only: {e.gpu.vendor} efficiency is not calibrated",
            f"速度只用 NVIDIA 实测拟合：{e.gpu.vendor} 的效率未经校准")]
    memo = {} if offer_notes is None else offer_notes
    today = dt.date.today()
    out = []
    for offer in offers.get(e.gpu.name, []):
        per_replica = _instances_per_replica(offer, e.n_gpus, serving)
        if per_replica is None:
            continue
        instances = max(1, math.ceil(per_replica * e.replicas - 1e-9))
        cost = rental_cost(catalog, offer, seconds, c.currency, instances, disk, c.spot_overhead)
        notes = list(first)
        if per_replica < 1:
            room = round(instances / per_replica)
            notes.append(say(f"{e.replicas} replica(s) on {instances} {int(offer.gpu_count)}-GPU instance(s), "
                             f"room for {room}",
                             f"{e.replicas} 个副本跑在 {instances} 台 {int(offer.gpu_count)} 卡实例上，"
                             f"最多可容纳 {room} 个"))
        own, stale = memo.get(offer) or memo.setdefault(offer, _offer_notes(offer, c, today))
        notes += own
        if e.total_gpus > LARGE_FLEET_GPUS:
            notes.append(say(f"{e.total_gpus:,} GPUs in all: check that {offer.provider} has the capacity",
                             f"共 {e.total_gpus:,} 张卡：请确认 {offer.provider} 有足够库存"))
        notes += uncalibrated
        if instances > 1 and not serving:
            net = cal.get("network_bytes_per_s_per_gpu") * 8 / 1e9
            notes.append(say(f"{instances} nodes joined by an assumed {net:.0f} Gb/s per GPU network: check the "
                             "provider's cluster networking",
                             f"{instances} 台机器，假定节点间每卡 {net:.0f} Gb/s 网络：请核实云厂商的集群网络"))
        if stale:
            notes.append(stale)
        out.append(Candidate(e, seconds + cost.spot_overhead_seconds, cost, offer.provider, offer,
                             notes=tuple(notes)))
    return out


def _offer_notes(offer: Offer, c: Constraints, today: dt.date) -> tuple[tuple[str, ...], str]:
    """Notes on ``offer`` whatever runs on it: (an inferred GPU, spot preemptions), and the price's age ("" when
    the price is recent; it is listed last)."""
    notes = []
    if offer.gpu_mapping == "inferred":
        notes.append(say("GPU inferred from the instance family", "GPU 型号由实例系列推断"))
    if offer.pricing == "spot":
        notes.append(say(f"spot: +{c.spot_overhead:.0%} expected time for preemptions",
                         f"竞价实例：预计因抢占多用 {c.spot_overhead:.0%} 时间"))
    if offer.commit_months:
        notes.append(say(f"reserved: needs a {offer.commit_months}-month commitment (the cost counts only the "
                         "hours used)", f"预留价格：需承诺 {offer.commit_months} 个月（费用只计使用时长）"))
    if not offer.dated:
        notes.append(price_age(offer, today))
    return tuple(notes), stale_note(offer, today)


MAX_SESSIONS = 20  # more checkpoint/resume cycles than this is not a plan
UNPUBLISHED_QUOTA_HOURS = 12.0  # the longest session Colab's FAQ states, for tiers that publish no limit


def _platform_candidates(catalog: Catalog, e: JobEstimate, c: Constraints, seconds: float) -> list[Candidate]:
    out = []
    for p in catalog.platforms:  # accounts are per market: mainland-China platforms only with --market cn
        if p.gpu != e.gpu.name or p.gpu_count < e.n_gpus or p.market != (c.market or "global"):
            continue
        if p.price_per_month is None and p.price_per_hour is None:
            continue  # no published price (pay-as-you-go compute units): it cannot be priced, and is not free
        hours = seconds / HOUR
        notes = [f"{p.platform} {p.tier}: " + (say("GPU not guaranteed", "不保证有卡") if not p.guaranteed else
                                                say("guaranteed GPU", "保证有卡"))]
        calendar = seconds
        if p.session_max_hours and math.ceil(hours / p.session_max_hours) > MAX_SESSIONS:
            continue  # dozens of checkpoint/resume cycles: not a realistic plan
        if not p.weekly_gpu_hours and not p.price_per_hour:
            # a free or flat-fee tier whose GPU-hours are not published (Colab, Lightning AI, trial credits):
            # only a job that fits one session is listed, and the note says the quota is an assumption
            if hours > (p.session_max_hours or UNPUBLISHED_QUOTA_HOURS):
                continue
            notes.append(say("GPU-hour quota not published: assumes one session's worth is available",
                             "未公布 GPU 时长配额：假定够用一次会话"))
        if p.weekly_gpu_hours:
            if hours * e.n_gpus > p.weekly_gpu_hours * 4:
                continue  # more than a month of quota: not a realistic plan
            weeks = math.ceil(hours * e.n_gpus / p.weekly_gpu_hours)
            calendar = seconds if weeks <= 1 else (weeks - 1) * WEEK + seconds / weeks
            notes.append(say(f"uses {hours * e.n_gpus:.1f} of {p.weekly_gpu_hours:g} GPU-hours per week",
                             f"用掉每周 {p.weekly_gpu_hours:g} GPU 小时配额中的 {hours * e.n_gpus:.1f}"))
        if p.session_max_hours and hours > p.session_max_hours:
            times = math.ceil(hours / p.session_max_hours)
            notes.append(say(f"runs longer than one {p.session_max_hours:g} h session: checkpoint and resume "
                             f"{times} times",
                             f"超过单次 {p.session_max_hours:g} 小时会话：需保存检查点并续跑 {times} 次"))
        if p.price_per_hour:
            amount = catalog.convert(p.price_per_hour, p.currency, c.currency) * hours * e.n_gpus
        elif p.price_per_month:
            amount = catalog.convert(p.price_per_month, p.currency, c.currency) * max(
                1, math.ceil(calendar / (30 * 86400)))
        else:
            amount = 0.0
        cost = Cost(amount, 0.0, c.currency, seconds, 1, 0.0)
        out.append(Candidate(e, seconds, cost, p.platform, None, p, calendar, tuple(notes)))
    return out


# ---------------------------------------------------------------- ranking


# Estimates carry bands of tens of percent (docs/accuracy.md): times within 1 % of the fastest, or costs within
# 2 % of the cheapest, are the same for all a user can tell. The other measure decides among them.
TIME_TIE = math.log(1.01)
COST_TIE_SHARE = 0.02
COST_TIE = math.log1p(COST_TIE_SHARE)
# --objective cost or value without --deadline: the longest run a plan may take. Money decides those rankings,
# and a run of years that saves a fraction of a percent is not a plan (docs/planner.md).
DEFAULT_MAX_SECONDS = 30 * DAY


def max_seconds(c: Constraints) -> float | None:
    """The longest a plan may take: ``--deadline``, else :data:`DEFAULT_MAX_SECONDS` when money ranks."""
    if c.deadline_s is not None:
        return c.deadline_s
    return DEFAULT_MAX_SECONDS if c.objective in ("cost", "value") else None


def _steps(value: float, best: float, tie: float) -> float:
    """Tie steps of ``value`` above ``best`` (0 within the tie; counted from the best, so two values 0.1 % apart
    never straddle a step boundary at the top)."""
    s = math.log(max(value, 1e-12) / max(best, 1e-12)) / tie
    return math.floor(s + 1e-9) if math.isfinite(s) else math.inf


def _time(x: Candidate) -> float:
    return x.calendar_seconds or x.seconds


def _speed(x: Candidate) -> float:
    """What "faster" means when ranking: the wall time of a job; for serving, whose candidates are all priced
    per hour, a request's latency at the planned load (TTFT + output tokens × TPOT)."""
    e = x.estimate
    if e.job.task == "serve" and e.speed is not None:
        return e.speed.ttft_s + e.job.output_len * e.speed.tpot_s
    return _time(x)


def _key(c: Constraints, cands: list[Candidate]) -> Any:
    """Sort key: the objective in tie steps from the best candidate, then the other measure, then cost."""
    if not cands:
        return lambda x: 0
    if c.objective == "time":
        fastest = min(_speed(x) for x in cands)
        return lambda x: (_steps(_speed(x), fastest, TIME_TIE), x.cost.total, _undated(x))
    if c.objective == "value":
        best = min(x.value_score for x in cands)
        return lambda x: (_steps(x.value_score, best, COST_TIE), _speed(x), x.cost.total, _undated(x))
    cheapest = min(x.cost.total for x in cands)
    return lambda x: (_steps(x.cost.total, cheapest, COST_TIE), _speed(x), x.cost.total, _undated(x))


def _undated(x: Candidate) -> bool:
    """At the same cost (and time) a dated price ranks above one whose source states no date."""
    return x.offer is not None and not x.offer.dated


def pareto_front(cands: Iterable[Candidate]) -> list[Candidate]:
    """Candidates no other candidate beats on both cost and time (ties keep the first)."""
    front: list[Candidate] = []
    for x in sorted(cands, key=lambda x: (x.cost.total, _time(x))):
        if not front or _time(x) < _time(front[-1]) - 1e-9:
            front.append(x)
    return front


def _choice(x: Candidate) -> tuple[Any, ...]:
    """What a user chooses: GPU, count and pricing. The same on another provider is a variant of it (a
    notebook platform is a choice of its own)."""
    where = (x.platform.platform, x.platform.tier) if x.platform else (x.offer.pricing if x.offer else "",)
    return (x.estimate.gpu.name, x.estimate.n_gpus, *where)


def _distinct(ranked: list[Candidate], top: int) -> list[Candidate]:
    """The rows to show, in rank order: the pick; choices spread along the Pareto front of cost and time (up to
    half of the rows); then the best-ranked choice of each GPU not shown yet; then the next choices, with a few
    rows at most of one multi-node fleet size until nothing else is left. A choice (:func:`_choice`) is shown
    once, by its best-ranked candidate: the table shows the trade-off and the alternatives rather than variants
    of the pick."""
    best: dict[tuple[Any, ...], Candidate] = {}
    for x in ranked:
        best.setdefault(_choice(x), x)
    choices = list(best.values())
    if len(choices) <= top:
        return choices
    shown: dict[int, Candidate] = {id(x): x for x in (choices[0], *_spread(_tie_front(choices), top // 2))}
    same_size = Counter(x.estimate.total_gpus for x in shown.values())

    def room(x: Candidate) -> bool:  # a fleet size above one node is a dial: a few rows of each size at most
        return x.estimate.total_gpus <= 8 or same_size[x.estimate.total_gpus] < max(2, top // 3)

    for first_of_gpu in (True, False):
        gpus = {x.estimate.gpu.name for x in shown.values()}
        for x in choices:
            if len(shown) >= top:
                break
            if id(x) in shown or not room(x) or (first_of_gpu and x.estimate.gpu.name in gpus):
                continue
            shown[id(x)] = x
            gpus.add(x.estimate.gpu.name)
            same_size[x.estimate.total_gpus] += 1
    for x in choices:  # nothing else is left: the next choices, whatever their size
        if len(shown) >= top:
            break
        shown.setdefault(id(x), x)
    return [x for x in choices if id(x) in shown]


def _tie_front(cands: list[Candidate]) -> list[Candidate]:
    """The Pareto front with costs within :data:`COST_TIE` of each other counted as one: of each 2 % cost step
    from the cheapest, the fastest member (as ``--objective cost`` ranks them)."""
    front = pareto_front(cands)
    if not front:
        return front
    cheapest = front[0].cost.total
    by_step: dict[float, Candidate] = {}
    for x in front:  # by cost, times falling: the last of a step is its fastest
        by_step[_steps(x.cost.total, cheapest, COST_TIE)] = x
    return list(by_step.values())


def _spread(front: list[Candidate], k: int) -> list[Candidate]:
    """``k`` members of ``front`` evenly spaced along it, both ends included."""
    if len(front) <= k:
        return front
    if k <= 1:
        return front[:k]
    return [front[round(i * (len(front) - 1) / (k - 1))] for i in range(k)]


def explain(ranked: list[Candidate], c: Constraints) -> str:
    """One sentence on the pick with the numbers that decided it, and why the runner-up lost (English, or
    Chinese under ``--lang zh``)."""
    if not ranked:
        return ""

    a = ranked[0]
    e = a.estimate
    runner = next((x for x in ranked[1:] if (x.estimate.gpu.name, x.where) != (e.gpu.name, a.where)), None)
    n = {"pick": a.label(), "need": fmt_bytes(e.needed_bytes), "have": fmt_bytes(e.capacity_bytes),
         "headroom": f"{e.margin:.0%}", "cost": fmt_money(a.cost.total, a.cost.currency),
         "time": fmt_seconds(a.calendar_seconds or a.seconds),
         "rate": fmt_money(hourly_price_of(a), a.cost.currency) if a.offer else ""}
    zh = lang() == "zh"
    text = _explain_zh(a, n, c) if zh else _explain_en(a, n, c)
    if runner:
        r_cost = runner.cost.total / a.cost.total if a.cost.total else math.inf
        r_time = (runner.calendar_seconds or runner.seconds) / max(a.calendar_seconds or a.seconds, 1e-9)
        r_value = runner.value_score / a.value_score if a.value_score else math.inf
        ratio = {"cost": r_cost, "time": r_time, "value": r_value}[c.objective]
        cost = fmt_money(runner.cost.total, runner.cost.currency)
        # serving is priced per hour: the runner-up's hourly cost says it all
        detail = [cost + "/h"] if e.job.task == "serve" else [cost, fmt_seconds(runner.calendar_seconds or
                                                                             runner.seconds)]
        if zh:
            why = {"cost": f"费用是它的 {ratio:.2f} 倍", "time": f"用时是它的 {ratio:.2f} 倍",
                   "value": f"同样的工作要花它的 {ratio:.2f} 倍"}[c.objective]
            text += f"次选 {runner.label()} {why}（{'，'.join(detail)}）。"
        else:
            why = {"cost": f"costs {ratio:.2f}× as much", "time": f"takes {ratio:.2f}× as long",
                   "value": f"pays {ratio:.2f}× as much for the same work"}[c.objective]
            text += f" The runner-up, {runner.label()}, {why} ({', '.join(detail)})."
    return text


def _explain_en(a: Candidate, n: dict[str, str], c: Constraints) -> str:
    what = {"cost": "cheapest", "time": "fastest", "value": "best value (work per money)"}[c.objective]
    spend = (f"costs {n['cost']} per hour" if a.estimate.job.task == "serve" else
             f"takes {n['time']} and costs {n['cost']}")
    k = a.cost.instances
    rate = (f" at {n['rate']}/h" + (f" per instance × {k} instances" if k > 1 else "")) if n["rate"] else ""
    faster = "the lower latency" if a.estimate.job.task == "serve" else "the faster"
    tie = f" (costs within {COST_TIE_SHARE:.0%} tie; {faster} wins)" if c.objective != "time" else ""
    return (f"{n['pick']} is the {what} choice{tie}: the job needs {n['need']} per GPU (with a {n['headroom']} "
            f"error margin) of {n['have']}, {spend}{rate}.")


def _explain_zh(a: Candidate, n: dict[str, str], c: Constraints) -> str:
    what = {"cost": "最便宜", "time": "最快", "value": "性价比最高"}[c.objective]
    spend = (f"每小时 {n['cost']}" if a.estimate.job.task == "serve" else f"用时 {n['time']}，费用 {n['cost']}")
    k = a.cost.instances
    rate = (f"（单价 {n['rate']}/小时" + (f"/台 × {k} 台" if k > 1 else "") + "）") if n["rate"] else ""
    faster = "延迟更低的" if a.estimate.job.task == "serve" else "更快的"
    tie = f"（费用相差 {COST_TIE_SHARE:.0%} 以内算持平，取{faster}）" if c.objective != "time" else ""
    return (f"{what}的方案是 {n['pick']}{tie}：每卡需要 {n['need']} 显存（含 {n['headroom']} 误差余量），"
            f"可用 {n['have']}；{spend}{rate}。")


def hourly_price_of(x: Candidate) -> float:
    if not x.offer:
        return 0.0
    return x.cost.compute / max(x.cost.billed_seconds / HOUR, 1e-9) / max(x.cost.instances, 1)


# ---------------------------------------------------------------- main entry


def plan(catalog: Catalog, model: ModelSpec, job: Job, c: Constraints, cal: Calibration | None = None,
         suggest: bool = True, alternatives_too: bool = True) -> PlanResult:
    """Rank the ways to run ``job`` under ``c``. ``suggest``: price the changes that would fit when nothing
    does; ``alternatives_too``: price the cheaper changes to a plan that fits (one more plan per change)."""
    with using(lang()):  # the language is read once, not at each of the thousands of sentences priced
        return _plan(catalog, model, job, c, cal or fitted(), suggest, alternatives_too)


def _plan(catalog: Catalog, model: ModelSpec, job: Job, c: Constraints, cal: Calibration, suggest: bool,
          alternatives_too: bool) -> PlanResult:
    job = job.for_model(model)
    _check_job(job, model)
    providers = resolve_providers(catalog, c.providers, platforms=c.platforms) if c.providers else None
    gpus = candidate_gpus(catalog, c)
    reasons: Counter[tuple[str, str]] = Counter()
    offers = _usable_offers(catalog, c, providers, job.task == "serve")
    estimates, closest = _enumerate(model, job, c, cal, gpus, catalog, offers, reasons)
    cands: list[Candidate] = []
    offer_notes: dict[Offer, tuple[tuple[str, ...], str]] = {}  # the notes of each offer, made once a plan
    for e in estimates:
        cands += _price(catalog, e, c, offers, cal, offer_notes)
    priced, cands = cands, [x for x in cands if _within_limits(x, c)]
    ranked = sorted(cands, key=_key(c, cands))
    top = _distinct(ranked, c.top)
    free = []
    if c.platforms and job.task in ("finetune", "infer") and c.spot is not True:
        for e in estimates:  # --provider names platforms too; without it, all of them
            if e.n_gpus <= 2:
                free += [x for x in _platform_candidates(catalog, e, c, e.seconds) if _within_limits(x, c)
                         and (providers is None or x.where in providers)]
    free = _distinct(sorted(free, key=lambda x: (x.cost.total, x.calendar_seconds)), c.top)
    result = PlanResult(job, model, c, top, pareto_front(cands), _explanation(top, free, c),
                        len(estimates) + len(closest),
                        len(estimates), assumptions=_assumptions(c, cal), platforms=free,
                        too_long=sum(c.deadline_s is None and _time(x) > (max_seconds(c) or math.inf)
                                     for x in priced))
    with using("zh"):
        result.explanation_zh = _explanation(top, free, c)
    if not top:
        result.nothing_fits = _nothing_fits(estimates, closest, priced, c, reasons)
        if suggest:
            result.suggestions = suggestions(catalog, model, job, c, cal)
    elif suggest and alternatives_too:
        result.alternatives = alternatives(catalog, model, job, c, cal, top[0])
    return result


def _explanation(top: list[Candidate], free: list[Candidate], c: Constraints) -> str:
    """Why the pick, and the notebook platform that also fits, in the current language."""
    text = explain(top, c)
    if free:
        f = free[0]
        price = fmt_money(f.cost.total, f.cost.currency)
        text += (f"免费/低价平台也能跑：{f.label()}，{price}（{'；'.join(f.notes)}）。" if lang() == "zh"
                 else f" A notebook platform also fits: {f.label()} for {price} ({'; '.join(f.notes)}).")
    return text


def _check_job(job: Job, m: ModelSpec) -> None:
    if job.is_training and job.train_tokens <= 0:
        raise InputError("--samples/--tokens", "the job has no training tokens.",
                         "give --samples N --tokens-per-sample T (and --epochs), or --tokens.")
    if job.task == "serve" and job.rps <= 0:
        raise InputError("--rps", "serving needs a request rate.", "give --rps, e.g. --rps 5.")
    if job.task == "infer" and job.requests <= 0:
        raise InputError("--requests", "a batch inference job needs a number of requests.", "give --requests N.")


_DEADLINE: contextvars.ContextVar[tuple[float, float] | None] = contextvars.ContextVar("plan_deadline", default=None)


@contextlib.contextmanager
def work_budget(seconds: float) -> Iterator[None]:
    """Bound the planning done inside the block to ``seconds`` of wall time: past it, the next candidate the
    enumeration reaches raises :class:`~gpuplan.errors.BudgetError` (the HTTP API's per-request bound)."""
    token = _DEADLINE.set((time.monotonic() + seconds, seconds))
    try:
        yield
    finally:
        _DEADLINE.reset(token)


def _check_budget() -> None:
    deadline = _DEADLINE.get()
    if deadline is not None and time.monotonic() > deadline[0]:
        raise BudgetError(deadline[1])


def _enumerate(m: ModelSpec, job: Job, c: Constraints, cal: Calibration, gpus: Sequence[Gpu], catalog: Catalog,
               offers: dict[str, list[Offer]], reasons: Counter[tuple[str, str]]
               ) -> tuple[list[JobEstimate], list[JobEstimate]]:
    """Estimate every GPU count some usable offer (or, for 1–2 GPUs, a notebook platform) can provide."""
    fitting: list[JobEstimate] = []
    closest: list[JobEstimate] = []
    serving = job.task == "serve"
    platforms = offered_platforms(catalog, c)
    sized: dict[TrainSetup, _Sized] = {}  # training memory by setup: the same on every GPU type
    for gpu in gpus:
        counts = [n for n in _counts(c, job) if (n <= 2 and gpu.name in platforms) or any(
            _instances_per_replica(o, n, serving) is not None for o in offers.get(gpu.name, []))]
        for n in counts:
            _check_budget()
            if job.is_training:
                best, near = _best_training(m, gpu, job, n, c, cal, reasons, sized)
            else:
                if n > 8:
                    continue
                best, near = _best_inference(m, gpu, job, n, c, cal, reasons)
            if best:
                fitting.append(best)
                if job.is_training and n >= 8 and best.seconds < 3600 and c.objective != "time":
                    break  # for cost and value, more GPUs only add overhead once a job takes minutes
            elif near:
                closest.append(near)
    return fitting, closest


def offered_platforms(catalog: Catalog, c: Constraints) -> set[str]:
    if not c.platforms:
        return set()
    return {p.gpu for p in catalog.platforms if p.market == (c.market or "global")}


def _within_limits(x: Candidate, c: Constraints) -> bool:
    if c.budget is not None and x.cost.total > c.budget:
        return False
    limit = max_seconds(c)
    if limit is not None and _time(x) > limit:
        return False
    return c.max_gpus is None or x.estimate.total_gpus <= c.max_gpus


def _nothing_fits(fitting: list[JobEstimate], closest: list[JobEstimate], cands: list[Candidate],
                  c: Constraints, reasons: Counter[tuple[str, str]]) -> str:
    fastest = min(cands, key=_time, default=None)
    if fastest is not None and c.deadline_s is None and max_seconds(c) and _time(fastest) > DEFAULT_MAX_SECONDS:
        return (f"every plan takes longer than {fmt_seconds(DEFAULT_MAX_SECONDS)}, the longest --objective "
                f"{c.objective} allows without a deadline (the fastest, {fastest.label()}, takes "
                f"{fmt_seconds(_time(fastest))}). To fix: give a longer --deadline (e.g. --deadline "
                f"{math.ceil(_time(fastest) / DAY)}d), or use --objective time.")
    if fitting:
        return ("configurations fit in memory, but none is offered within the constraints (market, providers, "
                "spot, budget, deadline).")
    if not closest:
        if reasons:
            (message, fix), _ = reasons.most_common(1)[0]
            return f"no configuration can run this job: {message}" + (f" To fix: {fix}" if fix else "")
        where = "".join((f" in the {c.market} market" if c.market else "",
                         " by the chosen providers" if c.providers else "",
                         " as spot" if c.spot is True else " on demand" if c.spot is False else ""))
        what = "the allowed GPUs" if (c.gpus or c.exclude_gpus) else "GPUs that can run it"
        return (f"no offer has {what}{where}. To fix: allow more GPUs, another market or more providers "
                "(see 'gpuplan offers').")
    slow = [e for e in closest if e.fits]  # serving: fits in memory but misses the latency targets at batch 1
    if slow:
        return _latency_miss(slow, c)
    near = min(closest, key=lambda e: e.shortfall_bytes / e.capacity_bytes)
    return (f"nothing fits: the closest, {near.describe()}, needs {fmt_bytes(near.needed_bytes)} per GPU but has "
            f"{fmt_bytes(near.capacity_bytes)} ({fmt_bytes(near.shortfall_bytes)} short).")


def _latency_miss(slow: list[JobEstimate], c: Constraints) -> str:
    job = slow[0].job

    def first_token(e: JobEstimate) -> float:  # as the serving estimate counts it: prefill + one decode step
        return e.speed.ttft_s + e.speed.tpot_s if e.speed else math.inf

    best_ttft = min(slow, key=first_token)
    best_tpot = min(slow, key=lambda e: e.speed.tpot_s if e.speed else math.inf)
    parts = []
    if job.ttft_s and first_token(best_ttft) > job.ttft_s:
        parts.append(f"the quickest first token is {fmt_seconds(first_token(best_ttft))} on {best_ttft.describe()} "
                     f"(target --ttft {fmt_seconds(job.ttft_s)})")
    if job.tpot_s and best_tpot.speed and best_tpot.speed.tpot_s > job.tpot_s:
        parts.append(f"the quickest token step is {fmt_seconds(best_tpot.speed.tpot_s)} on {best_tpot.describe()} "
                     f"(target --tpot {fmt_seconds(job.tpot_s)})")
    what = "; ".join(parts) or "no configuration meets the latency targets"
    return (f"configurations fit in memory, but none meets the latency targets even serving one request at a "
            f"time: {what}. Relax --ttft/--tpot, use a shorter prompt, or allow faster GPUs.")


def suggestions(catalog: Catalog, m: ModelSpec, job: Job, c: Constraints, cal: Calibration) -> list[dict[str, Any]]:
    """Cheapest changes that would make the job fit, each priced by planning again with the change."""
    changes: list[tuple[str, Job, Constraints]] = []
    if job.task in ("infer", "serve"):
        for q in ("int8-wo", "awq-int4"):
            if (c.quant or job.weight_format) != q:
                changes.append((f"quantize to {q}", replace(job, weight_format=q), replace(c, quant=q)))
        if job.prompt_len > 512:
            changes.append(("halve the prompt length", replace(job, prompt_len=job.prompt_len // 2), c))
    if job.task == "finetune":
        for meth in ("lora", "qlora"):
            if job.method != meth:
                changes.append((f"switch to {meth.upper()}", replace(job, method=meth), c))
    if job.is_training and job.seq_len > 512:
        changes.append(("halve the sequence length", replace(job, seq_len=job.seq_len // 2), c))
    if c.max_gpus is not None:
        changes.append(("allow any number of GPUs", job, replace(c, max_gpus=None)))
        if job.task == "finetune" and job.method != "qlora":
            changes.append(("switch to QLoRA and allow any number of GPUs", replace(job, method="qlora"),
                            replace(c, max_gpus=None)))
    if c.gpus:
        changes.append(("allow any GPU", job, replace(c, gpus=())))
    if c.budget is not None or c.deadline_s is not None:
        limits = " and ".join(x for x, v in (("budget", c.budget), ("deadline", c.deadline_s)) if v is not None)
        changes.append((f"drop the {limits}", job, replace(c, budget=None, deadline_s=None)))
    out = []
    for label, j2, c2 in changes:
        _check_budget()
        try:
            r = plan(catalog, m, j2, c2, cal, suggest=False)
        except GpuplanError:
            continue
        if r.pick:
            out.append({"change": label, "pick": r.pick.label(), "cost": round(r.pick.cost.total, 2),
                        "currency": c2.currency, "seconds": r.pick.seconds})
    return sorted(out, key=lambda s: s["cost"])


def _limit_text(c: Constraints) -> str:
    if c.deadline_s is not None:
        return f"{fmt_seconds(c.deadline_s)} (--deadline)"
    if max_seconds(c) is None:
        return "none (--objective time)"
    return f"{fmt_seconds(DEFAULT_MAX_SECONDS)} by default for --objective {c.objective}; --deadline sets another"


def _cheaper_changes(job: Job, c: Constraints) -> list[tuple[str, Job, Constraints]]:
    """What might run the same job for less: a smaller weight format or another engine (inference), a lighter
    method (fine-tuning), any GPU when --gpus narrowed them."""
    changes: list[tuple[str, Job, Constraints]] = []
    if job.task in ("infer", "serve"):
        current = c.quant or job.weight_format
        for q in ("fp8", "int8-wo", "awq-int4"):
            if current != q and (current is None or weight_format(current).bits_per_weight > weight_format(q)
                                 .bits_per_weight):
                changes.append((f"quantize to {q}", replace(job, weight_format=q), replace(c, quant=q)))
        if not (current or "").startswith("gguf"):
            changes += [(f"serve with {e}", job, replace(c, engine=e)) for e in ("vllm", "sglang") if e != c.engine]
    if job.task == "finetune":
        lighter = {"full": ("lora", "qlora"), "freeze": ("lora", "qlora"), "lora": ("qlora",)}
        names = {"lora": "LoRA", "qlora": "QLoRA"}
        changes += [(f"switch to {names[m]}", replace(job, method=m, base_quant=None), c)
                    for m in lighter.get(job.method, ())]
    if c.gpus:
        changes.append(("allow any GPU", job, replace(c, gpus=())))
    return changes


def alternatives(catalog: Catalog, m: ModelSpec, job: Job, c: Constraints, cal: Calibration, pick: Candidate
                 ) -> list[dict[str, Any]]:
    """Changes that would run a job that fits for less than ``pick``, each priced by planning again with it, the
    largest saving first (``saving``: the share of the pick's cost saved; within the cost tie, none)."""
    out = []
    for label, j2, c2 in _cheaper_changes(job, c):
        _check_budget()
        try:
            r = plan(catalog, m, j2, c2, cal, suggest=False)
        except GpuplanError:
            continue
        saving = 1 - r.pick.cost.total / pick.cost.total if r.pick and pick.cost.total > 0 else 0.0
        if r.pick and saving > COST_TIE_SHARE:
            out.append({"change": label, "pick": r.pick.label(), "cost": round(r.pick.cost.total, 4),
                        "currency": c2.currency, "seconds": r.pick.calendar_seconds or r.pick.seconds,
                        "saving": saving})
    return sorted(out, key=lambda a: -a["saving"])


def _assumptions(c: Constraints, cal: Calibration) -> list[dict[str, str]]:
    return [
        {"name": "memory margin", "value": "the estimate × (1 + margin) must fit the GPU, the margin being the "
         "upper end of its held-out error band" + (f", at least {c.headroom:.0%}" if c.headroom else ""),
         "source": "held-out bands in gpuplan/data/fitted/params.json (docs/accuracy.md)"},
        {"name": "spot overhead", "value": f"+{c.spot_overhead:.0%} run time; serving plans use no spot unless "
                                          "--spot", "source": "gpuplan.plan.costing"},
        {"name": "start-up", "value": "5 min + weights downloaded at 500 MB/s, billed with each run",
         "source": "gpuplan.plan.costing.STARTUP_SECONDS"},
        {"name": "storage", "value": "weights + data + one checkpoint beyond the included disk",
         "source": "offer's included_disk_gb and storage price"},
        {"name": "longest run", "value": _limit_text(c), "source": "gpuplan.plan.planner.DEFAULT_MAX_SECONDS"},
        {"name": "ties", "value": f"costs within {COST_TIE_SHARE:.0%} of the cheapest tie and the faster wins; times "
         f"within {math.expm1(TIME_TIE):.0%} of the fastest tie and the cheaper wins",
         "source": "gpuplan.plan.planner.COST_TIE_SHARE, TIME_TIE"},
        {"name": "calibration", "value": cal.fitted_on or "fitted parameters", "source": "docs/accuracy.md"},
        {"name": "FX", "value": "newest USD/CNY rate for every price", "source": "data/fx.csv"},
    ]


__all__ = ["GB", "Candidate", "Constraints", "PlanResult", "pareto_front", "plan"]
