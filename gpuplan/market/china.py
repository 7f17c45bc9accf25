"""Mainland Chinese clouds: Tencent Cloud (CVM DescribeZoneInstanceConfigInfos) and Alibaba Cloud (ECS
DescribePrice). Both price APIs need an account's access key, read from the environment and never stored."""

from __future__ import annotations

import base64
import datetime as dt
import hashlib
import hmac
import json
import re
import uuid
from typing import Any
from urllib.parse import quote

from gpuplan.market.http import ProviderError, need
from gpuplan.market.source import Fetched, Request

# ---------------------------------------------------------------- Tencent Cloud

TENCENT_API = "https://cvm.tencentcloudapi.com/"
TENCENT_DOC = "https://www.tencentcloud.com/document/api/213/33254"
TENCENT_SIGN_DOC = "https://www.tencentcloud.com/document/api/213/33224"  # TC3-HMAC-SHA256
TENCENT_KEY_ENV = "TENCENTCLOUD_SECRET_ID"
TENCENT_SECRET_ENV = "TENCENTCLOUD_SECRET_KEY"
_TENCENT_ZONE = re.compile(r"-\d+$")  # zone ap-beijing-5 lies in region ap-beijing


def fetch_tencent(req: Request) -> Fetched:
    secret_id = req.key(TENCENT_KEY_ENV, "Tencent Cloud console > CAM > API keys")
    secret_key = req.key(TENCENT_SECRET_ENV, "Tencent Cloud console > CAM > API keys")
    f = req.fetcher
    out = Fetched(source_url=TENCENT_API + "?Action=DescribeZoneInstanceConfigInfos")
    body = json.dumps({"Filters": [{"Name": "instance-charge-type", "Values": ["POSTPAID_BY_HOUR"]}]})
    for region in req.regions:
        headers = tc3_headers(secret_id, secret_key, "DescribeZoneInstanceConfigInfos", region, body,
                              int(dt.datetime.now(dt.timezone.utc).timestamp()))
        answer = f.json("POST", TENCENT_API, headers=headers, content=body)
        response = need(answer.get("Response") if isinstance(answer, dict) else None, dict, "'Response'", f,
                        TENCENT_API)
        if "Error" in response:
            raise _tencent_error(req, response["Error"])
        items = need(response.get("InstanceTypeQuotaSet"), list, "'InstanceTypeQuotaSet'", f, TENCENT_API)
        out.rows += [r for item in items if (r := _tencent_row(req, item, region)) and r not in out.rows]
    return out


def _tencent_error(req: Request, error: Any) -> ProviderError:
    error = error if isinstance(error, dict) else {}
    code = str(error.get("Code", "?"))
    fix = (f"check {TENCENT_KEY_ENV} and {TENCENT_SECRET_ENV}." if code.startswith("AuthFailure")
           else "retry later; the previous prices stay in use.")
    return ProviderError(req.fetcher.provider, f"the API answered error {code}: {error.get('Message', '')}", fix)


def _tencent_row(req: Request, item: Any, region: str) -> Any:
    f, url = req.fetcher, TENCENT_API
    item = need(item, dict, "an item of 'InstanceTypeQuotaSet'", f, url)
    n_gpus = item.get("Gpu") or 0
    if not n_gpus or item.get("InstanceChargeType") != "POSTPAID_BY_HOUR" or item.get("Status") != "SELL":
        return None
    sku = need(item.get("InstanceType"), str, "'InstanceType'", f, url)
    known = req.mapper.instance(sku)
    if known is None:
        req.mapper.miss(sku, f"{n_gpus} GPU(s) of family {item.get('InstanceFamily')}, model not named by the API")
        return None
    price = need(item.get("Price"), dict, "'Price'", f, url)
    if price.get("ChargeUnit") != "HOUR":
        return None
    field = "UnitPriceDiscount" if price.get("UnitPriceDiscount") not in (None, 0) else "UnitPrice"  # discounted
    zone = str(item.get("Zone", ""))
    return req.row(sku, known.gpu, known.gpu_count, _TENCENT_ZONE.sub("", zone) if zone else region, "on-demand",
                   float(need(price.get(field), (int, float), f"'Price.{field}'", f, url)), "CNY", url, market="cn",
                   vcpus=known.vcpus, ram_gib=known.ram_gib, zone=zone)


def tc3_headers(secret_id: str, secret_key: str, action: str, region: str, body: str, timestamp: int,
                service: str = "cvm", host: str = "cvm.tencentcloudapi.com") -> dict[str, str]:
    """Headers of a request signed with TC3-HMAC-SHA256, as Tencent Cloud's signature v3 page lays out."""
    date = dt.datetime.fromtimestamp(timestamp, dt.timezone.utc).strftime("%Y-%m-%d")
    content_type = "application/json; charset=utf-8"
    canonical = "\n".join(["POST", "/", "", f"content-type:{content_type}\nhost:{host}\n", "content-type;host",
                           hashlib.sha256(body.encode()).hexdigest()])
    scope = f"{date}/{service}/tc3_request"
    to_sign = "\n".join(["TC3-HMAC-SHA256", str(timestamp), scope, hashlib.sha256(canonical.encode()).hexdigest()])
    key = _hmac(("TC3" + secret_key).encode(), date)
    key = _hmac(_hmac(key, service), "tc3_request")
    signature = hmac.new(key, to_sign.encode(), hashlib.sha256).hexdigest()
    return {"Authorization": f"TC3-HMAC-SHA256 Credential={secret_id}/{scope}, SignedHeaders=content-type;host, "
                             f"Signature={signature}",
            "Content-Type": content_type, "Host": host, "X-TC-Action": action, "X-TC-Version": "2017-03-12",
            "X-TC-Region": region, "X-TC-Timestamp": str(timestamp)}


def _hmac(key: bytes, msg: str) -> bytes:
    return hmac.new(key, msg.encode(), hashlib.sha256).digest()


# ---------------------------------------------------------------- Alibaba Cloud

ALIYUN_API = "https://ecs.aliyuncs.com/"
ALIYUN_DOC = "https://help.aliyun.com/document_detail/107829.html"  # ECS DescribePrice
ALIYUN_KEY_ENV = "ALIBABA_CLOUD_ACCESS_KEY_ID"
ALIYUN_SECRET_ENV = "ALIBABA_CLOUD_ACCESS_KEY_SECRET"
_ALIYUN_TYPE = re.compile(r"ecs\.[a-z0-9.-]+")
_ALIYUN_REGION = re.compile(r"[a-z]{2}-[a-z0-9-]+")


def fetch_aliyun(req: Request) -> Fetched:
    """The pay-as-you-go hourly price of each GPU instance type the catalog lists for Alibaba Cloud, per region
    (DescribePrice prices one instance type at a time)."""
    key_id = req.key(ALIYUN_KEY_ENV, "Alibaba Cloud console > AccessKey")
    secret = req.key(ALIYUN_SECRET_ENV, "Alibaba Cloud console > AccessKey")
    f = req.fetcher
    out = Fetched(source_url=ALIYUN_API + "?Action=DescribePrice")
    for instance_type, region in req.mapper.instance_types():
        if not (_ALIYUN_TYPE.fullmatch(instance_type) and _ALIYUN_REGION.fullmatch(region)) or (
                req.regions and region not in req.regions):
            continue  # catalog rows for a platform or an unnamed region are not ECS instance types
        params = {"Action": "DescribePrice", "Version": "2014-05-26", "RegionId": region, "ResourceType": "instance",
                  "InstanceType": instance_type, "PriceUnit": "Hour", "Format": "JSON"}
        answer = f.json("GET", ALIYUN_API, accept=(400, 404), params=rpc_signed(params, key_id, secret))
        if isinstance(answer, dict) and "Code" in answer and "PriceInfo" not in answer:
            code = str(answer["Code"])
            if not code.startswith("InvalidInstanceType"):
                raise _aliyun_error(req, code, str(answer.get("Message", "")))
            req.mapper.absent(instance_type, region, code)
            continue
        info = need(answer.get("PriceInfo") if isinstance(answer, dict) else None, dict, "'PriceInfo'", f, ALIYUN_API)
        price = need(info.get("Price"), dict, "'PriceInfo.Price'", f, ALIYUN_API)
        trade = need(price.get("TradePrice"), (int, float), "'PriceInfo.Price.TradePrice'", f, ALIYUN_API)
        known = req.mapper.instance(instance_type)
        if known is None or trade <= 0:
            continue
        out.rows.append(req.row(instance_type, known.gpu, known.gpu_count, region, "on-demand", float(trade),
                                need(price.get("Currency"), str, "'Currency'", f, ALIYUN_API),
                                ALIYUN_API + "?Action=DescribePrice", market="cn",
                                vcpus=known.vcpus, ram_gib=known.ram_gib))
    return out


def _aliyun_error(req: Request, code: str, message: str) -> ProviderError:
    """An error answer of DescribePrice: a refused key names the variables to check; anything else is the
    provider's error with its code."""
    if code.startswith(("InvalidAccessKeyId", "Forbidden")) or code == "SignatureDoesNotMatch":
        fix = (f"check {ALIYUN_KEY_ENV} and {ALIYUN_SECRET_ENV} (an AccessKey of the account, enabled, with "
               "permission to call ECS DescribePrice); the previous prices stay in use.")
        return ProviderError(req.fetcher.provider, f"the API refused the key: {code}: {message}", fix)
    return ProviderError(req.fetcher.provider, f"the API answered error {code}: {message}",
                         "retry later; the previous prices stay in use.")


def rpc_signed(params: dict[str, str], key_id: str, secret: str, nonce: str = "",
               timestamp: str = "") -> dict[str, str]:
    """``params`` with Alibaba Cloud's RPC signature (HMAC-SHA1 of the sorted, percent-encoded query)."""
    full = {**params, "AccessKeyId": key_id, "SignatureMethod": "HMAC-SHA1", "SignatureVersion": "1.0",
            "SignatureNonce": nonce or uuid.uuid4().hex,
            "Timestamp": timestamp or dt.datetime.now(dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")}
    query = "&".join(f"{_pct(k)}={_pct(v)}" for k, v in sorted(full.items()))
    to_sign = f"GET&{_pct('/')}&{_pct(query)}"
    digest = hmac.new((secret + "&").encode(), to_sign.encode(), hashlib.sha1).digest()
    return {**full, "Signature": base64.b64encode(digest).decode()}


def _pct(text: str) -> str:
    return quote(text, safe="~")
