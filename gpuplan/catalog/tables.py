"""Read a catalog's tables (gpuplan/data and users' folders laid out the same way) into a checked :class:`Catalog`.

Only a catalog that the cache (:mod:`gpuplan.catalog.cache`) has no copy of is built here, so the column schemas
and the CSV reader are imported only then.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType
from typing import Any, TypeVar

from gpuplan.catalog import schemas
from gpuplan.catalog.csvload import Column, Row, read_table
from gpuplan.catalog.store import BUNDLED_DIR, MARKET_TABLES, Catalog, normalize
from gpuplan.errors import CatalogError
from gpuplan.types import FxRate, Gpu, ModelEntry, Offer, Platform, ProviderTerms, PurchasePrice
from gpuplan.units import GB, TERA, GiB

T = TypeVar("T")


def build(dirs: tuple[Path, ...], market: Path | None = None) -> Catalog:
    """The catalog of ``dirs`` (and the market snapshot ``market``), read from their tables and cross-checked."""
    tables = [_DirTables.read(d, d != BUNDLED_DIR, with_market=market is None or d != BUNDLED_DIR) for d in dirs]
    if market is not None:  # right after the bundled folder, whose market tables it stands for
        tables.insert(1, _DirTables.read(market, user=False, with_specs=False, snapshot=True))
    gpus = _merge((t.gpus for t in tables), lambda g: g.name)
    gpu_keys = _gpu_keys(gpus, [t for t in tables])
    today = dt.date.today()

    def check_gpu(name: str, where: str, line: int) -> str:
        canonical = gpu_keys.get(normalize(name))
        if canonical is None:
            raise CatalogError(where, line, "gpu", name, "is not a GPU in gpus.csv or gpu_aliases.csv.",
                               "use a name from 'gpuplan gpus', or add the part to gpus.csv.")
        return canonical

    offers = _merge((t.offers for t in tables), lambda o: o.key)
    offers = [_with_gpu(o, check_gpu(o.gpu, o.file, o.line)) for o in offers]
    terms = {p.provider: p for p in _merge((t.terms for t in tables), lambda p: p.provider)}
    _check_offer_providers(offers, terms)
    prices = _merge((t.prices for t in tables), lambda p: (p.gpu, p.market, p.price_kind, p.source))
    platforms = _merge((t.platforms for t in tables), lambda p: (p.platform, p.tier, p.gpu))
    for table in tables:
        for p, line in table.price_lines:
            check_gpu(p.gpu, table.label("purchase_prices.csv"), line)
        for pl, line in table.platform_lines:
            check_gpu(pl.gpu, table.label("platforms.csv"), line)
        table.check_dates(today)
    prices = [_replace(p, gpu=gpu_keys[normalize(p.gpu)]) for p in prices]
    platforms = [_replace(p, gpu=gpu_keys[normalize(p.gpu)]) for p in platforms]
    fx = _merge((t.fx for t in tables), lambda r: (r.date, r.base, r.quote))
    models = _merge((t.models for t in tables), lambda m: m.name)
    model_aliases = _model_aliases(models, tables)
    return Catalog(
        gpus=MappingProxyType({g.name: g for g in gpus}), gpu_keys=MappingProxyType(gpu_keys), offers=tuple(offers),
        purchase_prices=tuple(prices), platforms=tuple(platforms), fx_rates=tuple(fx),
        models=MappingProxyType({m.name: m for m in models}), dirs=dirs, replaced=_replaced(tables),
        provider_terms=MappingProxyType(terms), market=market, model_aliases=MappingProxyType(model_aliases),
    )


def _check_offer_providers(offers: list[Offer], terms: Mapping[str, ProviderTerms]) -> None:
    """Every offer's provider has a providers.csv row: plans filter by the provider's tier."""
    for o in offers:
        if o.provider not in terms:
            where = Path(o.file).parent.parent / "providers.csv"  # beside the offers/ folder the row came from
            raise CatalogError(o.file, o.line, "provider", o.provider, "has no row in providers.csv.",
                               f"add a row for '{o.provider}' to {where} (at least provider, tier, source and "
                               "as_of; see the data README), or spell the provider as an existing row does.")


# What each data file's rows are keyed by (the rows a later folder replaces).
_KEYED: tuple[tuple[str, Callable[[_DirTables], list[Any]], Callable[[Any], Any]], ...] = (
    ("gpus.csv", lambda t: t.gpus, lambda g: g.name),
    ("offers/", lambda t: t.offers, lambda o: o.key),
    ("purchase_prices.csv", lambda t: t.prices, lambda p: (p.gpu, p.market, p.price_kind, p.source)),
    ("platforms.csv", lambda t: t.platforms, lambda p: (p.platform, p.tier, p.gpu)),
    ("fx.csv", lambda t: t.fx, lambda r: (r.date.isoformat(), r.base, r.quote)),
    ("providers.csv", lambda t: t.terms, lambda p: p.provider),
    ("models/index.csv", lambda t: t.models, lambda m: m.name),
)


def _replaced(tables: list[_DirTables]) -> tuple[str, ...]:
    """Bundled rows that a user folder's rows replace (same key), each as ``file 'key' (by folder)``."""
    bundled, users = tables[0], tables[1:]
    out: list[str] = []
    for rel, rows, key in _KEYED:
        mine = {key(x) for x in rows(bundled)}
        for table in users:
            for k in dict.fromkeys(key(x) for x in rows(table)):
                if k in mine:
                    shown = "/".join(map(str, k)) if isinstance(k, tuple) else str(k)
                    out.append(f"{rel} '{shown}' (by {table.root})")
    return tuple(out)


def _merge(groups: Iterable[list[T]], key: Callable[[T], Any]) -> list[T]:
    merged: dict[Any, T] = {}
    for group in groups:
        for item in group:
            merged[key(item)] = item
    return list(merged.values())


def _replace(obj: T, **changes: Any) -> T:
    from dataclasses import replace

    return replace(obj, **changes)  # type: ignore[type-var]


def _with_gpu(offer: Offer, canonical: str) -> Offer:
    return offer if offer.gpu == canonical else _replace(offer, gpu=canonical)


def _gpu_keys(gpus: list[Gpu], tables: list[_DirTables]) -> dict[str, str]:
    names = {g.name for g in gpus}
    keys = {normalize(g.name): g.name for g in gpus}
    for table in tables:
        for alias, target, line in table.aliases:
            where = table.label("gpu_aliases.csv")
            if target not in names:
                raise CatalogError(where, line, "name", target, "is not a name in gpus.csv.",
                                   "point the alias at a canonical name.")
            key = normalize(alias)
            if keys.get(key, target) != target and keys[key] in names and normalize(keys[key]) == key:
                raise CatalogError(where, line, "alias", alias, f"is the name of GPU '{keys[key]}'.",
                                   "remove the alias.")
            keys[key] = target
    return keys


def _model_aliases(models: list[ModelEntry], tables: list[_DirTables]) -> dict[str, str]:
    """normalize(alias) -> preset name, from every folder's models/aliases.csv (a later folder's row wins). An
    alias names an existing preset and is not the name or Hub repo of another one."""
    names = {m.name for m in models}
    taken = {normalize(k): m.name for m in models for k in (m.name, m.hf_repo) if k}
    keys: dict[str, str] = {}
    for table in tables:
        where = table.label("models/aliases.csv")
        for alias, target, line in table.model_aliases:
            if target not in names:
                raise CatalogError(where, line, "name", target, "is not a preset in models/index.csv.",
                                   "point the alias at a preset name from 'gpuplan models'.")
            if taken.get(normalize(alias), target) != target:
                raise CatalogError(where, line, "alias", alias,
                                   f"is the name or Hub repo of preset '{taken[normalize(alias)]}'.",
                                   "remove the alias row.")
            keys[normalize(alias)] = target
    return keys


@dataclass
class _DirTables:
    """The rows of one catalog folder, typed but not yet cross-checked."""

    root: Path
    user: bool
    snapshot: bool = False  # a market snapshot: only the market tables, each one required
    gpus: list[Gpu] = field(default_factory=list)
    aliases: list[tuple[str, str, int]] = field(default_factory=list)
    offers: list[Offer] = field(default_factory=list)
    prices: list[PurchasePrice] = field(default_factory=list)
    price_lines: list[tuple[PurchasePrice, int]] = field(default_factory=list)
    platforms: list[Platform] = field(default_factory=list)
    platform_lines: list[tuple[Platform, int]] = field(default_factory=list)
    fx: list[FxRate] = field(default_factory=list)
    models: list[ModelEntry] = field(default_factory=list)
    model_aliases: list[tuple[str, str, int]] = field(default_factory=list)
    dated: list[tuple[str, int, str, dt.date]] = field(default_factory=list)
    terms: list[ProviderTerms] = field(default_factory=list)

    def label(self, rel: str) -> str:
        return str(self.root / rel) if self.user or self.snapshot else f"gpuplan/data/{rel}"

    @classmethod
    def read(cls, root: Path, user: bool, with_specs: bool = True, with_market: bool = True,
             snapshot: bool = False) -> _DirTables:
        """The rows of ``root``: its GPU and model tables unless ``with_specs`` is False, its market tables
        (``MARKET_TABLES``) unless ``with_market`` is False."""
        self = cls(root, user, snapshot)
        if with_specs:
            self._read_specs()
        if with_market:
            self._read_market()
        return self

    def _read_specs(self) -> None:
        for r in self._rows("gpus.csv", schemas.GPUS, ["name"]):
            self.gpus.append(_gpu(r, self.label("gpus.csv")))
            self.dated.append(("gpus.csv", r.line, "date_checked", r.values["date_checked"]))
        self.aliases = [(r.values["alias"], r.values["name"], r.line)
                        for r in self._rows("gpu_aliases.csv", schemas.GPU_ALIASES, ["alias"])]
        self._read_models()

    def _read_market(self) -> None:
        self._read_offers()
        for r in self._rows("purchase_prices.csv", schemas.PURCHASE_PRICES,
                            ["gpu", "market", "price_kind", "source"]):
            price = PurchasePrice(**_text(r.values))
            self.prices.append(price)
            self.price_lines.append((price, r.line))
            self.dated.append(("purchase_prices.csv", r.line, "as_of", price.as_of))
        for r in self._rows("platforms.csv", schemas.PLATFORMS, ["platform", "tier", "gpu"]):
            platform = Platform(**_text(r.values))
            self.platforms.append(platform)
            self.platform_lines.append((platform, r.line))
            self.dated.append(("platforms.csv", r.line, "as_of", platform.as_of))
        self.fx = [FxRate(**r.values) for r in self._rows("fx.csv", schemas.FX, ["date", "base", "quote"])]
        for r in self._rows("providers.csv", schemas.PROVIDERS, ["provider"]):
            self.terms.append(_provider_terms(r, self.label("providers.csv")))
            self.dated.append(("providers.csv", r.line, "as_of", r.values["as_of"]))

    def _rows(self, rel: str, columns: tuple[Column, ...], key: list[str]) -> list[Row]:
        path = self.root / rel
        if not path.exists() and not path.is_symlink():  # a dangling or looping link is an error, not "absent"
            if self.user:
                return []
            raise self._missing(rel)
        return read_table(path, columns, key, self.label(rel))

    def _read_offers(self) -> None:
        folder = self.root / "offers"
        if folder.is_symlink() and not folder.is_dir():
            raise CatalogError(self.label("offers/"), 0, "", "", "is a symbolic link to no folder (dangling or a "
                               "loop).", "point the link at a folder of offer files, or remove it.")
        files = sorted(folder.glob("*.csv")) if folder.is_dir() else []
        if not files and self.snapshot:
            raise self._missing("offers/")
        if not files and not self.user:
            raise CatalogError(self.label("offers/"), 0, "", "", "no offer files.", "reinstall gpuplan.")
        seen: dict[tuple[str, str, str, str], str] = {}
        for path in files:
            rel = f"offers/{path.name}"
            rows = self._rows(rel, schemas.OFFERS, ["provider", "instance_type", "region", "pricing"])
            for r in rows:
                offer = _offer(r, self.label(rel))
                if offer.key in seen:
                    raise CatalogError(self.label(rel), r.line, "instance_type", offer.instance_type,
                                       f"same provider/instance/region/pricing as a row in {seen[offer.key]}.",
                                       "keep one provider per file and one row per key.")
                seen[offer.key] = rel
                self.offers.append(offer)
                self.dated.append((rel, r.line, "as_of", offer.as_of))

    def _missing(self, rel: str) -> CatalogError:
        if self.snapshot:
            return CatalogError(self.label(rel), 0, "", "", "is missing from the market snapshot.",
                                f"copy gpuplan/data/{rel} into the snapshot folder (a snapshot holds every one of "
                                f"{', '.join(MARKET_TABLES)}).")
        return CatalogError(self.label(rel), 0, "", "", "bundled file is missing.", "reinstall gpuplan.")

    def _read_models(self) -> None:
        rows = self._rows("models/index.csv", schemas.MODEL_INDEX, ["name"])
        for r in rows:
            path = self.root / "models" / f"{r.values['name']}.json"
            if not path.is_file():
                raise CatalogError(self.label("models/index.csv"), r.line, "name", r.values["name"],
                                   f"has no config file models/{path.name}.",
                                   "add the config.json as models/<name>.json or remove the row.")
            self.models.append(ModelEntry(**_text(r.values), path=str(path)))
            self.dated.append(("models/index.csv", r.line, "as_of", r.values["as_of"]))
        for r in self._rows("models/aliases.csv", schemas.MODEL_ALIASES, ["alias"]):
            self.model_aliases.append((r.values["alias"], r.values["name"], r.line))
            self.dated.append(("models/aliases.csv", r.line, "as_of", r.values["as_of"]))

    def check_dates(self, today: dt.date) -> None:
        for rel, line, column, value in self.dated:
            if value > today + dt.timedelta(days=1):
                raise CatalogError(self.label(rel), line, column, value.isoformat(), "is in the future.",
                                   "write the date the figure was read or published.")


def _text(values: dict[str, Any]) -> dict[str, Any]:
    """Optional text cells read as None become empty strings."""
    return {k: ("" if v is None and k in ("notes", "hf_repo") else v) for k, v in values.items()}


def _gpu(row: Row, where: str) -> Gpu:
    v = row.values
    tflops = {k: (v[k] * TERA if v[k] is not None else None) for k in
              ("fp32_tflops", "tf32_tflops", "fp16_tflops", "bf16_tflops", "fp8_tflops", "int8_tops",
               "fp4_tflops")}
    if not any(tflops[k] for k in ("fp32_tflops", "fp16_tflops", "bf16_tflops")):  # every estimate divides by one
        raise CatalogError(where, row.line, "fp16_tflops", "", "the part has no fp32, fp16 or bf16 compute figure.",
                           "fill in at least fp32_tflops or fp16_tflops.")
    gpu = Gpu(
        name=v["name"], vendor=v["vendor"], segment=v["segment"], architecture=v["architecture"],
        chip=v["chip"], form_factor=v["form_factor"], memory_type=v["memory_type"],
        memory_nominal_gb=v["memory_nominal_gb"], memory_visible_mib=v["memory_visible_mib"],
        memory_bandwidth_bytes_per_s=(v["memory_bandwidth_gb_s"] * GB if v["memory_bandwidth_gb_s"] else None),
        fp32_flops_per_s=tflops["fp32_tflops"], tf32_flops_per_s=tflops["tf32_tflops"],
        fp16_flops_per_s=tflops["fp16_tflops"], bf16_flops_per_s=tflops["bf16_tflops"],
        fp8_flops_per_s=tflops["fp8_tflops"], int8_ops_per_s=tflops["int8_tops"],
        fp4_flops_per_s=tflops["fp4_tflops"], interconnect=v["interconnect"],
        interconnect_bytes_per_s=(v["interconnect_gb_s"] * GB if v["interconnect_gb_s"] else None),
        pcie_gen=v["pcie_gen"], tdp_w=v["tdp_w"], launch_year=v["launch_year"],
        export_status=v["export_status"], export_rule=v["export_rule"], export_rule_date=v["export_rule_date"],
        source=v["source"], verification=v["verification"], date_checked=v["date_checked"],
        notes=v["notes"] or "", sm_count=v["sm_count"],
        boost_clock_hz=v["boost_clock_mhz"] * 1e6 if v["boost_clock_mhz"] else None,
        matrix_fp16_flops_per_s=v["matrix_fp16_tflops"] * TERA if v["matrix_fp16_tflops"] else None,
    )
    if gpu.vendor == "Apple" and not gpu.shares_system_memory:  # else its memory would be sized as a discrete GPU's
        raise CatalogError(where, row.line, "memory_type", v["memory_type"] or "", "an Apple silicon GPU shares the "
                           "system's memory, but the type is not marked unified.",
                           "write it as '<type> (unified)', e.g. 'LPDDR5 (unified)', or 'unified' if the type is "
                           "unknown.")
    return gpu


def _offer(row: Row, where: str) -> Offer:
    v = row.values
    return Offer(
        provider=v["provider"], instance_type=v["instance_type"], gpu=v["gpu"], gpu_count=v["gpu_count"],
        vcpus=v["vcpus"], ram_bytes=(v["ram_gib"] * GiB if v["ram_gib"] else None), region=v["region"],
        market=v["market"], price_per_hour=v["price_per_hour"], currency=v["currency"], pricing=v["pricing"],
        billing_granularity_s=v["billing_granularity_s"],
        included_disk_bytes=(v["included_disk_gb"] * GB if v["included_disk_gb"] is not None else None),
        storage_price_per_gb_month=v["storage_price_per_gb_month"], gpu_mapping=v["gpu_mapping"],
        source=v["source"], as_of=v["as_of"], notes=v["notes"] or "", commit_months=_commit_months(row, where),
        dated=v["dated"] if v["dated"] is not None else "undated" not in (v["notes"] or "").lower(),
        file=where, line=row.line,
    )


def _commit_months(row: Row, where: str) -> int | None:
    """The term of a reserved price: required there (a committed price is not comparable without it), and
    only there."""
    months, pricing = row.values["commit_months"], row.values["pricing"]
    if pricing == "reserved" and months is None:
        raise CatalogError(where, row.line, "commit_months", "", "is empty but pricing is reserved.",
                           "write the length of the commitment in months (12, 36 ...).")
    if pricing != "reserved" and months is not None:
        raise CatalogError(where, row.line, "commit_months", str(months), f"is set but pricing is {pricing}.",
                           "clear it, or set pricing to reserved if the price needs the commitment.")
    return months


def _provider_terms(row: Row, where: str) -> ProviderTerms:
    v = row.values
    for facts, source in schemas.PROVIDER_FACT_SOURCES:
        for fact in facts:
            if v[fact] is not None and not v[source]:
                raise CatalogError(where, row.line, source, "", f"is empty but '{fact}' is filled in.",
                                   f"say where '{fact}' was read (a page, or a file at a revision), or clear it.")
    low, high = v["sla_pct"], v["sla_multi_zone_pct"]
    if low is not None and high is not None and high < low:
        raise CatalogError(where, row.line, "sla_multi_zone_pct", str(high), f"is below sla_pct ({low}).",
                           "sla_pct is the single-instance SLA, sla_multi_zone_pct the one across zones.")
    cells: dict[str, Any] = {k: ("" if val is None and k in _TERMS_TEXT else val) for k, val in v.items()}
    return ProviderTerms(**cells)


_TERMS_TEXT = frozenset(("skypilot_cloud", "notes", "sla_source", "preemption_source", "billing_source",
                         "egress_source", "zones_source", "skypilot_source"))
