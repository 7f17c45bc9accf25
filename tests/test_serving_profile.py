"""A daily traffic profile: 24 hourly rates read and checked (bad ones refused naming --profile / profile), the
fleet sized for its peak, and the day's cost of following it (the peak fleet scaled down by groups) against the
peak fleet kept all day."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient

from gpuplan.catalog import load_catalog
from gpuplan.errors import InputError
from gpuplan.plan import traffic
from gpuplan.plan.serving import ServePlan, Targets, parse_buckets, plan_serving, serve_request
from gpuplan.plan.traffic import DayCost, check_profile, parse_profile
from gpuplan.web.app import create_app

Cli = Callable[..., Any]
STEP = (10.0,) * 12 + (2.0,) * 12  # 12 h at 10 req/s, 12 h at 2 req/s: mean 6
LESSON = "2,2,1,1,1,1,2,4,8,10,12,12,11,10,10,11,12,12,10,8,6,4,3,2"


def test_a_day_is_priced_hour_by_hour() -> None:
    # 12 h at $3/h and 12 h at $1/h following the profile; the peak fleet costs $3/h all day
    d = DayCost(STEP, (3.0,) * 12 + (1.0,) * 12, 3.0, 1300.0)
    assert d.autoscaled_per_day == pytest.approx(48.0)
    assert d.fixed_per_day == pytest.approx(72.0)
    # 6 req/s mean × 86,400 s × 1,300 tokens = 673,920,000 tokens a day
    assert d.tokens_per_day == pytest.approx(673_920_000)
    assert d.per_million_tokens(d.fixed_per_day) == pytest.approx(72 / 673.92)
    assert d.as_dict()["saving_per_day"] == pytest.approx(24.0)


def test_rates_come_from_a_list_or_a_csv_file(tmp_path: Path) -> None:
    assert parse_profile(LESSON)[9] == 10.0 and len(parse_profile(LESSON)) == 24
    f = tmp_path / "day.csv"
    rows = [f"{h},{r}" for h, r in enumerate(STEP)]
    f.write_text("hour,rps\n" + "\n".join(reversed(rows)) + "\n", encoding="utf-8")  # any order, with a header
    assert parse_profile(str(f)) == STEP


@pytest.mark.parametrize(("values", "words"), [
    ([1.0] * 23, "24 hourly rates; 23 were given"),
    ([1.0] * 23 + [-1.0], "hour 23 has a rate of -1"),
    ([0.0] * 24, "every hour of the profile is 0"),
    ([1.0] * 23 + [float("nan")], "hour 23 has a rate of nan"),
    ([float("inf")] + [1.0] * 23, "hour 0 has a rate of inf"),
])
def test_bad_profiles_are_refused_naming_the_field(values: list[float], words: str) -> None:
    with pytest.raises(InputError, match=words) as err:
        check_profile(values)
    assert err.value.field == "--profile" and err.value.fix


@pytest.mark.parametrize(("text", "words"), [
    ("hour,rps\n0,1\n0,2\n", "row 2 has hour 0"),  # twice
    ("0,1\n1,x\n", "row 2 '1,x' is not hour,rps"),
    ("\n".join(f"{h},1" for h in range(23)), "hours 23 are missing"),
])
def test_bad_csv_files_are_refused_naming_the_row(tmp_path: Path, text: str, words: str) -> None:
    f = tmp_path / "day.csv"
    f.write_text(text, encoding="utf-8")
    with pytest.raises(InputError, match=words):
        parse_profile(str(f))


def test_a_profile_and_a_mean_rate_together_are_refused() -> None:
    with pytest.raises(InputError, match="both a mean rate") as err:
        serve_request(3.0, None, parse_buckets((), 1000, 300), Targets(), 99.9, profile=STEP)
    assert err.value.field == "--profile"


def _plan(profile: tuple[float, ...], peak: float | None = None) -> ServePlan:
    cat = load_catalog()
    r = serve_request(None, peak, parse_buckets((), 1000, 300), Targets(), 99.9, profile=profile)
    return plan_serving(cat, cat.model("Qwen2.5-7B"), r)


def test_the_fleet_is_sized_for_the_profiles_peak_and_a_fixed_fleet_costs_24_peak_hours() -> None:
    p = _plan(STEP)
    assert p.request.mean_rps == pytest.approx(6.0) and p.request.peak == 10.0
    assert p.fleet is not None and p.day is not None
    assert p.day.fixed_per_day == pytest.approx(24 * p.fleet.cost_per_hour)
    busy, quiet = p.day.hourly_cost[0], p.day.hourly_cost[-1]
    assert busy == pytest.approx(p.fleet.cost_per_hour)  # the busiest hours run the whole peak fleet
    assert quiet <= busy
    assert p.day.autoscaled_per_day == pytest.approx(12 * busy + 12 * quiet)
    assert p.day.tokens_per_day == pytest.approx(6 * 86_400 * 1300)


def test_a_peak_above_the_profiles_busiest_hour_sizes_the_fleet() -> None:
    p = _plan(STEP, peak=20.0)
    assert p.request.peak == 20.0
    assert p.fleet is not None and p.day is not None
    # every hour of the profile is below the peak: each runs a part of the fleet at most as dear as all of it
    assert all(c <= p.fleet.cost_per_hour + 1e-9 for c in p.day.hourly_cost)


def test_a_flat_profile_saves_nothing() -> None:
    p = _plan((5.0,) * 24)
    assert p.day is not None and p.fleet is not None
    assert p.day.autoscaled_per_day == pytest.approx(p.day.fixed_per_day)
    # no hour runs less than the whole fleet, so the autoscalers' minimum is the whole fleet (it was 0 per group)
    assert p.day.quiet_replicas == tuple(g.replicas for g in p.fleet.groups)
    assert all(n >= 1 for n in p.day.quiet_replicas)


def test_the_exported_autoscalers_may_scale_down_to_the_quietest_hour(cli: Cli) -> None:
    r = cli("plan", "serve", "Qwen2.5-7B", "--profile", LESSON, "--export", "k8s", "--json")
    assert r.returncode == 0, r.stderr
    data = json.loads(r.stdout)
    quiet = data["daily_profile"]["quiet_hour_replicas"]
    hpas = [d for d in data["export"]["document"] if d["kind"] == "HorizontalPodAutoscaler"]
    deps = [d for d in data["export"]["document"] if d["kind"] == "Deployment"]
    assert [h["spec"]["minReplicas"] for h in hpas] == [max(1, q) for q in quiet]
    assert [d["spec"]["replicas"] for d in deps] == [g["replicas"] for g in data["fleet"]["groups"]]
    assert "Daily profile" not in r.stdout  # JSON only on stdout


def test_cli_table_reports_both_ways(cli: Cli) -> None:
    r = cli("plan", "serve", "Qwen2.5-7B", "--profile", LESSON)
    assert r.returncode == 0, r.stderr
    assert "Daily profile" in r.stdout and "/day for the peak fleet all day" in r.stdout


@pytest.fixture(scope="module")
def client() -> TestClient:
    return TestClient(create_app())


def test_api_takes_a_profile_and_refuses_a_bad_one(client: TestClient) -> None:
    ok = client.post("/api/serve", json={"model": "Qwen2.5-7B", "profile": list(STEP)})
    assert ok.status_code == 200, ok.text
    day = ok.json()["daily_profile"]
    assert day["fixed_per_day"] == pytest.approx(24 * ok.json()["cost_per_hour_peak"])
    assert day["method"] == "peak fleet scaled down by groups"
    bad = client.post("/api/serve", json={"model": "Qwen2.5-7B", "profile": [1.0] * 23})
    assert bad.status_code == 400 and bad.json()["field"] == "profile"
    both = client.post("/api/serve", json={"model": "Qwen2.5-7B", "rps": 3, "profile": list(STEP)})
    assert both.status_code == 400 and both.json()["field"] == "profile"


@pytest.mark.parametrize("content", ['"' + "x" * 200_000 + "\n", "0,1\x00\n", "0,1\n" * 20_000])
def test_a_profile_file_that_is_not_a_small_csv_is_refused_naming_the_option(tmp_path, content) -> None:  # type: ignore[no-untyped-def]
    """A field over the csv module's limit, a NUL byte, a file far longer than 24 rows (the CLI fuzzer found
    the first: an internal error)."""
    path = tmp_path / "profile.csv"
    path.write_text(content, encoding="utf-8")
    with pytest.raises(InputError) as err:
        traffic.parse_profile(str(path))
    assert err.value.field == "--profile"


def test_an_overlong_profile_text_is_not_taken_for_a_path() -> None:
    with pytest.raises(InputError) as err:
        traffic.parse_profile("a" * 5000)
    assert err.value.field == "--profile" and "neither a file nor" in err.value.message
