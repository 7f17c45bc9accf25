"""``gpuplan refresh``: fetch each provider in isolation and store what it returned as one batch.

One provider failing (network, rate limit, a response that is not what it documents, a missing key) leaves
the others and its own earlier rows untouched; the result says, per provider, what happened.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import httpx

from gpuplan.catalog import Catalog
from gpuplan.errors import OfflineError, UnknownNameError
from gpuplan.market import OFFLINE_ENV, china, fx, gpuclouds, hyperscalers, is_offline, store
from gpuplan.market.http import TIMEOUT, Fetcher, MissingKeyError, ProviderError
from gpuplan.market.mapping import Mapper
from gpuplan.market.source import Provider, Request

PROVIDERS: tuple[Provider, ...] = (
    Provider("aws", "AWS", hyperscalers.fetch_aws, hyperscalers.AWS_DOC, default_regions=("us-east-1",)),
    Provider("azure", "Azure", hyperscalers.fetch_azure, hyperscalers.AZURE_DOC, default_regions=("eastus",)),
    Provider("gcp", "GCP", hyperscalers.fetch_gcp, hyperscalers.GCP_DOC, key_env=hyperscalers.GCP_KEY_ENV),
    Provider("runpod", "RunPod", gpuclouds.fetch_runpod, gpuclouds.RUNPOD_DOC, key_env=gpuclouds.RUNPOD_KEY_ENV),
    Provider("vastai", "Vast.ai", gpuclouds.fetch_vast, gpuclouds.VAST_DOC, key_env=gpuclouds.VAST_KEY_ENV,
             key_optional=True),
    Provider("lambda", "Lambda", gpuclouds.fetch_lambda, gpuclouds.LAMBDA_DOC, key_env=gpuclouds.LAMBDA_KEY_ENV),
    Provider("tencent", "Tencent Cloud", china.fetch_tencent, china.TENCENT_DOC,
             key_env=f"{china.TENCENT_KEY_ENV} + {china.TENCENT_SECRET_ENV}",
             default_regions=("ap-beijing", "ap-shanghai", "ap-guangzhou")),
    Provider("aliyun", "Alibaba Cloud", china.fetch_aliyun, china.ALIYUN_DOC,
             key_env=f"{china.ALIYUN_KEY_ENV} + {china.ALIYUN_SECRET_ENV}"),
    Provider("ecb", "ECB (FX rates)", fx.fetch_ecb, fx.ECB_DOC),
)
BY_KEY = {p.key: p for p in PROVIDERS}
STATUSES = ("stored", "failed", "skipped")


@dataclass
class Outcome:
    """What refreshing one provider did: ``stored`` (a new batch), ``failed`` or ``skipped`` (no key, and the
    provider was not asked for by name); ``message`` says why for the last two."""

    key: str
    provider: str
    status: str
    n_rows: int = 0
    n_fx: int = 0
    batch_id: int | None = None
    unmapped: dict[str, str] = field(default_factory=dict)
    not_offered: dict[str, str] = field(default_factory=dict)  # "SKU in region" the provider says it does not sell
    clashes: dict[str, str] = field(default_factory=dict)  # offer -> its different prices in one answer
    message: str = ""
    fix: str = ""


def resolve(keys: Sequence[str]) -> list[Provider]:
    """The providers named (all of them for none); an unknown name is an input error with suggestions."""
    out = []
    for key in keys:
        provider = BY_KEY.get(key.strip().lower())
        if provider is None:
            raise UnknownNameError("PROVIDER", "price source", key, list(BY_KEY), "gpuplan refresh --help")
        out.append(provider)
    return list(dict.fromkeys(out)) or list(PROVIDERS)


def refresh(catalog: Catalog, keys: Sequence[str] = (), regions: Sequence[str] = (), *,
            client: httpx.Client | None = None, env: Mapping[str, str] | None = None, path: Path | None = None,
            sleep: Callable[[float], None] | None = None) -> list[Outcome]:
    """Fetch and store each provider in turn; never raises for one provider's failure. A store that cannot be
    written (locked, read-only, corrupt) raises its :class:`store.StoreError` before anything is fetched."""
    providers = resolve(keys)
    env = os.environ if env is None else env
    if client is None and is_offline():
        raise OfflineError(f"gpuplan refresh needs the network, and {OFFLINE_ENV} is set.",
                           f"unset {OFFLINE_ENV} to refresh; plans and listings go on with the prices already "
                           "stored and the bundled ones.")
    store.check_writable(path)
    own = client is None
    client = client or httpx.Client(timeout=TIMEOUT, follow_redirects=True)
    try:
        return [_one(p, catalog, regions_for(p, regions), client, env, path, bool(keys), sleep) for p in providers]
    finally:
        if own:
            client.close()


def regions_for(p: Provider, regions: Sequence[str]) -> tuple[str, ...]:
    """``aws:us-west-2`` is for AWS only, a bare ``us-west-2`` for every provider priced per region; none given
    for a provider: its defaults."""
    mine = [r.split(":", 1)[1] for r in regions if r.lower().startswith(p.key + ":")]
    shared = [r for r in regions if ":" not in r]
    return tuple(mine + shared) or p.default_regions


def _one(p: Provider, catalog: Catalog, regions: tuple[str, ...], client: httpx.Client, env: Mapping[str, str],
         path: Path | None, named: bool, sleep: Callable[[float], None] | None) -> Outcome:
    fetcher = Fetcher(p.name, client) if sleep is None else Fetcher(p.name, client, sleep)
    mapper = Mapper(catalog, p.name)
    req = Request(fetcher, mapper, env, regions, store.now_utc())
    try:
        got = p.fetch(req)
        if not got.rows and not got.fx:
            raise ProviderError(p.name, "the answer held no GPU price gpuplan can use (every SKU unmapped, or "
                                "none listed).", "see the unmapped SKUs below; the previous prices stay in use.")
        rows, clashes = _one_per_offer(got.rows)
        batch = store.write_batch(p.name, rows, got.fx, got.source_url, req.fetched_at, path)
    except MissingKeyError as err:
        status = "failed" if named else "skipped"
        return Outcome(p.key, p.name, status, unmapped=mapper.unmapped, message=err.message, fix=err.fix)
    except (ProviderError, store.StoreError) as err:  # StoreError: e.g. another refresh holds the lock
        return Outcome(p.key, p.name, "failed", unmapped=mapper.unmapped, message=err.message, fix=err.fix)
    except httpx.HTTPError as err:  # anything the fetcher did not already turn into a provider's message
        return Outcome(p.key, p.name, "failed", unmapped=mapper.unmapped,
                       message=f"{p.name}: {type(err).__name__}: {err}", fix="retry later; the previous prices "
                       "stay in use.")
    return Outcome(p.key, p.name, "stored", len(rows), len(got.fx), batch, mapper.unmapped, mapper.not_offered,
                   clashes=clashes)


def _one_per_offer(rows: Sequence[store.PriceRow]) -> tuple[list[store.PriceRow], dict[str, str]]:
    """One row per offer (instance type, region, zone, tier, unit): a repeated identical row is dropped; rows
    of one offer with different prices keep the lowest, and each such offer is reported with its prices."""
    by_offer: dict[tuple[str, ...], list[store.PriceRow]] = {}
    for r in rows:
        by_offer.setdefault((r.instance_type, r.region, r.zone, r.tier, r.unit), []).append(r)
    clashes = {" ".join(filter(None, key[:4])): ", ".join(f"{p:g}" for p in sorted({r.price_per_hour for r in same}))
               + f" {same[0].currency}" for key, same in by_offer.items() if len({r.price_per_hour for r in same}) > 1}
    return [min(same, key=lambda r: r.price_per_hour) for same in by_offer.values()], clashes
