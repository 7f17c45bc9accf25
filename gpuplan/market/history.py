"""Price trends from the store's history: one series per offer (provider, instance type, region, tier)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict, dataclass
from typing import Any

from gpuplan.market.store import PriceRow


@dataclass(frozen=True, slots=True)
class Series:
    provider: str
    instance_type: str
    region: str
    tier: str
    unit: str
    currency: str
    gpu_count: float
    first_at: str
    last_at: str
    n_points: int
    first_price_per_hour: float
    last_price_per_hour: float
    min_price_per_hour: float
    max_price_per_hour: float
    zone: str = ""  # where the provider prices per zone within the region

    @property
    def change_fraction(self) -> float:
        return self.last_price_per_hour / self.first_price_per_hour - 1

    @property
    def last_price_per_gpu_hour(self) -> float:
        return self.last_price_per_hour / self.gpu_count

    def as_dict(self) -> dict[str, Any]:
        """The JSON twin (``gpuplan history --json`` and GET /api/history): the fields and the two derived ones."""
        return {**asdict(self), "change_fraction": self.change_fraction,
                "last_price_per_gpu_hour": self.last_price_per_gpu_hour}


def series(rows: Sequence[PriceRow]) -> list[Series]:
    """``rows`` (oldest first) grouped per offer and currency, cheapest last price per GPU-hour first."""
    groups: dict[tuple[str, ...], list[PriceRow]] = {}
    for r in rows:
        groups.setdefault((r.provider, r.instance_type, r.region, r.tier, r.unit, r.currency, r.zone), []).append(r)
    out = []
    for (provider, instance, region, tier, unit, currency, zone), points in groups.items():
        prices = [p.price_per_hour for p in points]
        out.append(Series(provider, instance, region, tier, unit, currency, points[-1].gpu_count,
                          points[0].fetched_at, points[-1].fetched_at, len(points), prices[0], prices[-1],
                          min(prices), max(prices), zone))
    return sorted(out, key=lambda s: (s.currency, s.last_price_per_gpu_hour, s.provider, s.instance_type))
