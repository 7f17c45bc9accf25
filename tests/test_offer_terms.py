"""Price tiers and honest ages of offers: plans use on-demand and spot unless asked, a reserved price carries its
term, an undated price says so and loses a tie to a dated one, and a price older than 90 days is flagged.

The catalog here is the tiny fixture plus four fake providers, each one TINY-SLOW card at a price that makes
the expected pick obvious by hand (TinyCheap, the fixture's cheapest on-demand offer, is $0.50/h):

| provider     | pricing     | price  | what it is for |
|--------------|-------------|--------|----------------|
| TinyAaa      | on-demand   | $0.50  | as TinyCheap, but undated (an old header: no optional columns) |
| TinyReserved | reserved    | $0.20  | cheapest of all, but needs a 12-month commitment |
| TinyMarket   | marketplace | $0.30  | cheaper than on-demand, but a third-party host |
| TinyHourly   | on-demand   | $0.40  | (fixture) per started hour: dear for short jobs |
"""

from __future__ import annotations

import csv
import datetime as dt
import json
import shutil
from pathlib import Path
from typing import Any

import pytest
from conftest import run_cli

from gpuplan.catalog import Catalog, load_catalog
from gpuplan.catalog.schemas import OFFERS, PROVIDERS
from gpuplan.errors import CatalogError, InputError
from gpuplan.listing import list_offers, parse_tiers, price_age
from gpuplan.plan.planner import Constraints, PlanResult, plan
from gpuplan.plan_text import notes_text
from gpuplan.types import Job

TINY = Path(__file__).resolve().parent / "fixtures" / "tiny_catalog"
MODEL = "Qwen2.5-0.5B"
READ_ON = "2026-01-01"
OLD_HEADER = [c.name for c in OFFERS if not c.optional]  # a file written before the optional columns existed
NEW_HEADER = [c.name for c in OFFERS]


def _offer(provider: str, instance: str, price: str, pricing: str = "on-demand", **cells: str) -> dict[str, str]:
    return {"provider": provider, "instance_type": instance, "gpu": "TINY-SLOW", "gpu_count": "1", "vcpus": "8",
            "ram_gib": "32", "region": "test-1", "market": "global", "price_per_hour": price, "currency": "USD",
            "pricing": pricing, "billing_granularity_s": "1", "included_disk_gb": "100",
            "storage_price_per_gb_month": "", "gpu_mapping": "stated", "source": "synthetic test fixture",
            "as_of": READ_ON, "notes": "", **cells}


def _write(path: Path, header: list[str], rows: list[dict[str, str]]) -> None:
    with path.open("w", newline="", encoding="utf-8") as f:
        w = csv.DictWriter(f, header, lineterminator="\n")
        w.writeheader()
        w.writerows(rows)


def _folder(tmp: Path, extra: dict[str, tuple[list[str], list[dict[str, str]]]]) -> Path:
    folder = tmp / "cat"
    shutil.copytree(TINY, folder)
    for name, (header, rows) in extra.items():
        _write(folder / "offers" / name, header, rows)
    names = {r["provider"] for _, rows in extra.values() for r in rows}
    with (folder / "providers.csv").open("a", newline="", encoding="utf-8") as f:
        w = csv.DictWriter(f, [c.name for c in PROVIDERS], lineterminator="\n")
        for p in sorted(names):
            w.writerow({"provider": p, "tier": "marketplace" if p == "TinyMarket" else "gpu-cloud",
                        "source": "synthetic test fixture", "as_of": READ_ON})
    return folder


@pytest.fixture(scope="module")
def folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return _folder(tmp_path_factory.mktemp("terms"), {
        "tinyaaa.csv": (OLD_HEADER, [_offer("TinyAaa", "ta-1x", "0.50", notes="undated source")]),
        "tinyreserved.csv": (NEW_HEADER, [_offer("TinyReserved", "tr-1x", "0.20", "reserved", commit_months="12",
                                                 dated="yes")]),
        "tinymarket.csv": (NEW_HEADER, [_offer("TinyMarket", "tm-1x", "0.30", "marketplace", dated="yes")]),
    })


@pytest.fixture(scope="module")
def cat(folder: Path) -> Catalog:
    return load_catalog([folder])


def _plan(cat: Catalog, providers: tuple[str, ...], **c: Any) -> PlanResult:
    job = Job(task="finetune", method="lora", samples=20_000, tokens_per_sample=512, seq_len=512)
    return plan(cat, cat.model(MODEL), job, Constraints(providers=providers, platforms=False, **c))


def _picked(r: PlanResult) -> str:
    assert r.pick is not None, r.nothing_fits
    return r.pick.where


# ---------------------------------------------------------------- loading


def test_a_file_without_the_optional_columns_loads(cat: Catalog) -> None:
    aaa = next(o for o in cat.offers if o.provider == "TinyAaa")
    assert (aaa.commit_months, aaa.dated) == (None, False)  # "undated" in the notes: the rule for old files


def test_a_reserved_price_carries_its_term(cat: Catalog) -> None:
    reserved = next(o for o in cat.offers if o.provider == "TinyReserved")
    assert (reserved.pricing, reserved.commit_months, reserved.dated) == ("reserved", 12, True)


@pytest.mark.parametrize(("pricing", "months", "message"), [
    ("reserved", "", "is empty but pricing is reserved"),
    ("on-demand", "12", "is set but pricing is on-demand"),
])
def test_commit_months_goes_with_reserved_only(tmp_path: Path, pricing: str, months: str, message: str) -> None:
    folder = _folder(tmp_path, {"tinybad.csv": (NEW_HEADER, [_offer("TinyBad", "tb", "1", pricing,
                                                                    commit_months=months)])})
    with pytest.raises(CatalogError, match=rf"offers/tinybad.csv:2: column 'commit_months'.*{message}"):
        load_catalog([folder])


def test_an_unknown_header_column_still_names_the_optional_ones(tmp_path: Path) -> None:
    folder = _folder(tmp_path, {"tinybad.csv": ([*OLD_HEADER, "commitment"], [_offer("TinyBad", "tb", "1")])})
    with pytest.raises(CatalogError, match=r"unknown columns.*commitment.*commit_months, dated may be left out"):
        load_catalog([folder])


def test_every_bundled_reserved_offer_has_a_term(catalog: Catalog) -> None:
    assert all(o.commit_months for o in catalog.offers if o.pricing == "reserved")


# ---------------------------------------------------------------- tiers in plans


TRIO = ("TinyCheap", "TinyReserved", "TinyMarket")


def test_plans_use_on_demand_and_spot_unless_asked(cat: Catalog) -> None:
    # TinyReserved ($0.20) and TinyMarket ($0.30) are cheaper, but a plan prices on-demand: TinyCheap ($0.50)
    r = _plan(cat, TRIO)
    assert _picked(r) == "TinyCheap"
    assert {x.offer.pricing for x in r.ranked if x.offer} == {"on-demand"}


def test_tier_reserved_plans_with_the_committed_price_and_says_its_term(cat: Catalog) -> None:
    r = _plan(cat, TRIO, tiers=("reserved",))
    assert _picked(r) == "TinyReserved" and {x.where for x in r.ranked} == {"TinyReserved"}
    assert any("12-month commitment" in n for n in notes_text(r.ranked[0]))
    assert r.ranked[0].as_dict()["offer"]["commit_months"] == 12


def test_a_committed_price_bills_its_whole_term(cat: Catalog) -> None:
    # the fine-tune takes hours; the 12-month term of TinyReserved bills 12 months at $0.20/h whatever the run:
    # 0.20 × 12 × 730.5 h = $1,753.20, against a few dollars at TinyCheap's $0.50/h on demand
    reserved = _plan(cat, ("TinyReserved",), tiers=("reserved",)).ranked[0]
    assert reserved.cost.compute == pytest.approx(0.20 * 12 * 730.5)
    assert reserved.cost.billed_seconds == pytest.approx(12 * 730.5 * 3600)
    both = _plan(cat, TRIO, tiers=("on-demand", "reserved"))
    assert _picked(both) == "TinyCheap" and both.ranked[0].cost.total < 10


def test_a_service_on_a_committed_price_pays_its_hourly_rate(cat: Catalog) -> None:
    # a server stays up for the whole term, so its hour costs the committed rate: $0.20
    job = Job(task="serve", rps=0.05, prompt_len=128, output_len=64)
    r = plan(cat, cat.model(MODEL), job, Constraints(providers=("TinyReserved",), platforms=False,
                                                     tiers=("reserved",)))
    assert r.pick is not None, r.nothing_fits
    assert r.pick.cost.compute == pytest.approx(0.20 * r.pick.cost.instances)


def test_several_tiers_at_once(cat: Catalog) -> None:
    r = _plan(cat, TRIO, tiers=("on-demand", "marketplace"))
    assert _picked(r) == "TinyMarket"  # $0.30 beats $0.50
    assert {x.where for x in r.ranked} == {"TinyMarket", "TinyCheap"}


def test_an_unknown_tier_lists_the_accepted_ones() -> None:
    with pytest.raises(InputError, match="'committed' is not one of: on-demand, spot, reserved, marketplace"):
        Constraints(tiers=("committed",))
    with pytest.raises(InputError, match="--tier"):
        parse_tiers(["on-demand,committed"])
    assert parse_tiers(["Reserved", "spot,reserved"]) == ("reserved", "spot")


# ---------------------------------------------------------------- honest age


def test_at_the_same_cost_a_dated_price_ranks_first(cat: Catalog) -> None:
    # TinyAaa and TinyCheap cost the same $0.50/h on the same card; TinyAaa comes first in the catalog (file
    # name order) but its source is undated, so TinyCheap is the pick (a plan shows one row per GPU, count and
    # pricing: the same choice on another provider is a variant of it)
    both = _plan(cat, ("TinyAaa", "TinyCheap"))
    assert _picked(both) == "TinyCheap"
    alone = _plan(cat, ("TinyAaa",)).ranked[0]
    assert alone.cost.total == pytest.approx(both.ranked[0].cost.total)  # the same cost: the date decides
    assert f"undated (read on {READ_ON})" in notes_text(alone)
    assert alone.as_dict()["offer"]["dated"] is False


def test_listings_say_undated_and_flag_old_prices(cat: Catalog) -> None:
    def row(today: dt.date) -> dict[str, Any]:
        return list_offers(cat, providers=["TinyAaa"], today=today)[0].row()

    fresh, old = row(dt.date(2026, 1, 31)), row(dt.date(2026, 6, 1))
    assert (fresh["price_age"], fresh["dated"], fresh["stale"]) == (f"undated (read on {READ_ON})", False, False)
    assert old["stale"] and old["age_days"] == 151  # 2026-01-01 -> 2026-06-01
    dated = list_offers(cat, providers=["TinyCheap"], today=dt.date(2026, 4, 1))[0].row()  # 90 days: not yet
    assert (dated["price_age"], dated["stale"]) == ("90 d", False)


def test_a_listing_breaks_price_ties_by_date(cat: Catalog) -> None:
    rows = [v.offer.provider for v in list_offers(cat, providers=["TinyAaa", "TinyCheap"])]
    assert rows == ["TinyCheap", "TinyAaa"]


def test_listing_tier_filter(cat: Catalog) -> None:
    found = {v.offer.provider for v in list_offers(cat, providers=list(TRIO), tiers=["reserved", "marketplace"])}
    assert found == {"TinyReserved", "TinyMarket"}


def test_price_age_in_chinese(cat: Catalog) -> None:
    from gpuplan.i18n import set_lang

    aaa = next(o for o in cat.offers if o.provider == "TinyAaa")
    set_lang("zh")
    try:
        assert price_age(aaa, dt.date(2026, 2, 1)) == f"未注明日期（{READ_ON} 读取）"
    finally:
        set_lang("")


def test_cli_offers_and_plan_show_tiers_and_ages(folder: Path) -> None:
    listing = run_cli("--catalog", str(folder), "offers", "--provider", "TinyAaa", "--provider", "TinyReserved",
                      "--tier", "on-demand,reserved")
    assert listing.returncode == 0, listing.stderr
    assert f"undated (read on {READ_ON})" in listing.stdout and "reserved 12 mo" in listing.stdout
    as_json = json.loads(run_cli("--catalog", str(folder), "offers", "--provider", "TinyAaa", "--json").stdout)
    assert as_json[0]["price_age"] == f"undated (read on {READ_ON})" and "stale" in as_json[0]
    bad = run_cli("--catalog", str(folder), "plan", "finetune", MODEL, "--samples", "1000",
                  "--tokens-per-sample", "512", "--tier", "committed")
    assert bad.returncode == 2
    assert "--tier: 'committed' is not one of: on-demand, spot, reserved, marketplace." in bad.stderr


# ---------------------------------------------------------------- the HTTP API


def test_api_plans_and_lists_by_tier(folder: Path) -> None:
    import warnings

    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message="Using `httpx` with `starlette.testclient`")
        from fastapi.testclient import TestClient
    from gpuplan.web.app import create_app

    client = TestClient(create_app((str(folder),)))
    body = {"model": MODEL, "task": "finetune", "method": "lora", "samples": 20000, "tokens_per_sample": 512,
            "providers": list(TRIO)}
    default = client.post("/api/plan", json=body).json()
    assert {p["offer"]["pricing"] for p in default["ranked"]} == {"on-demand"}
    reserved = client.post("/api/plan", json={**body, "tiers": ["reserved"]}).json()
    assert reserved["ranked"][0]["offer"]["commit_months"] == 12
    bad = client.post("/api/plan", json={**body, "tiers": ["committed"]})
    assert bad.status_code in (400, 422) and bad.json()["field"] == "tiers" and "reserved" in bad.text
    rows = client.get("/api/offers", params={"provider": ["TinyAaa", "TinyMarket"], "tier": "marketplace"}).json()
    assert [r["provider"] for r in rows] == ["TinyMarket"]
    undated = client.get("/api/offers", params={"provider": "TinyAaa"}).json()[0]
    assert (undated["dated"], undated["price_age"]) == (False, f"undated (read on {READ_ON})")


def test_sorting_by_age_puts_undated_prices_last(cat: Catalog) -> None:
    # TinyAaa was read on 2026-01-01 like TinyCheap's date, but its own date is unknown: it sorts after
    order = [v.offer.provider for v in list_offers(cat, providers=["TinyAaa", "TinyCheap", "TinyYuan"], sort="age")]
    assert order == ["TinyCheap", "TinyYuan", "TinyAaa"]  # 2026-01-01, 2025-03-15, then the undated one


def test_a_serving_fleet_says_when_its_prices_are_undated_or_old(catalog: Catalog) -> None:
    from dataclasses import replace
    from types import SimpleNamespace

    from gpuplan.plan.serving import _price_age_notes

    base = next(o for o in catalog.offers if o.provider == "AWS")
    today = dt.date(2026, 12, 1)
    fresh = replace(base, instance_type="fresh", as_of=dt.date(2026, 11, 1), dated=True)
    old = replace(base, instance_type="old", as_of=dt.date(2023, 6, 17), dated=True)
    undated = replace(base, instance_type="undated", as_of=dt.date(2026, 11, 29), dated=False)
    undated_old = replace(base, instance_type="undated-old", as_of=dt.date(2026, 8, 1), dated=False)
    # two groups renting the same offer (two zones) get one note; a fresh dated price gets none
    fleet = SimpleNamespace(groups=[SimpleNamespace(offer=o) for o in (fresh, old, old, undated, undated_old)])
    where = f"({base.region}, {base.pricing})"
    assert _price_age_notes(fleet, today) == [  # type: ignore[arg-type]
        f"price of AWS old {where}: as of 2023-06-17, 1263 days old (over 90): check it",  # 1096 + 167 days
        f"price of AWS undated {where}: undated (read on 2026-11-29)",
        f"price of AWS undated-old {where}: undated (read on 2026-08-01), read 122 days ago (over 90): check it",
    ]


def test_plan_serve_json_and_notes_flag_every_old_price_it_rents() -> None:
    result = run_cli("plan", "serve", MODEL, "--market", "cn", "--json")
    assert result.returncode == 0, result.stderr
    plan = json.loads(result.stdout)
    today = dt.date.today()
    for g in plan["fleet"]["groups"]:
        age = (today - dt.date.fromisoformat(g["offer_as_of"])).days
        assert g["offer_stale"] == (age > 90)
        named = [n for n in plan["notes"] if n.startswith(f"price of {g['provider']} {g['instance_type']} ")]
        assert bool(named) == (g["offer_stale"] or not g["offer_dated"])
