"""Column schemas of the catalog files (documented column by column in ``gpuplan/data/README.md``)."""

from __future__ import annotations

from gpuplan.catalog.csvload import Column as C
from gpuplan.types import MARKETS

__all__ = ["MARKETS"]
CURRENCIES = ("USD", "CNY", "EUR")
PRICINGS = ("on-demand", "spot", "reserved", "marketplace")
EXPORT_STATUSES = ("unrestricted", "restricted", "china-compliant", "license-required", "domestic", "not-sold")
SEGMENTS = ("datacenter", "workstation", "consumer", "laptop", "desktop", "tpu", "npu")
VENDORS = ("NVIDIA", "AMD", "Intel", "Google", "Huawei", "AWS", "Apple")
FORM_FACTORS = ("PCIe", "SXM2", "SXM4", "SXM5", "SXM6", "OAM", "NVL", "Superchip", "TPU", "Board")
VERIFICATIONS = ("read-at-source", "datasheet-cited", "secondhand")
PRICE_KINDS = ("list", "street", "retail", "msrp", "system-share")
PROVIDER_TIERS = ("hyperscaler", "gpu-cloud", "marketplace", "notebook")

_TFLOPS = dict(kind="float", positive=True, max=1e5)

GPUS = (
    C("name", required=True), C("vendor", "enum", True, VENDORS), C("segment", "enum", True, SEGMENTS),
    C("architecture", required=True), C("chip"), C("form_factor", "enum", True, FORM_FACTORS),
    C("memory_type"), C("memory_nominal_gb", "float", True, positive=True, max=4096),
    C("memory_visible_mib", "float", positive=True, max=4 * 1024 * 1024),
    C("memory_bandwidth_gb_s", "float", positive=True, max=1e5),
    C("fp32_tflops", **_TFLOPS), C("tf32_tflops", **_TFLOPS), C("fp16_tflops", **_TFLOPS),  # type: ignore[arg-type]
    C("bf16_tflops", **_TFLOPS), C("fp8_tflops", **_TFLOPS), C("int8_tops", **_TFLOPS),  # type: ignore[arg-type]
    C("fp4_tflops", **_TFLOPS),  # type: ignore[arg-type]
    C("interconnect", required=True), C("interconnect_gb_s", "float", positive=True, max=1e5),
    C("pcie_gen", "int", min=1, max=7), C("tdp_w", "float", positive=True, max=5000),
    C("launch_year", "int", min=2010, max=2035),
    C("export_status", "enum", True, EXPORT_STATUSES), C("export_rule", required=True),
    C("export_rule_date", "date"),
    C("sm_count", "int", min=1, max=1000, optional=True),
    C("boost_clock_mhz", "float", positive=True, max=10_000, optional=True),
    C("matrix_fp16_tflops", optional=True, **_TFLOPS),  # type: ignore[arg-type]
    C("source", required=True), C("verification", "enum", True, VERIFICATIONS),
    C("date_checked", "date", True), C("notes"),
)

GPU_ALIASES = (C("alias", required=True), C("name", required=True))

PURCHASE_PRICES = (
    C("gpu", required=True), C("market", "enum", True, MARKETS), C("price", "float", True, positive=True),
    C("currency", "enum", True, CURRENCIES), C("price_kind", "enum", True, PRICE_KINDS),
    C("memory_nominal_gb", "float", positive=True), C("source", required=True), C("as_of", "date", True),
    C("notes"),
)

OFFERS = (
    C("provider", required=True), C("instance_type", required=True), C("gpu", required=True),
    C("gpu_count", "float", True, positive=True, max=1024), C("vcpus", "float", positive=True, max=4096),
    C("ram_gib", "float", positive=True, max=65536), C("region", required=True),
    C("market", "enum", True, MARKETS), C("price_per_hour", "float", True, positive=True, max=1e5),
    C("currency", "enum", True, CURRENCIES), C("pricing", "enum", True, PRICINGS),
    C("commit_months", "int", min=1, max=120, optional=True),
    C("billing_granularity_s", "float", positive=True, max=31 * 86400),
    C("included_disk_gb", "float", min=0, max=1e6), C("storage_price_per_gb_month", "float", min=0, max=1e3),
    C("gpu_mapping", "enum", True, ("stated", "inferred")), C("source", required=True),
    C("as_of", "date", True), C("dated", "bool", optional=True), C("notes"),
)

PLATFORMS = (
    C("platform", required=True), C("tier", required=True), C("market", "enum", True, MARKETS),
    C("gpu", required=True), C("gpu_count", "float", True, positive=True, max=64),
    C("price_per_month", "float", min=0, max=1e5), C("price_per_hour", "float", min=0, max=1e4),
    C("currency", "enum", True, CURRENCIES), C("weekly_gpu_hours", "float", positive=True, max=168 * 8),
    C("session_max_hours", "float", positive=True, max=24 * 31),
    C("idle_timeout_min", "float", positive=True, max=24 * 60 * 31),
    C("guaranteed", "bool", True), C("source", required=True), C("as_of", "date", True), C("notes"),
)

# Each fact column is paired with the column that says where it was read (a fact without its source is a load error).
PROVIDER_FACT_SOURCES = (
    (("sla_pct", "sla_multi_zone_pct"), "sla_source"), (("preemption_notice_s",), "preemption_source"),
    (("min_billing_s",), "billing_source"), (("egress_usd_per_gb",), "egress_source"),
    (("zones_per_region",), "zones_source"), (("skypilot_cloud",), "skypilot_source"),
)

PROVIDERS = (
    C("provider", required=True), C("tier", "enum", True, PROVIDER_TIERS),
    C("sla_pct", "float", min=50, max=100), C("sla_multi_zone_pct", "float", min=50, max=100), C("sla_source"),
    C("preemption_notice_s", "float", min=0, max=86400), C("preemption_source"),
    C("min_billing_s", "float", positive=True, max=31 * 86400), C("billing_source"),
    C("egress_usd_per_gb", "float", min=0, max=10), C("egress_source"),
    C("zones_per_region", "int", min=1, max=20), C("zones_source"),
    C("skypilot_cloud"), C("skypilot_source"),
    C("source", required=True), C("as_of", "date", True), C("notes"),
)

FX = (
    C("date", "date", True), C("base", "enum", True, CURRENCIES), C("quote", "enum", True, CURRENCIES),
    C("rate", "float", True, positive=True, max=1e4), C("source", required=True),
)

MODEL_INDEX = (
    C("name", required=True), C("hf_repo"), C("family", required=True), C("remote_code", "bool", True),
    C("published_params", "float", positive=True, max=1e14), C("source", required=True),
    C("as_of", "date", True), C("notes"), C("head_stored", "bool", optional=True),
)

# models/aliases.csv: another published name (a Hub repo id) for a preset's architecture, each with its source
MODEL_ALIASES = (C("alias", required=True), C("name", required=True), C("source", required=True),
                 C("as_of", "date", True), C("notes"))
