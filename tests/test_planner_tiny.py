"""The planner on a tiny synthetic catalog (tests/fixtures/tiny_catalog, see its README) where every expected
pick can be worked out by hand: fast-and-dear against slow-and-cheap, per-hour billing against per-second,
included disk against a storage price, spot with its +10 % time, a CNY offer converted at the newest FX rate.

The bundled catalog is always loaded first, so every plan is restricted to the fixture's providers.
"""

from __future__ import annotations

import datetime as dt
import itertools
import math
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gpuplan.catalog import Catalog, load_catalog
from gpuplan.errors import InfeasibleError
from gpuplan.estimate.params import count_params
from gpuplan.plan.buy import default, ownership
from gpuplan.plan.costing import rental_cost, startup_seconds
from gpuplan.plan.planner import Candidate, Constraints, PlanResult, hourly_price_of, plan
from gpuplan.plan_text import notes_text
from gpuplan.types import Job, Offer
from gpuplan.units import GB, HOUR, MONTH, WEEK

TINY = Path(__file__).resolve().parent / "fixtures" / "tiny_catalog"
ALL = ("TinyFast", "TinyCheap", "TinyHourly", "TinyDisk", "TinyYuan")
MODEL = "Qwen2.5-0.5B"  # small enough that every fixture configuration holds it


@pytest.fixture(scope="module")
def tiny() -> Catalog:
    return load_catalog([TINY])


def _job(samples: float = 20_000, tokens: int = 512) -> Job:
    return Job(task="finetune", method="lora", samples=samples, tokens_per_sample=tokens, seq_len=tokens)


def _plan(cat: Catalog, providers: tuple[str, ...] = ALL, samples: float = 20_000, **c: Any) -> PlanResult:
    c.setdefault("platforms", False)
    return plan(cat, cat.model(MODEL), _job(samples), Constraints(providers=providers, **c))


def _pick(r: PlanResult) -> Candidate:
    assert r.pick is not None, r.nothing_fits
    return r.pick


def _offer(cat: Catalog, provider: str, instance: str, pricing: str = "on-demand") -> Offer:
    return next(o for o in cat.offers if (o.provider, o.instance_type, o.pricing) == (provider, instance, pricing))


def _where(x: Candidate) -> tuple[str, str, int]:
    assert x.offer is not None
    return x.where, x.offer.pricing, x.estimate.total_gpus


def _time(x: Candidate) -> float:
    return x.calendar_seconds or x.seconds


# ---------------------------------------------------------------- the fixture itself


def test_fixture_loads_on_top_of_the_bundled_catalog(tiny: Catalog) -> None:
    assert {"TINY-FAST", "TINY-SLOW"} <= set(tiny.gpus)
    assert tiny.gpu("tinyfast").name == "TINY-FAST"  # gpu_aliases.csv
    assert tiny.gpu("Tiny Slow Card").name == "TINY-SLOW"  # aliases ignore case and spaces
    assert set(ALL) <= set(tiny.providers())
    assert "H100" in tiny.gpus and "AutoDL" in tiny.providers()  # bundled rows are still there
    assert not tiny.models.keys() - load_catalog().models.keys()  # models/ omitted: nothing added


# ---------------------------------------------------------------- objectives


def test_cost_picks_the_cheapest_total(tiny: Catalog) -> None:
    # TINY-SLOW at TinyCheap ($0.50/h) is slower than TINY-FAST ($8.00/h), but not 16× slower, so its total
    # is far lower: the rate difference outweighs the time difference.
    r = _plan(tiny, ("TinyFast", "TinyCheap"), spot=False, objective="cost")
    slow = next(x for x in r.ranked if x.where == "TinyCheap")
    fast = next(x for x in r.ranked if x.where == "TinyFast" and x.estimate.n_gpus == 1)
    assert fast.seconds < slow.seconds < 16 * fast.seconds  # premise: slower, but by less than the rate ratio
    assert _where(_pick(r)) == ("TinyCheap", "on-demand", 1)
    assert _pick(r).cost.total == min(x.cost.total for x in r.ranked)
    assert "cheapest" in r.explanation and "TinyCheap" in r.explanation


def test_time_picks_the_fastest(tiny: Catalog) -> None:
    # Eight TINY-FAST in one instance split the work eight ways: no single-GPU offer comes close.
    r = _plan(tiny, ("TinyFast", "TinyCheap"), spot=False, objective="time", max_gpus=8)
    assert _where(_pick(r)) == ("TinyFast", "on-demand", 8)
    assert _pick(r).estimate.gpu.name == "TINY-FAST"
    assert _time(_pick(r)) == min(_time(x) for x in r.ranked)
    assert "fastest" in r.explanation


def test_time_objective_is_not_cut_short_at_eight_gpus(tiny: Catalog) -> None:
    # Two or more tf-8x instances (16, 32, 64 TINY-FAST; --max-gpus 64) are all allowed, and each doubling
    # halves the time of this data-parallel job: the fastest plan uses the most GPUs. The planner stops
    # adding GPUs once a job takes under an hour ("more GPUs only add cost"), which is right for cost but
    # not for the time objective.
    r = _plan(tiny, ("TinyFast",), spot=False, objective="time", max_gpus=64)
    pick = _pick(r)
    assert pick.estimate.total_gpus > 8, f"time objective picked {pick.label()} in {pick.seconds:.0f} s"


def test_value_picks_the_best_rate_and_ignores_billing_rounding(tiny: Catalog) -> None:
    # The job takes ~0.25 h on TINY-SLOW. TinyHourly bills a whole started hour at $0.40 ($0.40 in total);
    # TinyCheap bills the seconds at $0.50/h (~$0.12). Cost picks TinyCheap. Value (work per money at the
    # offer's rate, without billing minimums) picks TinyHourly: the same work at $0.40/h instead of $0.50/h.
    by_cost = _plan(tiny, ("TinyCheap", "TinyHourly"), objective="cost")
    by_value = _plan(tiny, ("TinyCheap", "TinyHourly"), objective="value")
    assert _pick(by_cost).seconds < 0.8 * HOUR  # premise: under 0.8 h, so one billed hour at $0.40 costs more
    assert _pick(by_cost).where == "TinyCheap"
    assert _pick(by_value).where == "TinyHourly"
    hourly = _pick(by_value)
    assert hourly.cost.billed_seconds == HOUR
    assert hourly.cost.total == pytest.approx(0.40)
    assert hourly.value_score == pytest.approx(0.40 * hourly.seconds / HOUR)
    assert "best value" in by_value.explanation


def test_included_disk_beats_a_storage_price(tiny: Catalog) -> None:
    # TinyDisk's rate ($0.45/h) is below TinyCheap's ($0.50/h), but it includes no disk and charges
    # $200 per GB-month: the ~1 GB of weights and token ids, billed for at least an hour, cost ~$0.27 —
    # more than the whole run at TinyCheap, whose 100 GB included disk holds them for free.
    r = _plan(tiny, ("TinyCheap", "TinyDisk"), objective="cost")
    assert _pick(r).where == "TinyCheap" and _pick(r).cost.storage == 0
    disk = _pick(_plan(tiny, ("TinyDisk",), objective="cost"))  # the same choice elsewhere: not a row of its own
    m = tiny.model(MODEL)
    need = 2.0 * count_params(m).total + 4.0 * _job().train_tokens  # 16-bit weights + int32 token ids
    expected = 200 * need / GB * max(disk.cost.billed_seconds, HOUR) / MONTH
    assert disk.cost.storage == pytest.approx(expected, rel=1e-9)
    assert disk.cost.total == pytest.approx(disk.cost.compute + expected)
    # value leaves storage out, so there TinyDisk's lower rate wins
    assert _pick(_plan(tiny, ("TinyCheap", "TinyDisk"), objective="value")).where == "TinyDisk"


def test_spot_adds_ten_percent_time(tiny: Catalog) -> None:
    # The same TINY-FAST on spot ($3.00/h) runs 10 % longer (expected preemptions and restarts) than on
    # demand ($8.00/h): 1.1 × $3 = $3.30 of work per on-demand hour is still far cheaper than $8.
    r = _plan(tiny, ("TinyFast",), objective="cost", max_gpus=1)
    spot = next(x for x in r.ranked if x.offer and x.offer.pricing == "spot")
    ondemand = next(x for x in r.ranked if x.offer and x.offer.pricing == "on-demand")
    assert spot.estimate.seconds == pytest.approx(ondemand.estimate.seconds)
    run = _run_seconds(spot)  # the work plus the start-up every rented run pays
    assert ondemand.seconds == pytest.approx(run)
    assert spot.seconds == pytest.approx(1.10 * run)
    assert spot.cost.spot_overhead_seconds == pytest.approx(0.10 * run)
    assert spot.cost.compute == pytest.approx(3.00 * math.ceil(1.10 * run) / HOUR)
    assert "spot" in "; ".join(notes_text(spot))
    assert r.pick is spot
    # by time, the on-demand twin wins: same GPU, 10 % less time
    assert _pick(_plan(tiny, ("TinyFast",), objective="time", max_gpus=1)).offer.pricing == "on-demand"  # type: ignore[union-attr]
    # --spot / --no-spot keep one kind only
    assert {x.offer.pricing for x in _plan(tiny, ("TinyFast",), spot=True).ranked} == {"spot"}  # type: ignore[union-attr]
    assert "spot" not in {x.offer.pricing for x in _plan(tiny, ("TinyFast",), spot=False).ranked}  # type: ignore[union-attr]


# ---------------------------------------------------------------- costing by hand


@pytest.mark.parametrize(
    ("provider", "instance", "pricing", "seconds", "currency", "instances", "billed", "compute"),
    [
        # 3600 s granularity: a 1.2 h job bills 2 h at $0.40
        ("TinyHourly", "th-1x", "on-demand", 1.2 * HOUR, "USD", 1, 2 * HOUR, 0.80),
        # per-second billing: 1.2 h at $0.50
        ("TinyCheap", "tc-1x", "on-demand", 1.2 * HOUR, "USD", 1, 1.2 * HOUR, 0.60),
        # exactly one hour on hourly billing is one hour, not two
        ("TinyHourly", "th-1x", "on-demand", HOUR, "USD", 1, HOUR, 0.40),
        # spot: 1 h of work runs 1.1 h; 1.1 × $3.00
        ("TinyFast", "tf-1x", "spot", HOUR, "USD", 1, 1.1 * HOUR, 3.30),
        # two 8-GPU instances for half an hour: 2 × $64 × 0.5
        ("TinyFast", "tf-8x", "on-demand", 0.5 * HOUR, "USD", 2, 0.5 * HOUR, 64.0),
        # ¥3.50/h for two hours in CNY; in USD (newest rate) see the FX test below
        ("TinyYuan", "ty-1x", "on-demand", 2 * HOUR, "CNY", 1, 2 * HOUR, 7.00),
    ],
)
def test_rental_cost_by_hand(tiny: Catalog, provider: str, instance: str, pricing: str, seconds: float,
                             currency: str, instances: int, billed: float, compute: float) -> None:
    cost = rental_cost(tiny, _offer(tiny, provider, instance, pricing), seconds, currency, instances)
    assert cost.billed_seconds == pytest.approx(billed)
    assert cost.compute == pytest.approx(compute)
    assert cost.storage == 0 and cost.total == pytest.approx(compute)
    assert cost.currency == currency and cost.instances == instances


def test_storage_by_hand(tiny: Catalog) -> None:
    # 10 GB beyond the (zero) included disk at $200 per GB-month for one hour, on two instances
    cost = rental_cost(tiny, _offer(tiny, "TinyDisk", "td-1x"), HOUR, "USD", 2, disk_bytes=10 * GB)
    assert cost.storage == pytest.approx(2 * 200 * 10 * HOUR / MONTH)
    assert cost.compute == pytest.approx(2 * 0.45)
    # storage is billed for at least an hour even when the run is a minute
    short = rental_cost(tiny, _offer(tiny, "TinyDisk", "td-1x"), 60, "USD", 1, disk_bytes=10 * GB)
    assert short.storage == pytest.approx(200 * 10 * HOUR / MONTH)
    # disk within the included 100 GB costs nothing
    assert rental_cost(tiny, _offer(tiny, "TinyCheap", "tc-1x"), HOUR, "USD", 1, disk_bytes=90 * GB).storage == 0


def test_cny_offer_in_usd_uses_the_newest_fx_rate(tiny: Catalog) -> None:
    # Every price converts at the newest rate of the FX table (bundled rows included), whatever the price's
    # date, so that a ranking never depends on the display currency. The fixture's own rows (7.00 on
    # 2025-03-10, 8.00 on 2025-03-20) stay available for a dated lookup.
    assert tiny.fx_rate("USD", "CNY", dt.date(2025, 3, 15)).rate == 7.0
    newest = tiny.fx_rate("USD", "CNY").rate
    usd = _pick(_plan(tiny, ("TinyYuan",), currency="USD"))
    cny = _pick(_plan(tiny, ("TinyYuan",), currency="CNY"))
    assert usd.cost.currency == "USD" and cny.cost.currency == "CNY"
    assert hourly_price_of(usd) == pytest.approx(3.50 / newest)
    assert hourly_price_of(cny) == pytest.approx(3.50)
    assert usd.cost.total == pytest.approx(cny.cost.total / newest)
    # --market cn keeps only the mainland offer
    assert {x.where for x in _plan(tiny, ALL, market="cn", currency="CNY").ranked} == {"TinyYuan"}


# ---------------------------------------------------------------- constraints


def test_budget_drops_plans_over_it(tiny: Catalog) -> None:
    # The TINY-SLOW offers cost well under $0.50 for this job; one TINY-FAST on demand costs over $1.
    everything = _plan(tiny, ALL)
    r = _plan(tiny, ALL, budget=0.50)
    assert any(x.cost.total > 0.50 for x in everything.ranked)
    assert r.ranked and all(x.cost.total <= 0.50 for x in r.ranked + r.pareto)
    assert _pick(everything).cost.total <= 0.50 and _pick(r).label() == _pick(everything).label()


def test_deadline_drops_plans_over_it(tiny: Catalog) -> None:
    # TINY-SLOW needs ~14 min; TINY-FAST (one or eight) finishes within 10 min.
    r = _plan(tiny, ALL, deadline_s=600)
    assert r.ranked and all(_time(x) <= 600 for x in r.ranked + r.pareto)
    assert {x.estimate.gpu.name for x in r.ranked} == {"TINY-FAST"}
    # and a deadline nothing meets leaves no plan, with a reason
    none = _plan(tiny, ALL, deadline_s=1)
    assert none.pick is None and "deadline" in none.nothing_fits


def test_max_gpus_caps_the_total(tiny: Catalog) -> None:
    r = _plan(tiny, ("TinyFast",), objective="time", max_gpus=4)
    assert r.ranked and all(x.estimate.total_gpus <= 4 for x in r.ranked + r.pareto)
    assert _where(_pick(r)) == ("TinyFast", "on-demand", 1)  # the 8-GPU instance is over the cap


# ---------------------------------------------------------------- platforms


def test_free_notebook_with_a_weekly_quota(tiny: Catalog) -> None:
    # TinyNotebook gives 1 free TINY-SLOW GPU-hour a week in 2 h sessions. A ~2.3 h job fits within four
    # weeks of quota: it is listed at $0, takes three weeks of calendar time and needs a checkpoint/resume.
    probe = next(x for x in _plan(tiny, ("TinyCheap", "TinyNotebook"), samples=100_000, platforms=True).platforms
                 if x.where == "TinyNotebook")
    samples = 100_000 * 2.5 * HOUR / probe.seconds  # a job of about 2.5 h on TINY-SLOW, whatever the fit says
    r = _plan(tiny, ("TinyCheap", "TinyNotebook"), samples=samples, platforms=True)
    nb = next(x for x in r.platforms if x.where == "TinyNotebook")
    hours = nb.seconds / HOUR
    assert 2 < hours < 3  # premise
    assert nb.cost.total == 0 and nb.offer is None
    assert nb.calendar_seconds == pytest.approx(2 * WEEK + nb.seconds / 3)
    notes = "; ".join(notes_text(nb))
    assert "of 1 GPU-hours per week" in notes and "checkpoint and resume 2 times" in notes
    # the rented offers are still ranked separately
    assert [x.where for x in r.ranked] == ["TinyCheap"]
    # more than four weeks of quota is not a plan
    assert not any(x.where == "TinyNotebook" for x in _plan(tiny, ("TinyCheap", "TinyNotebook"), samples=2 * samples,
                                                              platforms=True).platforms)


def _with_platform(tmp_path: Path, row: str) -> Catalog:
    """The tiny catalog plus one platform row (a user catalog folder layered on top)."""
    extra = tmp_path / "extra"
    extra.mkdir()
    header = (Path(TINY) / "platforms.csv").read_text(encoding="utf-8").splitlines()[0]
    (extra / "platforms.csv").write_text(header + "\n" + row + "\n", encoding="utf-8")
    return load_catalog([TINY, str(extra)])


def _hours_job(cat: Catalog, hours: float) -> float:
    """Samples that make a job of about ``hours`` on one TINY-SLOW."""
    probe = next(x for x in _plan(cat, ("TinyCheap",), samples=100_000).ranked)
    return 100_000 * hours * HOUR / probe.estimate.seconds


@pytest.mark.parametrize(("hours", "listed"), [(2.0, True), (5.0, False)])
def test_a_free_tier_without_a_published_quota_is_listed_only_for_one_session(
        tmp_path: Path, hours: float, listed: bool) -> None:
    cat = _with_platform(tmp_path, "TinyMystery,free,global,TINY-SLOW,1,0,,USD,,3,,no,synthetic,2026-01-01,"
                                   "no published quota")
    r = _plan(cat, ("TinyCheap", "TinyMystery"), samples=_hours_job(cat, hours), platforms=True)
    found = [x for x in r.platforms if x.where == "TinyMystery"]
    assert bool(found) == listed
    if found:
        assert any("quota not published" in n for n in notes_text(found[0]))


def test_a_platform_needing_more_than_20_sessions_is_not_a_plan(tmp_path: Path) -> None:
    # 100 GPU-hours a week in 0.1 h sessions: a 3 h job would need 30 checkpoint/resume cycles
    cat = _with_platform(tmp_path, "TinyShort,free,global,TINY-SLOW,1,0,,USD,100,0.1,,no,synthetic,2026-01-01,"
                                   "very short sessions")
    r = _plan(cat, ("TinyCheap", "TinyShort"), samples=_hours_job(cat, 3.0), platforms=True)
    assert not any(x.where == "TinyShort" for x in r.platforms)
    short = _plan(cat, ("TinyCheap", "TinyShort"), samples=_hours_job(cat, 1.5), platforms=True)  # 15 sessions
    assert any(x.where == "TinyShort" for x in short.platforms)


# ---------------------------------------------------------------- rent or buy


# the global defaults of gpuplan/data/ownership.csv the hand figures below use (its rows give the sources)
OWNERSHIP_DEFAULTS = {"host_share": 0.35,  # DGX H100 price per GPU over the H100 street price
                      "depreciation_years": 3,  # stated assumption
                      "pue": 1.58,  # Uptime Institute Global Data Center Survey 2023
                      "electricity_price": 0.1545}  # USD/kWh, U.S. EIA Electricity Monthly Update, January 2024


def test_break_even_by_hand(tiny: Catalog) -> None:
    # TINY-SLOW at 200 h/month: $1,000 × 1.35 (the host) over 36 months = $37.50 a month; its 150 W × PUE 1.58 =
    # 0.237 kW at $0.1545/kWh = $0.0366165 an hour. The cheapest on-demand rental is TinyHourly's $0.40/h, which
    # saves $0.3633835 an hour of use over the power: owning breaks even at 37.50 / 0.3633835 = 103.197 h/month,
    # and owning costs 37.50 + 200 × 0.0366165 = $44.82 a month.
    assert {k: default(k, "global")["value"] for k in OWNERSHIP_DEFAULTS} == OWNERSHIP_DEFAULTS
    assert default("electricity_price", "global")["currency"] == "USD"
    o = ownership(tiny, tiny.gpus["TINY-SLOW"], 1, 200, "global", "USD")
    assert o.rent_offer is not None and o.rent_offer.provider == "TinyHourly"
    assert o.rent_per_hour == pytest.approx(0.40)
    assert o.capital_per_month == pytest.approx(37.50)
    assert o.power_per_hour == pytest.approx(0.0366165)
    assert o.break_even_hours_per_month == pytest.approx(103.197, abs=1e-3)
    assert o.own_per_month == pytest.approx(44.8233)


def test_buying_a_restricted_part_in_china_is_refused(tiny: Catalog) -> None:
    with pytest.raises(InfeasibleError, match="synthetic test rule"):
        ownership(tiny, tiny.gpus["TINY-FAST"], 1, 200, "cn", "CNY")


# ---------------------------------------------------------------- properties


def _steps(value: float, best: float, share: float) -> float:
    return math.floor(math.log(value / best) / math.log1p(share) + 1e-9)


def _key(objective: str, x: Candidate, best: float = 1.0) -> tuple[float, float]:
    """Times within 1 % of the fastest tie and the cheaper wins; costs (or value scores) within 2 % of the best
    tie and the faster wins; beyond, in steps of the same size from the best."""
    if objective == "time":
        return (_steps(_time(x), best, 0.01), x.cost.total)
    if objective == "value":
        return (_steps(x.value_score, best, 0.02), _time(x))
    return (_steps(x.cost.total, best, 0.02), _time(x))


def _best(objective: str, xs: list[Candidate]) -> float:
    return min(_time(x) if objective == "time" else x.value_score if objective == "value" else x.cost.total
               for x in xs)


def _run_seconds(x: Candidate) -> float:
    """Estimated work plus the start-up (boot + weights download) billed with every rented run."""
    return x.estimate.seconds + startup_seconds(2.0 * count_params(x.estimate.model).total)


def _check_cost(cat: Catalog, x: Candidate, currency: str) -> None:
    """cost = hourly price (converted at the newest FX rate) × billed hours × instances (+ storage)."""
    o = x.offer
    assert o is not None
    rate = 1.0 if o.currency == currency else cat.fx_rate(o.currency, currency).rate
    price = o.price_per_hour * rate
    gran = o.billing_granularity_s or 1.0
    work = _run_seconds(x) * (1.1 if o.pricing == "spot" else 1.0)
    assert x.seconds == pytest.approx(work)
    assert x.cost.billed_seconds == pytest.approx(math.ceil(x.seconds / gran - 1e-9) * gran)
    assert x.cost.billed_seconds >= x.seconds - 1e-6
    assert x.cost.instances == max(1, x.estimate.n_gpus // int(o.gpu_count))
    assert x.cost.compute == pytest.approx(price * x.cost.billed_seconds / HOUR * x.cost.instances)
    assert x.cost.storage >= 0
    if (o.included_disk_bytes or 0) >= 100 * GB:
        assert x.cost.storage == 0
    assert x.cost.total == pytest.approx(x.cost.compute + x.cost.storage)


@settings(max_examples=40)
@given(samples=st.integers(100, 400_000), tokens=st.sampled_from([128, 256, 512, 1024]),
       objective=st.sampled_from(["cost", "time", "value"]), spot=st.sampled_from([None, True, False]),
       currency=st.sampled_from(["USD", "CNY"]))
def test_plans_are_sorted_fit_and_priced_by_the_formula(tiny: Catalog, samples: int, tokens: int, objective: str,
                                                       spot: bool | None, currency: str) -> None:
    r = plan(tiny, tiny.model(MODEL), _job(samples, tokens),
             Constraints(providers=ALL, objective=objective, spot=spot, currency=currency, platforms=False))
    assert r.ranked
    every = plan(tiny, tiny.model(MODEL), _job(samples, tokens),  # every choice, to find the best of all
                 Constraints(providers=ALL, objective=objective, spot=spot, currency=currency, platforms=False,
                             top=10_000))
    best = _best(objective, every.ranked)
    keys = [_key(objective, x, best) for x in r.ranked]
    assert keys == sorted(keys)
    for x in r.ranked + r.pareto:
        assert x.estimate.fits and x.estimate.needed_bytes <= x.estimate.capacity_bytes
        assert x.cost.currency == currency
        _check_cost(tiny, x, currency)
    # the pick is the best of everything priced, not only of the rows shown
    assert _key(objective, _pick(r), best) == min(_key(objective, x, best) for x in every.ranked)
    # Pareto front: sorted by cost (time falling), and no member is beaten on both cost and time
    front = r.pareto
    assert front
    costs, times = [x.cost.total for x in front], [_time(x) for x in front]
    assert costs == sorted(costs) and all(a > b for a, b in itertools.pairwise(times))
    for a in front:
        for b in r.ranked:
            assert not (b.cost.total < a.cost.total - 1e-12 and _time(b) < _time(a) - 1e-9), (a.label(), b.label())
    # the cheapest plan and the fastest plan are on the front (rows show each choice's best-ranked provider)
    assert front[0].cost.total <= min(x.cost.total for x in every.ranked) + 1e-12
    assert times[-1] == pytest.approx(min(_time(x) for x in every.ranked))


def test_a_price_older_than_90_days_is_flagged(tiny: Catalog) -> None:
    for x in _plan(tiny, ALL).ranked:
        assert x.offer is not None
        age = (dt.date.today() - x.offer.as_of).days
        flagged = any("days old (over 90)" in n for n in notes_text(x))
        assert flagged == (age > 90), (x.offer.as_of, notes_text(x))
        assert x.as_dict()["offer"]["stale"] == (age > 90)
        if flagged:
            assert f"price as of {x.offer.as_of.isoformat()}, {age} days old (over 90): check it" in notes_text(x)


def test_provider_names_filter_notebook_platforms_too(tiny: Catalog) -> None:
    only_rental = _plan(tiny, ("TinyCheap",), samples=10_000, platforms=True)
    assert only_rental.ranked and not only_rental.platforms
    only_notebook = _plan(tiny, ("TinyNotebook",), samples=10_000, platforms=True)
    assert not only_notebook.ranked and [x.where for x in only_notebook.platforms] == ["TinyNotebook"]


def test_time_objective_treats_a_one_percent_difference_as_a_tie(tiny: Catalog) -> None:
    # the fastest pick is never more expensive than another plan less than 1 % slower
    r = _plan(tiny, ALL, objective="time")
    pick = _pick(r)
    for x in r.ranked[1:]:
        if _time(x) <= _time(pick) * 1.005:
            assert pick.cost.total <= x.cost.total
