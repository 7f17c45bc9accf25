"""From a job to ranked GPU + offer choices, in stages:

1. :mod:`~gpuplan.plan.enumeration` — GPU types × counts × parallel layouts, each estimated; keep what fits (with
   the held-out error margin), and the nearest miss of each where nothing does;
2. :mod:`~gpuplan.plan.pricing` — match offers (and notebook platforms) and cost each
   (:mod:`~gpuplan.plan.costing` holds every money formula: price × billed time or whole commitment terms +
   storage + spot overhead);
3. :mod:`~gpuplan.plan.ranking` — rank by cost, time or value with ties, the Pareto front, the distinct rows;
4. a frozen :class:`~gpuplan.plan.candidates.PlanResult` with typed notes; sentences and JSON are made by the
   skins (:mod:`gpuplan.plan_text`).

When nothing fits, the result says by how much and prices the cheapest changes that would make it fit; when a plan
fits, it prices the changes that would run it for less.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

from gpuplan.catalog import Catalog
from gpuplan.errors import GpuplanError, InfeasibleError, InputError
from gpuplan.estimate.calibration import Calibration, fitted
from gpuplan.estimate.engines import with_engine_defaults
from gpuplan.estimate.frameworks import framework as get_framework
from gpuplan.estimate.job import (
    JobEstimate,
    check_runs_on,
    inference_setup,
    least_replicas,
    least_run_seconds,
    least_run_work,
    least_serving_work,
)
from gpuplan.estimate.quant import weight_format
from gpuplan.i18n import lang, using
from gpuplan.listing import resolve_providers
from gpuplan.memo import collector_paused
from gpuplan.plan import enumeration, pricing, ranking
from gpuplan.plan.budget import check_budget, work_budget
from gpuplan.plan.candidates import Candidate, Constraints, Note, PlanResult, Priced, hourly_price_of
from gpuplan.plan.ranking import COST_TIE_SHARE, DEFAULT_MAX_SECONDS, TIME_TIE, max_seconds, pareto_front
from gpuplan.types import OBJECTIVES, Engine, Gpu, InferSetup, Job, Method, ModelSpec, Objective, Task
from gpuplan.units import DAY, fmt_bytes, fmt_seconds

if TYPE_CHECKING:
    from gpuplan.estimate.infer_speed import RunWork


def plan(catalog: Catalog, model: ModelSpec, job: Job, c: Constraints, cal: Calibration | None = None,
         suggest: bool = True, alternatives_too: bool = True) -> PlanResult:
    """Rank the ways to run ``job`` under ``c``. ``suggest``: price the changes that would fit when nothing
    does; ``alternatives_too``: price the cheaper changes to a plan that fits (one more plan per change)."""
    with using(lang()):  # the language is read once, not at each of the thousands of candidates priced
        return _plan(catalog, model, job, c, cal or fitted(), suggest, alternatives_too)


def _pick_of(catalog: Catalog, model: ModelSpec, job: Job, c: Constraints, cal: Calibration,
             terms: pricing.OfferTerms | None, wanted_below: float | None = None) -> Candidate | None:
    """The pick of the plan of a change (a suggestion or an alternative), the first of its ranking: only its label,
    cost and time are read, so nothing else of that plan is made (``terms``: the offer terms of the plan it
    changes). ``wanted_below`` (``--objective cost`` only): the caller reads the pick only when it costs less; the
    GPU types and counts that cannot cost less are then not estimated, and the pick may be another one of those
    that do not cost less (see :func:`alternatives`)."""
    with using(lang()):
        st = _Priced.of(catalog, model, job, c, cal, terms, wanted_below)
        best = min(st.kept, key=st.rows.sort_key(c, st.kept), default=None)  # the first of the stable sort
        return None if best is None else st.rows.candidate(best)


@dataclass(slots=True)
class _Priced:
    """A plan through its pricing stage: the estimates, the rows priced and those within the limits."""

    job: Job
    providers: set[str] | None
    skipped: tuple[Note, ...]
    reasons: Counter[tuple[str, str]]
    fitting: list[JobEstimate]
    closest: enumeration.Closest  # made when first read: a plan reads them only when nothing fits
    rows: ranking.Rows
    kept: list[int]  # the rows within the limits
    pricer: pricing.Pricer

    @classmethod
    def of(cls, catalog: Catalog, model: ModelSpec, job: Job, c: Constraints, cal: Calibration,
           terms: pricing.OfferTerms | None, wanted_below: float | None = None) -> _Priced:
        job = job.for_model(model)
        _check_job(job, model)
        providers = resolve_providers(catalog, c.providers, platforms=c.platforms) if c.providers else None
        gpus, skipped = _runnable(enumeration.candidate_gpus(catalog, c), job)
        reasons: Counter[tuple[str, str]] = Counter()
        serving = job.task is Task.SERVE
        pricer = pricing.Pricer.for_plan(catalog, c, providers, cal, serving, terms)
        blocks: dict[int, Priced] = {}  # each fitting estimate's rows, by the estimate's id
        # the estimates and their priced rows all live on in the plan: the collector, held off over both stages,
        # walks them once when it next runs (held off over the estimates alone, its passes during pricing walked
        # them again, a full pass now and then walking the whole catalog too)
        with collector_paused():
            if wanted_below is None:
                fitting, closest = enumeration.estimates(model, job, c, cal, gpus, catalog, pricer.offers, reasons)
            else:
                cut = _Cutoff(model, job, c, pricer, wanted_below, _least_terms(model, job, c, cal), blocks)
                fitting, closest = enumeration.estimates(model, job, c, cal, gpus, catalog, pricer.offers, reasons,
                                                         cut.skip, cut.least, cut.seen)
            rows = ranking.Rows([b if (b := blocks.get(id(e))) is not None else pricer.columns(e)
                                 for e in fitting])
        return cls(job, providers, skipped, reasons, fitting, closest, rows, rows.keep_within(c), pricer)


class _Cutoff:
    """Which GPU types and counts the plan of a change need not estimate, its pick sought below ``wanted_below``
    by cost. A run's cost is at least :meth:`least` (``Pricer.least_cost``, with a batch-inference run's least work
    or a service's least replicas),
    so a GPU type and count whose least reaches the limit is left out. The limit then falls as rows are found: the
    pick lies within the cost tie above the cheapest row within the limits, so once such a row costs ``x``, a GPU
    type and count whose rows all cost at least x × (1 + tie) × 1.01 (1 % for rounding) can hold neither the pick
    nor the cheapest row (the estimates are made cheapest ``least`` first, so the limit falls early)."""

    def __init__(self, m: ModelSpec, job: Job, c: Constraints, pricer: pricing.Pricer, wanted_below: float,
                 least_terms: Callable[[Gpu, int], tuple[float, int]] | None, blocks: dict[int, Priced]) -> None:
        self.m, self.job, self.c, self.pricer = m, job, c, pricer
        self.limit = wanted_below
        self.least_terms = least_terms
        self.blocks = blocks
        self._least: dict[tuple[str, int], float] = {}

    def least(self, gpu: Gpu, n: int) -> float:
        """The least any row of ``n`` × ``gpu`` can cost (the cheaper bound alone where it already reaches the
        first limit)."""
        key = (gpu.name, n)
        found = self._least.get(key)
        if found is None:
            found = self.pricer.least_cost(self.m, self.job, gpu.name, n)
            if found < self.limit and self.least_terms is not None:
                found = self.pricer.least_cost(self.m, self.job, gpu.name, n, *self.least_terms(gpu, n))
            self._least[key] = found
        return found

    def skip(self, gpu: Gpu, n: int) -> bool:
        return self.least(gpu, n) >= self.limit

    def seen(self, e: JobEstimate) -> None:
        """Price ``e`` and lower the limit to what its cheapest row within the limits allows."""
        block = self.blocks[id(e)] = self.pricer.columns(e)
        rows = ranking.Rows([block])
        kept = rows.keep_within(self.c)
        if kept:
            cheapest = min(rows.totals[i] for i in kept)
            self.limit = min(self.limit, cheapest * (1 + COST_TIE_SHARE) * 1.01)


def _least_terms(m: ModelSpec, job: Job, c: Constraints, cal: Calibration
                 ) -> Callable[[Gpu, int], tuple[float, int]] | None:
    """Lower bounds on the seconds and the replicas of the estimate :func:`enumeration.best_inference` makes of
    ``job`` on a GPU type and count (:func:`job.least_run_seconds`: a batch-inference run's prefills and decode
    steps; :func:`job.least_replicas`: a serving replica's most requests per second); None for other jobs (no
    bound)."""
    if job.task not in (Task.INFER, Task.SERVE):
        return None
    serving = job.task is Task.SERVE
    fmt, engine = enumeration.inference_choice(m, job, c)
    name = weight_format(fmt).name
    # the setup and its work (a run's, else a serving wave's), the same on every GPU type of the same engine
    # limits (vLLM's batch defaults depend on the GPU: engines.with_engine_defaults)
    per_count: dict[tuple[int, int | None, int | None], tuple[InferSetup, RunWork | None,
                                                               tuple[RunWork, int] | None]] = {}

    def least(gpu: Gpu, n: int) -> tuple[float, int]:
        try:
            s = with_engine_defaults(inference_setup(job, n, engine, name), gpu)
        except InfeasibleError:  # the estimate would say so: no bound
            return 0.0, 1
        key = (n, s.max_num_seqs, s.max_batched_tokens)
        found = per_count.get(key)
        if found is None:
            try:
                found = per_count[key] = ((s, None, least_serving_work(m, job, s)) if serving
                                          else (s, least_run_work(m, job, s), None))
            except InfeasibleError:  # the estimate would say so: no bound
                return 0.0, 1
        s, run, wave = found
        if serving:
            return 0.0, least_replicas(m, gpu, job, s, cal, wave) if wave is not None else 1
        return least_run_seconds(m, gpu, job, s, cal, run), 1

    return least


def _plan(catalog: Catalog, model: ModelSpec, job: Job, c: Constraints, cal: Calibration, suggest: bool,
          alternatives_too: bool) -> PlanResult:
    st = _Priced.of(catalog, model, job, c, cal, None)
    job, providers, fitting, closest, rows, kept = st.job, st.providers, st.fitting, st.closest, st.rows, st.kept
    top = ranking.distinct(rows.choices(sorted(kept, key=rows.sort_key(c, kept))), c.top)
    free = []
    if c.platforms and job.task in (Task.FINETUNE, Task.INFER) and c.spot is not True:
        for e in fitting:  # --provider names platforms too; without it, all of them
            if e.n_gpus <= 2:
                free += [x for x in ranking.keep_within(pricing.platform_candidates(catalog, e, c, e.seconds), c)
                         if providers is None or x.where in providers]
    free = ranking.distinct(sorted(free, key=lambda x: (x.cost.total, x.calendar_seconds)), c.top)
    limit = max_seconds(c) or math.inf
    nothing_fits, suggested, alternatives_found = "", [], []
    if not top:
        nothing_fits = _nothing_fits(fitting, closest, rows.fastest(), c, st.reasons)
        if suggest:
            suggested = suggestions(catalog, model, job, c, cal, st.pricer.terms)
    elif suggest and alternatives_too:
        alternatives_found = alternatives(catalog, model, job, c, cal, top[0], st.pricer.terms)
    full = _Describer(cal, st.pricer)  # the candidates were made without words: describe the ones the plan shows
    top, front, free = full.all(top), full.all(rows.pareto_front(kept)), full.all(free)
    return PlanResult(job, model, c, tuple(top), tuple(front), len(fitting) + len(closest),
                      len(fitting), nothing_fits, tuple(suggested), tuple(free), tuple(_assumptions(c, cal)),
                      sum(c.deadline_s is None and t > limit for t in rows.times), tuple(alternatives_found),
                      st.skipped)


class _Describer:
    """Gives the candidates a plan shows their notes (:meth:`pricing.Pricer.noted`) and full estimates
    (:func:`enumeration.described`), each estimate and candidate made once however many of the plan's lists hold
    it."""

    def __init__(self, cal: Calibration, pricer: pricing.Pricer) -> None:
        self.cal, self.pricer = cal, pricer
        self._estimates: dict[int, JobEstimate] = {}  # by id of the estimate made without its words
        self._candidates: dict[int, Candidate] = {}

    def all(self, xs: list[Candidate]) -> list[Candidate]:
        return [self.one(x) for x in xs]

    def one(self, x: Candidate) -> Candidate:
        found = self._candidates.get(id(x))
        if found is None:
            e = self._estimates.get(id(x.estimate))
            if e is None:
                e = self._estimates[id(x.estimate)] = enumeration.described(x.estimate, self.cal)
            found = self._candidates[id(x)] = replace(self.pricer.noted(x), estimate=e)
        return found


def _runnable(gpus: list[Gpu], job: Job) -> tuple[list[Gpu], tuple[Note, ...]]:
    """The GPUs the job's framework and method run on, with a note per piece of software that left some out;
    when none is left, the reason the first GPU cannot run the job (what ``estimate`` would say)."""
    kept, skipped = enumeration.runnable_gpus(gpus, job)
    if not kept:
        check_runs_on(gpus[0], job.framework, job.method)
    return kept, skipped


def _check_job(job: Job, m: ModelSpec) -> None:
    if job.is_training and job.train_tokens <= 0:
        raise InputError("--samples/--tokens", "the job has no training tokens.",
                         "give --samples N --tokens-per-sample T (and --epochs), or --tokens.")
    if job.task is Task.SERVE and job.rps <= 0:
        raise InputError("--rps", "serving needs a request rate.", "give --rps, e.g. --rps 5.")
    if job.task is Task.INFER and job.requests <= 0:
        raise InputError("--requests", "a batch inference job needs a number of requests.", "give --requests N.")


def _nothing_fits(fitting: list[JobEstimate], closest: enumeration.Closest, fastest: Candidate | None,
                  c: Constraints, reasons: Counter[tuple[str, str]]) -> str:
    if fastest is not None and c.deadline_s is None and max_seconds(c) and fastest.time_s > DEFAULT_MAX_SECONDS:
        return (f"every plan takes longer than {fmt_seconds(DEFAULT_MAX_SECONDS)}, the longest --objective "
                f"{c.objective} allows without a deadline (the fastest, {fastest.label()}, takes "
                f"{fmt_seconds(fastest.time_s)}). To fix: give a longer --deadline (e.g. --deadline "
                f"{math.ceil(fastest.time_s / DAY)}d), or use --objective time.")
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


def suggestions(catalog: Catalog, m: ModelSpec, job: Job, c: Constraints, cal: Calibration,
                terms: pricing.OfferTerms | None = None) -> list[dict[str, Any]]:
    """Cheapest changes that would make the job fit, each priced by planning again with the change (``terms``: the
    offer terms of the plan they change, which those plans share)."""
    changes: list[tuple[str, Job, Constraints]] = []
    if job.task in (Task.INFER, Task.SERVE):
        for q in ("int8-wo", "awq-int4"):
            if (c.quant or job.weight_format) != q:
                changes.append((f"quantize to {q}", replace(job, weight_format=q), replace(c, quant=q)))
        if job.prompt_len > 512:
            changes.append(("halve the prompt length", replace(job, prompt_len=job.prompt_len // 2), c))
    if job.task is Task.FINETUNE:
        for meth in (Method.LORA, Method.QLORA):
            if job.method != meth:
                changes.append((f"switch to {meth.upper()}", replace(job, method=meth), c))
    if job.is_training and job.seq_len > 512:
        changes.append(("halve the sequence length", replace(job, seq_len=job.seq_len // 2), c))
    if c.max_gpus is not None:
        changes.append(("allow any number of GPUs", job, replace(c, max_gpus=None)))
        if job.task is Task.FINETUNE and job.method != Method.QLORA:
            changes.append(("switch to QLoRA and allow any number of GPUs", replace(job, method=Method.QLORA),
                            replace(c, max_gpus=None)))
    if c.gpus:
        changes.append(("allow any GPU", job, replace(c, gpus=())))
    if c.budget is not None or c.deadline_s is not None:
        limits = " and ".join(x for x, v in (("budget", c.budget), ("deadline", c.deadline_s)) if v is not None)
        changes.append((f"drop the {limits}", job, replace(c, budget=None, deadline_s=None)))
    out = []
    for label, j2, c2 in changes:
        check_budget()
        try:
            pick = _pick_of(catalog, m, j2, c2, cal, terms)
        except GpuplanError:
            continue
        if pick:
            out.append({"change": label, "pick": pick.label(), "cost": round(pick.cost.total, 2),
                        "currency": c2.currency, "seconds": pick.seconds})
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
    if job.task in (Task.INFER, Task.SERVE):
        current = c.quant or job.weight_format
        for q in ("fp8", "int8-wo", "awq-int4"):
            if current != q and (current is None or weight_format(current).bits_per_weight > weight_format(q)
                                 .bits_per_weight):
                changes.append((f"quantize to {q}", replace(job, weight_format=q), replace(c, quant=q)))
        if not current or not weight_format(current).name.startswith("gguf"):  # Q4_K_M, model-Q4_K_M.gguf too
            changes += [(f"serve with {e}", job, replace(c, engine=e)) for e in (Engine.VLLM, Engine.SGLANG)
                        if e != c.engine]
    if job.task is Task.FINETUNE:
        lighter = {Method.FULL: (Method.LORA, Method.QLORA), Method.FREEZE: (Method.LORA, Method.QLORA),
                   Method.GALORE: (Method.LORA, Method.QLORA),
                   Method.LISA: (Method.LORA, Method.QLORA), Method.LORA: (Method.QLORA,),
                   Method.ADAPTER: (Method.QLORA,), Method.ADAPTER_V2: (Method.QLORA,),
                   Method.DORA: (Method.LORA, Method.QLORA), Method.ADALORA: (Method.LORA, Method.QLORA)}
        names = {"lora": "LoRA", "qlora": "QLoRA"}
        runs = get_framework(job.framework).runs if job.framework else None  # its methods only
        changes += [(f"switch to {names[m]}", replace(job, method=m, base_quant=None), c)
                    for m in lighter.get(job.method, ()) if runs is None or runs(m)]
    if c.gpus:
        changes.append(("allow any GPU", job, replace(c, gpus=())))
    return changes


def alternatives(catalog: Catalog, m: ModelSpec, job: Job, c: Constraints, cal: Calibration, pick: Candidate,
                 terms: pricing.OfferTerms | None = None) -> list[dict[str, Any]]:
    """Changes that would run a job that fits for less than ``pick``, each priced by planning again with it, the
    largest saving first (``saving``: the share of the pick's cost saved; within the cost tie, none; ``terms``: as
    for :func:`suggestions`)."""
    out = []
    # By cost, a change is shown when its pick costs less than the pick's cost less the tie share; its pick lies
    # within the tie share above its cheapest row. So a GPU type and count whose rows cost at least the pick's cost
    # × (1 − tie) × (1 + tie), and 1 % more for rounding, cannot make a change shown: if one held that change's
    # pick, its cheapest row too would cost more than the pick's less the tie, and so would every row left
    wanted_below = (pick.cost.total * (1 - COST_TIE_SHARE) * (1 + COST_TIE_SHARE) * 1.01
                    if c.objective is Objective.COST else None)
    for label, j2, c2 in _cheaper_changes(job, c):
        check_budget()
        try:
            other = _pick_of(catalog, m, j2, c2, cal, terms, wanted_below)
        except GpuplanError:
            continue
        saving = 1 - other.cost.total / pick.cost.total if other and pick.cost.total > 0 else 0.0
        if other and saving > COST_TIE_SHARE:
            out.append({"change": label, "pick": other.label(), "cost": round(other.cost.total, 4),
                        "currency": c2.currency, "seconds": other.time_s,
                        "saving": saving})
    return sorted(out, key=lambda a: -a["saving"])


def _assumptions(c: Constraints, cal: Calibration) -> list[dict[str, str]]:
    return [
        {"name": "memory margin", "value": (
            f"the estimate × (1 + margin) must fit the GPU, the margin being the upper end of its held-out error "
            f"band, at least {c.headroom:.0%}; for training, the estimate without the allocator's cache, which "
            "PyTorch gives back when memory runs short" if c.headroom else
            "the estimate × (1 + margin) must fit the GPU, the margin being the upper end of its held-out error band"
            "; for training, the estimate without the allocator's cache, which PyTorch gives back when memory runs "
            "short"),
         "source": "held-out bands in gpuplan/data/fitted/params.json (docs/accuracy.md)"},
        {"name": "spot overhead", "value": f"+{c.spot_overhead:.0%} run time; serving plans use no spot unless "
                                          "--spot", "source": "gpuplan.plan.costing"},
        {"name": "start-up", "value": "5 min + weights downloaded at 500 MB/s, billed with each run",
         "source": "gpuplan.plan.costing.STARTUP_SECONDS"},
        {"name": "storage", "value": "weights + data + one checkpoint beyond the included disk",
         "source": "offer's included_disk_gb and storage price"},
        {"name": "longest run", "value": _limit_text(c), "source": "gpuplan.plan.ranking.DEFAULT_MAX_SECONDS"},
        {"name": "ties", "value": f"costs within {COST_TIE_SHARE:.0%} of the cheapest tie and the faster wins; times "
         f"within {math.expm1(TIME_TIE):.0%} of the fastest tie and the cheaper wins",
         "source": "gpuplan.plan.ranking.COST_TIE_SHARE, TIME_TIE"},
        {"name": "calibration", "value": cal.fitted_on or "fitted parameters", "source": "docs/accuracy.md"},
        {"name": "FX", "value": "newest USD/CNY rate for every price", "source": "data/fx.csv"},
    ]


__all__ = ["COST_TIE_SHARE", "DEFAULT_MAX_SECONDS", "OBJECTIVES", "Candidate", "Constraints", "PlanResult",
           "hourly_price_of", "max_seconds", "pareto_front", "plan", "work_budget"]
