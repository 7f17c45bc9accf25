"""Library side of the listing commands (``gpus``, ``offers``, ``models``, ``platforms``): filter, sort and
turn catalog objects into flat rows. The CLI and the HTTP API only render what these return."""

from __future__ import annotations

import datetime as dt
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from gpuplan.catalog import Catalog, normalize
from gpuplan.catalog.models import find_preset
from gpuplan.errors import InputError, UnknownNameError, check_choice
from gpuplan.estimate.params import count_params
from gpuplan.i18n import say
from gpuplan.types import STALE_AFTER_DAYS, Gpu, Market, Offer
from gpuplan.units import GB, TERA, GiB

GPU_SORTS = ("name", "memory", "bandwidth", "bf16", "fp8", "year", "tdp")
OFFER_SORTS = ("price", "gpu-price", "gpus", "age", "provider")


def gpu_row(g: Gpu) -> dict[str, Any]:
    """One accelerator as a flat dict (units in the keys)."""

    def tf(x: float | None) -> float | None:
        return None if x is None else round(x / TERA, 2)

    return {
        "name": g.name, "vendor": g.vendor, "segment": g.segment, "architecture": g.architecture,
        "form_factor": g.form_factor, "memory_nominal_gb": g.memory_nominal_gb,
        "memory_visible_mib": g.memory_visible_mib, "memory_usable_gib": round(g.memory_bytes / GiB, 2),
        "memory_bandwidth_gb_s": (round(g.memory_bandwidth_bytes_per_s / GB, 1)
                                  if g.memory_bandwidth_bytes_per_s else None),
        "fp32_tflops": tf(g.fp32_flops_per_s), "tf32_tflops": tf(g.tf32_flops_per_s),
        "fp16_tflops": tf(g.fp16_flops_per_s), "bf16_tflops": tf(g.bf16_flops_per_s),
        "fp8_tflops": tf(g.fp8_flops_per_s), "int8_tops": tf(g.int8_ops_per_s), "fp4_tflops": tf(g.fp4_flops_per_s),
        "interconnect": g.interconnect,
        "interconnect_gb_s": None if g.interconnect_bytes_per_s is None else g.interconnect_bytes_per_s / GB,
        "pcie_gen": g.pcie_gen, "tdp_w": g.tdp_w, "launch_year": g.launch_year,
        "export_status": g.export_status, "export_rule": g.export_rule,
        "export_rule_date": g.export_rule_date.isoformat() if g.export_rule_date else None,
        "source": g.source, "verification": g.verification, "date_checked": g.date_checked.isoformat(),
        "notes": g.notes,
    }


def list_gpus(catalog: Catalog, *, market: str | None = None, min_memory_bytes: float | None = None,
              vendor: str | None = None, segment: str | None = None, sort: str = "name") -> list[Gpu]:
    if sort not in GPU_SORTS:
        raise InputError("--sort", f"unknown sort key '{sort}'.", f"use one of: {', '.join(GPU_SORTS)}.")
    gpus = list(catalog.gpus.values())
    if vendor:
        vendors = {g.vendor.lower(): g.vendor for g in gpus}
        if vendor.lower() not in vendors:
            raise UnknownNameError("--vendor", "vendor", vendor, sorted(set(vendors.values())), "gpuplan gpus")
        gpus = [g for g in gpus if g.vendor.lower() == vendor.lower()]
    if segment:
        gpus = [g for g in gpus if g.segment == segment]
    if market == Market.CN:
        gpus = [g for g in gpus if g.sold_in_china or _offered_in(catalog, g.name, "cn")]
    if min_memory_bytes is not None:
        gpus = [g for g in gpus if g.memory_nominal_gb * GiB >= min_memory_bytes - 0.5 * GiB]
    keys = {
        "name": lambda g: (g.vendor, g.name), "memory": lambda g: -g.memory_bytes,
        "bandwidth": lambda g: -(g.memory_bandwidth_bytes_per_s or 0), "bf16": lambda g: -g.half_flops_per_s,
        "fp8": lambda g: -(g.fp8_flops_per_s or 0), "year": lambda g: -(g.launch_year or 0),
        "tdp": lambda g: -(g.tdp_w or 0),
    }
    return sorted(gpus, key=keys[sort])


def _offered_in(catalog: Catalog, gpu: str, market: str) -> bool:
    return any(o.gpu == gpu and o.market == market for o in catalog.offers)


def match_gpus(catalog: Catalog, names: Sequence[str], field: str = "--gpu", exact: bool = False) -> set[str]:
    """Canonical names for user-given names; a family name (``A100``) also matches its variants
    (``A100-80GB``, ``A100-PCIe``) unless ``exact``."""
    matched: set[str] = set()
    for name in names:
        canonical = catalog.gpu(name, field).name
        matched.add(canonical)
        if not exact:
            prefix = normalize(canonical)
            matched |= {g for g in catalog.gpus if normalize(g).startswith(prefix) and
                        g.startswith(canonical + "-")}
    return matched


@dataclass(frozen=True, slots=True)
class OfferView:
    """An offer with its price shown in the requested currency."""

    offer: Offer
    price_per_hour: float
    price_per_gpu_hour: float
    currency: str
    age_days: int
    today: dt.date

    def row(self) -> dict[str, Any]:
        o = self.offer
        return {
            "provider": o.provider, "instance_type": o.instance_type, "gpu": o.gpu, "gpu_count": o.gpu_count,
            "region": o.region, "market": o.market, "pricing": o.pricing,
            "price_per_hour": round(self.price_per_hour, 4),
            "price_per_gpu_hour": round(self.price_per_gpu_hour, 4), "currency": self.currency,
            "original_price_per_hour": o.price_per_hour, "original_currency": o.currency,
            "vcpus": o.vcpus, "ram_gib": None if o.ram_bytes is None else round(o.ram_bytes / GiB, 1),
            "billing_granularity_s": o.billing_granularity_s,
            "included_disk_gb": None if o.included_disk_bytes is None else o.included_disk_bytes / GB,
            "gpu_mapping": o.gpu_mapping, "commit_months": o.commit_months, "as_of": o.as_of.isoformat(),
            "dated": o.dated, "age_days": self.age_days, "price_age": price_age(o, self.today),
            "stale": o.is_stale(self.today), "source": o.source, "notes": o.notes,
        }


def list_offers(catalog: Catalog, *, gpus: Sequence[str] = (), exact: bool = False, market: str | None = None,
                currency: str | None = None, spot: bool | None = None, providers: Sequence[str] = (),
                min_gpus: float | None = None, sort: str = "gpu-price", today: dt.date | None = None,
                tiers: Sequence[str] = (),
                ) -> list[OfferView]:
    """Offers matching the filters (``tiers``: pricing models, default all), cheapest per GPU-hour first (or by
    ``sort``); at the same price a dated one before an undated one."""
    if sort not in OFFER_SORTS:
        raise InputError("--sort", f"unknown sort key '{sort}'.", f"use one of: {', '.join(OFFER_SORTS)}.")
    today = today or dt.date.today()
    offers = list(catalog.offers)
    if gpus:
        wanted = match_gpus(catalog, gpus, exact=exact)
        offers = [o for o in offers if o.gpu in wanted]
    if providers:
        offers = [o for o in offers if o.provider in resolve_providers(catalog, providers)]
    if market:
        offers = [o for o in offers if o.market == market]
    if spot is True:
        offers = [o for o in offers if o.pricing == "spot"]
    elif spot is False:
        offers = [o for o in offers if o.pricing != "spot"]
    if min_gpus is not None:
        offers = [o for o in offers if o.gpu_count >= min_gpus]
    if tiers:
        wanted_tiers = parse_tiers(tiers)
        offers = [o for o in offers if o.pricing in wanted_tiers]
    views = [_view(catalog, o, currency or o.currency, today) for o in offers]
    keys = {
        "price": lambda v: v.price_per_hour, "gpu-price": lambda v: v.price_per_gpu_hour,
        "gpus": lambda v: -v.offer.gpu_count, "provider": lambda v: v.offer.provider,
        "age": lambda v: (not v.offer.dated, v.age_days),  # an undated price's age is unknown: after the dated
    }
    if currency is None and len({v.currency for v in views}) > 1:
        usd = {id(v): catalog.convert(v.price_per_gpu_hour, v.currency, "USD") for v in views}
        keys["gpu-price"] = lambda v: usd[id(v)]
        keys["price"] = lambda v: catalog.convert(v.price_per_hour, v.currency, "USD")
    return sorted(views, key=lambda v: (keys[sort](v), not v.offer.dated, v.offer.provider, v.offer.instance_type))


def parse_tiers(tiers: Sequence[str], field: str = "--tier") -> tuple[str, ...]:
    """Pricing tiers named by the user (repeatable or comma-separated), checked against the accepted ones."""
    from gpuplan.catalog.schemas import PRICINGS  # with the tables' schemas and reader, which a listing skips

    out: list[str] = []
    for item in tiers:
        for name in (part.strip().lower() for part in item.split(",")):
            check_choice(field, name, PRICINGS)
            if name not in out:
                out.append(name)
    return tuple(out)


def price_age(o: Offer, today: dt.date) -> str:
    """How old the price is, as people read it: "97 d", or "undated (read on 2026-11-29)" when the source
    states no date (the read date is then only a lower bound on its age)."""
    if not o.dated:
        return say(f"undated (read on {o.as_of.isoformat()})", f"未注明日期（{o.as_of.isoformat()} 读取）")
    return say(f"{o.age_days(today)} d", f"{o.age_days(today)} 天")


def stale_note(o: Offer, today: dt.date) -> str:
    """The flag an offer older than STALE_AFTER_DAYS carries wherever it is shown ("" when recent)."""
    if not o.is_stale(today):
        return ""
    age = o.age_days(today)
    if o.dated:
        return say(f"price as of {o.as_of.isoformat()}, {age} days old (over {STALE_AFTER_DAYS}): check it",
                   f"价格日期 {o.as_of.isoformat()}，已 {age} 天（超过 {STALE_AFTER_DAYS} 天），请核实")
    return say(f"undated price read {age} days ago (over {STALE_AFTER_DAYS}): check it",
               f"未注明日期的价格，{age} 天前读取（超过 {STALE_AFTER_DAYS} 天），请核实")


def resolve_providers(catalog: Catalog, names: Sequence[str], field: str = "--providers",
                      platforms: bool = False) -> set[str]:
    """Canonical provider names for ``names``; with ``platforms``, notebook platforms (Kaggle, AutoDL …) count."""
    known = {normalize(p): p for p in catalog.providers()}
    if platforms:
        known.update({normalize(p.platform): p.platform for p in catalog.platforms})
    out: set[str] = set()
    for name in names:
        hit = known.get(normalize(name))
        if hit is None:
            raise UnknownNameError(field, "provider", name, catalog.providers(), "gpuplan offers")
        out.add(hit)
    return out


def _view(catalog: Catalog, o: Offer, currency: str, today: dt.date) -> OfferView:
    price = catalog.convert(o.price_per_hour, o.currency, currency)
    return OfferView(o, price, price / o.gpu_count, currency, o.age_days(today), today)


def model_rows(catalog: Catalog, query: str = "") -> list[dict[str, Any]]:
    """Presets whose name, repository or family contains ``query``, with their size."""
    q = normalize(query)
    rows = []
    for entry in sorted(catalog.models.values(), key=lambda e: (e.family, e.name)):
        if q and q not in normalize(entry.name) and q not in normalize(entry.hf_repo) and q not in entry.family:
            continue
        spec = catalog.model(entry.name)
        params = count_params(spec)
        rows.append({
            "name": entry.name, "family": entry.family, "hf_repo": entry.hf_repo, "model_type": spec.model_type,
            "params": params.total, "active_params": params.active, "layers": spec.n_layers,
            "hidden": spec.hidden, "heads": spec.n_heads, "kv_heads": spec.n_kv_heads,
            "experts": spec.n_experts or None, "max_positions": spec.max_positions,
            "remote_code": entry.remote_code, "source": entry.source, "as_of": entry.as_of.isoformat(),
        })
    return rows


def model_detail(catalog: Catalog, name_or_path: str) -> dict[str, Any]:
    """One model's architecture and parameter breakdown (what ``gpuplan model NAME`` shows)."""
    from gpuplan.estimate.memory import kv_bytes_per_token  # with the estimators' modules, which a listing skips

    spec = catalog.model(name_or_path)
    entry = find_preset(catalog, name_or_path)
    params = count_params(spec)
    arch = {
        "model_type": spec.model_type, "layers": spec.n_layers, "hidden": spec.hidden, "heads": spec.n_heads,
        "kv_heads": spec.n_kv_heads, "head_dim": spec.head_dim, "ffn_hidden": spec.ffn_hidden,
        "gated_mlp": spec.gated_mlp, "vocab": spec.vocab, "tied_embeddings": spec.tied_embeddings,
        "max_positions": spec.max_positions, "native_dtype": spec.native_dtype, "positional": spec.positional,
        "experts": spec.n_experts, "active_experts": spec.n_active_experts,
        "shared_experts": spec.n_shared_experts, "moe_ffn_hidden": spec.moe_ffn_hidden,
        "dense_layers": spec.n_dense_layers if spec.is_moe else None, "q_lora_rank": spec.q_lora_rank or None,
        "kv_lora_rank": spec.kv_lora_rank or None, "sliding_window": spec.sliding_window,
        "sliding_layers": spec.n_sliding_layers or None,
    }
    return {
        "name": spec.name, "architecture": arch, "params": params.as_dict(),
        "weights_bf16_gib": round(params.total * 2 / GiB, 2),
        "source": entry.source if entry else name_or_path, "hf_repo": entry.hf_repo if entry else None,
        "remote_code": entry.remote_code if entry else None,
        "published_params": entry.published_params if entry else None, "notes": list(spec.notes),
        "kv_cache_bytes_per_token_bf16": kv_bytes_per_token(spec, "bf16"),
    }


__all__ = ["gpu_row", "list_gpus", "list_offers", "match_gpus", "model_detail", "model_rows", "parse_tiers",
           "price_age", "stale_note"]
