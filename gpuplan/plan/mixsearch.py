"""The serving mix of one request size solved exactly in pure Python, so a plain ``plan serve`` needs no MILP solver
(importing scipy.optimize costs a CLI about 1.2 s of CPU, several times the rest of the command).

With one bucket the mix is a covering problem: choose integer units u_p ≥ 0 (at most ``cap_p``) of each pool p, at
cost c_p each, so that in every failure scenario f the pools left, S_f, hold

    Σ_{p ∈ S_f} a_p u_p ≥ D      (a_p: requests/s one unit takes, D the peak demand)
    Σ_{p ∈ S_f} r_p u_p ≥ 1      (r_p: replicas per unit; one replica stays up however little the traffic)

and Σ c_p u_p is least. :func:`cheapest_units` searches it depth first (branch and bound): pools in order of cost
per request/s, each given its largest useful count first (more than ⌈D / a_p⌉ units of one pool never helps, as the
pool alone then meets every scenario it is in). A partial choice is dropped when its cost plus a lower bound on what
is still missing reaches the best full choice found: for each scenario separately, the cheapest *fractional* cover
of its missing demand and of its missing replica by the pools not yet decided (the greedy answer of a fractional
knapsack, which is exact for it), the largest of these bounds being a bound for all scenarios at once. The search is
exact; it gives up (None) after ``node_limit`` partial choices, and the caller then solves the MILP.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence

REL_TOL = 1e-9  # a scenario's demand counts as met within this share (floating-point sums of capacities)


def cheapest_units(unit_rates: Sequence[float], unit_replicas: Sequence[float], unit_costs: Sequence[float],
                   caps: Sequence[int | None], demand: float, lost_sets: Sequence[frozenset[int]],
                   budget: float | None, node_limit: int) -> tuple[tuple[int, ...] | None, bool]:
    """(units per pool of the cheapest mix, or None when none exists within ``budget``; whether the search
    finished within ``node_limit`` nodes — if not, the first item means nothing)."""
    n = len(unit_costs)
    order = sorted(range(n), key=lambda p: (unit_costs[p] / unit_rates[p] if unit_rates[p] > 0 else math.inf, p))
    upper = [_useful_units(unit_rates[p], unit_replicas[p], caps[p], demand) for p in order]
    rate = [unit_rates[p] for p in order]
    reps = [unit_replicas[p] for p in order]
    cost = [unit_costs[p] for p in order]
    # present[f][k]: whether the k-th pool (in search order) is left in scenario f
    present = [[p not in lost for p in order] for lost in lost_sets]
    need_rate = demand * (1 - REL_TOL)
    search = _Search(rate, reps, cost, upper, present, need_rate, node_limit)
    limit = math.inf if budget is None else budget * (1 + REL_TOL)
    found = search.run(limit)
    if found is None:
        return None, search.nodes <= node_limit
    units = [0] * n
    for k, u in enumerate(found):
        units[order[k]] = u
    return tuple(units), search.nodes <= node_limit


def _useful_units(rate: float, replicas: float, cap: int | None, demand: float) -> int:
    """The most units of one pool a cheapest mix can rent: enough for the pool alone to meet the demand and keep a
    replica up, never more than its cap."""
    most = max(math.ceil(demand / rate) if rate > 0 else 0, math.ceil(1 / replicas) if replicas > 0 else 0)
    return most if cap is None else min(most, cap)


class _Search:
    """Depth-first branch and bound over the pools in order; ``best`` is the cheapest full choice so far."""

    def __init__(self, rate: list[float], reps: list[float], cost: list[float], upper: list[int],
                 present: list[list[bool]], need_rate: float, node_limit: int) -> None:
        self.rate, self.reps, self.cost, self.upper, self.present = rate, reps, cost, upper, present
        self.need_rate, self.node_limit = need_rate, node_limit
        self.nodes = 0
        self.best_cost = math.inf
        self.best: list[int] | None = None
        n = len(cost)
        # pools after position k, cheapest per replica first, for the replica part of the bound
        by_replica_cost = sorted(range(n), key=lambda k: (cost[k] / reps[k] if reps[k] > 0 else math.inf, k))
        # per position k, the pools the bound may still take (k onwards, with something to give), made once rather
        # than at each of the search's nodes for each scenario
        self.rate_pools = [_pools(range(k, n), rate, cost, upper) for k in range(n + 1)]
        self.reps_pools = [_pools([j for j in by_replica_cost if j >= k], reps, cost, upper) for k in range(n + 1)]

    def run(self, limit: float) -> list[int] | None:
        self.best_cost = limit
        n_f = len(self.present)
        self._branch(0, [0] * len(self.cost), 0.0, [0.0] * n_f, [0.0] * n_f)
        return self.best

    def _branch(self, k: int, units: list[int], spent: float, got_rate: list[float], got_reps: list[float]) -> None:
        self.nodes += 1
        if self.nodes > self.node_limit:
            return
        if self._pruned(k, spent, got_rate, got_reps):
            return
        if k == len(self.cost):
            self.best_cost, self.best = spent, list(units)
            return
        rate, reps, present = self.rate[k], self.reps[k], self.present
        for u in range(self.upper[k], -1, -1):
            units[k] = u
            new_rate = [g + u * rate if present[f][k] else g for f, g in enumerate(got_rate)]
            new_reps = [g + u * reps if present[f][k] else g for f, g in enumerate(got_reps)]
            self._branch(k + 1, units, spent + u * self.cost[k], new_rate, new_reps)
            if self.nodes > self.node_limit:
                return
        units[k] = 0

    def _pruned(self, k: int, spent: float, got_rate: list[float], got_reps: list[float]) -> bool:
        """Whether no full choice below this partial one can be kept: some scenario cannot be met even with pools k
        onwards at their most, or ``spent`` plus a lower bound on what is still missing (the largest over scenarios
        of the cheapest fractional cover of what the scenario misses) reaches the best so far. The scenarios are
        looked at one by one and the answer given as soon as it is known: a larger bound only prunes more."""
        best = 0.0
        rate_pools, reps_pools = self.rate_pools[k], self.reps_pools[k]
        for f, present in enumerate(self.present):
            part = _fractional(self.need_rate - got_rate[f], rate_pools, present)
            if part is None:
                return True
            reps = _fractional(1 - REL_TOL - got_reps[f], reps_pools, present)
            if reps is None:
                return True
            best = max(best, part, reps)
            if self._reaches(spent + best):
                return True
        return False

    def _reaches(self, cost: float) -> bool:
        """Whether a choice of this cost is no better than the best so far (or, before any, over the budget)."""
        if self.best is None:  # within the budget, if any
            return cost > self.best_cost
        return cost >= self.best_cost * (1 - REL_TOL)  # no cheaper: the first of equal mixes is kept


_Pool = tuple[int, float, float, float, float]  # position, amount per unit, cost per unit, amount and cost at most


def _pools(positions: Iterable[int], amount: list[float], cost: list[float], upper: list[int]) -> tuple[_Pool, ...]:
    """The pools of ``positions`` (in that order) that can give something: a positive amount and units to rent."""
    return tuple((k, amount[k], cost[k], upper[k] * amount[k], upper[k] * cost[k]) for k in positions
                 if amount[k] > 0 and upper[k] != 0)


def _fractional(missing: float, pools: tuple[_Pool, ...], present: list[bool]) -> float | None:
    """The cheapest cost of ``missing`` from ``pools`` (taken in the order given, cheapest per amount first) that
    are ``present``, units being divisible; None when all of them do not make it."""
    if missing <= 0:
        return 0.0
    total = 0.0
    for k, amount, cost, most, most_cost in pools:
        if not present[k]:
            continue
        if most >= missing:
            return total + missing / amount * cost
        total += most_cost
        missing -= most
    return None
