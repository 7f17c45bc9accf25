"""Catalog integrity over the shipped data files, and users' own catalog folders (override and errors)."""

from __future__ import annotations

import csv
import datetime as dt
import json
import shutil
from pathlib import Path

import pytest
from conftest import read_csv

from gpuplan.catalog import BUNDLED_DIR, ENV_VAR, Catalog, load_catalog
from gpuplan.errors import CatalogError, InputError, UnknownNameError
from gpuplan.listing import match_gpus

TODAY = dt.date.today()

# ---------------------------------------------------------------- integrity of the bundled files


def test_every_offer_gpu_is_a_catalog_gpu(catalog: Catalog) -> None:
    assert {o.gpu for o in catalog.offers} <= set(catalog.gpus)


def test_every_raw_offer_gpu_cell_resolves(catalog: Catalog) -> None:
    # the loader canonicalises names; check the cells as written, through gpus.csv + gpu_aliases.csv
    unresolved = [(path.name, row["gpu"]) for path in sorted((BUNDLED_DIR / "offers").glob("*.csv"))
                  for row in read_csv(path) if catalog.resolve_gpu(row["gpu"]) is None]
    assert unresolved == []


def test_every_purchase_and_platform_gpu_is_a_catalog_gpu(catalog: Catalog) -> None:
    assert {p.gpu for p in catalog.purchase_prices} <= set(catalog.gpus)
    assert {p.gpu for p in catalog.platforms} <= set(catalog.gpus)


def test_prices_are_positive(catalog: Catalog) -> None:
    assert all(o.price_per_hour > 0 and o.gpu_count > 0 for o in catalog.offers)
    assert all(p.price > 0 for p in catalog.purchase_prices)
    assert all(r.rate > 0 for r in catalog.fx_rates)
    # free tiers are 0 per month, never negative; a platform's price is never a negative number either
    assert all((p.price_per_month or 0) >= 0 and (p.price_per_hour or 0) >= 0 for p in catalog.platforms)


def _dated_rows(catalog: Catalog) -> list[tuple[str, str, str, dt.date]]:
    rows = [("gpus.csv", g.name, g.source, g.date_checked) for g in catalog.gpus.values()]
    rows += [(o.file, o.instance_type, o.source, o.as_of) for o in catalog.offers]
    rows += [("purchase_prices.csv", p.gpu, p.source, p.as_of) for p in catalog.purchase_prices]
    rows += [("platforms.csv", p.platform, p.source, p.as_of) for p in catalog.platforms]
    rows += [("fx.csv", f"{r.base}/{r.quote}", r.source, r.date) for r in catalog.fx_rates]
    rows += [("models/index.csv", m.name, m.source, m.as_of) for m in catalog.models.values()]
    return rows


def test_every_row_has_a_source_and_a_date(catalog: Catalog) -> None:
    missing = [(f, key) for f, key, source, date in _dated_rows(catalog)
               if not (source or "").strip() or not isinstance(date, dt.date)]
    assert missing == []


def test_no_date_is_in_the_future(catalog: Catalog) -> None:
    future = [(f, key, date.isoformat()) for f, key, _, date in _dated_rows(catalog) if date > TODAY]
    assert future == []


def test_offer_keys_are_unique_across_files(catalog: Catalog) -> None:
    keys = [o.key for o in catalog.offers]
    assert len(keys) == len(set(keys))


def test_one_provider_per_offer_file() -> None:
    mixed = {path.name: providers for path in (BUNDLED_DIR / "offers").glob("*.csv")
             if len(providers := {row["provider"] for row in read_csv(path)}) != 1}
    assert mixed == {}


def test_gpu_coverage(catalog: Catalog) -> None:
    assert len(catalog.gpus) >= 50
    # Chinese domestic, China-market and older parts that Chinese users meet (Kaggle's P100, the 4090D)
    for name in ("Ascend-910B", "RTX4080", "RTX4090D", "P100", "H20", "A800-80GB", "H100", "MI300X", "T4"):
        assert name in catalog.gpus


def test_offer_coverage(catalog: Catalog) -> None:
    assert len(catalog.offers) >= 300
    assert len(catalog.providers()) >= 20
    assert {o.market for o in catalog.offers} == {"cn", "global"}
    assert {o.currency for o in catalog.offers} == {"USD", "CNY"}
    cn_providers = {o.provider for o in catalog.offers if o.market == "cn"}
    assert len(cn_providers) >= 4


# Seed 004 (CSDN "AI全栈大模型工程师(二十六) 如何选择 GPU 和云服务厂商", JD.com retail prices, CNY): the names as
# the article writes them; the rows may hold the PCIe variant of the part (A100-40GB -> A100-PCIe).
SEED_004_PRICES = [
    ("T4", 7999), ("RTX 4090", 14599), ("A10", 18999), ("A6000", 32999), ("V100-32GB", 42999),
    ("A100-40GB", 69999), ("A800", 110000), ("H100", 242000),
]


@pytest.mark.parametrize(("name", "price_cny"), SEED_004_PRICES, ids=[n for n, _ in SEED_004_PRICES])
def test_seed_004_purchase_prices(catalog: Catalog, name: str, price_cny: float) -> None:
    variants = match_gpus(catalog, [name])  # the part and its variants (…-PCIe)
    rows = [p for p in catalog.purchase_prices
            if p.gpu in variants and p.market == "cn" and p.currency == "CNY" and p.price == price_cny]
    assert rows, f"no cn CNY purchase price {price_cny} for {name} (variants {sorted(variants)})"


def test_model_presets(catalog: Catalog) -> None:
    assert len(catalog.models) >= 60
    for name in ("Llama-2-7B", "Qwen2.5-7B", "ChatGLM3-6B", "DeepSeek-V3", "Mixtral-8x7B", "Baichuan2-7B"):
        assert name in catalog.models


def test_platforms_include_kaggle_quota_and_colab(catalog: Catalog) -> None:
    kaggle = [p for p in catalog.platforms if p.platform == "Kaggle" and p.tier == "free"]
    # https://www.kaggle.com/docs/efficient-gpu-usage: 30 GPU-hours per week (cited in platforms.csv)
    assert kaggle and all(p.weekly_gpu_hours == 30 for p in kaggle)
    assert {p.gpu for p in kaggle} >= {"T4", "P100"}
    assert any(p.platform == "Google Colab" and p.tier == "free" for p in catalog.platforms)


def test_fx_usd_cny_present(catalog: Catalog) -> None:
    rate = catalog.fx_rate("USD", "CNY")
    assert 5.0 < rate.rate < 9.0  # CNY per USD has stayed within this range since 2005
    inverse = catalog.fx_rate("CNY", "USD")
    assert inverse.rate == pytest.approx(1 / rate.rate)
    assert catalog.convert(100.0, "USD", "CNY") == pytest.approx(100.0 * rate.rate)


def test_fx_uses_the_rate_on_or_before_the_price_date(catalog: Catalog) -> None:
    # data/README.md: the newest rate on or before the price's as_of (fx.csv: 2024-06-01 = 7.2547, FRED EXCHUS)
    assert catalog.fx_rate("USD", "CNY", dt.date(2024, 6, 15)).rate == pytest.approx(7.2547)


# Parts that published calibration rows run on (GB300 NVL72 racks, Apple M5 Macs), per GPU, against figures
# independent of the per-GPU table the rows were read from: the rack aggregate over its 72 GPUs, or Apple's own.
@pytest.mark.parametrize(("name", "attribute", "expected", "source"), [
    ("GB300", "memory_bandwidth_bytes_per_s", 576e12 / 72, "GB300 NVL72: 576 TB/s HBM over 72 GPUs"),
    ("GB300", "fp4_flops_per_s", 1080e15 / 72, "GB300 NVL72: 1,080 PFLOPS dense FP4 over 72 GPUs"),
    ("GB300", "interconnect_bytes_per_s", 130e12 / 72, "GB300 NVL72: 130 TB/s NVLink over 72 GPUs"),
    ("M5", "memory_bandwidth_bytes_per_s", 153e9, "Apple M5 announcement: 153 GB/s unified memory"),
    ("M5", "memory_bytes", 32 * 2**30 * 2 / 3, "2/3 of 32 GB unified memory: macOS's default GPU working set "
     "at 32 GB or less (llama.cpp discussion #2182)"),
])
def test_new_parts_match_independent_figures(catalog: Catalog, name: str, attribute: str, expected: float,
                                             source: str) -> None:
    assert getattr(catalog.gpu(name), attribute) == pytest.approx(expected, rel=0.01), source


@pytest.mark.parametrize(("alias", "canonical"), [
    ("4090", "RTX4090"), ("a100 80g", "A100-80GB"), ("H100-SXM5-80GB", "H100"), ("Tesla T4", "T4"),
    ("rtx_4090", "RTX4090"), ("h100", "H100"), ("A800", "A800-80GB"),
])
def test_aliases_resolve(catalog: Catalog, alias: str, canonical: str) -> None:
    assert catalog.gpu(alias).name == canonical


# Names that benchmark pages and drivers print for parts that local-LLM benchmarks run on (llama-bench device
# strings, normiebench submissions, vendor product names), and the catalog row each must reach
@pytest.mark.parametrize(("typed", "canonical"), [
    ("NVIDIA GeForce RTX 3070 Laptop GPU", "RTX3070-Laptop"), ("NVIDIA GeForce RTX 2070 with Max-Q Design",
                                                              "RTX2070-MaxQ"),
    ("AMD Radeon 780M Graphics", "Radeon-780M"), ("Ryzen Z1 Extreme", "Radeon-780M"), ("Ryzen Z1", "Radeon-Z1-iGPU"),
    ("Intel Arc A770 Graphics", "Arc-A770"), ("Arc B580", "Arc-B580"), ("Strix Halo", "Radeon-8060S"),
    ("Ryzen AI Max+ 395", "Radeon-8060S"), ("DGX Spark", "DGX-Spark"), ("GB10", "DGX-Spark"),
    ("7900XTX", "RX7900XTX"), ("Radeon RX 7900 XT", "RX7900XT"), ("RTX 4060", "RTX4060"),
    ("RTX 4060 Ti", "RTX4060Ti"), ("RTX 4060 Ti 16GB", "RTX4060Ti-16GB"), ("RTX 3050", "RTX3050"),
    ("AMD Instinct MI100", "MI100"), ("RTX Titan", "TITAN-RTX"), ("RTX 2060 SUPER", "RTX2060Super"),
    ("6800XT", "RX6800XT"), ("AMD Radeon RX 6900 XT", "RX6900XT"), ("GTX 1080 Ti", "GTX1080Ti"),
    ("RTX 2080", "RTX2080"), ("RTX 2080 Ti", "RTX2080Ti"), ("RTX 3090 Ti", "RTX3090Ti"),
    ("RTX 4070 Ti SUPER", "RTX4070TiSuper"), ("Titan V", "TITAN-V"), ("Titan Xp", "TITAN-Xp"),
    ("Quadro RTX 8000", "QuadroRTX8000"), ("Quadro RTX 4000", "QuadroRTX4000"), ("RTX 2070 SUPER", "RTX2070Super"),
    ("GTX 1660", "GTX1660"), ("Nvidia GTX 1660 Ti Mobile", "GTX1660Ti-Mobile"), ("Nvidia GTX 1070", "GTX1070"),
    ("GTX 1070 Ti", "GTX1070Ti"), ("Jetson AGX Orin 64GB", "Jetson-AGX-Orin-64GB"), ("RX 7800 XT", "RX7800XT"),
    ("RX 7900 GRE", "RX7900GRE"), ("AMD Radeon RX 6700 XT", "RX6700XT"), ("Intel Arc B570", "Arc-B570"),
    ("Intel Arc A770M", "Arc-A770M"), ("Nvidia RTX 4060 Mobile", "RTX4060-Laptop"), ("RTX A4500", "A4500"),
    ("Apple M2 Pro", "M2-Pro"), ("Apple M3 Ultra", "M3-Ultra"),
])
def test_benchmark_device_names_resolve(catalog: Catalog, typed: str, canonical: str) -> None:
    assert catalog.gpu(typed).name == canonical


# A name that leaves the part open is refused, with the parts it could be offered (a Jetson AGX Orin module of 32 or
# 64 GB; a GTX 1660 Ti is the desktop card, not the laptop GPU the catalog holds)
@pytest.mark.parametrize(("typed", "offered"), [("Jetson AGX Orin", "Jetson-AGX-Orin-64GB"),
                                                ("GTX 1660 Ti", "GTX1660")])
def test_an_open_device_name_is_refused_with_suggestions(catalog: Catalog, typed: str, offered: str) -> None:
    with pytest.raises(UnknownNameError, match=offered):
        catalog.gpu(typed)


# Peak bandwidth against bus width x data rate, read apart from the figure recorded (the iGPUs' system memory: the
# ROG Ally's 128-bit LPDDR5-6400, Strix Halo's 256-bit LPDDR5X-8000; the cards' GDDR6 and HBM2 interfaces)
@pytest.mark.parametrize(("name", "bus_bits", "gbit_per_pin"), [
    ("Radeon-Z1-iGPU", 128, 6.4), ("Radeon-8060S", 256, 8.0), ("Arc-A770", 256, 17.5), ("RX7900XTX", 384, 20.0),
    ("RTX3050", 128, 14.0), ("MI100", 4096, 2.4), ("TITAN-RTX", 384, 14.0), ("RX6800XT", 256, 16.0),
    ("RTX3090Ti", 384, 21.0), ("TITAN-V", 3072, 1.7), ("GTX1660", 192, 8.0), ("RX7800XT", 256, 19.5),
    ("Arc-B570", 160, 19.0), ("Jetson-AGX-Orin-64GB", 256, 6.4), ("A4500", 320, 16.0),
])
def test_bandwidth_is_bus_width_times_data_rate(catalog: Catalog, name: str, bus_bits: int,
                                                gbit_per_pin: float) -> None:
    assert catalog.gpu(name).memory_bandwidth_bytes_per_s == pytest.approx(bus_bits * gbit_per_pin * 1e9 / 8)


def test_unified_memory_parts_hold_a_70b_model_that_a_24gb_card_does_not(cli) -> None:
    # Strix Halo's 96 GiB GPU allocation and the DGX Spark's 128 GB take Llama-3.3-70B at Q4_K_M (about 40 GiB of
    # weights); the 24 GB RX 7900 XTX does not. None of the three has a cloud offer: the estimate still answers
    # (exit status 1 with the JSON answer when the setup does not fit)
    answers = {}
    for gpu, fits in (("Strix Halo", True), ("DGX Spark", True), ("7900XTX", False)):
        done = cli("estimate", "Llama-3.3-70B", "--gpu", gpu, "--engine", "llamacpp", "--quant", "Q4_K_M", "--json")
        assert done.returncode == (0 if fits else 1), done.stderr
        answers[gpu] = json.loads(done.stdout)
        assert answers[gpu]["fits"] is fits
    assert answers["Strix Halo"]["memory_available_bytes"] == 96 * 2**30
    # batch-1 decode streams the same weights: the Spark's 273 GB/s beats Strix Halo's 256 GB/s
    assert answers["DGX Spark"]["speed"]["tpot_seconds"] < answers["Strix Halo"]["speed"]["tpot_seconds"]


def test_unknown_gpu_suggests_close_names(catalog: Catalog) -> None:
    with pytest.raises(UnknownNameError) as info:
        catalog.gpu("h10")
    assert "H100" in info.value.suggestions
    assert "Did you mean" in str(info.value) and "gpuplan gpus" in str(info.value)


# ---------------------------------------------------------------- user catalog folders

OFFER_HEADER = next(csv.reader((BUNDLED_DIR / "offers" / "lambda.csv").open(encoding="utf-8")))
BUNDLED_ROW = read_csv(BUNDLED_DIR / "offers" / "lambda.csv")[0]  # Lambda gpu_1x_a10, us-east-1, on-demand


def _key(row: dict[str, str]) -> tuple[str, str, str, str]:
    return (row["provider"], row["instance_type"], row["region"], row["pricing"])


def write_offers(folder: Path, rows: list[dict[str, str]], header: list[str] = OFFER_HEADER,
                 name: str = "mine.csv") -> Path:
    path = folder / "offers" / name
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", encoding="utf-8", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=header, extrasaction="ignore")
        writer.writeheader()
        writer.writerows(rows)
    return path.resolve()


def test_user_offer_replaces_the_bundled_row_with_the_same_key(tmp_path: Path, catalog: Catalog) -> None:
    negotiated = {**BUNDLED_ROW, "price_per_hour": "0.77", "source": "our contract, 2026-11", "notes": "negotiated"}
    write_offers(tmp_path, [negotiated])
    user = load_catalog([tmp_path])
    matching = [o for o in user.offers if o.key == _key(BUNDLED_ROW)]
    assert [o.price_per_hour for o in matching] == [0.77]
    assert matching[0].source == "our contract, 2026-11"
    assert len(user.offers) == len(catalog.offers)  # replaced, not added
    bundled = [o for o in catalog.offers if o.key == _key(BUNDLED_ROW)]
    assert [o.price_per_hour for o in bundled] == [float(BUNDLED_ROW["price_per_hour"])]


def test_user_offer_with_a_new_key_is_added(tmp_path: Path, catalog: Catalog) -> None:
    write_offers(tmp_path, [{**BUNDLED_ROW, "instance_type": "our-reserved-a10", "pricing": "reserved",
                             "commit_months": "12"}])
    assert len(load_catalog([tmp_path]).offers) == len(catalog.offers) + 1


def test_catalog_env_var_is_read(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    write_offers(tmp_path, [{**BUNDLED_ROW, "price_per_hour": "0.66"}])
    monkeypatch.setenv(ENV_VAR, str(tmp_path))
    offer = next(o for o in load_catalog().offers if o.key == _key(BUNDLED_ROW))
    assert offer.price_per_hour == 0.66


FUTURE = (TODAY + dt.timedelta(days=30)).isoformat()

# (id, rows to write, header, line, column named in the message, words of the fix)
BAD_FILES = [
    ("non-numeric price", [{**BUNDLED_ROW, "price_per_hour": "1.29 USD"}], OFFER_HEADER, 2, "price_per_hour",
     "plain number"),
    ("unknown GPU", [{**BUNDLED_ROW, "gpu": "H1000"}], OFFER_HEADER, 2, "gpu", "gpuplan gpus"),
    ("duplicate key", [BUNDLED_ROW, {**BUNDLED_ROW, "price_per_hour": "1.00"}], OFFER_HEADER, 3, "instance_type",
     "remove or merge"),
    ("missing column", [BUNDLED_ROW], [c for c in OFFER_HEADER if c != "currency"], 1, "currency",
     "the header must be"),
    ("future date", [{**BUNDLED_ROW, "as_of": FUTURE}], OFFER_HEADER, 2, "as_of", "write the date"),
    ("empty required cell", [{**BUNDLED_ROW, "region": ""}], OFFER_HEADER, 2, "region", "fill in 'region'"),
    ("unknown enum", [{**BUNDLED_ROW, "pricing": "hourly"}], OFFER_HEADER, 2, "pricing",
     "on-demand, spot, reserved, marketplace"),
]


@pytest.mark.parametrize(("rows", "header", "line", "column", "fix"), [b[1:] for b in BAD_FILES],
                         ids=[b[0] for b in BAD_FILES])
def test_bad_user_file_raises_catalog_error_with_location_column_and_fix(
        tmp_path: Path, rows: list[dict[str, str]], header: list[str], line: int, column: str, fix: str) -> None:
    path = write_offers(tmp_path, rows, header)
    with pytest.raises(CatalogError) as info:
        load_catalog([tmp_path])
    message = str(info.value)
    assert f"{path}:{line}:" in message
    assert column in message
    assert fix in info.value.fix and "To fix:" in message


@pytest.mark.parametrize(("rows", "header", "line"), [(b[1], b[2], b[3]) for b in BAD_FILES],
                         ids=[b[0] for b in BAD_FILES])
def test_bad_user_file_cli_exits_2_without_traceback(cli, tmp_path: Path, rows: list[dict[str, str]],
                                                     header: list[str], line: int) -> None:
    path = write_offers(tmp_path, rows, header)
    result = cli("--catalog", str(tmp_path), "offers")
    assert result.returncode == 2
    assert "error:" in result.stderr and f"{path}:{line}" in result.stderr
    assert "To fix:" in result.stderr
    assert "Traceback" not in result.stderr + result.stdout


def test_bad_user_file_via_env_var_cli_exits_2(cli, tmp_path: Path) -> None:
    write_offers(tmp_path, [{**BUNDLED_ROW, "price_per_hour": "abc"}])
    result = cli("offers", env={ENV_VAR: str(tmp_path)})
    assert result.returncode == 2
    assert "error:" in result.stderr and "price_per_hour" in result.stderr
    assert "Traceback" not in result.stderr + result.stdout


def test_catalog_folder_that_does_not_exist_is_an_input_error(cli, tmp_path: Path) -> None:
    result = cli("--catalog", str(tmp_path / "nope"), "offers")
    assert result.returncode == 2
    assert "error: --catalog" in result.stderr and "Traceback" not in result.stderr


# ---------------------------------------------------------------- a market snapshot (the scenario tests' prices)

MARKET_FILES = ("providers.csv", "platforms.csv", "purchase_prices.csv", "fx.csv")


def _snapshot(folder: Path, rows: list[dict[str, str]]) -> Path:
    """A market snapshot holding the bundled providers, platforms, purchase prices and FX rates, and ``rows``
    as its only offers."""
    for rel in MARKET_FILES:
        shutil.copy(BUNDLED_DIR / rel, folder / rel)
    write_offers(folder, rows)
    return folder


def test_a_market_snapshot_replaces_the_bundled_offers_and_keeps_the_bundled_gpus(tmp_path: Path,
                                                                                catalog: Catalog) -> None:
    # one Lambda A10 row at $0.77 instead of the bundled hundreds: the bundled offers are not added to it
    snap = load_catalog(market=_snapshot(tmp_path, [{**BUNDLED_ROW, "price_per_hour": "0.77"}]))
    assert [(o.key, o.price_per_hour) for o in snap.offers] == [(_key(BUNDLED_ROW), 0.77)]
    assert snap.offers[0].file == str(tmp_path.resolve() / "offers" / "mine.csv")  # errors name the snapshot's file
    assert snap.gpus == catalog.gpus and snap.models.keys() == catalog.models.keys()
    assert snap.market == tmp_path.resolve() and catalog.market is None


def test_a_user_folder_still_overlays_a_market_snapshot(tmp_path: Path) -> None:
    snap, user = tmp_path / "snap", tmp_path / "user"
    snap.mkdir()
    _snapshot(snap, [{**BUNDLED_ROW, "price_per_hour": "0.77"}])
    write_offers(user, [{**BUNDLED_ROW, "price_per_hour": "0.66"}])
    assert [o.price_per_hour for o in load_catalog([user], market=snap).offers] == [0.66]  # the later folder wins


@pytest.mark.parametrize("missing", [*MARKET_FILES, "offers/"])
def test_a_market_snapshot_without_one_of_its_tables_names_it(tmp_path: Path, missing: str) -> None:
    _snapshot(tmp_path, [BUNDLED_ROW])
    if missing == "offers/":
        shutil.rmtree(tmp_path / "offers")
    else:
        (tmp_path / missing).unlink()
    with pytest.raises(CatalogError) as info:
        load_catalog(market=tmp_path)
    assert str(tmp_path.resolve() / missing.rstrip("/")) in str(info.value)
    assert "missing from the market snapshot" in str(info.value) and f"gpuplan/data/{missing}" in info.value.fix


def test_a_market_snapshot_that_is_no_folder_is_an_input_error(tmp_path: Path) -> None:
    with pytest.raises(InputError) as info:
        load_catalog(market=tmp_path / "nope")
    assert info.value.field == "market" and "is not a folder" in str(info.value)


def test_a_market_snapshot_is_cached_apart_from_the_same_folder_given_as_a_user_folder(tmp_path: Path) -> None:
    from gpuplan.catalog import cache

    dirs = (BUNDLED_DIR, tmp_path)
    assert cache.signature(dirs[:1], TODAY, tmp_path) != cache.signature(dirs, TODAY)


def test_a_user_gpu_with_only_8_bit_rates_is_refused_naming_the_16_bit_column(tmp_path: Path) -> None:
    """Every estimate divides by a 16-bit or fp32 rate; a part with only FP8/INT8 figures would divide by zero."""
    with (BUNDLED_DIR / "gpus.csv").open(newline="", encoding="utf-8") as f:
        reader = csv.DictReader(f)
        header, h100 = reader.fieldnames, next(r for r in reader if r["name"] == "H100")
    row = {**h100, "name": "H100-int8-only", "fp32_tflops": "", "tf32_tflops": "", "fp16_tflops": "",
           "bf16_tflops": ""}
    with (tmp_path / "gpus.csv").open("w", newline="", encoding="utf-8") as f:
        writer = csv.DictWriter(f, fieldnames=header)
        writer.writeheader()
        writer.writerow(row)
    with pytest.raises(CatalogError) as info:
        load_catalog([tmp_path])
    assert "fp16_tflops" in str(info.value) and "fp32_tflops or fp16_tflops" in info.value.fix



def test_an_apple_gpu_whose_memory_is_not_marked_unified_is_refused(tmp_path: Path) -> None:
    """Without the mark an Apple part's memory would be sized as a discrete GPU's (no host tensors counted)."""
    with (BUNDLED_DIR / "gpus.csv").open(newline="", encoding="utf-8") as f:
        reader = csv.DictReader(f)
        header, m2 = reader.fieldnames, next(r for r in reader if r["name"] == "M2-Max")
    assert m2["memory_type"] == "LPDDR5 (unified)"
    with (tmp_path / "gpus.csv").open("w", newline="", encoding="utf-8") as f:
        writer = csv.DictWriter(f, fieldnames=header)
        writer.writeheader()
        writer.writerow({**m2, "name": "M2-Max-user", "memory_type": "LPDDR5"})
    with pytest.raises(CatalogError) as info:
        load_catalog([tmp_path])
    assert "memory_type" in str(info.value) and "(unified)" in info.value.fix


@pytest.mark.parametrize(("gpu", "shares"), [
    ("M1", True), ("M5", True), ("Radeon-8060S", True), ("Radeon-780M", True), ("Radeon-Z1-iGPU", True),
    ("DGX-Spark", True), ("RX7900XTX", False), ("H100", False), ("RTX4090-Laptop", False), ("GH200", False),
])
def test_which_gpus_share_the_systems_memory(catalog: Catalog, gpu: str, shares: bool) -> None:
    # GH200: its Hopper GPU has HBM of its own beside the Grace CPU's LPDDR; a laptop GPU has its own GDDR
    assert catalog.gpu(gpu).shares_system_memory is shares

# FP32 lanes per SM, from NVIDIA's architecture whitepapers: 64 on Volta (V100 whitepaper, Fig. 5), Turing (Turing
# whitepaper, Fig. 4) and GA100 (A100 whitepaper, Fig. 7); 128 on GP102 (P40: 3840 cores over 30 SMs), GA10x
# (GA102 whitepaper, Fig. 3), Ada (Ada whitepaper, Fig. 3) and Hopper (H100 whitepaper, Fig. 7)
FP32_LANES_PER_SM = {"Volta": 64, "Turing": 64, "Pascal": 128, "Ampere": 128, "Ada Lovelace": 128, "Hopper": 128}


def test_sm_counts_and_boost_clocks_agree_with_each_parts_fp32_rate(catalog: Catalog) -> None:
    # the SM count and boost clock (new columns, read from the whitepapers) against the datasheet FP32 TFLOPS the
    # catalog already held: SMs × lanes × 2 FLOPs (an FMA) × clock; A100 = 108 × 64 × 2 × 1.41 GHz = 19.5 TFLOPS
    checked = 0
    for g in catalog.gpus.values():
        if g.sm_cycles_per_s is None:
            continue
        lanes = 64 if (g.chip or "").startswith("GA100") else FP32_LANES_PER_SM[g.architecture]
        assert g.sm_cycles_per_s * lanes * 2 == pytest.approx(g.fp32_flops_per_s, rel=0.025), g.name
        checked += 1
    assert checked >= 30


def test_a_gpu_without_sm_figures_has_no_sm_rate(catalog: Catalog) -> None:
    # an empty cell means unknown: Apple silicon and AMD parts carry none, and nothing is derived from them
    assert catalog.gpu("M2-Ultra").sm_cycles_per_s is None
    assert catalog.gpu("MI300X").sm_cycles_per_s is None
    assert catalog.gpu("A100-80GB").sm_cycles_per_s == pytest.approx(108 * 1.41e9)


def test_a_scoreboard_card_added_to_the_catalog_is_estimated_from_its_own_memory_system(cli) -> None:
    # The RTX 3090 Ti is the RTX 3090's GA102 with 21 Gbps GDDR6X: 1,008 GB/s against 936 GB/s, the same 24 GB, and
    # 84 SMs at 1,860 MHz against 82 at 1,695. A batch-1 llama.cpp decode of Llama-2-7B Q4_0 streams the weights at
    # the lower of the bandwidth and what the SMs can load (infer_speed.sm_load_bytes_per_cycle), so the Ti is
    # faster, by at most the larger of those two ratios (per-token overheads scale with neither)
    tpot = {}
    for gpu in ("RTX 3090", "RTX 3090 Ti"):
        done = cli("estimate", "Llama-2-7B", "--gpu", gpu, "--engine", "llamacpp", "--quant", "Q4_0", "--json")
        assert done.returncode == 0, done.stderr
        answer = json.loads(done.stdout)
        assert answer["memory_available_bytes"] == 24 * 2**30
        tpot[gpu] = answer["speed"]["tpot_seconds"]
    assert 1.0 < tpot["RTX 3090"] / tpot["RTX 3090 Ti"] <= max(1008 / 936, 84 * 1860 / (82 * 1695))
