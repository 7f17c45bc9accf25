"""Ranking never recommends an absurd duration, and the rows shown are distinct choices (issue 14, item 3).

Scenarios on the bundled catalog: the assertions are properties (limits, ties, distinctness); which plans exist
to show them depends on the offers, so they plan on the frozen snapshot of the bundled prices (``frozen_catalog``).
"""

from __future__ import annotations

from collections import Counter

import pytest

from gpuplan.catalog import Catalog
from gpuplan.plan.planner import (
    COST_TIE_SHARE,
    DEFAULT_MAX_SECONDS,
    Candidate,
    Constraints,
    PlanResult,
    plan,
)
from gpuplan.plan.ranking import _choice
from gpuplan.requests import make_job
from gpuplan.units import DAY


def _time(x: Candidate) -> float:
    return x.calendar_seconds or x.seconds


def _pretrain(catalog: Catalog, model: str, tokens: float, **c: object) -> PlanResult:
    job = make_job("pretrain", tokens=tokens)
    c.setdefault("max_gpus", 2048)  # the CLI's default for pretraining
    return plan(catalog, catalog.model(model), job, Constraints(**c))  # type: ignore[arg-type]


def _latency(x: Candidate) -> float:
    assert x.estimate.speed is not None
    return x.estimate.speed.ttft_s + x.estimate.job.output_len * x.estimate.speed.tpot_s


@pytest.mark.parametrize("market", ["cn", "global"])
def test_serving_ties_go_to_the_lower_latency(frozen_catalog: Catalog, market: str) -> None:
    # Every serving candidate is priced per hour, so "the faster wins" must mean latency: on the mainland a
    # 1× A800 at ¥5.59/h (TPOT 58 ms) used to win over 2× RTX 5090 at ¥5.56/h (TPOT 22 ms) by list order.
    r = plan(frozen_catalog, frozen_catalog.model("Llama-3.1-8B"), make_job("serve", rps=5),
             Constraints(market=market, currency="USD", top=6), suggest=False)
    assert r.pick is not None
    cheapest = min(x.cost.total for x in r.ranked)
    tied = [x for x in r.ranked if x.cost.total <= cheapest * (1 + COST_TIE_SHARE)]
    assert _latency(r.pick) == pytest.approx(min(_latency(x) for x in tied))
    if len(tied) > 1:
        assert "lower latency wins" in r.explanation


def test_cost_never_picks_a_run_of_a_year_to_save_a_fraction_of_a_percent(frozen_catalog: Catalog) -> None:
    # Llama-3.1-70B on 1T tokens over MI300X: 16 GPUs take most of a year (about 590 days with the estimates of
    # 2026-12-07) and cost a fraction of a percent less than 2,048 GPUs taking days (the cost of data parallelism
    # grows only with its communication). The case: a 1,332-day 8×MI300X run ranked first because it was
    # 0.015 % cheaper. One node's ZeRO-3 run (about 1,140 days, no tensor-parallel all-reduces over xGMI) is some
    # 4 % cheaper than any TP 8 layout, so a ten-year deadline may pick it: the tie rule is what is checked there.
    r = _pretrain(frozen_catalog, "Llama-3.1-70B", 1e12, gpus=("MI300X",), objective="cost")
    assert r.pick is not None
    assert all(_time(x) <= DEFAULT_MAX_SECONDS for x in r.ranked + r.pareto + r.platforms)
    allowed = _pretrain(frozen_catalog, "Llama-3.1-70B", 1e12, gpus=("MI300X",), objective="cost",
                        deadline_s=3650 * DAY)
    cheapest = min(x.cost.total for x in allowed.pareto)
    slowest = max(_time(x) for x in allowed.pareto)
    assert slowest > 6 * DEFAULT_MAX_SECONDS  # runs of many months exist; the default limit left them out
    # a deadline allows them, and the tie still prefers the faster of plans within 2 % of the cheapest
    assert allowed.pick is not None and allowed.pick.cost.total <= cheapest * (1 + COST_TIE_SHARE)
    within = [x for x in allowed.pareto if x.cost.total <= cheapest * (1 + COST_TIE_SHARE)]
    assert _time(allowed.pick) == pytest.approx(min(_time(x) for x in within))


def test_the_limit_is_stated(frozen_catalog: Catalog) -> None:
    r = _pretrain(frozen_catalog, "Llama-3.1-8B", 1e12, objective="cost")
    assert r.as_dict()["max_seconds"] == DEFAULT_MAX_SECONDS
    assert any(a["name"] == "longest run" and "30.0 days" in a["value"] for a in r.assumptions)
    assert "costs within 2% tie; the faster wins" in r.explanation
    by_time = _pretrain(frozen_catalog, "Llama-3.1-8B", 1e12, objective="time")
    assert by_time.as_dict()["max_seconds"] is None


def test_nothing_within_the_limit_says_what_to_type(frozen_catalog: Catalog) -> None:
    # 15T tokens on at most 64 GPUs: every plan takes months
    r = _pretrain(frozen_catalog, "Llama-3.1-70B", 15e12, objective="cost", max_gpus=64)
    assert r.pick is None
    assert "longer than 30.0 days" in r.nothing_fits and "--deadline" in r.nothing_fits


def test_rows_are_distinct_choices_along_the_front(frozen_catalog: Catalog) -> None:
    # the pretraining default (fastest, up to 2,048 GPUs) once filled its ten rows with 2,048-GPU variants
    r = _pretrain(frozen_catalog, "Llama-3.1-8B", 1e12, objective="time")
    assert len(r.ranked) == 10
    choices = [_choice(x) for x in r.ranked]
    assert len(set(choices)) == len(choices)  # one row per GPU, count and pricing
    # the pick and the Pareto front's spread (at most half the rows) may share the largest size, where the fastest
    # plans are (B200 on demand and spot, B300, TPU v6e at 2,048); the rows filled in after them hold a few of one
    # multi-node size at most (ranking.distinct)
    sizes = Counter(x.estimate.total_gpus for x in r.ranked)
    assert max(sizes.values()) <= len(r.ranked) // 2 and len(sizes) >= 4
    assert len({x.estimate.gpu.name for x in r.ranked}) >= 5
    # the cheap end of the trade-off is shown too: a row within 2 % of the cheapest plan of all
    cheapest = min(x.cost.total for x in r.pareto)
    assert min(x.cost.total for x in r.ranked) <= cheapest * (1 + COST_TIE_SHARE)
    # and the rows stay in rank order (fastest first; times within 1 % tie and the cheaper ranks first: B300 at
    # 2,048 GPUs is under 1 % faster than B200 at 3.4x the cost)
    times = [_time(x) for x in r.ranked]
    assert times[0] <= min(times) * 1.01
