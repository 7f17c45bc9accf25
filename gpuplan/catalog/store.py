"""Load the bundled catalog plus any user catalog folders into one validated, read-only :class:`Catalog`.

Folders are read in order (bundled first); a user row whose key equals a bundled row replaces it. Loading
is lazy and cached per folder list: importing gpuplan reads nothing.

A *market snapshot* (``load_catalog(market=folder)``) is a folder of the market tables alone (``MARKET_TABLES``:
offers, providers, platforms, purchase prices, FX rates), read in place of the bundled ones, all of them
required; GPU specifications and models stay the bundled ones. Tests whose expected pick depends on prices plan
on a frozen snapshot, so that an update of the bundled prices cannot change their answer.
"""

from __future__ import annotations

import datetime as dt
import os
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from functools import cache, cached_property, lru_cache
from pathlib import Path
from types import MappingProxyType

from gpuplan.errors import CatalogError, InputError, UnknownNameError, check_path
from gpuplan.types import FxRate, Gpu, ModelEntry, ModelSpec, Offer, Platform, ProviderTerms, PurchasePrice

BUNDLED_DIR = Path(__file__).resolve().parent.parent / "data"
ENV_VAR = "GPUPLAN_CATALOG"
# the files a market snapshot holds and the bundled folder then does not contribute (see the module docstring)
MARKET_TABLES = ("offers/", "providers.csv", "platforms.csv", "purchase_prices.csv", "fx.csv")
FX_PIVOT = "USD"  # every conversion goes through it (Catalog.convert)


def normalize(name: str) -> str:
    """Lookup key of a GPU name or alias: case, spaces, '-' and '_' do not matter."""
    return re.sub(r"[\s\-_]+", "", name).lower()


@dataclass(frozen=True)
class Catalog:
    """Everything gpuplan knows, validated. Build it with :func:`load_catalog`, which caches it and hands the same
    one to every caller: so it is read-only all the way down (frozen rows in tuples and read-only mappings)."""

    gpus: Mapping[str, Gpu]
    gpu_keys: Mapping[str, str]
    offers: tuple[Offer, ...]
    purchase_prices: tuple[PurchasePrice, ...]
    platforms: tuple[Platform, ...]
    fx_rates: tuple[FxRate, ...]
    models: Mapping[str, ModelEntry]
    dirs: tuple[Path, ...]
    model_aliases: Mapping[str, str] = field(default_factory=lambda: MappingProxyType({}))  # normalize(alias) -> preset
    replaced: tuple[str, ...] = ()  # the bundled rows that user folders replace, e.g. "gpus.csv 'H100' (by …)"
    provider_terms: Mapping[str, ProviderTerms] = field(default_factory=lambda: MappingProxyType({}))  # by provider
    refreshed: tuple[tuple[str, str], ...] = ()  # (provider, fetched_at) of the price store's batches overlaid
    store_problem: str = ""  # why the price store could not be read (then only bundled prices are in use)
    market: Path | None = None  # the market snapshot read in place of the bundled market tables, if any

    def resolve_gpu(self, name: str) -> str | None:
        return self.gpu_keys.get(normalize(name))

    def gpu(self, name: str, field: str = "--gpu") -> Gpu:
        canonical = self.resolve_gpu(name)
        if canonical is None:
            raise UnknownNameError(field, "GPU", name, list(self.gpus) + self._aliases(), "gpuplan gpus")
        return self.gpus[canonical]

    def _aliases(self) -> list[str]:
        return [k for k in self.gpu_keys if k not in {normalize(n) for n in self.gpus}]

    def model(self, name_or_path: str, field: str = "model") -> ModelSpec:
        """Architecture of a preset, a local config.json, or (online only) a Hub id."""
        from gpuplan.catalog.models import resolve_model

        check_path(field, name_or_path)
        return resolve_model(self, name_or_path, field)

    def providers(self) -> list[str]:
        return sorted({o.provider for o in self.offers})

    def provider(self, name: str, field: str = "--provider") -> ProviderTerms:
        """The terms of provider ``name`` (case, spaces, '-' and '_' do not matter)."""
        terms = self.provider_terms.get(name) or self._terms_by_key.get(normalize(name))
        if terms is None:
            raise UnknownNameError(field, "provider", name, list(self.provider_terms), "gpuplan offers")
        return terms

    @cached_property
    def _terms_by_key(self) -> Mapping[str, ProviderTerms]:
        return MappingProxyType({normalize(k): v for k, v in self.provider_terms.items()})

    def skypilot_clouds(self) -> dict[str, str]:
        """Provider name -> the cloud name SkyPilot launches it under, for every provider SkyPilot launches."""
        return {t.provider: t.skypilot_cloud for t in self.provider_terms.values() if t.skypilot_cloud}

    def fx_rate(self, base: str, quote: str, on: dt.date | None = None) -> FxRate:
        """The newest rate on or before ``on`` (or the oldest one, if all are later)."""
        rates = self._rates_by_pair.get((base, quote), ())
        if not rates:
            inverse = self._rates_by_pair.get((quote, base), ())
            if not inverse:
                raise CatalogError("fx.csv", 0, "", "", f"no {base}->{quote} exchange rate.",
                                   f"add a dated {base}/{quote} row to fx.csv.")
            pick = _pick_rate(inverse, on)
            return FxRate(pick.date, base, quote, 1.0 / pick.rate, pick.source)
        return _pick_rate(rates, on)

    def convert(self, amount: float, currency: str, to: str, on: dt.date | None = None) -> float:
        """``amount`` in ``to``, through USD: first to USD, then to ``to``, each at the newest rate (or the rate
        of ``on``). Every price thus meets the same USD->``to`` factor, so a ranking never depends on the display
        currency even when the rates of different pairs have different dates (a CNY->EUR cross of one day's
        EUR rates would not agree with another day's USD->CNY rate)."""
        for rate in self.fx_factors(currency, to, on):
            amount *= rate
        return amount

    def fx_factors(self, currency: str, to: str, on: dt.date | None = None) -> tuple[float, ...]:
        """The rates :meth:`convert` multiplies an amount by, in turn: none when ``currency`` is ``to``, else to USD
        (unless it is USD) and then from USD (unless ``to`` is). A caller converting many amounts of one currency
        looks them up once."""
        if currency == to:
            return ()
        first = () if currency == FX_PIVOT else (self.fx_rate(currency, FX_PIVOT, on).rate,)
        return first + (() if to == FX_PIVOT else (self.fx_rate(FX_PIVOT, to, on).rate,))

    @cached_property
    def _rates_by_pair(self) -> Mapping[tuple[str, str], tuple[FxRate, ...]]:
        """``fx_rates`` by (base, quote), oldest first: a plan converts a price for every candidate."""
        pairs: dict[tuple[str, str], list[FxRate]] = {}
        for r in self.fx_rates:
            pairs.setdefault((r.base, r.quote), []).append(r)
        return MappingProxyType({k: tuple(sorted(v, key=lambda r: r.date)) for k, v in pairs.items()})


def _pick_rate(rates: Sequence[FxRate], on: dt.date | None) -> FxRate:
    if on is None:
        return rates[-1]
    before = [r for r in rates if r.date <= on]
    return before[-1] if before else rates[0]


def catalog_dirs(extra: Sequence[str | os.PathLike[str]] = ()) -> tuple[Path, ...]:
    """Bundled folder, then ``GPUPLAN_CATALOG`` folders (os.pathsep-separated), then ``extra``."""
    env = [p for p in os.environ.get(ENV_VAR, "").split(os.pathsep) if p.strip()]
    dirs = [BUNDLED_DIR]
    for raw in [*env, *extra]:
        check_path("--catalog", os.fspath(raw))
        try:
            path = Path(raw).expanduser().resolve()
            is_dir = path.is_dir()
        except (OSError, RuntimeError) as exc:  # RuntimeError: a symbolic link loop (Python < 3.13)
            raise InputError("--catalog", f"'{raw}' cannot be opened as a folder ({exc}).",
                             "give a folder laid out like gpuplan/data; if it is a link, point it at one.") from None
        if not is_dir:
            raise InputError("--catalog", f"'{raw}' is not a folder.",
                             "give a folder laid out like gpuplan/data (see docs/catalog.md).")
        if path not in dirs:
            dirs.append(path)
    return tuple(dirs)


def load_catalog(extra: Sequence[str | os.PathLike[str]] = (), refreshed: bool = True,
                 market: str | os.PathLike[str] | None = None) -> Catalog:
    """The catalog from the bundled data and user folders (cached per folder list), overlaid by the newest
    prices of ``gpuplan refresh`` unless ``refreshed`` is False.

    With ``market``, that folder's market tables (``MARKET_TABLES``) are read in place of the bundled ones and
    the price store is not overlaid: the prices are the snapshot's, frozen."""
    if market is not None:
        return _load(catalog_dirs(extra), market_dir(market))
    base = _load(catalog_dirs(extra))
    return with_refreshed_prices(base) if refreshed else base


def market_dir(raw: str | os.PathLike[str]) -> Path:
    """The market snapshot folder ``raw``, resolved; an input error when it is not a folder."""
    check_path("market", os.fspath(raw))
    path = Path(raw).expanduser().resolve()
    if not path.is_dir():
        raise InputError("market", f"'{raw}' is not a folder.",
                         "give a folder holding a copy of gpuplan/data's offers/, providers.csv, platforms.csv, "
                         "purchase_prices.csv and fx.csv.")
    return path


def with_refreshed_prices(base: Catalog) -> Catalog:
    """``base`` overlaid by the price store's newest rows, re-read only when the store file changes."""
    from gpuplan.market.paths import store_signature

    path, signature = store_signature()
    return _overlaid(base.dirs, path, signature) if signature else base


@lru_cache(maxsize=8)
def _overlaid(dirs: tuple[Path, ...], path: Path, signature: tuple[int, ...]) -> Catalog:
    from gpuplan.market.overlay import with_refreshed

    return with_refreshed(_load(dirs), path)


@cache
def _load(dirs: tuple[Path, ...], market: Path | None = None) -> Catalog:
    from gpuplan.catalog.cache import cached

    return cached(dirs, lambda: _build(dirs, market), market)


def _build(dirs: tuple[Path, ...], market: Path | None = None) -> Catalog:
    """The catalog read from the tables of ``dirs`` (and ``market``) and checked: only when the cache has no copy
    (``gpuplan.catalog.cache``), so a process that reads the copy does not import the tables' readers."""
    from gpuplan.catalog.tables import build

    return build(dirs, market)
