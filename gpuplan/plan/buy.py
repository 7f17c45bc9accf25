"""Rent or buy: what owning a GPU costs per hour of use, and how many hours a month make it pay.

Ownership per month = (GPU price × (1 + host share)) ÷ (12 × depreciation years)
                      + hours × (TDP × PUE ÷ 1000) × electricity price.
Renting per month    = hours × the cheapest suitable on-demand offer.
Break-even           = the hours per month above which owning is cheaper:
                       capital per month ÷ (rent per hour − power per hour).
The formulas are :mod:`gpuplan.plan.costing`'s; this module picks their inputs. All inputs are data
(purchase_prices.csv, ownership.csv, offers) or options the user overrides.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import cache
from typing import Any

from gpuplan.catalog import Catalog
from gpuplan.catalog.csvload import Column, read_table
from gpuplan.catalog.schemas import CURRENCIES
from gpuplan.catalog.store import BUNDLED_DIR
from gpuplan.errors import InfeasibleError, InputError
from gpuplan.plan import costing
from gpuplan.plan.costing import hourly_price
from gpuplan.types import Gpu, Market, Offer, PurchasePrice

_COLUMNS = (
    Column("key", required=True), Column("market", "enum", True, ("cn", "global")),
    Column("value", "float", True, positive=True), Column("unit", required=True),
    Column("currency", "enum", False, CURRENCIES), Column("source", required=True),
    Column("as_of", "date", True), Column("notes"),
)
_KIND_ORDER = ("street", "retail", "msrp", "list", "system-share")


@cache
def ownership_defaults() -> dict[tuple[str, str], dict[str, Any]]:
    rows = read_table(BUNDLED_DIR / "ownership.csv", _COLUMNS, ["key", "market"], "gpuplan/data/ownership.csv")
    return {(r.values["key"], r.values["market"]): r.values for r in rows}


def default(key: str, market: str) -> dict[str, Any]:
    table = ownership_defaults()
    return table.get((key, market)) or table[(key, "global")]


@dataclass(frozen=True)
class Ownership:
    gpu: Gpu
    n_gpus: int
    currency: str
    purchase: float  # GPUs + host share
    price_row: PurchasePrice
    capital_per_month: float
    power_per_hour: float
    rent_per_hour: float | None
    rent_offer: Offer | None
    hours_per_month: float
    years: float
    pue: float

    @property
    def own_per_month(self) -> float:
        return costing.own_per_month(self.capital_per_month, self.power_per_hour, self.hours_per_month)

    @property
    def rent_per_month(self) -> float | None:
        return None if self.rent_per_hour is None else costing.per_month(self.rent_per_hour, self.hours_per_month)

    @property
    def break_even_hours_per_month(self) -> float | None:
        if self.rent_per_hour is None:
            return None
        return costing.break_even_hours_per_month(self.capital_per_month, self.rent_per_hour, self.power_per_hour)

    @property
    def verdict(self) -> str:
        be = self.break_even_hours_per_month
        if be is None:
            return "no rental offer to compare with"
        if not math.isfinite(be):
            return "renting is cheaper at any use (power alone costs more than the rental)"
        if be > 730:
            return f"renting is cheaper: owning pays only above {be:,.0f} h/month, more than a month has"
        return (f"buy if you use it more than {be:,.0f} h/month ({be / 730:.0%} of the time); "
                f"at {self.hours_per_month:,.0f} h/month " + ("owning" if self.hours_per_month > be else "renting")
                + " is cheaper")

    def as_dict(self) -> dict[str, Any]:
        return {
            "gpu": self.gpu.name, "n_gpus": self.n_gpus, "currency": self.currency,
            "purchase_with_host": round(self.purchase, 2), "price_source": self.price_row.source,
            "price_kind": self.price_row.price_kind, "price_as_of": self.price_row.as_of.isoformat(),
            "capital_per_month": round(self.capital_per_month, 2), "power_per_hour": round(self.power_per_hour, 4),
            "own_per_month": round(self.own_per_month, 2),
            "rent_per_hour": None if self.rent_per_hour is None else round(self.rent_per_hour, 4),
            "rent_per_month": None if self.rent_per_month is None else round(self.rent_per_month, 2),
            "rent_offer": None if self.rent_offer is None else f"{self.rent_offer.provider} "
                                                              f"{self.rent_offer.instance_type}",
            "rent_offer_market": None if self.rent_offer is None else self.rent_offer.market,
            "hours_per_month": self.hours_per_month, "years": self.years, "pue": self.pue,
            "break_even_hours_per_month": self.break_even_hours_per_month, "verdict": self.verdict,
        }


def check_hours_per_month(hours_per_month: float) -> None:
    if not 0 <= hours_per_month <= 744:
        raise InputError("--hours-per-month", f"{hours_per_month:g} hours is not a month of use.", "use 0 to 744.")


def purchase_price(catalog: Catalog, gpu: Gpu, market: str) -> PurchasePrice:
    rows = [p for p in catalog.purchase_prices if p.gpu == gpu.name]
    if not rows:
        raise InfeasibleError("--gpu", f"no purchase price for {gpu.name} in the catalog.",
                              "add one to purchase_prices.csv in a --catalog folder, or pick another GPU.")
    local = [p for p in rows if p.market == market] or rows
    return sorted(local, key=lambda p: (_KIND_ORDER.index(p.price_kind), -p.as_of.toordinal()))[0]


def cheapest_rental(catalog: Catalog, gpu: Gpu, n: int, market: str | None, currency: str) -> Offer | None:
    """The cheapest on-demand (or marketplace) offer of ``n`` × ``gpu`` in ``market``, else in any market."""
    offers = [o for o in catalog.offers if o.gpu == gpu.name and o.gpu_count == n and o.pricing != "spot"
              and o.pricing != "reserved"]
    local = [o for o in offers if market is None or o.market == market] or offers
    return min(local, key=lambda o: hourly_price(catalog, o, currency), default=None)


def electricity_price(catalog: Catalog, text: str | None, currency: str) -> float | None:
    """The electricity price per kWh typed as ``text`` (``0.6CNY``; without a currency, in ``currency``), in
    ``currency``, within the range of ``--electricity``; None when not given (the market's default applies). The
    command line and the HTTP API read it here, so the two refuse the same texts."""
    if not text:
        return None
    from gpuplan.options import check_range
    from gpuplan.units import parse_money

    amount, unit = parse_money(text, "--electricity")
    check_range("--electricity", amount, f"'{text}'")
    return catalog.convert(amount, unit or currency, currency)


def ownership(catalog: Catalog, gpu: Gpu, n: int, hours_per_month: float, market: str = "global",
              currency: str = "USD", years: float | None = None, pue: float | None = None,
              electricity: float | None = None) -> Ownership:
    """Own-versus-rent figures for ``n`` × ``gpu`` used ``hours_per_month``."""
    if market == Market.CN and not gpu.sold_in_china:
        raise InfeasibleError("--gpu", f"{gpu.name} cannot be bought new in mainland China under "
                              f"{gpu.export_rule} ({gpu.export_status}).",
                              "pick a part sold there (e.g. RTX4090D, L20, H20 where licensed, Ascend-910B), "
                              "or rent it.")
    check_hours_per_month(hours_per_month)
    row = purchase_price(catalog, gpu, market)
    years = years or default("depreciation_years", market)["value"]
    pue = pue or default("pue", market)["value"]
    host = default("host_share", market)["value"]
    if electricity is None:
        e = default("electricity_price", market)
        electricity = catalog.convert(e["value"], e["currency"], currency)
    price = catalog.convert(row.price, row.currency, currency)
    if row.price_kind == "system-share":
        host = 0.0  # already includes the host
    purchase = costing.purchase_cost(price, n, host)
    capital = costing.capital_per_month(purchase, years)
    power = costing.power_cost_per_hour(gpu.tdp_w or 0.0, n, pue, electricity)
    offer = cheapest_rental(catalog, gpu, n, market, currency)
    rent = hourly_price(catalog, offer, currency) if offer else None
    return Ownership(gpu, n, currency, purchase, row, capital, power, rent, offer, hours_per_month, years, pue)
