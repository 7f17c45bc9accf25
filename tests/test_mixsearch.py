"""The pure-Python search for a one-bucket serving mix (gpuplan/plan/mixsearch.py): hand-computed optima, and the
same cheapest cost as the MILP (scipy.optimize.milp, HiGHS) on many random fleets."""

from __future__ import annotations

import random
import subprocess
import sys

import pytest

from gpuplan.plan import serving
from gpuplan.plan.mixsearch import cheapest_units
from gpuplan.plan.serving import Pool


def test_two_zones_each_carry_the_whole_peak() -> None:
    # 25 requests/s, one replica takes 10: a zone left alone needs 3 replicas. Zone a's replicas cost $1/h,
    # zone b's $2/h: 3 × $1 + 3 × $2 = $9 is the cheapest mix that survives either zone lost.
    units, finished = cheapest_units([10.0, 10.0], [1.0, 1.0], [1.0, 2.0], [None, None], 25.0,
                                     [frozenset(), frozenset({0}), frozenset({1})], None, 1_000)
    assert finished and units == (3, 3)


def test_three_zones_share_the_loss() -> None:
    # the same peak over three zones at $1, $1 and $5: any two zones left must hold 3 replicas. a 3 + b 3 ($6)
    # survives each loss (30, 30 and 60 requests/s left); a 2 + b 2 + c 1 also does but costs $9.
    units, finished = cheapest_units([10.0, 10.0, 10.0], [1.0, 1.0, 1.0], [1.0, 1.0, 5.0], [None, None, None],
                                     25.0, [frozenset(), frozenset({0}), frozenset({1}), frozenset({2})], None,
                                     1_000)
    assert finished and units == (3, 3, 0)


def test_a_cap_and_a_budget() -> None:
    # one zone, no failure tolerated: $1 units take 10/s, $3 units take 20/s; 25/s. Uncapped, 3 cheap ($3) win;
    # with at most 2 cheap, 1 cheap + 1 dear (30/s, $4) beats 2 dear ($6); a $3.99 budget then has none.
    args = ([10.0, 20.0], [1.0, 1.0], [1.0, 3.0])
    lost = [frozenset[int]()]
    assert cheapest_units(*args, [None, None], 25.0, lost, None, 1_000) == ((3, 0), True)
    assert cheapest_units(*args, [2, None], 25.0, lost, None, 1_000) == ((1, 1), True)
    assert cheapest_units(*args, [2, None], 25.0, lost, 3.99, 1_000) == (None, True)


def test_a_search_past_its_limit_says_so() -> None:
    _, finished = cheapest_units([10.0] * 6, [1.0] * 6, [1.0, 1.1, 1.2, 1.3, 1.4, 1.5], [None] * 6, 95.0,
                                 [frozenset()] + [frozenset({p}) for p in range(6)], None, 5)
    assert not finished


def _random_fleet(rng: random.Random) -> tuple[list[list[float]], list[float], list[Pool], list[frozenset[int]],
                                                  float | None]:
    n_cfg = rng.randint(1, 3)
    capacity = [[rng.choice([0.0, rng.uniform(0.5, 30.0)])] for _ in range(n_cfg)]
    capacity[0][0] = rng.uniform(0.5, 30.0)  # at least one configuration serves
    zones = [f"zone:z{k}" for k in range(rng.randint(1, 4))]
    pools = [Pool(rng.randrange(n_cfg), round(rng.uniform(0.3, 20.0), 2), float(rng.choice([1, 1, 2, 8])),
                  frozenset({rng.choice(zones)}), rng.choice([None, None, 0, 1, 3]))
             for _ in range(rng.randint(1, 7))]
    failures = serving.scenarios(pools, rng.choice(["zone", "none"]))
    lost = serving._maximal(frozenset(p for p, pool in enumerate(pools) if pool.domains & f) for f in failures)
    budget = rng.choice([None, None, rng.uniform(1.0, 60.0)])
    return capacity, [rng.uniform(0.1, 60.0)], pools, lost, budget


def _meets(capacity: list[list[float]], demand: float, pools: list[Pool], lost: list[frozenset[int]],
           units: tuple[int, ...]) -> bool:
    for gone in lost:
        left = [p for p in range(len(pools)) if p not in gone]
        rate = sum(units[p] * pools[p].replicas_per_unit * capacity[pools[p].config][0] for p in left)
        replicas = sum(units[p] * pools[p].replicas_per_unit for p in left)
        if rate < demand * (1 - 1e-9) or replicas < 1 - 1e-9:
            return False
    return all(p.cap_units is None or u <= p.cap_units for u, p in zip(units, pools, strict=True))


def test_same_cheapest_cost_as_the_milp_on_random_fleets() -> None:
    rng = random.Random(20261205)
    compared = infeasible = 0
    for _ in range(250):
        capacity, demand, pools, lost, budget = _random_fleet(rng)
        units, finished = cheapest_units([p.replicas_per_unit * capacity[p.config][0] for p in pools],
                                         [p.replicas_per_unit for p in pools], [p.cost_per_unit for p in pools],
                                         [p.cap_units for p in pools], demand[0], lost, budget, 200_000)
        assert finished
        milp = serving._milp_sets(capacity, demand, pools, lost, budget)
        if milp is None:  # HiGHS finds none: neither may the search
            assert units is None, (capacity, demand, pools, lost, budget)
            infeasible += 1
            continue
        assert units is not None, (capacity, demand, pools, lost, budget)
        assert _meets(capacity, demand[0], pools, lost, units)
        cost = sum(u * p.cost_per_unit for u, p in zip(units, pools, strict=True))
        # the same cost (ties may pick other pools); HiGHS stops within its 0.1 % gap, never below the optimum
        assert cost == pytest.approx(milp.cost_per_hour, rel=serving.MIP_GAP), (units, milp.units)
        assert cost <= milp.cost_per_hour * (1 + 1e-9)
        compared += 1
    assert compared > 120 and infeasible > 5  # both kinds of case occurred


def test_a_plain_serving_plan_imports_no_scipy() -> None:
    code = ("import sys; from gpuplan.catalog import load_catalog; from gpuplan.plan.serving import "
            "ServeRequest, plan_serving; c = load_catalog(); p = plan_serving(c, c.model('Qwen2.5-7B'), "
            "ServeRequest(5.0)); assert p.fleet is not None; print(sorted(m for m in sys.modules "
            "if m.split('.')[0] in ('scipy', 'numpy', 'highspy')))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"
