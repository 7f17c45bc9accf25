"""The ranking stage: order priced candidates by the objective with ties (estimates carry bands of tens of
percent), keep the plans within the limits, the Pareto front of cost and time, and the distinct choices to show."""

from __future__ import annotations

import math
from bisect import bisect_right
from collections import Counter
from collections.abc import Callable, Iterable
from typing import Any

from gpuplan.plan.candidates import Candidate, Constraints, Priced
from gpuplan.plan.costing import Cost, value_cost
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


class Rows:
    """A plan's priced rows as columns (each estimate's :class:`Priced` block, one after another): the stage ranks,
    filters and finds the Pareto front on these, by the rules the functions above apply to candidates, and makes
    a :class:`Candidate` only of the rows a plan shows or reads (:meth:`candidate`, each made once)."""

    def __init__(self, blocks: list[Priced]) -> None:
        self.blocks = [b for b in blocks if len(b)]
        self.starts: list[int] = []  # the first row of each block
        self.costs: list[Cost] = []
        self.times: list[float] = []  # a row's time_s: the work, start-up and a spot run's overhead
        for b in self.blocks:
            self.starts.append(len(self.costs))
            self.costs += b.costs
            s = b.seconds
            self.times += [s + cost[5] for cost in b.costs]  # cost[5]: Cost.spot_overhead_seconds
        self.totals = [cost[0] + cost[1] for cost in self.costs]  # Cost.total: compute + storage
        self._made: dict[int, Candidate] = {}

    def __len__(self) -> int:
        return len(self.costs)

    def _where(self, i: int) -> tuple[Priced, int]:
        k = bisect_right(self.starts, i) - 1
        return self.blocks[k], i - self.starts[k]

    def candidate(self, i: int) -> Candidate:
        found = self._made.get(i)
        if found is None:
            b, j = self._where(i)
            found = self._made[i] = b.candidate(j)
        return found

    def _per_row(self, of_block: Callable[[Priced, int], Any]) -> list[Any]:
        """``of_block(block, row in it)`` for every row, in order."""
        return [of_block(b, j) for b in self.blocks for j in range(len(b))]

    def speeds(self) -> list[float]:
        """What "faster" means when ranking, for every row: the wall time of a job; for serving, whose candidates
        are all priced per hour, a request's latency at the planned load (TTFT + output tokens × TPOT)."""
        out: list[float] = []
        for b, start in zip(self.blocks, self.starts, strict=True):
            e = b.estimate
            if e.job.task is Task.SERVE and e.speed is not None:
                out += [e.speed.ttft_s + e.job.output_len * e.speed.tpot_s] * len(b)
            else:
                out += self.times[start:start + len(b)]
        return out

    def keep_within(self, c: Constraints) -> list[int]:
        """The rows :func:`keep_within` keeps, in their order."""
        limit, budget, totals, times = max_seconds(c), c.budget, self.totals, self.times
        out: list[int] = []
        for b, start in zip(self.blocks, self.starts, strict=True):
            if c.max_gpus is not None and b.estimate.total_gpus > c.max_gpus:
                continue
            out += [i for i in range(start, start + len(b)) if (budget is None or totals[i] <= budget)
                    and (limit is None or times[i] <= limit)]
        return out

    def sort_key(self, c: Constraints, kept: list[int]) -> Callable[[int], Any]:
        """Sort key of the rows ``kept``: the objective in tie steps from the best row, then the other measure,
        then cost; at the same cost (and time) a dated price ranks above one whose source states no date."""
        if not kept:
            return lambda i: 0
        totals = self.totals
        speed = self.speeds()
        undated = self._per_row(lambda b, j: not b.offers[j].dated)
        if c.objective is Objective.TIME:
            fastest = min(speed[i] for i in kept)
            return lambda i: (_steps(speed[i], fastest, TIME_TIE), totals[i], undated[i])
        if c.objective is Objective.VALUE:
            costs, times = self.costs, self.times
            value = {i: value_cost(costs[i], times[i]) for i in kept}
            best = min(value.values())
            return lambda i: (_steps(value[i], best, COST_TIE), speed[i], totals[i], undated[i])
        cheapest = min(totals[i] for i in kept)
        return lambda i: (_steps(totals[i], cheapest, COST_TIE), speed[i], totals[i], undated[i])

    def choices(self, ranked: list[int]) -> list[Candidate]:
        """The best-ranked row of each choice (:func:`_choice`) in ``ranked``, as candidates: what
        :func:`distinct` shows from."""
        choice = self._per_row(lambda b, j: (b.estimate.gpu.name, b.estimate.n_gpus, b.offers[j].pricing))
        first: dict[tuple[Any, ...], int] = {}
        for i in ranked:
            first.setdefault(choice[i], i)
        return [self.candidate(i) for i in first.values()]

    def pareto_front(self, kept: list[int]) -> list[Candidate]:
        """:func:`pareto_front` of the rows ``kept``."""
        totals, times = self.totals, self.times
        front: list[int] = []
        for i in sorted(kept, key=lambda i: (totals[i], times[i])):
            if not front or times[i] < times[front[-1]] - 1e-9:
                front.append(i)
        return [self.candidate(i) for i in front]

    def fastest(self) -> Candidate | None:
        """The row of least time (the first of equals)."""
        times = self.times
        return self.candidate(min(range(len(times)), key=times.__getitem__)) if times else None
