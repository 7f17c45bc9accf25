"""What a plan is made of: the user's constraints, a priced candidate, the notes it carries, and the frozen result.

The planner's stages (:mod:`~gpuplan.plan.enumeration` → :mod:`~gpuplan.plan.pricing` →
:mod:`~gpuplan.plan.ranking`) fill these types; the skins make sentences and JSON from them
(:mod:`gpuplan.plan_text`), so nothing here depends on the language.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, fields
from typing import Any

from gpuplan.catalog.schemas import PRICINGS
from gpuplan.errors import InputError, check_choice
from gpuplan.estimate.job import JobEstimate
from gpuplan.plan.costing import SPOT_OVERHEAD, Cost, hourly_rate, value_cost
from gpuplan.types import Engine, Job, Market, ModelSpec, Objective, Offer, Platform, choice

DEFAULT_TIERS = ("on-demand", "spot")  # reserved needs a commitment; marketplace hosts are third parties


@dataclass(frozen=True)
class Constraints:
    """What the user allows. ``spot``: None = both, True = spot only, False = no spot."""

    market: Market | None = None
    providers: tuple[str, ...] = ()
    gpus: tuple[str, ...] = ()
    exclude_gpus: tuple[str, ...] = ()
    max_gpus: int | None = None
    budget: float | None = None  # in ``currency``
    deadline_s: float | None = None
    spot: bool | None = None
    currency: str = "USD"
    engine: Engine | str = Engine.VLLM  # an engine, or a local runner of one ("ollama": gpuplan.estimate.runners)
    quant: str | None = None
    objective: Objective = Objective.COST
    top: int = 10
    headroom: float | None = None  # least memory margin; None: each estimate's held-out band
    platforms: bool = True
    spot_overhead: float = SPOT_OVERHEAD
    tiers: tuple[str, ...] = ()  # pricing tiers to plan with; () = DEFAULT_TIERS

    def __post_init__(self) -> None:
        object.__setattr__(self, "objective", choice(Objective, self.objective, "--objective"))
        if not isinstance(self.engine, Engine):  # a name or alias ("llama.cpp", "Ollama") as the tables read it
            from gpuplan.estimate.runners import engine_choice, runners

            name = engine_choice(self.engine)
            object.__setattr__(self, "engine", name if name in runners() else Engine(name))
        if self.market is not None:
            object.__setattr__(self, "market", choice(Market, self.market, "--market"))
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


@dataclass(frozen=True, slots=True)
class Note:
    """A fact about a candidate, by ``code`` with its ``values``; :mod:`gpuplan.plan_text` makes the sentence
    in English or Chinese (its table lists every code)."""

    code: str
    values: tuple[Any, ...] = ()


@dataclass(frozen=True, slots=True)
class Candidate:
    """One priced way to run the job."""

    estimate: JobEstimate
    seconds: float  # wall time of the work (training/batch job); 1 hour for serving (priced per hour)
    cost: Cost
    where: str  # provider or platform
    offer: Offer | None = None
    platform: Platform | None = None
    calendar_seconds: float = 0.0  # elapsed time including platform quota waits
    notes: tuple[Note, ...] = ()

    @property
    def value_score(self) -> float:
        """Money per unit of work at the offer's rate (the seeds' 性价比, performance per price). Lower is better."""
        return value_cost(self.cost, self.seconds) if self.offer is not None else self.cost.total

    @property
    def time_s(self) -> float:
        """Elapsed time: the calendar time when quota waits stretch it, else the wall time."""
        return self.calendar_seconds or self.seconds

    def label(self) -> str:
        where = self.platform.platform + " " + self.platform.tier if self.platform else self.where
        inst = self.offer.instance_type if self.offer else "notebook"
        return f"{self.estimate.describe()} on {where} ({inst})"

    def as_dict(self) -> dict[str, Any]:
        """The JSON form (made by :func:`gpuplan.plan_text.candidate_dict`; the same in every language)."""
        from gpuplan.plan_text import candidate_dict

        return candidate_dict(self)


# Candidate's slots in field order, each set by its descriptor (see offer_candidates)
_SLOTS = tuple(getattr(Candidate, f.name).__set__ for f in fields(Candidate))


def offer_candidates(e: JobEstimate, seconds: float, costs: Sequence[Cost], offers: Sequence[Offer]
                     ) -> list[Candidate]:
    """``[Candidate(e, seconds + cost.spot_overhead_seconds, cost, offer.provider, offer) for ...]`` over
    ``costs`` and ``offers`` side by side, equal to it, each made by setting its slots: a frozen dataclass's
    ``__init__`` sets each field through ``object.__setattr__``, which made this the largest part of pricing a
    large catalog (about 100,000 candidates at 200× the bundled offers; bench/speed.py)."""
    new = object.__new__
    set_estimate, set_seconds, set_cost, set_where, set_offer, set_platform, set_calendar, set_notes = _SLOTS
    out = []
    for cost, offer in zip(costs, offers, strict=True):
        x = new(Candidate)
        set_estimate(x, e)
        set_seconds(x, seconds + cost.spot_overhead_seconds)
        set_cost(x, cost)
        set_where(x, offer.provider)
        set_offer(x, offer)
        set_platform(x, None)
        set_calendar(x, 0.0)
        set_notes(x, ())
        out.append(x)
    return out


@dataclass(frozen=True, slots=True)
class Priced:
    """The candidates of one estimate on the offers that can run it, as columns side by side (``costs[i]`` is the
    cost on ``offers[i]``; ``seconds``: the work and start-up, before a spot run's overhead). A plan ranks the rows
    of its estimates by these columns (:class:`gpuplan.plan.ranking.Rows`) and makes a :class:`Candidate` only of
    the rows it keeps: at 200× the bundled offers, a plan prices about 100,000 and shows a dozen."""

    estimate: JobEstimate
    seconds: float
    costs: list[Cost]
    offers: list[Offer]

    def __len__(self) -> int:
        return len(self.costs)

    def candidate(self, i: int) -> Candidate:
        """Row ``i`` as a candidate."""
        return offer_candidates(self.estimate, self.seconds, self.costs[i:i + 1], self.offers[i:i + 1])[0]

    def candidates(self) -> list[Candidate]:
        """Every row as a candidate."""
        return offer_candidates(self.estimate, self.seconds, self.costs, self.offers)


def hourly_price_of(x: Candidate) -> float:
    """The price per instance-hour ``x`` was billed at (0 on a notebook platform)."""
    return hourly_rate(x.cost) if x.offer else 0.0


@dataclass(frozen=True)
class PlanResult:
    """A finished plan: what was asked, the ranked rows and the front, and why nothing fits when nothing does."""

    job: Job
    model: ModelSpec
    constraints: Constraints
    ranked: tuple[Candidate, ...]
    pareto: tuple[Candidate, ...]
    considered: int
    fitting_configs: int
    nothing_fits: str = ""
    suggestions: tuple[dict[str, Any], ...] = ()
    platforms: tuple[Candidate, ...] = ()  # free/cheap notebook platforms that fit
    assumptions: tuple[dict[str, str], ...] = ()
    too_long: int = 0  # priced plans over the default longest run (ranking.max_seconds), left out
    alternatives: tuple[dict[str, Any], ...] = ()  # cheaper changes to a plan that fits
    notes: tuple[Note, ...] = ()  # facts about the plan as a whole (GPU types left out, and why)

    @property
    def pick(self) -> Candidate | None:
        return self.ranked[0] if self.ranked else None

    @property
    def explanation(self) -> str:
        """Why the pick, in the current language (:func:`gpuplan.plan_text.explanation`)."""
        from gpuplan.plan_text import explanation

        return explanation(self)

    def as_dict(self) -> dict[str, Any]:
        """The JSON form (made by :func:`gpuplan.plan_text.plan_dict`; the same in every language)."""
        from gpuplan.plan_text import plan_dict

        return plan_dict(self)
