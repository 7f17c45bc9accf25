"""The listing commands as a user runs them (``python -m gpuplan ...``): JSON and CSV twins, filters, sorting,
and errors that exit with status 2 and say what to type next."""

from __future__ import annotations

import csv
import datetime as dt
import io
import json
from typing import Any

import pytest

from gpuplan.catalog import Catalog
from gpuplan.listing import match_gpus

# JSON keys carry their unit (STYLE.md "Names carry the unit"); these are the numeric keys without one
UNIT_SUFFIXES = ("_gb", "_mib", "_gib", "_gb_s", "_tflops", "_tops", "_w")
UNITLESS = {"pcie_gen", "launch_year"}


def _json(result: Any) -> Any:
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)


def test_gpus_json_is_a_list_with_unit_suffixed_keys(cli, catalog: Catalog) -> None:
    rows = _json(cli("gpus", "--json"))
    assert isinstance(rows, list) and len(rows) == len(catalog.gpus)
    numeric = {k for row in rows for k, v in row.items() if isinstance(v, (int, float)) and not isinstance(v, bool)}
    assert {k for k in numeric if not k.endswith(UNIT_SUFFIXES)} <= UNITLESS
    assert {"memory_nominal_gb", "memory_bandwidth_gb_s", "bf16_tflops", "fp8_tflops", "tdp_w"} <= set(rows[0])
    h100 = next(r for r in rows if r["name"] == "H100")
    assert h100["memory_nominal_gb"] == 80 and h100["source"] and h100["date_checked"]


def test_gpus_csv_has_a_header_and_one_row_per_gpu(cli) -> None:
    as_json = _json(cli("gpus", "--json"))
    result = cli("gpus", "--csv")
    assert result.returncode == 0
    lines = result.stdout.splitlines()
    assert lines[0].split(",")[:3] == ["name", "vendor", "segment"]
    rows = list(csv.DictReader(io.StringIO(result.stdout)))
    assert [r["name"] for r in rows] == [r["name"] for r in as_json]
    assert list(rows[0]) == list(as_json[0])


def test_cn_offers_in_cny_sorted_by_price_per_gpu_hour(cli, catalog: Catalog) -> None:
    rows = _json(cli("offers", "--gpu", "A100", "--market", "cn", "--currency", "CNY", "--json"))
    assert rows
    assert {r["market"] for r in rows} == {"cn"}
    assert {r["currency"] for r in rows} == {"CNY"}
    assert {r["gpu"] for r in rows} <= match_gpus(catalog, ["A100"])
    prices = [r["price_per_gpu_hour"] for r in rows]
    assert prices == sorted(prices)
    for r in rows:
        assert r["price_per_gpu_hour"] == pytest.approx(r["price_per_hour"] / r["gpu_count"], abs=1e-3)
        if r["original_currency"] == "CNY":
            assert r["price_per_hour"] == pytest.approx(r["original_price_per_hour"], abs=1e-3)


def test_usd_offers_are_converted_with_the_dated_fx_table(cli, catalog: Catalog) -> None:
    rows = _json(cli("offers", "--market", "global", "--currency", "CNY", "--limit", "5", "--json"))
    usd = [r for r in rows if r["original_currency"] == "USD"]
    assert usd and all(r["currency"] == "CNY" for r in rows)
    for r in usd:
        as_of = dt.date.fromisoformat(r["as_of"])
        rate = catalog.fx_rate("USD", "CNY", as_of).rate
        assert r["price_per_hour"] == pytest.approx(r["original_price_per_hour"] * rate, abs=1e-3)


def test_unknown_gpu_exits_2_with_a_suggestion(cli) -> None:
    result = cli("offers", "--gpu", "h10")
    assert result.returncode == 2
    assert "Did you mean 'H100'" in result.stderr
    assert "gpuplan gpus" in result.stderr
    assert "Traceback" not in result.stderr + result.stdout


def test_bad_choice_exits_2(cli) -> None:
    result = cli("offers", "--market", "mars")
    assert result.returncode == 2 and "--market" in result.stderr and "Traceback" not in result.stderr


def test_model_json_params_total(cli) -> None:
    detail = _json(cli("model", "Llama-2-7B", "--json"))
    assert detail["params"]["total"] == 6_738_415_616  # transformers LlamaForCausalLM numel
    assert detail["params"]["active"] == 6_738_415_616
    assert detail["architecture"]["layers"] == 32 and detail["architecture"]["kv_heads"] == 32
    assert sum(v for k, v in detail["params"].items() if k not in ("total", "active")) == 6_738_415_616


def test_model_table_shows_the_breakdown(cli) -> None:
    result = cli("model", "Mixtral-8x7B")
    assert result.returncode == 0
    assert "46,702,792,704" in result.stdout  # total, transformers MixtralForCausalLM numel
    assert "active per token" in result.stdout


def test_models_query_lists_qwen_presets(cli, catalog: Catalog) -> None:
    result = cli("models", "qwen")
    assert result.returncode == 0
    for name in ("Qwen-7B", "Qwen2.5-7B", "Qwen3-30B-A3B", "Qwen1.5-MoE-A2.7B"):
        assert name in result.stdout
    assert "Llama-2-7B" not in result.stdout
    rows = _json(cli("models", "qwen", "--json"))
    # the query matches a family or a name: Qwen's own presets and the distills built on Qwen
    assert {r["name"] for r in rows} == {n for n, e in catalog.models.items()
                                         if e.family == "qwen" or "qwen" in n.lower()}
    assert "DeepSeek-R1-Distill-Qwen-7B" in {r["name"] for r in rows}


def test_unknown_model_exits_2_with_a_suggestion(cli) -> None:
    result = cli("model", "Lama-2-7B")
    assert result.returncode == 2
    assert "Did you mean 'Llama-2-7B'" in result.stderr and "Traceback" not in result.stderr


def test_gpus_table_fits_the_width_it_is_given_and_wide_adds_columns(cli) -> None:
    narrow = cli("gpus", "--vendor", "NVIDIA", env={"COLUMNS": "100"})
    assert narrow.returncode == 0, narrow.stderr
    assert max(len(line) for line in narrow.stdout.splitlines()) <= 100
    assert "Architecture" not in narrow.stdout and "H100" in narrow.stdout
    wide = cli("gpus", "--vendor", "NVIDIA", "--wide", env={"COLUMNS": "250"})
    assert "Architecture" in wide.stdout and "Hopper" in wide.stdout


def test_plan_explanation_wraps_to_columns_but_not_in_pipes(cli) -> None:
    args = ("plan", "finetune", "Qwen2.5-0.5B", "--method", "lora", "--samples", "2k", "--tokens-per-sample", "512")
    wrapped = cli(*args, env={"COLUMNS": "90"})
    assert max(len(line) for line in wrapped.stdout.splitlines()) <= 90
    piped = cli(*args)
    why = next(line for line in piped.stdout.splitlines() if line.startswith("Why:"))
    assert "The runner-up" in why  # one line, whole sentences
