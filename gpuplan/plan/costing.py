"""Money: the one place where a price per hour meets a duration.

``rental_cost`` bills an offer for a run of ``seconds`` (rounded up to the offer's billing granularity),
adds disk beyond what the instance includes, and converts to the requested currency at the newest rate of the FX table.
Spot runs pay an expected preemption overhead (lost work since the last checkpoint plus restart).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from gpuplan.catalog import Catalog
from gpuplan.types import Offer
from gpuplan.units import GB, HOUR, MONTH

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


@dataclass(frozen=True, slots=True)
class Cost:
    """Cost of one run on one offer, in ``currency``."""

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


def rental_cost(catalog: Catalog, offer: Offer, seconds: float, currency: str, instances: int = 1,
                disk_bytes: float = 0.0, spot_overhead: float = SPOT_OVERHEAD) -> Cost:
    """Cost of running ``instances`` copies of ``offer`` for ``seconds`` of work."""
    extra = seconds * spot_overhead if offer.pricing == "spot" else 0.0
    run = seconds + extra
    granularity = offer.billing_granularity_s or 1.0
    billed = math.ceil(run / granularity) * granularity if run > 0 else 0.0
    compute = hourly_price(catalog, offer, currency) * billed / HOUR * instances
    storage = 0.0
    extra_disk = max(0.0, disk_bytes - (offer.included_disk_bytes or 0.0))
    if extra_disk and offer.storage_price_per_gb_month:
        per_gb_month = catalog.convert(offer.storage_price_per_gb_month, offer.currency, currency)
        storage = per_gb_month * extra_disk / GB * max(billed, HOUR) / MONTH * instances
    return Cost(compute, storage, currency, billed, instances, extra)
