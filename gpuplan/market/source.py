"""What every price adapter receives and returns."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

from gpuplan.market.http import Fetcher, MissingKeyError
from gpuplan.market.mapping import Mapper
from gpuplan.market.store import PriceRow
from gpuplan.types import FxRate


@dataclass
class Request:
    fetcher: Fetcher
    mapper: Mapper
    env: Mapping[str, str]
    regions: tuple[str, ...]  # empty: the provider's defaults
    fetched_at: str

    def key(self, variable: str, where: str) -> str:
        value = self.env.get(variable, "").strip()
        if not value:
            raise MissingKeyError(self.fetcher.provider, f"its price API needs a key and {variable} is not set.",
                                  f"create one ({where}) and export {variable}=…; without it the other sources "
                                  "still refresh.")
        return value

    def row(self, instance_type: str, gpu: str, gpu_count: float, region: str, tier: str, price_per_hour: float,
            currency: str, url: str, *, market: str = "global", unit: str = "instance",
            vcpus: float | None = None, ram_gib: float | None = None, zone: str = "") -> PriceRow:
        return PriceRow(self.mapper.provider, instance_type, gpu, gpu_count, vcpus, ram_gib, region, market, tier,
                        unit, price_per_hour, currency, url, self.fetched_at, zone)


@dataclass
class Fetched:
    rows: list[PriceRow] = field(default_factory=list)
    fx: list[FxRate] = field(default_factory=list)
    source_url: str = ""


@dataclass(frozen=True)
class Provider:
    """One refreshable price source: ``key`` is what ``gpuplan refresh`` takes, ``name`` the catalog's provider."""

    key: str
    name: str
    fetch: Callable[[Request], Fetched]
    doc: str  # the documentation page the adapter follows
    key_env: str = ""  # the environment variable holding its API key ('' = none needed)
    key_optional: bool = False
    default_regions: tuple[str, ...] = ()
