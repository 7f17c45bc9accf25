"""Mainland-China offers as a buyer there uses them: which clouds and parts ``--market cn`` can plan on, that a
mainland plan only ever rents mainland offers, that a spot or subscription (包月/包年) price is used only when
asked, that a subscription price is its monthly figure spread over the month, and that an undated price keeps the
day it was read."""

from __future__ import annotations

import datetime as dt
import re
from typing import Any

import pytest

from gpuplan.catalog import Catalog

# Clouds and GPU rental platforms with mainland regions that the bundled data prices (AWS China is AWS's own
# mainland partition), with the number of mainland rows each had on 2026-12-05, counted in its offers file.
# Huawei Cloud is missing: no price page of it could be read; Volcengine's only two rows came from a seed
# document's table, which names no page, and were removed (see gpuplan/data/README.md).
MAINLAND_ROWS = {
    "Tencent Cloud": 81,  # tencent.csv: mainland price overview (CNY) and the international site's (USD)
    "AWS China": 75,  # aws_china.csv: Beijing and Ningxia, on-demand and 1-year reserved
    "JD Cloud": 72,  # jdcloud.csv: four regions of its price overview, 按量 and 包月
    "Alibaba Cloud": 31,  # aliyun.csv
    "UCloud Compshare": 19,  # compshare.csv: API example (on-demand, spot) and its 计费概览 table (按量, 包月)
    "Featurize": 10,  # featurize.csv: five cards of its 价格表, each 按量 and 月租（30天）
    "Baidu AI Cloud": 3,  # baidu.csv: BML notebook V100, EasyDL P40 and V100
    "AutoDL": 1,  # autodl.csv: one host's API example
}
MAINLAND_PROVIDERS = set(MAINLAND_ROWS)

# Parts a buyer in mainland China rents whose price the bundled data holds for a mainland region. L20, the
# A800 PCIe card and the RTX 4090D had only rows whose source could not be identified; those rows are gone and
# the parts stay unpriced in mainland China until a provider's own page of them is read (gpuplan/data/README.md).
MAINLAND_PARTS = ["A100-80GB", "A100", "A800-80GB", "H20", "A10", "A10G", "T4", "V100", "V100-32GB", "P40",
                  "RTX4090", "RTX5090", "RTX3090", "RTX3080", "RTX2080Ti", "A6000"]

# 292 mainland rows on 2026-12-05: 181 on-demand, 1 spot, 110 subscriptions (the six seed-document rows gone,
# Alibaba Cloud's PAI Designer P100 card-hour and Baidu AI Cloud's two EasyDL training prices added on 2026-12-02,
# Featurize's ten rows on 2026-12-05); issue 12 asks for at least 250 from at least 8 providers
MIN_MAINLAND_OFFERS = 292
HOURS_PER_MONTH = 730  # a subscription price is recorded per hour over a 730-hour month (gpuplan.plan.buy uses 730)
MONTHLY = re.compile(r"([\d.]+) (?:CNY|RMB)/month")


def test_mainland_offers_come_from_eight_providers(catalog: Catalog) -> None:
    providers = {o.provider for o in catalog.offers if o.market == "cn"}
    assert providers >= MAINLAND_PROVIDERS
    assert len(providers) >= 8


@pytest.mark.parametrize(("provider", "rows"), sorted(MAINLAND_ROWS.items()))
def test_mainland_rows_per_provider(catalog: Catalog, provider: str, rows: int) -> None:
    # a provider's mainland rows never silently shrink: a row removed on purpose lowers the count here too
    assert sum(o.market == "cn" and o.provider == provider for o in catalog.offers) >= rows


def test_mainland_rows_add_up_to_issue_12s_floor(catalog: Catalog) -> None:
    # issue 12: at least 250 mainland offers from at least 8 providers; the table above adds up to 292
    assert sum(MAINLAND_ROWS.values()) == MIN_MAINLAND_OFFERS
    assert len(MAINLAND_ROWS) >= 8 and MIN_MAINLAND_OFFERS >= 250


def test_a_featurize_30_day_rental_bills_its_whole_term(catalog: Catalog) -> None:
    # Featurize's 价格表: a 3090 instance costs 3.6 CNY an hour pay-as-you-go, or 1500 CNY for a 30-day rental
    # paid in advance. A 10-hour run costs 10 x 3.6 = 36 CNY on demand, but the whole 1500 CNY on the rental
    # (recorded as 1500 / 730 = 2.0548 CNY/h; gpuplan's month is the mean Gregorian 730.5 h, so the term bills
    # 2.0548 x 730.5 = 1501.03 CNY, within 0.1 % of the price paid).
    from gpuplan.plan.costing import bill, tariff

    rows = {o.pricing: o for o in catalog.offers if o.provider == "Featurize" and o.gpu == "RTX3090"}
    assert bill(tariff(catalog, rows["on-demand"], "CNY"), 10 * 3600, "CNY").total == pytest.approx(36.0)
    assert bill(tariff(catalog, rows["reserved"], "CNY"), 10 * 3600, "CNY").total == pytest.approx(1500, rel=1e-3)


def test_mainland_offers_are_many_and_tiered(catalog: Catalog) -> None:
    cn = [o for o in catalog.offers if o.market == "cn"]
    assert len(cn) >= MIN_MAINLAND_OFFERS
    assert {o.pricing for o in cn} >= {"on-demand", "spot", "reserved"}
    # every subscription row names its term: a month (包月) or a year (AWS China's 1-year reserved instances)
    assert {o.commit_months for o in cn if o.pricing == "reserved"} == {1, 12}
    assert all(o.commit_months is None for o in cn if o.pricing != "reserved")
    # a subscription is not billed by the second: its rows do not carry the on-demand billing granularity
    assert all(o.billing_granularity_s is None for o in cn if o.pricing == "reserved")


def test_compshare_on_demand_rows_bill_as_its_terms_say(catalog: Catalog) -> None:
    # 优云智算's 计费方式说明: 按量 instances are billed by the second; its providers.csv row says the same
    terms = catalog.provider("UCloud Compshare")
    rows = [o for o in catalog.offers if o.provider == "UCloud Compshare" and o.pricing == "on-demand"]
    assert len(rows) >= 9
    assert {o.billing_granularity_s for o in rows} == {terms.min_billing_s} == {1}


def test_a_monthly_price_is_spread_over_a_730_hour_month(catalog: Catalog) -> None:
    # e.g. UCloud Compshare's H20 包月 4500 CNY/month is 6.1644 CNY/h; Tencent's GT4.4XLARGE96 13748 is 18.8329
    checked = 0
    for o in catalog.offers:
        if o.market == "cn" and o.pricing == "reserved" and o.commit_months == 1:
            m = MONTHLY.search(o.notes or "")
            assert m, f"{o.file}:{o.line}: a monthly row states its monthly price in the notes"
            assert o.price_per_hour * HOURS_PER_MONTH == pytest.approx(float(m.group(1)), abs=0.04)
            assert o.price_per_hour < _on_demand(catalog, o).price_per_hour  # a month costs less per hour
            checked += 1
    assert checked >= 70


def _on_demand(catalog: Catalog, reserved: Any) -> Any:
    same = [o for o in catalog.offers if (o.provider, o.instance_type, o.region, o.pricing)
            == (reserved.provider, reserved.instance_type, reserved.region, "on-demand")]
    if not same:  # Compshare's 4090 row of the price table: its on-demand twin is the API example's 16 vCPU row
        same = [o for o in catalog.offers if o.provider == reserved.provider and o.gpu == reserved.gpu
                and o.pricing == "on-demand"]
    assert same, (reserved.provider, reserved.instance_type)
    return same[0]


def test_a_subscription_price_is_used_only_when_asked(frozen_catalog: Catalog) -> None:
    default = _serve_ranking(frozen_catalog, "DeepSeek-R1-Distill-Qwen-7B", 0.2)
    assert {p["offer"]["pricing"] for p in default["ranked"]} == {"on-demand"}
    reserved = _serve_ranking(frozen_catalog, "DeepSeek-R1-Distill-Qwen-7B", 0.2, tiers=("reserved",))
    assert {p["offer"]["pricing"] for p in reserved["ranked"]} == {"reserved"}
    assert all(p["offer"]["commit_months"] in (1, 12) for p in reserved["ranked"])


@pytest.mark.parametrize("part", MAINLAND_PARTS)
def test_part_has_a_dated_mainland_offer(catalog: Catalog, part: str) -> None:
    offers = [o for o in catalog.offers if o.market == "cn" and o.gpu == part]
    assert offers, f"no mainland offer for {part}"
    assert all(o.source.strip() and isinstance(o.as_of, dt.date) for o in offers)


def _serve_ranking(catalog: Catalog, model: str, rps: float, spot: bool | None = None,
                   tiers: tuple[str, ...] = ()) -> Any:
    """The single-configuration ranking for serving (``plan()``; ``gpuplan plan serve`` plans whole fleets)."""
    from gpuplan.plan.planner import Constraints, plan
    from gpuplan.types import Job

    job = Job(task="serve", rps=rps, prompt_len=1000, output_len=300)
    c = Constraints(market="cn", currency="CNY", top=5, spot=spot, tiers=tiers)
    return plan(catalog, catalog.model(model), job, c).as_dict()


def test_a_mainland_plan_rents_only_mainland_offers_in_yuan(frozen_catalog: Catalog) -> None:
    # 70B in bf16 (~141 GB of weights) needs several cards, so the ranking draws on the multi-GPU mainland rows
    plan = _serve_ranking(frozen_catalog, "DeepSeek-R1-Distill-Llama-70B", 1.0)
    ranked = plan["ranked"]
    assert len(ranked) >= 2
    assert {p["offer"]["market"] for p in ranked} == {"cn"}
    assert {p["cost"]["currency"] for p in ranked} == {"CNY"}
    totals = [p["cost"]["total"] for p in ranked]
    assert totals == sorted(totals)


def test_a_mainland_spot_price_is_used_only_with_spot(frozen_catalog: Catalog) -> None:
    # A 7B model fits one 24 GB card. UCloud Compshare's spot RTX 4090 (1.04 CNY/h) is the cheapest mainland
    # 24 GB card of all, so it wins exactly when spot is allowed; without --spot every pick is on-demand.
    default = _serve_ranking(frozen_catalog, "DeepSeek-R1-Distill-Qwen-7B", 0.2)
    assert {p["offer"]["pricing"] for p in default["ranked"]} == {"on-demand"}
    spot = _serve_ranking(frozen_catalog, "DeepSeek-R1-Distill-Qwen-7B", 0.2, spot=True)
    assert spot["pick"]["offer"]["pricing"] == "spot"
    assert spot["pick"]["offer"]["provider"] == "UCloud Compshare"
    assert spot["pick"]["offer"]["price_per_hour"] == pytest.approx(1.04)
    assert spot["pick"]["cost"]["total"] < default["pick"]["cost"]["total"]


def test_an_undated_mainland_price_is_never_later_than_the_day_it_was_read(catalog: Catalog) -> None:
    read_on = re.compile(r"undated source \(read on (\d{4}-\d{2}-\d{2})\)")
    checked = 0
    for o in catalog.offers:
        if o.market == "cn" and (m := read_on.search(o.notes or "")):
            checked += 1
            assert o.as_of <= dt.date.fromisoformat(m.group(1)), (o.provider, o.instance_type)
    assert checked >= 3


def _serve_json(*extra: str) -> Any:
    import json

    from conftest import run_cli

    result = run_cli("plan", "serve", "Qwen2.5-7B", "--market", "cn", "--json", *extra)
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)


def test_a_serving_fleet_rents_a_subscription_only_when_asked(catalog: Catalog) -> None:
    default = _serve_json()
    assert {g["pricing"] for g in default["fleet"]["groups"]} == {"on-demand"}
    assert default["request"]["tiers"] == ["on-demand"]
    reserved = _serve_json("--tier", "reserved")
    assert reserved["request"]["tiers"] == ["reserved"]
    groups = reserved["fleet"]["groups"]
    assert groups and {g["pricing"] for g in groups} == {"reserved"}
    for g in groups:
        o = next(o for o in catalog.offers if (o.provider, o.instance_type, o.region, o.pricing)
                 == (g["provider"], g["instance_type"], g["region"], "reserved"))
        assert g["commit_months"] == o.commit_months and o.commit_months in (1, 12)  # 包月, or a 1-year term
        # the term's price per hour (a month over 730 hours), times the instances rented, in the plan's yuan
        per_hour = catalog.convert(o.price_per_hour, o.currency, "CNY")
        assert g["cost_per_hour"] == pytest.approx(per_hour * g["instances"], rel=1e-9)


def test_a_subscribed_fleet_saves_nothing_by_following_a_quiet_day() -> None:
    # the month is paid whether the instances run or not: scaling a reserved fleet down in the quiet hours
    # saves nothing, while the same day on on-demand instances does save
    day = ",".join(["1"] * 8 + ["4"] * 8 + ["2"] * 8)
    reserved = _serve_json("--tier", "reserved", "--profile", day)["daily_profile"]
    assert reserved["autoscaled_per_day"] == pytest.approx(reserved["fixed_per_day"])
    assert reserved["saving_per_day"] == pytest.approx(0.0, abs=1e-9)
    on_demand = _serve_json("--profile", day)["daily_profile"]
    assert on_demand["autoscaled_per_day"] < on_demand["fixed_per_day"]


def test_the_http_api_serves_with_the_tiers_asked_and_refuses_an_unknown_one() -> None:
    from fastapi.testclient import TestClient

    from gpuplan.web.app import create_app

    client = TestClient(create_app())
    body = {"model": "Qwen2.5-0.5B", "rps": 2, "market": "cn"}
    r = client.post("/api/serve", json={**body, "tiers": ["reserved"]})
    assert r.status_code == 200, r.text
    assert {g["pricing"] for g in r.json()["fleet"]["groups"]} == {"reserved"}
    bad = client.post("/api/serve", json={**body, "tiers": ["weekly"]})
    assert bad.status_code in (400, 422) and "tiers" in bad.text
