"""The ranking stage: order priced candidates by the objective with ties (estimates carry bands of tens of
percent), keep the plans within the limits, the Pareto front of cost and time, and the distinct choices to show."""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Callable, Iterable
from typing import Any

from gpuplan.plan.candidates import Candidate, Constraints
from gpuplan.types import Objective, Task
from gpuplan.units import DAY

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
    return DEFAULT_MAX_SECONDS if c.objective.by_money else None


def _steps(value: float, best: float, tie: float) -> float:
    """Tie steps of ``value`` above ``best`` (0 within the tie; counted from the best, so two values 0.1 % apart
    never straddle a step boundary at the top)."""
    s = math.log(max(value, 1e-12) / max(best, 1e-12)) / tie
    return math.floor(s + 1e-9) if math.isfinite(s) else math.inf


def _speed(x: Candidate) -> float:
    """What "faster" means when ranking: the wall time of a job; for serving, whose candidates are all priced
    per hour, a request's latency at the planned load (TTFT + output tokens × TPOT)."""
    e = x.estimate
    if e.job.task is Task.SERVE and e.speed is not None:
        return e.speed.ttft_s + e.job.output_len * e.speed.tpot_s
    return x.time_s


def sort_key(c: Constraints, cands: list[Candidate]) -> Callable[[Candidate], Any]:
    """Sort key: the objective in tie steps from the best candidate, then the other measure, then cost."""
    if not cands:
        return lambda x: 0
    if c.objective is Objective.TIME:
        fastest = min(_speed(x) for x in cands)
        return lambda x: (_steps(_speed(x), fastest, TIME_TIE), x.cost.total, _undated(x))
    if c.objective is Objective.VALUE:
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
    for x in sorted(cands, key=lambda x: (x.cost.total, x.time_s)):
        if not front or x.time_s < front[-1].time_s - 1e-9:
            front.append(x)
    return front


def _choice(x: Candidate) -> tuple[Any, ...]:
    """What a user chooses: GPU, count and pricing. The same on another provider is a variant of it (a
    notebook platform is a choice of its own)."""
    where = (x.platform.platform, x.platform.tier) if x.platform else (x.offer.pricing if x.offer else "",)
    return (x.estimate.gpu.name, x.estimate.n_gpus, *where)


def distinct(ranked: list[Candidate], top: int) -> list[Candidate]:
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


def keep_within(xs: Iterable[Candidate], c: Constraints) -> list[Candidate]:
    """The candidates :func:`within_limits` keeps, in their order."""
    limit = max_seconds(c)
    return [x for x in xs if (c.budget is None or x.cost.total <= c.budget) and (limit is None or x.time_s <= limit)
            and (c.max_gpus is None or x.estimate.total_gpus <= c.max_gpus)]


def within_limits(x: Candidate, c: Constraints) -> bool:
    if c.budget is not None and x.cost.total > c.budget:
        return False
    limit = max_seconds(c)
    if limit is not None and x.time_s > limit:
        return False
    return c.max_gpus is None or x.estimate.total_gpus <= c.max_gpus
