"""GPU clouds with public price endpoints: RunPod, Vast.ai, Lambda."""

from __future__ import annotations

import json
from typing import Any

from gpuplan.market.http import need
from gpuplan.market.source import Fetched, Request
from gpuplan.market.store import NO_CAPACITY

# ---------------------------------------------------------------- RunPod: the GraphQL API's gpuTypes

RUNPOD_API = "https://api.runpod.io/graphql"
RUNPOD_DOC = "https://graphql-spec.runpod.io/"
RUNPOD_KEY_ENV = "RUNPOD_API_KEY"
_RUNPOD_QUERY = ("query GpuTypes { gpuTypes { id displayName memoryInGb securePrice communityPrice "
                 "secureSpotPrice communitySpotPrice } }")
# price field -> (tier, cloud named in the instance type); Community Cloud runs on third-party hosts
_RUNPOD_PRICES = {"securePrice": ("on-demand", "SECURE"), "secureSpotPrice": ("spot", "SECURE"),
                  "communityPrice": ("marketplace", "COMMUNITY"), "communitySpotPrice": ("spot", "COMMUNITY")}


def fetch_runpod(req: Request) -> Fetched:
    key = req.key(RUNPOD_KEY_ENV, "RunPod console > Settings > API Keys")
    f = req.fetcher
    answer = f.json("POST", RUNPOD_API, headers={"Authorization": f"Bearer {key}"}, json={"query": _RUNPOD_QUERY})
    if isinstance(answer, dict) and answer.get("errors"):
        raise f.malformed(RUNPOD_API, f"GraphQL errors: {str(answer['errors'])[:160]}")
    data = need(answer.get("data") if isinstance(answer, dict) else None, dict, "'data'", f, RUNPOD_API)
    out = Fetched(source_url=RUNPOD_API)
    for t in need(data.get("gpuTypes"), list, "'data.gpuTypes'", f, RUNPOD_API):
        t = need(t, dict, "a gpuType", f, RUNPOD_API)
        gpu_id = need(t.get("id"), str, "'id'", f, RUNPOD_API)
        gpu = req.mapper.gpu(gpu_id, str(t.get("displayName", "")))
        if gpu is None:
            req.mapper.miss(gpu_id, str(t.get("displayName", "")))
            continue
        for field, (tier, cloud) in _RUNPOD_PRICES.items():
            price = t.get(field)
            if price is None or price == 0:
                continue
            price = need(price, (int, float), f"'{field}'", f, RUNPOD_API)
            out.rows.append(req.row(f"1x {gpu_id} {cloud}", gpu, 1, "(any)", tier, float(price), "USD",
                                    RUNPOD_API))
    return out


# ---------------------------------------------------------------- Vast.ai: the marketplace's bundles search

VAST_API = "https://console.vast.ai/api/v0/bundles/"
VAST_DOC = "https://www.vast.ai/developers/api"
VAST_KEY_ENV = "VAST_API_KEY"
_VAST_QUERY = {"rentable": {"eq": True}, "verified": {"eq": True}, "type": "on-demand", "limit": 1000}


def fetch_vast(req: Request) -> Fetched:
    """The cheapest verified, rentable listing per GPU model and count (a marketplace holds hundreds)."""
    f = req.fetcher
    key = req.env.get(VAST_KEY_ENV, "").strip()
    answer = f.json("GET", VAST_API, params={"q": json.dumps(_VAST_QUERY)},
                    headers={"Authorization": f"Bearer {key}"} if key else None)
    offers = need(answer.get("offers") if isinstance(answer, dict) else None, list, "'offers'", f, VAST_API)
    cheapest: dict[tuple[str, float], Any] = {}
    for o in offers:
        o = need(o, dict, "an offer", f, VAST_API)
        name = need(o.get("gpu_name"), str, "'gpu_name'", f, VAST_API)
        n = float(need(o.get("num_gpus"), (int, float), "'num_gpus'", f, VAST_API))
        price = float(need(o.get("dph_total"), (int, float), "'dph_total'", f, VAST_API))
        gpu = req.mapper.gpu(name, name.replace("_", " "))
        if gpu is None:
            req.mapper.miss(name, name)
            continue
        if n > 0 and price > 0 and ((gpu, n) not in cheapest or price < cheapest[(gpu, n)][0]):
            cheapest[(gpu, n)] = (price, o)
    out = Fetched(source_url=VAST_API)
    for (gpu, n), (price, o) in sorted(cheapest.items()):
        out.rows.append(req.row(f"vast-{gpu.lower()}-{n:g}x", gpu, n, str(o.get("geolocation") or "(marketplace)"),
                                "marketplace", price, "USD", VAST_API,
                                vcpus=_float(o.get("cpu_cores_effective")), ram_gib=_mib_to_gib(o.get("cpu_ram"))))
    return out


def _float(v: Any) -> float | None:
    return float(v) if isinstance(v, (int, float)) and not isinstance(v, bool) and v > 0 else None


def _mib_to_gib(v: Any) -> float | None:
    x = _float(v)
    return round(x / 1024, 1) if x else None


# ---------------------------------------------------------------- Lambda: the Cloud API's instance types

LAMBDA_API = "https://cloud.lambda.ai/api/v1/instance-types"
LAMBDA_DOC = "https://docs-api.lambda.ai/api/cloud#listInstanceTypes"
LAMBDA_KEY_ENV = "LAMBDA_API_KEY"


def fetch_lambda(req: Request) -> Fetched:
    key = req.key(LAMBDA_KEY_ENV, "Lambda Cloud dashboard > API keys")
    f = req.fetcher
    answer = f.json("GET", LAMBDA_API, headers={"Authorization": f"Bearer {key}"})
    data = need(answer.get("data") if isinstance(answer, dict) else None, dict, "'data'", f, LAMBDA_API)
    out = Fetched(source_url=LAMBDA_API)
    for name, entry in data.items():
        entry = need(entry, dict, f"'data.{name}'", f, LAMBDA_API)
        it = need(entry.get("instance_type"), dict, f"'data.{name}.instance_type'", f, LAMBDA_API)
        specs = need(it.get("specs"), dict, f"'data.{name}.instance_type.specs'", f, LAMBDA_API)
        cents = need(it.get("price_cents_per_hour"), (int, float), "'price_cents_per_hour'", f, LAMBDA_API)
        n = need(specs.get("gpus"), (int, float), "'specs.gpus'", f, LAMBDA_API)
        known = req.mapper.instance(name)
        gpu = known.gpu if known else req.mapper.gpu(str(it.get("gpu_description", "")))
        if gpu is None or n <= 0:
            if n > 0:
                req.mapper.miss(name, str(it.get("gpu_description", "")))
            continue
        regions = need(entry.get("regions_with_capacity_available", []), list, "'regions_with_capacity_available'",
                       f, LAMBDA_API)
        names = [str(r.get("name")) for r in regions if isinstance(r, dict) and r.get("name")] or [NO_CAPACITY]
        for region in names:
            out.rows.append(req.row(name, gpu, float(n), region, "on-demand", cents / 100, "USD", LAMBDA_API,
                                    vcpus=_float(specs.get("vcpus")), ram_gib=_float(specs.get("memory_gib"))))
    return out
