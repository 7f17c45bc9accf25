"""Money: every formula where a price meets a duration or an amount of work.

- :func:`rental_cost` bills an offer for a run of ``seconds``, rounded up to the offer's billing granularity, or to
  whole terms of its commitment (a one-month subscription bills a month, however short the run), adds disk beyond
  what the instance includes, and converts to the requested currency at the newest rate of the FX table. Spot runs
  pay an expected preemption overhead (lost work since the last checkpoint plus restart).
- :func:`platform_cost` prices a notebook platform: per GPU-hour, or per month of calendar time.
- :func:`hourly_rate`, :func:`value_cost` and :func:`token_costs` are what the ranking and the serving tables
  read off a cost; :func:`cost_of_seconds` is a price per hour for a time, with no billing unit (a lower bound);
  :func:`hourly_cost` and :func:`fleet_cost_per_hour` price the serving planner's replicas and fleets per hour.
- Ownership (``gpuplan buy``): :func:`purchase_cost`, :func:`capital_per_month`, :func:`power_cost_per_hour`,
  :func:`own_per_month`, :func:`per_month` and :func:`break_even_hours_per_month`.
- A day of traffic (``plan serve --profile``): :func:`day_cost`, :func:`all_day_cost` and
  :func:`per_million_tokens`; a metered moderation service: :func:`metered_cost` and :func:`per_request_per_hour`.

Currency conversion is not here: every amount is converted once, at the newest rate of the FX table
(``Catalog.convert``), before these functions see it, so their inputs and results share one currency.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Sequence
from typing import NamedTuple

from gpuplan.catalog import Catalog
from gpuplan.types import Offer, Platform
from gpuplan.units import DAY, GB, HOUR, MONTH

# Expected extra run time on spot capacity: interruptions (AWS Spot Instance Advisor lists most GPU types in
# the "<5 %" to "10-15 %" monthly interruption bands) each lose on average half a checkpoint interval
# (30 min) plus about 10 min to restart; gpuplan assumes one interruption per ~day of run, i.e. ~3 % of run
# time per interruption-day, and rounds the expectation up to 10 % to cover slow restarts and reloads.
SPOT_OVERHEAD = 0.10

# Every rented run first boots the instance, installs the environment and downloads the weights; gpuplan
# bills 5 minutes of start-up plus the weights at 500 MB/s (4 Gb/s, what a single download from a model hub
# typically sustains on a cloud instance). It keeps tiny jobs from looking cheapest on many GPUs and is
# shown in every plan's notes.
STARTUP_SECONDS = 300.0
WEIGHTS_DOWNLOAD_BYTES_PER_S = 500e6


def startup_seconds(weights_bytes: float) -> float:
    return STARTUP_SECONDS + weights_bytes / WEIGHTS_DOWNLOAD_BYTES_PER_S


class Cost(NamedTuple):
    """Cost of one run on one offer, in ``currency``. A named tuple, not a dataclass: a plan makes one for each of
    its thousands of candidates, and a tuple of plain values is one the garbage collector stops tracking, so its
    passes do not grow with the candidates (bench/speed.py, the pricing table)."""

    compute: float
    storage: float
    currency: str
    billed_seconds: float
    instances: int
    spot_overhead_seconds: float

    @property
    def total(self) -> float:
        return self.compute + self.storage

    def as_dict(self) -> dict[str, float | str | int]:
        return {"total": round(self.total, 4), "compute": round(self.compute, 4), "storage": round(self.storage, 4),
                "currency": self.currency, "billed_seconds": self.billed_seconds, "instances": self.instances,
                "spot_overhead_seconds": self.spot_overhead_seconds}


def hourly_price(catalog: Catalog, offer: Offer, currency: str) -> float:
    return catalog.convert(offer.price_per_hour, offer.currency, currency)


def billing_unit_s(offer: Offer, continuous: bool = False) -> float:
    """The shortest time ``offer`` bills: its commitment term when it has one (a committed price is paid for the
    whole term), else its billing granularity (1 s when none is published). ``continuous``: the instance runs for
    the whole term anyway (a service), so a term bills nothing beyond the hours it is priced for."""
    if offer.commit_months and not continuous:
        return offer.commit_months * MONTH
    return offer.billing_granularity_s or 1.0


class Tariff(NamedTuple):
    """What billing reads of one offer, in one currency: made once per offer and plan, then applied to every
    run priced on it (:func:`bill`). A named tuple, as :class:`Cost` is."""

    per_hour: float  # per instance-hour
    unit_s: float  # the shortest time billed (:func:`billing_unit_s`)
    spot: bool
    included_disk_bytes: float
    storage_per_gb_month: float  # per GB-month beyond the included disk; 0 when none is published


def tariff(catalog: Catalog, offer: Offer, currency: str, continuous: bool = False,
           fx: tuple[float, ...] | None = None) -> Tariff:
    """``offer``'s tariff in ``currency`` (``fx``: ``catalog.fx_factors(offer.currency, currency)``, when the caller
    has them)."""
    if fx is None:
        fx = catalog.fx_factors(offer.currency, currency)
    return tariffs((offer,), continuous, {offer.currency: fx}.__getitem__)[0]


def tariffs(offers: Iterable[Offer], continuous: bool, fx_of: Callable[[str], tuple[float, ...]]) -> list[Tariff]:
    """:func:`tariff` of each offer, ``fx_of(currency)`` giving the FX rates from each offer's currency (as
    ``Catalog.fx_factors`` to the plan's currency): one loop, as the pricing stage makes the tariffs of thousands of
    offers at 200× the bundled catalog."""
    out = []
    new = tuple.__new__
    fxs: dict[str, tuple[float, ...]] = {}
    for offer in offers:
        per_hour, storage = offer.price_per_hour, offer.storage_price_per_gb_month or 0.0
        fx = fxs.get(offer.currency)
        if fx is None:
            fx = fxs[offer.currency] = fx_of(offer.currency)
        for rate in fx:  # as Catalog.convert converts
            per_hour *= rate
            storage *= rate
        commit = offer.commit_months
        unit_s = commit * MONTH if commit and not continuous else offer.billing_granularity_s or 1.0
        out.append(new(Tariff, (per_hour, unit_s, offer.pricing == "spot", offer.included_disk_bytes or 0.0,
                                storage)))  # as Tariff(...) makes it; unit_s: billing_unit_s(offer, continuous)
    return out


def bill(t: Tariff, seconds: float, currency: str, instances: int = 1, disk_bytes: float = 0.0,
         spot_overhead: float = SPOT_OVERHEAD) -> Cost:
    """Cost of running ``instances`` instances at tariff ``t`` for ``seconds`` of work."""
    return bill_all((t,), seconds, currency, (instances,), disk_bytes, spot_overhead)[0]


def bill_all(tariffs: Sequence[Tariff], seconds: float, currency: str, instances: Sequence[int],
             disk_bytes: float = 0.0, spot_overhead: float = SPOT_OVERHEAD) -> list[Cost]:
    """:func:`bill` of each tariff with its count of instances, for one run: the pricing stage bills every offer
    that can hold an estimate at once, in one loop."""
    out = []
    extra_spot = seconds * spot_overhead
    run_spot = seconds + extra_spot
    for (per_hour, unit_s, spot, included_disk_bytes, storage_per_gb_month), n in zip(tariffs, instances,
                                                                                       strict=True):
        extra, run = (extra_spot, run_spot) if spot else (0.0, seconds)
        billed = math.ceil(run / unit_s) * unit_s if run > 0 else 0.0
        compute = per_hour * billed / HOUR * n
        storage = 0.0
        extra_disk = disk_bytes - included_disk_bytes
        if extra_disk > 0 and storage_per_gb_month:
            storage = storage_per_gb_month * extra_disk / GB * max(billed, HOUR) / MONTH * n
        out.append(_cost(Cost, (compute, storage, currency, billed, n, extra)))
    return out


_cost = tuple.__new__  # a Cost made without the Python-level __new__ that names a named tuple's fields


def rental_cost(catalog: Catalog, offer: Offer, seconds: float, currency: str, instances: int = 1,
                disk_bytes: float = 0.0, spot_overhead: float = SPOT_OVERHEAD, continuous: bool = False) -> Cost:
    """Cost of running ``instances`` copies of ``offer`` for ``seconds`` of work (``continuous``: a service
    priced per hour of an instance that stays up, see :func:`billing_unit_s`)."""
    return bill(tariff(catalog, offer, currency, continuous), seconds, currency, instances, disk_bytes,
                spot_overhead)


def platform_cost(catalog: Catalog, p: Platform, seconds: float, calendar_seconds: float, n_gpus: int,
                  currency: str) -> Cost:
    """A notebook platform's cost: its price per GPU-hour × GPU-hours, or its monthly fee × the months of
    calendar time the run spans (quota waits included); free tiers cost nothing."""
    if p.price_per_hour:
        amount = cost_of_seconds(catalog.convert(p.price_per_hour, p.currency, currency), seconds) * n_gpus
    elif p.price_per_month:
        amount = catalog.convert(p.price_per_month, p.currency, currency) * max(
            1, math.ceil(calendar_seconds / (30 * 86400)))
    else:
        amount = 0.0
    return Cost(amount, 0.0, currency, seconds, 1, 0.0)


def hourly_rate(cost: Cost) -> float:
    """The price per instance-hour ``cost`` was billed at."""
    return cost.compute / max(cost.billed_seconds / HOUR, 1e-9) / max(cost.instances, 1)


def value_cost(cost: Cost, seconds: float) -> float:
    """Money per unit of work (the seeds' 性价比): the instances' hourly rate × the hours of work, without the
    fixed costs (storage, billing minimums, the rest of a commitment term)."""
    return hourly_rate(cost) * cost.instances * seconds / HOUR


def token_costs(per_hour: float, tokens_in_per_hour: float, tokens_out_per_hour: float, input_share: float
                ) -> tuple[float, float]:
    """(per 1M input tokens, per 1M output tokens) of a server costing ``per_hour``, its cost split between the
    work each causes: ``input_share`` of the GPU time goes to prefill."""
    cost_in = per_million_tokens(per_hour * input_share, tokens_in_per_hour) if tokens_in_per_hour > 0 else 0.0
    cost_out = (per_million_tokens(per_hour * (1 - input_share), tokens_out_per_hour) if tokens_out_per_hour > 0
                else 0.0)
    return cost_in, cost_out


def per_million_tokens(cost: float, tokens: float) -> float:
    """``cost`` spread over ``tokens``: the price of a million of them."""
    return cost / tokens * 1e6


def cost_of_seconds(per_hour: float, seconds: float) -> float:
    """``per_hour`` paid for ``seconds``, to the second: no billing unit, no minimum, no storage (:func:`bill`
    adds those)."""
    return per_hour * seconds / HOUR


def hourly_cost(per_hour_each: float, count: float) -> float:
    """``count`` things rented together (the instances of a replica, the units of a serving pool) at
    ``per_hour_each`` each, per hour."""
    return per_hour_each * count


def fleet_cost_per_hour(units_and_costs: Iterable[tuple[float, float]]) -> float:
    """A serving fleet's cost per hour: each pool's units × its cost per unit-hour, summed."""
    return sum(u * per_unit for u, per_unit in units_and_costs)


# ---------------------------------------------------------------- owning a GPU (gpuplan buy)


def purchase_cost(unit_price: float, n_gpus: int, host_share: float) -> float:
    """What buying ``n_gpus`` at ``unit_price`` each costs with the host around them: ``host_share`` of the GPUs'
    price again (CPU, memory, board, chassis, network; 0 when the price is already a share of a whole system)."""
    return unit_price * n_gpus * (1 + host_share)


def capital_per_month(purchase: float, years: float) -> float:
    """``purchase`` written off in equal months over ``years`` (straight-line depreciation, no resale value)."""
    return purchase / (12 * years)


def power_cost_per_hour(tdp_w: float, n_gpus: int, pue: float, electricity_per_kwh: float) -> float:
    """The electricity of ``n_gpus`` drawing their board power ``tdp_w`` for an hour, the data centre's overhead
    included (``pue``: facility power ÷ IT power): kW × PUE × price per kWh."""
    return tdp_w * n_gpus * pue / 1000 * electricity_per_kwh


def per_month(per_hour: float, hours_per_month: float) -> float:
    """A price per hour of use over a month of ``hours_per_month`` hours of use."""
    return per_hour * hours_per_month


def own_per_month(capital: float, power_per_hour: float, hours_per_month: float) -> float:
    """Owning for a month: the month's depreciation, paid however little the GPUs run, plus the power of the
    hours they do run."""
    return capital + per_month(power_per_hour, hours_per_month)


def break_even_hours_per_month(capital: float, rent_per_hour: float, power_per_hour: float) -> float:
    """The hours of use per month above which owning costs less than renting: each hour owned saves the rent
    less the power, and the month's capital is paid back after capital ÷ that saving hours. inf when the power
    alone costs as much as the rent (owning never pays)."""
    margin = rent_per_hour - power_per_hour
    return math.inf if margin <= 0 else capital / margin


# ---------------------------------------------------------------- a day of traffic (plan serve --profile)


def day_cost(hourly_costs: Iterable[float]) -> float:
    """A day's cost from the cost per hour of each of its hours (each hour costs its rate for one hour)."""
    return sum(hourly_costs)


def all_day_cost(per_hour: float) -> float:
    """``per_hour`` kept for a whole day."""
    return per_hour * (DAY / HOUR)


def metered_cost(units: float, price_per_unit: float) -> float:
    """A metered service's charge for ``units`` of its billing unit (a call, a block of characters)."""
    return units * price_per_unit


def per_request_per_hour(cost_per_request: float, requests_per_s: float) -> float:
    """A cost paid on each request, per hour at ``requests_per_s``."""
    return cost_per_request * requests_per_s * HOUR
