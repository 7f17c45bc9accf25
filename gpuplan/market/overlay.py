"""The bundled catalog overlaid by the newest refreshed rows. A refreshed price replaces the bundled row with
the same provider, instance type, region and tier, and adds one where there was none. It also supersedes the
provider's bundled rows of the same GPU, GPU count and tier whose region it covers (the same region, or either
side names no place, such as '(marketplace)' or 'cn-mainland (zone unspecified)'), so an older bundled price
of the same product never stands beside the refreshed one. GPU-only prices (Google Cloud bills a GPU on top of
its VM) are kept in the history but never stand in for a whole instance; a type listed with no capacity
anywhere is kept in the history but cannot be picked."""

from __future__ import annotations

import dataclasses
import datetime as dt
from pathlib import Path
from typing import TYPE_CHECKING

from gpuplan.catalog.schemas import CURRENCIES, PRICINGS
from gpuplan.market import store
from gpuplan.types import Offer
from gpuplan.units import GiB

if TYPE_CHECKING:
    from gpuplan.catalog.store import Catalog


def with_refreshed(base: Catalog, path: Path | None = None) -> Catalog:
    """``base`` (a Catalog) with the store's newest rows; a store that cannot be read leaves ``base`` as it is
    and says why in ``store_problem``."""
    path = path or store.store_path()
    try:
        snap = store.latest(path)
    except store.StoreError as err:
        return dataclasses.replace(base, store_problem=str(err))
    if not snap.batches:
        return base
    return overlay(base, snap)


def overlay(base: Catalog, snap: store.Snapshot) -> Catalog:
    templates = {(o.provider, o.instance_type): o for o in base.offers}
    fresh: dict[tuple[str, str, str, str], Offer] = {}
    for r in snap.rows:
        canonical = base.resolve_gpu(r.gpu)
        if (r.unit != "instance" or canonical is None or r.currency not in CURRENCIES or r.tier not in PRICINGS
                or not r.price_per_hour > 0 or not r.gpu_count > 0 or r.region == store.NO_CAPACITY):
            continue
        offer = _offer(r, canonical, templates.get((r.provider, r.instance_type)))
        if offer.key not in fresh or offer.price_per_hour < fresh[offer.key].price_per_hour:
            fresh[offer.key] = offer  # zones of one region: the cheapest
    offers = [fresh.pop(o.key, o) for o in base.offers if not _superseded(o, fresh)] + list(fresh.values())
    rates = {(f.date, f.base, f.quote): f for f in (*base.fx_rates, *snap.fx)
             if f.base in CURRENCIES and f.quote in CURRENCIES}
    used = tuple((b.provider, b.fetched_at) for b in snap.batches if b.n_rows)  # price batches, not FX-only ones
    return dataclasses.replace(base, offers=tuple(offers), fx_rates=tuple(rates.values()), refreshed=used)


def _superseded(bundled: Offer, fresh: dict[tuple[str, str, str, str], Offer]) -> bool:
    """Whether a refreshed row of the same provider, GPU, GPU count and tier covers ``bundled``'s region (its
    own key is replaced, not superseded)."""
    if bundled.key in fresh:
        return False
    return any(f.provider == bundled.provider and f.gpu == bundled.gpu and f.gpu_count == bundled.gpu_count
               and f.pricing == bundled.pricing
               and (f.region == bundled.region or not _names_a_place(f.region) or not _names_a_place(bundled.region))
               for f in fresh.values())


def _names_a_place(region: str) -> bool:
    return not region.startswith("(") and "unspecified" not in region


def _offer(r: store.PriceRow, gpu: str, template: Offer | None) -> Offer:
    same = template is not None and template.gpu == gpu and template.gpu_count == r.gpu_count
    t = template if same else None
    return Offer(
        provider=r.provider, instance_type=r.instance_type, gpu=gpu, gpu_count=r.gpu_count,
        vcpus=r.vcpus if r.vcpus is not None else (t.vcpus if t else None),
        ram_bytes=r.ram_gib * GiB if r.ram_gib else (t.ram_bytes if t else None), region=r.region,
        market=r.market, price_per_hour=r.price_per_hour, currency=r.currency, pricing=r.tier,
        billing_granularity_s=t.billing_granularity_s if t else None,
        included_disk_bytes=t.included_disk_bytes if t else None,
        storage_price_per_gb_month=t.storage_price_per_gb_month if t else None,
        gpu_mapping=t.gpu_mapping if t else "stated",
        source=f"{r.source_url} (gpuplan refresh, fetched {r.fetched_at})", as_of=r.fetched_date,
        notes=f"refreshed price, fetched {r.fetched_at}", file="price store", line=0,
    )


def prices_note(catalog) -> str:  # type: ignore[no-untyped-def]
    """'prices: bundled offers as read up to 2026-11-29 + refreshed AWS 2026-12-01, Azure 2026-12-01; FX rates
    of 2026-11-30' ('' when no price is refreshed). The bundled date is the newest day a bundled offer was
    published or, for an undated source, read: older offers stay older."""
    if not catalog.refreshed:
        return ""
    bundled = max((o.as_of for o in catalog.offers if o.file != "price store"), default=dt.date.min)
    refreshed = ", ".join(f"{name} {when[:10]}" for name, when in catalog.refreshed)
    fx = max((r.date for r in catalog.fx_rates), default=None)
    return (f"prices: bundled offers as read up to {bundled.isoformat()} + refreshed {refreshed}"
            + (f"; FX rates of {fx.isoformat()}" if fx else ""))
