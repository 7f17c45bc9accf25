"""The enumeration stage: GPU types × counts × parallel layouts (training) or tensor-parallel sizes (inference),
each estimated; what fits is kept with the estimate that misses by the least where nothing does.

Training memory does not depend on the GPU, so it is sized once per setup for the whole plan; only a setup that
fits gets a time estimate. The estimates are made without their words (assumptions, the longest context): the
same numbers, and the planner has :func:`described` make the full estimate of the few a plan shows.
"""

from __future__ import annotations

import copy
import functools
import math
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field, replace
from enum import Enum

from gpuplan.catalog import Catalog
from gpuplan.errors import InfeasibleError, InputError
from gpuplan.estimate.calibration import Calibration
from gpuplan.estimate.frameworks import framework as get_framework
from gpuplan.estimate.hardware import Blocker, training_blocker
from gpuplan.estimate.job import (
    JobEstimate,
    check_training_hardware,
    check_training_method,
    check_training_shape,
    estimate_inference,
    estimate_training,
    half_format,
    inference_setup,
    setup_fields,
    setup_with,
    training_margins,
    training_needed_bytes,
    training_setup,
)
from gpuplan.estimate.links import Links
from gpuplan.estimate.memory import MemoryTerms, TrainingStates, training_memory_terms, training_states
from gpuplan.estimate.params import count_params
from gpuplan.estimate.quant import weight_format
from gpuplan.estimate.result import Estimate
from gpuplan.estimate.runners import kernel_engine, runners, served_format
from gpuplan.estimate.train_time import (
    GpuTerms,
    LeadWork,
    StepTime,
    StepWork,
    gpu_terms,
    lead_work,
    step_lead,
    step_time,
    step_work,
    train_time,
    training_links,
)
from gpuplan.listing import match_gpus
from gpuplan.memo import IdentityMemo, collector_paused
from gpuplan.plan.budget import check_budget
from gpuplan.plan.candidates import Constraints, Note
from gpuplan.plan.pricing import Offers, offered_counts
from gpuplan.types import (
    Engine,
    Gpu,
    InferSetup,
    Job,
    ModelSpec,
    Objective,
    Parallelism,
    Recompute,
    Task,
    TrainSetup,
)

NODE_COUNTS = (1, 2, 4, 8)
MICRO_BATCHES = (8, 4, 2, 1)  # tried largest first: the largest that fits is the fastest for a layout


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


def runnable_gpus(gpus: Sequence[Gpu], job: Job) -> tuple[list[Gpu], tuple[Note, ...]]:
    """The GPUs a training job's framework (and, for QLoRA, bitsandbytes) runs on (``data/runs_on.csv``), and one
    ``unsupported`` note per piece of software that left some out: (kind, software, GPU names, (vendor, count)
    pairs). Inference and serving jobs keep every GPU (each engine's own check applies)."""
    if not job.is_training:
        return list(gpus), ()
    framework = get_framework(job.framework).framework if job.framework else None
    kept: list[Gpu] = []
    left: dict[Blocker, list[Gpu]] = {}
    for g in gpus:
        blocker = training_blocker(g.vendor, g.architecture, framework, job.method)
        if blocker is None:
            kept.append(g)
        else:
            left.setdefault(blocker, []).append(g)
    return kept, tuple(_unsupported(b, out) for b, out in left.items())


def _unsupported(b: Blocker, gpus: list[Gpu]) -> Note:
    vendors = Counter(g.vendor for g in gpus)
    return Note("unsupported", (b.kind, b.software, tuple(g.name for g in gpus), tuple(vendors.most_common())))


def _counts(c: Constraints, job: Job) -> list[int]:
    limit = c.max_gpus or (2048 if job.task is Task.PRETRAIN else 64)  # the CLI and API defaults
    counts = [n for n in NODE_COUNTS if n <= limit]
    n = 16
    while n <= limit:
        counts.append(n)
        n *= 2
    return counts


def training_layouts(m: ModelSpec, n: int, job: Job) -> list[Parallelism]:
    """Data parallel, FSDP/ZeRO-3, and tensor parallel inside a node (+ FSDP across) for ``n`` GPUs."""
    if n == 1:
        return [Parallelism()]
    layouts = [Parallelism(dp=n, zero=3)]
    adapters = job.method.adapters
    if adapters or count_params(m).total < 3e9:
        layouts.insert(0, Parallelism(dp=n, zero=0))
    if adapters:  # PEFT/bitsandbytes stacks shard with FSDP/ZeRO; tensor parallelism is for full training
        return layouts
    tp = min(8, n)
    if tp > 1 and m.n_heads % tp == 0 and (m.n_kv_heads % tp == 0 or tp % m.n_kv_heads == 0):
        layouts.append(Parallelism(tp=tp, dp=n // tp, zero=1 if n > tp else 0))
        if n >= 64 and job.task is Task.PRETRAIN:
            for pp in (2, 4, 8, 16):
                if n % (tp * pp) == 0 and m.n_layers >= pp:
                    dp = n // (tp * pp)
                    layouts.append(Parallelism(tp=tp, pp=pp, dp=dp, zero=1 if dp > 1 else 0))
    if m.is_moe and job.method.trains_every_weight:
        layouts += expert_layouts(m, [Parallelism(dp=n, zero=1), *(p for p in layouts if p.tp > 1)])
    return layouts


MAX_EP = 64  # the largest expert-parallel groups in Megatron-Core's published MoE recipes (DeepSeek-V3: EP 64)


def expert_layouts(m: ModelSpec, bases: list[Parallelism]) -> list[Parallelism]:
    """A mixture-of-experts model's routed experts split over EP ranks (Megatron-Core; ``moe_train``): for each
    layout without ZeRO-3, EP inside one node (at most 8) and the largest EP up to MAX_EP, each dividing the
    experts and the GPUs of a pipeline stage; the distributed optimizer (ZeRO-1) shards the rest."""
    out: list[Parallelism] = []
    for par in bases:
        stage = par.tp * par.cp * par.dp
        if par.zero >= 3 or stage < 2:
            continue
        fits = [d for d in range(2, min(stage, m.n_experts, MAX_EP) + 1) if m.n_experts % d == 0 and stage % d == 0]
        for ep in sorted({max((d for d in fits if d <= 8), default=0), max(fits, default=0)} - {0}):
            out.append(replace(par, ep=ep, zero=1 if par.dp > 1 else 0))
    return out


def best_training(m: ModelSpec, gpu: Gpu, job: Job, n: int, c: Constraints, cal: Calibration,
                   reasons: Counter[tuple[str, str]], memo: PlanMemo
                   ) -> tuple[JobEstimate | None, JobEstimate | None]:
    """(fastest estimate that fits, None) for ``n`` × ``gpu``, or (None, smallest-shortfall estimate) when none
    fits; why others cannot run is counted in ``reasons``. ``memo`` holds the plan's setups and their memory
    (they do not depend on the GPU type); only a setup that fits gets a time estimate."""
    best, near = _best_training(m, gpu, job, n, c, cal, reasons, memo)
    return best, near.made() if near is not None else None


def _best_training(m: ModelSpec, gpu: Gpu, job: Job, n: int, c: Constraints, cal: Calibration,
                   reasons: Counter[tuple[str, str]], memo: PlanMemo) -> tuple[JobEstimate | None, _Near | None]:
    """:func:`best_training`, its smallest-shortfall estimate made when first read (:class:`Closest`)."""
    best: tuple[float, TrainSetup, _Sized, StepTime | None] | None = None  # the fastest that fits, its time parts
    closest: tuple[TrainSetup, _Sized, float] | None = None  # the setup that misses by the least, and by how much
    best_layout: Parallelism | None = None  # the layout of ``best`` (the layouts are distinct: identity is equality)
    half = half_format(gpu)
    capacity = gpu.memory_bytes  # a property: read once, not for each of the setups sized
    margins: tuple[float, float] | None = None  # training_margins(cal, c.headroom), once a setup is sized
    # what the checks and the timing read of the GPU, by position of the recomputation in a layout's rows (no key
    # to build for each setup), read at the first setup that needs it: the setup fields of a recomputation and
    # 16-bit format (PlanMemo.found) fix the method and precision (memo.hardware_error's) and the attention kernel
    # (gpu_terms'); and the links of the n GPUs that every layout of the grid has
    hardware: dict[int, InfeasibleError | None] = {}
    terms: dict[int, GpuTerms] = {}
    link: Links | None = None
    for par, rows in memo.grid(m, n, job, half):
        check_budget()
        plain_mb = 0  # the micro-batch that fitted this layout without recomputation (0: none did)
        # the framework the user runs fixes recomputation (its default); without one, try both
        for j, row in enumerate(rows):
            recompute, slots = row.recompute, row.slots
            for i, mb in enumerate(MICRO_BATCHES):
                # check_training(m, gpu, job, setup), its GPU-independent parts made once per setup
                entry = slots[i]
                if entry is None:
                    entry = slots[i] = memo.found(m, job, par, mb, recompute, gpu, half)
                if isinstance(entry, InfeasibleError):
                    err: InfeasibleError | None = entry
                else:
                    ok = entry  # read below once no check refuses it (no second isinstance: 3,400 a plan)
                    err = entry.shape_error
                    if err is None:
                        if j in hardware:
                            err = hardware[j]
                        else:
                            err = hardware[j] = memo.hardware_error(gpu, job, entry.setup)
                        if err is None:
                            err = entry.method_error
                if err is not None:
                    reasons[(err.message, err.fix)] += 1
                    if err.field == "--global-batch":
                        continue  # a smaller micro-batch may fit the batch
                    break
                setup = ok.setup
                size = ok.sized
                if size is None:
                    if margins is None:
                        margins = training_margins(cal, c.headroom)
                    size = ok.sized = _Sized.of(m, gpu, job, setup, cal, c.headroom, margins, row.alike)
                if size.needed_bytes > capacity:  # not size.fits(capacity), inlined: 1,500 setups a plan miss
                    short = size.needed_bytes - capacity  # size.shortfall_bytes(capacity), > 0 here
                    if closest is None or short < closest[2]:
                        closest = (setup, size, short)
                    continue
                if mb == plain_mb:
                    # full recomputation at the micro-batch that fitted without it, which was not the fastest: the
                    # same step with more FLOPs (a larger compute term, its bubble and exposed data-parallel
                    # communication no smaller) and more traffic, so it does not beat the best by more than the
                    # utilisation ramp returns on the extra work, under 0.1 % (test_speed_cold); not timed
                    break
                if link is None:
                    link = training_links(gpu, setup, cal)
                if j in terms:  # an operator, not a call (dict.get): 1,175 a plan
                    kept = terms[j]
                else:
                    kept = terms[j] = gpu_terms(gpu, setup, cal)
                parts = size.time(m, gpu, job, setup, cal, best[0] if best is not None else math.inf, kept, link)
                if parts is not _Slower.SLOWER:
                    seconds = parts.seconds if parts is not None else math.inf
                    if best is None or seconds < best[0]:
                        best, best_layout = (seconds, setup, size, parts), par
                if recompute == Recompute.NONE:
                    plain_mb = mb
                break  # the largest micro-batch that fits is the fastest for this layout
            if best_layout is par:
                break  # no need to recompute when it already fits without
    if best is not None:
        _, setup, size, parts = best
        return size.estimate(m, gpu, job, setup, cal, c.headroom, parts), None
    if closest is None:
        return None, None
    setup, size, _ = closest  # time included (it passed check_training when it was sized)
    return None, _Near(functools.partial(size.estimate, m, gpu, job, setup, cal, c.headroom))


class _Near:
    """The estimate of the setup that misses by the least on a GPU type and count, made once, when first read."""

    __slots__ = ("_made", "_make")

    def __init__(self, make: Callable[[], JobEstimate]) -> None:
        self._make = make
        self._made: JobEstimate | None = None

    def made(self) -> JobEstimate:
        if self._made is None:
            self._made = self._make()
        return self._made


class Closest:
    """The second list :func:`estimates` returns: for each GPU type and count where nothing fits, the estimate
    that misses by the least. A plan counts them and reads them only when nothing fits anywhere (its "nothing
    fits" message and its suggestions), so a training search's are made when first read: in the cold
    pretraining plan (Llama-2-7B, 1T tokens) 65 of its 300 answers, each a memory estimate and a step time."""

    __slots__ = ("_items",)

    def __init__(self, items: list[JobEstimate | _Near]) -> None:
        self._items = items

    def __len__(self) -> int:
        return len(self._items)

    def __iter__(self) -> Iterator[JobEstimate]:
        return (x.made() if isinstance(x, _Near) else x for x in self._items)


@dataclass(slots=True)
class _Sized:
    """One training setup's memory as every GPU type sees it (it does not depend on the GPU): the numbers of the
    estimate :func:`estimate_training` reports, without its assumptions, and the bytes it needs with its margin
    (a training estimate has no KV cache to fall short of); the estimate itself, made when a GPU's answer keeps
    it; and the terms of its step time that do not depend on the GPU either, made when a GPU first times it (a
    setup that fits no GPU is never timed). The test suite checks that what is built from it has the numbers of
    :func:`estimate_training`."""

    terms: MemoryTerms
    needed_bytes: float
    _alike: _Alike | None = None  # what it shares with the other micro-batches of its layout
    _memory: Estimate | None = None
    _work: StepWork | None = None
    _lead: LeadWork | None = None  # lead_work(s, job.train_tokens, self._work): the plan's job is the same for all

    @classmethod
    def of(cls, m: ModelSpec, gpu: Gpu, job: Job, s: TrainSetup, cal: Calibration, headroom: float | None,
           margins: tuple[float, float] | None = None, alike: _Alike | None = None) -> _Sized:
        """``margins``: ``training_margins(cal, headroom)``, when the caller has them (a plan's are all the same);
        ``alike``: the terms ``s`` shares with the other micro-batches of its layout, recomputation and 16-bit
        format, filled by the first one sized or timed."""
        if margins is None:
            margins = training_margins(cal, headroom)
        if alike is None:
            terms = training_memory_terms(m, s, cal)
        else:
            held = alike.held
            if held.states is None:
                held.states = training_states(m, s, cal)
            terms = training_memory_terms(m, s, cal, held.states)
        return cls(terms, training_needed_bytes(terms, margins), alike)  # JobEstimate's, without making one

    def memory(self, cal: Calibration) -> Estimate:
        """``training_memory(m, s, cal, describe=False)`` (``s``: the setup sized), made once."""
        found = self._memory
        if found is None:
            found = self._memory = self.terms.estimate(cal)
        return found

    def work(self, m: ModelSpec, s: TrainSetup, cal: Calibration) -> StepWork:
        """``step_work(m, s, cal)`` (``s``: the setup sized), made once."""
        found = self._work
        if found is None:
            alike = self._alike
            if alike is None:
                found = self._work = step_work(m, s, cal)
            elif alike.work is None:
                found = self._work = alike.work = step_work(m, s, cal)
            else:
                found = self._work = step_work(m, s, cal, alike.work)
        return found

    def fits(self, capacity_bytes: float) -> bool:  # JobEstimate.fits on a GPU of ``gpu.memory_bytes``
        return self.needed_bytes <= capacity_bytes

    def shortfall_bytes(self, capacity_bytes: float) -> float:  # JobEstimate.shortfall_bytes, likewise
        return max(0.0, self.needed_bytes - capacity_bytes)

    def time(self, m: ModelSpec, gpu: Gpu, job: Job, s: TrainSetup, cal: Calibration, faster: float = math.inf,
             terms: GpuTerms | None = None, link: Links | None = None) -> StepTime | _Slower | None:
        """The parts of ``self.estimate(...).time``, without describing them (None without training tokens):
        their ``seconds`` is the estimate's; ``_Slower.SLOWER`` where the first parts alone (``StepLead.floor``), or
        with the model-parallel sends and the pipeline bubble (``StepLead.bound``), both never above the seconds,
        already reach ``faster``, the seconds of a setup found before. ``terms`` and ``link``: ``gpu_terms(gpu, s,
        cal)`` and ``training_links(gpu, s, cal)``, when the caller has them."""
        tokens = job.train_tokens  # a property: read once
        if tokens <= 0:
            return None
        work = self._work  # self.work(m, s, cal), without a call once made: 1,175 timings a plan, 290 setups
        if work is None:
            work = self.work(m, s, cal)
        lw = self._lead
        if lw is None:
            lw = self._lead = lead_work(s, tokens, work)
        lead = step_lead(m, gpu, s, tokens, cal, work, lw, terms)
        if lead.floor >= faster:
            return _Slower.SLOWER
        link = link or training_links(gpu, s, cal)
        comm = lead.comm(m, gpu, s, cal, work, link)  # the bound's and the estimate's
        if lead.bound(m, gpu, s, cal, work, comm) >= faster:
            return _Slower.SLOWER
        return step_time(m, gpu, s, tokens, cal, work, lead, comm, link)

    def estimate(self, m: ModelSpec, gpu: Gpu, job: Job, s: TrainSetup, cal: Calibration,
                 headroom: float | None, parts: StepTime | None = None) -> JobEstimate:
        """What ``estimate_training(m, gpu, job, s, cal, headroom)`` returns (after ``check_training``), without
        its words (:func:`described` adds them); ``parts``: ``self.time(...)``, when the caller has it."""
        time = (train_time(m, gpu, s, job.train_tokens, cal, self.work(m, s, cal), parts, describe=False)
                if job.train_tokens > 0 else None)
        return JobEstimate(job, m, gpu, s.parallel.n_gpus, s, self.memory(cal), time, None, 1, headroom)


class _Slower(Enum):
    """What :meth:`_Sized.time` returns for a setup that cannot beat the one found before it."""

    SLOWER = "slower"


def described(e: JobEstimate, cal: Calibration) -> JobEstimate:
    """The full estimate (assumptions, derived answers, the longest context) of an estimate this stage made
    without its words: what :func:`estimate_training` or :func:`estimate_inference` returns for its setup."""
    if isinstance(e.setup, TrainSetup):
        return estimate_training(e.model, e.gpu, e.job, e.setup, cal, e.headroom)
    # the setup as best_inference made it: the batch as the job gives it (the estimate chose the one it holds)
    return estimate_inference(e.model, e.gpu, e.job, replace(e.setup, batch=e.job.batch), cal, e.headroom)


@dataclass(slots=True)
class _Entry:
    """A setup of the plan's training search, why it cannot train the model whatever the GPU (the parts of
    :func:`check_training` that do not read the GPU), and, once it has been sized, its memory and step terms."""

    setup: TrainSetup
    shape_error: InfeasibleError | None = None  # check_training_shape
    method_error: InfeasibleError | None = None  # check_training_method
    sized: _Sized | None = None


@dataclass(slots=True)
class _Held:
    """``memory.training_states`` of the first setup sized of one layout and 16-bit format: whatever the
    recomputation, micro-batch and accumulation, a setup's weights, gradients and optimizer states are the same."""

    states: TrainingStates | None = None


@dataclass(slots=True)
class _Alike:
    """What the setups of one layout, recomputation and 16-bit format share whatever their micro-batch and
    gradient accumulation: their resident states (with the layout's other recomputation) and the ``step_work``
    of the first one timed (the others' step work takes over its terms that read neither)."""

    held: _Held
    work: StepWork | None = None


@dataclass(slots=True)
class _Row:
    """The setups of one layout, recomputation (None: the framework's) and 16-bit format in :meth:`PlanMemo.grid`:
    a slot per micro-batch of ``MICRO_BATCHES`` (None until :meth:`PlanMemo.found` fills it), and what they share
    (each slot's sizes hold it too: no reference back to the row)."""

    recompute: str | None
    slots: list[_Entry | InfeasibleError | None]
    alike: _Alike


_Grid = list[tuple[Parallelism, list[_Row]]]  # per layout, a row per recomputation (PlanMemo.grid)


def _refusal(check: Callable[[], None]) -> InfeasibleError | None:
    """What ``check()`` raises, kept without its traceback: a kept traceback's frames would hold the memo (a
    reference cycle that keeps a plan's estimates alive until the garbage collector runs)."""
    try:
        check()
    except InfeasibleError as err:
        return err.with_traceback(None)
    return None


@dataclass(slots=True)
class PlanMemo:
    """What one plan's training search works out once for every GPU type: the layouts of each GPU count, the setup
    of each layout, micro-batch, recomputation and 16-bit format (or why there is none) with its GPU-independent
    checks, each setup's memory and step terms, and the hardware check of each GPU, method and precision."""

    entries: dict[tuple[Parallelism, int, str | None, str], _Entry | InfeasibleError] = field(default_factory=dict)
    _layouts: dict[int, list[Parallelism]] = field(default_factory=dict)
    _hardware: dict[tuple[str, str, str], InfeasibleError | None] = field(default_factory=dict)
    _grids: dict[tuple[int, str], _Grid] = field(default_factory=dict)
    _likes: dict[tuple[str | None, str], TrainSetup] = field(default_factory=dict)  # of job.setup_fields's
    _shapes: dict[Parallelism, InfeasibleError | None] = field(default_factory=dict)  # _shape_error's
    _methods: dict[tuple[str | None, str], InfeasibleError | None] = field(default_factory=dict)  # _method_error's

    @classmethod
    def shared(cls, m: ModelSpec, job: Job, cal: Calibration, headroom: float | None) -> PlanMemo:
        """A memo for one plan whose layouts and setups (with their memory and step terms) are those of every
        plan of the same model, job, calibration and headroom: plans that differ only in their constraints (market,
        GPUs, budget, objective; the changes :func:`planner.alternatives` tries with the same job) size each setup
        once. The hardware checks, which read the catalog's GPUs, stay the plan's own."""
        kept = _shared_memos.get(m, cal, None, (job, headroom))
        if kept is None:
            kept = _shared_memos.put(m, cal, None, (job, headroom), cls())
        return cls(kept.entries, kept._layouts, _grids=kept._grids)

    def layouts(self, m: ModelSpec, n: int, job: Job) -> list[Parallelism]:
        """``training_layouts(m, n, job)`` (``m`` and ``job`` are the plan's), made once per count."""
        found = self._layouts.get(n)
        if found is None:
            found = self._layouts[n] = training_layouts(m, n, job)
        return found

    def grid(self, m: ModelSpec, n: int, job: Job, half: str) -> _Grid:
        """The setups :func:`best_training` walks for ``n`` GPUs in the 16-bit format ``half``, in its order: each
        layout with a :class:`_Row` per recomputation, made once per plan (``m`` and ``job`` are the plan's): the
        walk reads lists, not the dictionary of entries, whose keys hash a layout each time."""
        found = self._grids.get((n, half))
        if found is None:
            recomputes = (None,) if job.framework else (Recompute.NONE, Recompute.FULL)
            found = self._grids[(n, half)] = []
            for par in self.layouts(m, n, job):
                held = _Held()
                found.append((par, [_Row(r, [self.entries.get((par, mb, r, half)) for mb in MICRO_BATCHES],
                                         _Alike(held)) for r in recomputes]))
        return found

    def found(self, m: ModelSpec, job: Job, par: Parallelism, mb: int, recompute: str | None, gpu: Gpu, half: str
              ) -> _Entry | InfeasibleError:
        """``training_setup(job, par, mb, recompute, gpu=gpu)`` with its checks against ``m``, or what it raises,
        made once per plan (``m`` and ``job`` are the plan's, ``half`` ``half_format(gpu)``)."""
        key = (par, mb, recompute, half)
        found = self.entries.get(key)
        if found is None:
            like = self._likes.get((recompute, half))
            if like is None:
                like = self._likes[(recompute, half)] = TrainSetup(**setup_fields(job, recompute, half))
            try:
                setup = setup_with(like, job, par, mb)
            except InfeasibleError as err:
                found = err.with_traceback(None)  # see _refusal
            else:
                found = _Entry(setup, self._shape_error(m, setup), self._method_error(m, job, setup, recompute, half))
            self.entries[key] = found
        return found

    def _shape_error(self, m: ModelSpec, s: TrainSetup) -> InfeasibleError | None:
        """What ``check_training_shape(m, s)`` raises, made once per layout: all it reads of a setup of the plan's
        job is its layout and the job's sequence length."""
        par = s.parallel
        if par in self._shapes:
            return self._shapes[par]
        found = self._shapes[par] = _refusal(lambda: check_training_shape(m, s))
        return found

    def _method_error(self, m: ModelSpec, job: Job, s: TrainSetup, recompute: str | None, half: str
                      ) -> InfeasibleError | None:
        """What ``check_training_method(m, job, s)`` raises, made once per setup fields (:func:`setup_fields`, by
        recomputation and 16-bit format): all it reads of a setup is its method."""
        key = (recompute, half)
        if key in self._methods:
            return self._methods[key]
        found = self._methods[key] = _refusal(lambda: check_training_method(m, job, s))
        return found

    def entry(self, job: Job, par: Parallelism, mb: int, recompute: str | None, gpu: Gpu, half: str) -> _Entry:
        """``training_setup(job, par, mb, recompute, gpu=gpu)``, made once per plan (``job`` is the plan's, ``half``
        ``half_format(gpu)``); it raises (a copy of) what that raises."""
        found = self.entries.get((par, mb, recompute, half))
        if found is None:
            try:
                found = _Entry(training_setup(job, par, mb, recompute, gpu=gpu))
            except InfeasibleError as err:
                found = err.with_traceback(None)  # see _refusal
            self.entries[(par, mb, recompute, half)] = found
        if isinstance(found, InfeasibleError):
            raise copy.copy(found)
        return found

    def hardware_error(self, gpu: Gpu, job: Job, s: TrainSetup) -> InfeasibleError | None:
        """What ``check_training_hardware(gpu, job, s)`` raises (``job`` is the plan's), made once per GPU, method
        and precision: all it reads of the setup."""
        key = (gpu.name, s.method, s.precision)
        if key in self._hardware:
            return self._hardware[key]
        found = self._hardware[key] = _refusal(lambda: check_training_hardware(gpu, job, s))
        return found


_shared_memos: IdentityMemo[PlanMemo] = IdentityMemo(limit=32)  # by model, calibration, job and headroom


def _inference_estimate(m: ModelSpec, gpu: Gpu, job: Job, tp: int, engine: str, fmt: str, cal: Calibration,
                        headroom: float | None) -> JobEstimate | tuple[str, str]:
    """The estimate :func:`best_inference` judges, made without its words, or why there is none (the refusal's
    message and fix)."""
    try:
        setup = _inference_setup(job, tp, engine, weight_format(fmt).name)
        return estimate_inference(m, gpu, job, setup, cal, headroom, describe=False)
    except InfeasibleError as err:
        return (err.message, err.fix)


def _inference_setup(job: Job, tp: int, engine: str, fmt: str) -> InferSetup:
    """``inference_setup(job, tp, engine, fmt)``, one object for every GPU type a plan estimates it on (the memos
    that read it then find the same object, not an equal one, and need not compare its fields); it raises what
    that raises."""
    values = (tp, engine, fmt)  # the job by identity: a plan asks with its own job object for every GPU type
    hit = _setups.get(job, None, None, values)
    if hit is None:
        hit = _setups.put(job, None, None, values, inference_setup(job, tp, engine, fmt))
    return hit


_setups: IdentityMemo[InferSetup] = IdentityMemo()


# best_inference's estimates by model, GPU, calibration, job, TP, engine, format and headroom: an alternative
# (planner.alternatives: another engine) and a plan under other constraints ask for the same ones again
_inference_estimates: IdentityMemo[JobEstimate | tuple[str, str]] = IdentityMemo()


def inference_choice(m: ModelSpec, job: Job, c: Constraints) -> tuple[str, str]:
    """(the weight format as given, the engine) :func:`best_inference` estimates ``job`` with under ``c``."""
    runner = c.engine if c.engine in runners() else None  # a local runner keeps its name: its defaults apply
    fmt = c.quant or job.weight_format or served_format(c.engine, m.native_dtype)
    name = weight_format(fmt).name
    if runner:
        return fmt, runner
    return fmt, Engine.LLAMACPP if name.startswith("gguf") else Engine.MLX if name.startswith("mlx") else c.engine


def best_inference(m: ModelSpec, gpu: Gpu, job: Job, tp: int, c: Constraints, cal: Calibration,
                    reasons: Counter[tuple[str, str]]) -> tuple[JobEstimate | None, JobEstimate | None]:
    fmt, engine = inference_choice(m, job, c)
    if not kernel_engine(engine, fmt).tensor_parallel and tp > 1:
        return None, None
    key = (job, tp, engine, fmt, c.headroom)
    e = _inference_estimates.get(m, gpu, cal, key)
    if e is None:
        e = _inference_estimates.put(m, gpu, cal, key, _inference_estimate(m, gpu, job, tp, engine, fmt, cal,
                                                                            c.headroom))
    if isinstance(e, tuple):
        reasons[e] += 1
        return None, None
    if e.fits and (job.task is not Task.SERVE or e.replicas >= 1):
        return e, None
    return None, e


def estimates(m: ModelSpec, job: Job, c: Constraints, cal: Calibration, gpus: Sequence[Gpu], catalog: Catalog,
              offers: Offers, reasons: Counter[tuple[str, str]], skip: Callable[[Gpu, int], bool] | None = None,
              order: Callable[[Gpu, int], float] | None = None, seen: Callable[[JobEstimate], None] | None = None
              ) -> tuple[list[JobEstimate], Closest]:
    """Estimate every GPU count some usable offer (or, for 1–2 GPUs, a notebook platform) can provide; ``skip``:
    the GPU types and counts a caller needs no estimate of (a plan that only looks for a pick below some cost).
    ``order`` (inference only): the GPU types and counts are estimated in its ascending order (the first of
    equals first), each fitting estimate shown to ``seen`` as soon as it is made, so that a ``skip`` which learns
    from them leaves out more; the lists come back in the order of the GPU types and counts all the same."""
    serving, training = job.task is Task.SERVE, job.is_training
    platforms = offered_platforms(catalog, c)
    memo = PlanMemo.shared(m, job, cal, c.headroom)  # training setups and their memory: the same on every GPU type
    all_counts = tuple(n for n in _counts(c, job) if training or n <= 8)  # inference: TP within a node
    pairs: list[tuple[Gpu, int]] = []
    for gpu in gpus:
        held = offered_counts(offers, gpu.name, all_counts, serving)
        pairs += [(gpu, n) for n in all_counts if n in held or (n <= 2 and gpu.name in platforms)]
    visit: Sequence[int] = range(len(pairs))
    if order is not None and not training:
        visit = sorted(visit, key=lambda i: order(*pairs[i]))
    found: dict[int, JobEstimate] = {}
    near: dict[int, JobEstimate | _Near] = {}
    done: set[str] = set()  # GPU types whose larger counts a training plan need not estimate
    # the setups, their memory and step terms and the estimates all live on in the memos and the lists: the
    # collector's passes, due every 700 allocations, would find nothing to free in them
    with collector_paused():
        for i in visit:
            gpu, n = pairs[i]
            if gpu.name in done:
                continue
            check_budget()
            if skip is not None and skip(gpu, n):
                continue
            close: JobEstimate | _Near | None
            if training:
                best, close = _kept_training(m, gpu, job, n, c, cal, reasons, memo)
            else:
                best, close = best_inference(m, gpu, job, n, c, cal, reasons)
            if best:
                found[i] = best
                if seen is not None:
                    seen(best)
                if training and n >= 8 and best.seconds < 3600 and c.objective is not Objective.TIME:
                    done.add(gpu.name)  # for cost and value, more GPUs only add overhead once a job takes minutes
            elif close:
                near[i] = close
    return [found[i] for i in sorted(found)], Closest([near[i] for i in sorted(near)])


def _kept_training(m: ModelSpec, gpu: Gpu, job: Job, n: int, c: Constraints, cal: Calibration,
                   reasons: Counter[tuple[str, str]], memo: PlanMemo) -> tuple[JobEstimate | None, _Near | None]:
    """:func:`best_training` (its smallest-shortfall estimate made when first read), kept with the refusals it
    counted by model, GPU, calibration, job, GPU count and headroom (all it reads of the constraints): a plan under
    other constraints asks for the same again. The model, calibration, job and headroom are those of ``memo``'s
    shared setups (:meth:`PlanMemo.shared`), so the answers are kept by the identity of those (no job is hashed for
    each GPU type and count)."""
    kept = _training_answers.get(memo.entries, gpu, None, (n,))
    if kept is None:
        counted: Counter[tuple[str, str]] = Counter()
        best, near = _best_training(m, gpu, job, n, c, cal, counted, memo)
        kept = _training_answers.put(memo.entries, gpu, None, (n,), (best, near, counted))
    if kept[2]:  # in the order best_training counted them, as if it had counted into ``reasons``
        reasons.update(kept[2])
    return kept[0], kept[1]


_training_answers: IdentityMemo[tuple[JobEstimate | None, _Near | None, Counter[tuple[str, str]]]] = (
    IdentityMemo())


def offered_platforms(catalog: Catalog, c: Constraints) -> set[str]:
    if not c.platforms:
        return set()
    return {p.gpu for p in catalog.platforms if p.market == (c.market or "global")}
