"""The pricing stage: each estimate that fits meets the offers (and notebook platforms) that can run it, and each
match is costed (:mod:`~gpuplan.plan.costing` holds the money formulas) into a :class:`Candidate` with its notes."""

from __future__ import annotations

import datetime as dt
import math
from collections.abc import Iterator
from dataclasses import replace
from typing import Any

from gpuplan.catalog import Catalog
from gpuplan.estimate.calibration import Calibration, speed_calibrated
from gpuplan.estimate.job import JobEstimate
from gpuplan.estimate.memory import weights_bytes
from gpuplan.estimate.params import count_params
from gpuplan.estimate.quant import native_format, weight_format
from gpuplan.memo import IdentityMemo, collector_paused
from gpuplan.plan.candidates import Candidate, Constraints, Note, Priced
from gpuplan.plan.costing import Tariff, bill_all, cost_of_seconds, platform_cost, startup_seconds, tariffs
from gpuplan.types import Job, ModelSpec, Offer, Task, TrainSetup
from gpuplan.units import HOUR, WEEK

LARGE_FLEET_GPUS = 64  # beyond this a listed price says nothing about availability
MAX_SESSIONS = 20  # more checkpoint/resume cycles than this is not a plan
UNPUBLISHED_QUOTA_HOURS = 12.0  # the longest session Colab's FAQ states, for tiers that publish no limit

# usable offers: GPU → GPUs per instance → (position in the catalog, offer), in catalog order
Offers = dict[str, dict[float, list[tuple[int, Offer]]]]
# the offers that hold a replica, the instances per replica of each, the tariff of each (OfferTerms.matches)
Matches = tuple[list[Offer], list[float], list[Tariff]]


def usable_offers(catalog: Catalog, c: Constraints, providers: set[str] | None,
                  serving: bool) -> Offers:
    """Offers per GPU within the market, providers, pricing tiers and spot choice. Serving leaves spot out unless
    ``--spot`` or ``--tier spot`` asks for it (a preempted server drops its traffic)."""
    no_spot = c.spot is False or (serving and c.spot is None and "spot" not in c.tiers)
    out: Offers = {}
    for i, o in enumerate(catalog.offers):
        if (c.market and o.market != c.market) or (providers is not None and o.provider not in providers):
            continue
        if (o.pricing not in c.pricings or (c.spot is True and o.pricing != "spot")
                or (no_spot and o.pricing == "spot")):
            continue
        out.setdefault(o.gpu, {}).setdefault(o.gpu_count, []).append((i, o))
    return out


def matching(offers: Offers, gpu: str, n: int, serving: bool) -> tuple[list[Offer], list[float]]:
    """The usable offers of ``gpu`` that can hold a replica of ``n`` GPUs, in catalog order, and the instances per
    replica of each (only instance sizes that can are looked at)."""
    sizes = [(count, group) for count, group in offers.get(gpu, {}).items()
             if count == n or (n > 8 and count == 8) or (serving and n < count <= 8)]
    if len(sizes) == 1 and sizes[0][0] == n <= 8:  # instances of exactly n GPUs: one per replica
        group = sizes[0][1]
        return [o for _, o in group], [1] * len(group)
    found = sizes[0][1] if len(sizes) == 1 else sorted(x for _, group in sizes for x in group)
    pairs = [(o, instances_per_replica(o, n, serving)) for _, o in found]
    kept = [(o, p) for o, p in pairs if p is not None]
    return [o for o, _ in kept], [p for _, p in kept]


def offered(offers: Offers, gpu: str, n: int, serving: bool) -> bool:
    """Whether some usable offer of ``gpu`` can hold a replica of ``n`` GPUs (:func:`matching` finds one)."""
    return any((count == n or (n > 8 and count == 8) or (serving and n < count <= 8))
               and any(instances_per_replica(o, n, serving) is not None for _, o in group)
               for count, group in offers.get(gpu, {}).items())


def offered_counts(offers: Offers, gpu: str, counts: tuple[int, ...], serving: bool) -> frozenset[int]:
    """The GPU counts of ``counts`` that :func:`offered` finds for ``gpu``, kept per set of usable offers (which the
    plans of a plan's changes share: :meth:`OfferTerms.usable`), GPU type, counts and serving or not."""
    values = (gpu, counts, serving)
    hit = _offered_counts.get(offers, None, None, values)
    if hit is None:
        hit = _offered_counts.put(offers, None, None, values, frozenset(_offered_of(offers, gpu, counts, serving)))
    return hit


def _offered_of(offers: Offers, gpu: str, counts: tuple[int, ...], serving: bool) -> Iterator[int]:
    """The counts of ``counts`` that :func:`offered` finds for ``gpu``. Beyond 8 GPUs only 8-GPU instances hold a
    replica, n/8 of them for any multiple n of 8 (:func:`instances_per_replica`), so :func:`offered` is asked once
    for all such counts (a pretraining plan's 16 to 2048)."""
    multinode: bool | None = None
    for n in counts:
        if n > 8 and n % 8 == 0:
            if multinode is None:
                multinode = offered(offers, gpu, n, serving)
            if multinode:
                yield n
        elif offered(offers, gpu, n, serving):
            yield n


_offered_counts: IdentityMemo[frozenset[int]] = IdentityMemo()


def instances_per_replica(o: Offer, n: int, serving: bool) -> float | None:
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


def _instances(per_replica: float, replicas: int) -> int:
    """Instances of an offer that ``replicas`` replicas take, each ``per_replica`` of one
    (:func:`instances_per_replica`): a shared instance is rented whole (less a billionth, for rounding)."""
    return max(1, math.ceil(per_replica * replicas - 1e-9))


def checkpoint_bytes(m: ModelSpec) -> float:
    """Size of the published weights (FP8 for DeepSeek-V3, 16-bit for most): what the instance downloads."""
    return weights_bytes(m, weight_format(native_format(m.native_dtype)))


def disk_bytes(m: ModelSpec, job: Job) -> float:
    """Weights, data and checkpoints the instance must hold."""
    params = count_params(m).total
    weights = checkpoint_bytes(m)
    data = job.train_tokens * 4.0 if job.is_training else 0.0  # token ids as int32
    checkpoint = 0.0
    if job.task is Task.PRETRAIN or (job.task is Task.FINETUNE and job.method.trains_base):  # LISA too
        checkpoint = params * 16.0  # weights + optimizer states of one resumable checkpoint
    return weights + data + checkpoint


class OfferTerms:
    """Each offer's tariff in one currency and its notes, made once and shared: by the candidates of a plan, and by
    the plans of its changes (suggestions, alternatives), which price the same offers in the same currency; and the
    usable offers of each choice of market, providers and tiers, with the offers that match each GPU count."""

    def __init__(self, catalog: Catalog, c: Constraints, serving: bool, today: dt.date) -> None:
        self.catalog, self.c, self.serving, self.today = catalog, c, serving, today
        self._tariffs: dict[int, Tariff] = {}  # by id(offer)
        self._notes: dict[int, tuple[tuple[Note, ...], tuple[Note, ...]]] = {}  # by id(offer)
        self._usable: dict[tuple[Any, ...], Offers] = {}
        self._matches: dict[tuple[int, str, int, bool], tuple[Offers, Matches]] = {}
        self._least: dict[tuple[int, str, int, bool], tuple[Offers, float]] = {}  # least_per_hour
        self._fx: dict[str, tuple[float, ...]] = {}  # by the offer's currency: Catalog.fx_factors to c.currency

    def usable(self, c: Constraints, providers: set[str] | None, serving: bool) -> Offers:
        """``usable_offers(self.catalog, c, providers, serving)``, made once for each choice it depends on."""
        key = (c.market, frozenset(providers) if providers is not None else None, c.pricings, c.spot, c.tiers,
               serving)
        found = self._usable.get(key)
        if found is None:
            found = self._usable[key] = usable_offers(self.catalog, c, providers, serving)
        return found

    def matches(self, offers: Offers, gpu: str, n: int, serving: bool) -> Matches:
        """What :func:`matching` yields as three lists (the offers, the instances per replica of each, the tariff
        of each), made once for each usable set of offers and count."""
        key = (id(offers), gpu, n, serving)
        hit = self._matches.get(key)
        if hit is not None and hit[0] is offers:  # the entry holds the offers, so their id was not reused
            return hit[1]
        found, per = matching(offers, gpu, n, serving)
        tariffs = self.tariffs(found)
        self._matches[key] = (offers, (found, per, tariffs))
        return found, per, tariffs

    def least_per_hour(self, offers: Offers, gpu: str, n: int, serving: bool) -> float:
        """The least hourly price of the offers :meth:`matches` finds (inf when none), made once per count."""
        key = (id(offers), gpu, n, serving)
        hit = self._least.get(key)
        if hit is not None and hit[0] is offers:
            return hit[1]
        tariffs = self.matches(offers, gpu, n, serving)[2]
        least = min((t.per_hour for t in tariffs), default=math.inf)
        self._least[key] = (offers, least)
        return least

    def serves(self, catalog: Catalog, c: Constraints, serving: bool, today: dt.date) -> bool:
        """Whether these terms are the ones a plan of ``c`` on ``catalog`` would make."""
        return (catalog is self.catalog and c.currency == self.c.currency and c.spot_overhead == self.c.spot_overhead
                and serving == self.serving and today == self.today)

    def tariffs(self, offers: list[Offer]) -> list[Tariff]:
        """The tariff of each offer in the plan's currency (:func:`costing.tariffs`), each made once."""
        known = self._tariffs
        found = [known.get(id(o)) for o in offers]
        if None not in found:
            return found  # type: ignore[return-value]
        if found.count(None) == len(found):  # all new (a plan meets each GPU type and count once): as below
            made = tariffs(offers, self.serving, self.fx_of)
            for o, t in zip(offers, made, strict=True):
                known[id(o)] = t
            return made
        new = [o for o, t in zip(offers, found, strict=True) if t is None]
        for o, t in zip(new, tariffs(new, self.serving, self.fx_of), strict=True):
            known[id(o)] = t
        return [known[id(o)] for o in offers]

    def fx_of(self, currency: str) -> tuple[float, ...]:
        """The FX rates from ``currency`` to the plan's (:meth:`Catalog.fx_factors`), looked up once."""
        fx = self._fx.get(currency)
        if fx is None:
            fx = self._fx[currency] = self.catalog.fx_factors(currency, self.c.currency)
        return fx

    def notes(self, offer: Offer) -> tuple[tuple[Note, ...], tuple[Note, ...]]:
        """:func:`offer_notes_of` ``offer``, made once."""
        found = self._notes.get(id(offer))
        if found is None:
            found = self._notes[id(offer)] = offer_notes_of(offer, self.c, self.today)
        return found


class Pricer:
    """The pricing stage of one plan. What depends on an offer alone (its tariff in the plan's currency:
    :class:`OfferTerms`, which the plans of its changes may share) or on the model alone (start-up, disk) is made
    once, so a candidate costs a little arithmetic and two objects (its cost and itself). Its notes are words for
    the plan to show: :meth:`noted` adds them to the candidates it shows."""

    def __init__(self, catalog: Catalog, c: Constraints, offers: Offers, cal: Calibration, serving: bool = False,
                 terms: OfferTerms | None = None) -> None:
        self.catalog, self.c, self.offers = catalog, c, offers
        self.today = dt.date.today()
        self.net_gbps = cal.get("network_bytes_per_s_per_gpu") * 8 / 1e9
        if terms is None or not terms.serves(catalog, c, serving, self.today):
            terms = OfferTerms(catalog, c, serving, self.today)
        self.terms = terms
        self._model: dict[int, tuple[float, float]] = {}  # by id(model): (start-up seconds, disk bytes)
        self._startups: dict[int, float] = {}  # by id(model), for least_cost

    @classmethod
    def for_plan(cls, catalog: Catalog, c: Constraints, providers: set[str] | None, cal: Calibration, serving: bool,
                 terms: OfferTerms | None = None) -> Pricer:
        """The pricer of a plan of ``c``, its usable offers included, on ``terms`` (the plan's it changes) when
        they serve it."""
        pricer = cls(catalog, c, {}, cal, serving, terms)
        pricer.offers = pricer.terms.usable(c, providers, serving)
        return pricer

    def _model_terms(self, e: JobEstimate) -> tuple[float, float]:
        found = self._model.get(id(e.model))
        if found is None:
            startup = 0.0 if e.job.task is Task.SERVE else startup_seconds(checkpoint_bytes(e.model))  # least_cost
            found = self._model[id(e.model)] = (startup, disk_bytes(e.model, e.job))
        return found

    def least_cost(self, m: ModelSpec, job: Job, gpu: str, n: int, work_s: float = 0.0, replicas: int = 1
                   ) -> float:
        """The least any estimate of ``job`` on ``n`` × ``gpu`` can cost on the offers :meth:`columns` prices it on,
        known before the estimate: a service bills at least an hour of the instances of ``replicas`` replicas (a
        lower bound on the estimate's, such as ``job.least_replicas``), a run at least its start-up and ``work_s``
        (a lower bound on the estimate's seconds, such as ``job.least_run_seconds``) on one (the cheapest matching
        offer's hourly price for that long); inf when no offer matches."""
        serving = job.task is Task.SERVE
        if serving != self.terms.serving:
            return 0.0  # columns would make other terms: no bound
        if serving and replicas > 1:  # each offer's instances for that many replicas, as columns counts them
            _, per, tariffs = self.terms.matches(self.offers, gpu, n, serving)
            per_hour = min((t.per_hour * _instances(p, replicas) for p, t in zip(per, tariffs, strict=True)),
                           default=math.inf)
        else:
            per_hour = self.terms.least_per_hour(self.offers, gpu, n, serving)
        if per_hour == math.inf:
            return math.inf
        seconds = HOUR if serving else self._startup(m) + work_s  # as _model_terms and columns
        return cost_of_seconds(per_hour, seconds)

    def _startup(self, m: ModelSpec) -> float:
        found = self._startups.get(id(m))
        if found is None:
            found = self._startups[id(m)] = startup_seconds(checkpoint_bytes(m))
        return found

    def price(self, e: JobEstimate) -> list[Candidate]:
        """Every usable offer of ``e``'s GPU that can hold it, costed (without notes: see :meth:`noted`)."""
        return self.columns(e).candidates()

    def columns(self, e: JobEstimate) -> Priced:
        """What :meth:`price` prices, as columns: the cost on each offer, without a candidate made of each."""
        c = self.c
        serving = e.job.task is Task.SERVE
        if serving != self.terms.serving:  # a serving estimate is billed as a service: its own tariffs
            self.terms = OfferTerms(self.catalog, c, serving, self.today)
        work_s = e.seconds  # a sum over the time breakdown: read once
        if not math.isfinite(work_s) and not serving:
            return Priced(e, work_s, [], [])
        startup, disk = self._model_terms(e)
        seconds = HOUR if serving else work_s + startup
        replicas, currency, overhead = e.replicas, c.currency, c.spot_overhead
        with collector_paused():  # thousands of objects that all live on: nothing for the collector to find
            offers, per, tariffs = self.terms.matches(self.offers, e.gpu.name, e.n_gpus, serving)
            if replicas == 1 and per.count(1) == len(per):
                instances = [1] * len(per)
            else:
                instances = [_instances(p, replicas) for p in per]
            costs = bill_all(tariffs, seconds, currency, instances, disk, overhead)
        return Priced(e, seconds, costs, offers)

    def noted(self, x: Candidate) -> Candidate:
        """``x`` (priced by :meth:`price`) with its notes: start-up, a shared instance, the offer's own, a large
        fleet, an uncalibrated vendor, several nodes, a stale price, in that order."""
        if x.offer is None:
            return x  # a notebook platform's candidate comes with its notes
        e, offer, instances = x.estimate, x.offer, x.cost.instances
        serving = e.job.task is Task.SERVE
        startup, _ = self._model_terms(e)
        per_replica = instances_per_replica(offer, e.n_gpus, serving)
        assert per_replica is not None, "a priced offer holds its replica"
        own, stale = self.terms.notes(offer)
        notes: tuple[Note, ...] = (Note("startup", (startup,)),) if startup else ()
        if per_replica < 1:
            notes += (Note("shared_instance", (e.replicas, instances, int(offer.gpu_count),
                                               round(instances / per_replica))),)
        notes += own
        if e.total_gpus > LARGE_FLEET_GPUS:
            notes += (Note("large_fleet", (e.total_gpus, offer.provider)),)
        if not speed_calibrated(e.gpu.vendor, None if isinstance(e.setup, TrainSetup) else e.setup.engine):
            notes += (Note("uncalibrated", (e.gpu.vendor,)),)
        if instances > 1 and not serving:
            notes += (Note("multi_node", (instances, self.net_gbps)),)
        return replace(x, notes=notes + stale)


def offer_notes_of(offer: Offer, c: Constraints, today: dt.date) -> tuple[tuple[Note, ...], tuple[Note, ...]]:
    """Notes on ``offer`` whatever runs on it (an inferred GPU, spot preemptions, a commitment, no date), and the
    flag of a stale price (listed last; empty when the price is recent)."""
    notes: tuple[Note, ...] = ()
    if offer.gpu_mapping == "inferred":
        notes += (Note("inferred_gpu"),)
    if offer.pricing == "spot":
        notes += (Note("spot", (c.spot_overhead,)),)
    if offer.commit_months:
        notes += (Note("commitment", (offer.commit_months,)),)
    if not offer.dated:
        notes += (Note("undated", (offer, today)),)
    return notes, ((Note("stale", (offer, today)),) if offer.is_stale(today) else ())


def platform_candidates(catalog: Catalog, e: JobEstimate, c: Constraints, seconds: float) -> list[Candidate]:
    """The notebook platforms (free and cheap tiers) that can run ``e`` for ``seconds``, with their quota waits."""
    out = []
    for p in catalog.platforms:  # accounts are per market: mainland-China platforms only with --market cn
        if p.gpu != e.gpu.name or p.gpu_count < e.n_gpus or p.market != (c.market or "global"):
            continue
        if p.price_per_month is None and p.price_per_hour is None:
            continue  # no published price (pay-as-you-go compute units): it cannot be priced, and is not free
        hours = seconds / HOUR
        notes: tuple[Note, ...] = (Note("platform", (p.platform, p.tier, p.guaranteed)),)
        calendar = seconds
        if p.session_max_hours and math.ceil(hours / p.session_max_hours) > MAX_SESSIONS:
            continue  # dozens of checkpoint/resume cycles: not a realistic plan
        if not p.weekly_gpu_hours and not p.price_per_hour:
            # a free or flat-fee tier whose GPU-hours are not published (Colab, Lightning AI, trial credits):
            # only a job that fits one session is listed, and the note says the quota is an assumption
            if hours > (p.session_max_hours or UNPUBLISHED_QUOTA_HOURS):
                continue
            notes += (Note("quota_unpublished"),)
        if p.weekly_gpu_hours:
            if hours * e.n_gpus > p.weekly_gpu_hours * 4:
                continue  # more than a month of quota: not a realistic plan
            weeks = math.ceil(hours * e.n_gpus / p.weekly_gpu_hours)
            calendar = seconds if weeks <= 1 else (weeks - 1) * WEEK + seconds / weeks
            notes += (Note("weekly_quota", (hours * e.n_gpus, p.weekly_gpu_hours)),)
        if p.session_max_hours and hours > p.session_max_hours:
            notes += (Note("sessions", (p.session_max_hours, math.ceil(hours / p.session_max_hours))),)
        cost = platform_cost(catalog, p, seconds, calendar, e.n_gpus, c.currency)
        out.append(Candidate(e, seconds, cost, p.platform, None, p, calendar, notes))
    return out
