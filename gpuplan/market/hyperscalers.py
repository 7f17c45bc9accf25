"""AWS, Azure and Google Cloud: their public price lists, reduced to GPU instances."""

from __future__ import annotations

import csv
import re
from typing import Any
from urllib.parse import quote

from gpuplan.market.http import need
from gpuplan.market.source import Fetched, Request

# ---------------------------------------------------------------- AWS: the Price List Bulk API's offer files

AWS_OFFER = "https://pricing.us-east-1.amazonaws.com/offers/v1.0/aws/AmazonEC2/current/{region}/index.csv"
AWS_DOC = "https://docs.aws.amazon.com/awsaccountbilling/latest/aboutv2/reading-service-price-list-file-for-services.html"
_AWS_COLUMNS = ("TermType", "PricePerUnit", "Currency", "Unit", "Instance Type", "Operating System", "Tenancy",
                "Pre Installed S/W", "CapacityStatus", "Region Code", "GPU", "vCPU", "Memory")
_AWS_METADATA_ROWS = 5  # the documented layout: five rows of file metadata, then the column names


def fetch_aws(req: Request) -> Fetched:
    out = Fetched()
    for region in req.regions:
        url = AWS_OFFER.format(region=region)
        out.source_url = out.source_url or url
        with req.fetcher.lines(url) as lines:
            out.rows += _aws_rows(req, url, lines)
    return out


def _aws_rows(req: Request, url: str, lines: Any) -> list[Any]:
    records = csv.reader(lines)
    for _ in range(_AWS_METADATA_ROWS):
        next(records, None)
    header = next(records, None) or []
    missing = [c for c in _AWS_COLUMNS if c not in header]
    if missing:
        raise req.fetcher.malformed(url, f"no column {', '.join(missing)} in row {_AWS_METADATA_ROWS + 1}")
    at = {c: header.index(c) for c in _AWS_COLUMNS}
    rows = []
    for rec in records:
        if len(rec) < len(header):
            continue
        v = {c: rec[i] for c, i in at.items()}
        if not _aws_linux_on_demand(v) or v["GPU"] in ("", "NA", "0"):
            continue
        known = req.mapper.instance(v["Instance Type"])
        if known is None:
            req.mapper.miss(v["Instance Type"], f"{v['GPU']} GPU(s), model not named by the price list")
            continue
        rows.append(req.row(v["Instance Type"], known.gpu, known.gpu_count, v["Region Code"], "on-demand",
                            _number(req, url, v["PricePerUnit"], "PricePerUnit"), v["Currency"], url,
                            vcpus=_number(req, url, v["vCPU"], "vCPU"), ram_gib=_gib(v["Memory"])))
    return rows


def _aws_linux_on_demand(v: dict[str, str]) -> bool:
    return (v["TermType"] == "OnDemand" and v["Operating System"] == "Linux" and v["Tenancy"] == "Shared"
            and v["Pre Installed S/W"] == "NA" and v["CapacityStatus"] == "Used" and v["Unit"] == "Hrs")


def _gib(text: str) -> float | None:
    m = re.fullmatch(r"([0-9.,]+) GiB", text.strip())
    return float(m.group(1).replace(",", "")) if m else None


def _number(req: Request, url: str, text: str, what: str) -> float:
    try:
        return float(text)
    except ValueError:
        raise req.fetcher.malformed(url, f"{what} {text!r} is not a number") from None


# ---------------------------------------------------------------- Azure: the Retail Prices API

AZURE_API = "https://prices.azure.com/api/retail/prices"
AZURE_DOC = "https://learn.microsoft.com/rest/api/cost-management/retail-prices/azure-retail-prices"
_AZURE_MAX_PAGES = 200


def fetch_azure(req: Request) -> Fetched:
    out = Fetched()
    for region in req.regions:
        odata = (f"serviceName eq 'Virtual Machines' and priceType eq 'Consumption' and "
                 f"armRegionName eq '{region}'")
        url: str | None = f"{AZURE_API}?$filter={quote(odata)}"
        out.source_url = out.source_url or f"{AZURE_API}?$filter={odata}"
        for _ in range(_AZURE_MAX_PAGES):
            if not url:
                break
            page = req.fetcher.json("GET", url)
            items = need(page.get("Items") if isinstance(page, dict) else None, list, "'Items'", req.fetcher, url)
            out.rows += [r for item in items if (r := _azure_row(req, url, item))]
            url = page.get("NextPageLink") or None
    return out


def _azure_row(req: Request, url: str, item: Any) -> Any:
    item = need(item, dict, "an item of 'Items'", req.fetcher, url)
    sku = need(item.get("armSkuName"), str, "'armSkuName'", req.fetcher, url)
    product = str(item.get("productName", ""))
    if not re.match(r"Standard_N[CDVG]", sku) or "Windows" in product or item.get("unitOfMeasure") != "1 Hour":
        return None
    sku_name = str(item.get("skuName", ""))
    if "Low Priority" in sku_name:
        return None
    known = req.mapper.instance(sku)
    if known is None:
        req.mapper.miss(sku, product or "GPU model not named by the price API")
        return None
    price = need(item.get("retailPrice"), (int, float), "'retailPrice'", req.fetcher, url)
    return req.row(sku, known.gpu, known.gpu_count, str(item.get("armRegionName", "")),
                   "spot" if "Spot" in sku_name else "on-demand", float(price),
                   need(item.get("currencyCode"), str, "'currencyCode'", req.fetcher, url), url,
                   vcpus=known.vcpus, ram_gib=known.ram_gib)


# ---------------------------------------------------------------- Google Cloud: the Cloud Billing Catalog API

GCP_SKUS = "https://cloudbilling.googleapis.com/v1/services/6F81-5844-456A/skus"  # 6F81-5844-456A: Compute Engine
GCP_DOC = "https://cloud.google.com/billing/v1/how-tos/catalog-api"
GCP_KEY_ENV = "GPUPLAN_GCP_API_KEY"
_GCP_TIERS = {"OnDemand": "on-demand", "Preemptible": "spot"}
_GCP_GPU = re.compile(r"^(?:Spot Preemptible |Preemptible )?Nvidia (.+?) GPU(?: attached to Spot Preemptible VMs)? "
                      r"running in ", re.IGNORECASE)


def fetch_gcp(req: Request) -> Fetched:
    key = req.key(GCP_KEY_ENV, "Google Cloud console > APIs & Services > Credentials, with the Cloud Billing API on")
    out = Fetched(source_url=GCP_SKUS)
    token = ""
    for _ in range(100):
        page = req.fetcher.json("GET", GCP_SKUS, params={"key": key, "pageSize": 5000,
                                                           **({"pageToken": token} if token else {})})
        skus = need(page.get("skus") if isinstance(page, dict) else None, list, "'skus'", req.fetcher, GCP_SKUS)
        for sku in skus:
            out.rows += _gcp_rows(req, sku)
        token = page.get("nextPageToken") or ""
        if not token:
            break
    return out


def _gcp_rows(req: Request, sku: Any) -> list[Any]:
    f, url = req.fetcher, GCP_SKUS
    sku = need(sku, dict, "a SKU", f, url)
    category = need(sku.get("category"), dict, "'category'", f, url)
    tier = _GCP_TIERS.get(str(category.get("usageType")))
    m = _GCP_GPU.match(str(sku.get("description", "")))
    if category.get("resourceGroup") != "GPU" or tier is None or not m:
        return []
    name = m.group(1)
    gpu = req.mapper.gpu(name, name.replace("Tesla ", ""), f"NVIDIA {name}")
    if gpu is None:
        req.mapper.miss(str(sku.get("description")), name)
        return []
    info = need(sku.get("pricingInfo"), list, "'pricingInfo'", f, url)
    expression = need(info[-1] if info else None, dict, "'pricingInfo[-1]'", f, url).get("pricingExpression", {})
    rates = need(expression.get("tieredRates"), list, "'tieredRates'", f, url)
    if expression.get("usageUnit") != "h" or not rates:
        return []
    unit_price = need(rates[-1].get("unitPrice") if isinstance(rates[-1], dict) else None, dict, "'unitPrice'", f, url)
    units = need(unit_price.get("units", "0"), (str, int), "'units'", f, url)
    price = round(_number(req, url, str(units), "'units'") + need(unit_price.get("nanos", 0), int, "'nanos'", f, url)
                  / 1e9, 9)
    if price <= 0:
        return []
    regions = need(sku.get("serviceRegions", []), list, "'serviceRegions'", f, url)
    return [req.row(f"{gpu} (GPU only)", gpu, 1, str(region), tier, price,
                    need(unit_price.get("currencyCode"), str, "'currencyCode'", f, url), url, unit="gpu-only")
            for region in regions]
