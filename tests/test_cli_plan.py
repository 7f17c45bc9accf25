"""The planning commands as a user runs them (``python -m gpuplan ...``): JSON keys with units, CSV rows, the
estimate breakdown, fit/compare/buy JSON, Chinese output, and errors that exit 2 with a fix and no traceback."""

from __future__ import annotations

import csv
import io
import json
import re
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from conftest import run_cli

Cli = Callable[..., subprocess.CompletedProcess[str]]
TINY = str(Path(__file__).resolve().parent / "fixtures" / "tiny_catalog")
SMALL_JOB = ("plan", "finetune", "Qwen2.5-0.5B", "--method", "lora", "--samples", "2k", "--tokens-per-sample", "512")


def _json(result: subprocess.CompletedProcess[str]) -> Any:
    """The JSON a command printed; an estimate that does not fit exits 1 (docs/cli.md), one that fits 0."""
    assert result.returncode in (0, 1), result.stderr
    d = json.loads(result.stdout)
    if result.args[3] == "estimate":
        assert result.returncode == (0 if d["fits"] else 1)
    else:
        assert result.returncode == 0, result.stderr
    return d


@pytest.fixture(scope="module")
def plan_json() -> dict[str, Any]:
    return _json(run_cli(*SMALL_JOB, "--json"))  # type: ignore[no-any-return]


# ---------------------------------------------------------------- plan --json / --csv


def test_plan_json_has_the_documented_keys(plan_json: dict[str, Any]) -> None:
    assert {"pick", "ranked", "pareto", "explanation", "assumptions", "platforms", "suggestions"} <= set(plan_json)
    assert plan_json["task"] == "finetune" and plan_json["objective"] == "cost"
    assert plan_json["ranked"] and plan_json["pareto"] and plan_json["explanation"]
    assert plan_json["pick"] == plan_json["ranked"][0]
    for a in plan_json["assumptions"]:
        assert set(a) == {"name", "value", "source"}


def test_plan_json_keys_carry_their_unit(plan_json: dict[str, Any]) -> None:
    for plan in [plan_json["pick"], *plan_json["ranked"], *plan_json["pareto"], *plan_json["platforms"]]:
        assert {"memory_needed_bytes", "memory_available_bytes", "seconds", "calendar_seconds", "cost"} <= set(plan)
        assert 0 < plan["memory_needed_bytes"] <= plan["memory_available_bytes"]
        assert plan["seconds"] > 0
        assert {"total", "compute", "storage", "currency", "billed_seconds"} <= set(plan["cost"])
        est = plan["estimate"]
        assert "total_bytes" in est["memory"] and "breakdown_bytes" in est["memory"]
        assert "total_seconds" in est["time"] and "breakdown_seconds" in est["time"]
    offer = plan_json["pick"]["offer"]
    assert {"provider", "instance_type", "price_per_hour", "currency", "source", "as_of"} <= set(offer)


def test_plan_csv_has_a_header_and_one_row_per_plan(cli: Cli, plan_json: dict[str, Any]) -> None:
    result = cli(*SMALL_JOB, "--csv")
    assert result.returncode == 0, result.stderr
    rows = list(csv.DictReader(io.StringIO(result.stdout)))
    header = result.stdout.splitlines()[0].split(",")
    assert header[0] == "rank" and {"gpu", "n_gpus", "provider", "seconds", "memory_needed_bytes"} <= set(header)
    # --top rows (10 by default): the rented plans, then notebook platforms in the rows left
    plans = (plan_json["ranked"] + plan_json["platforms"])[:10]
    assert len(rows) == len(plans) == 10
    assert [r["rank"] for r in rows] == [str(i) for i in range(1, len(rows) + 1)]
    assert [(r["gpu"], r["provider"]) for r in rows] == [(p["gpu"], p["provider"]) for p in plans]
    assert {r["pricing"] for r in rows[len(plan_json["ranked"]):]} <= {"platform"}
    three = list(csv.DictReader(io.StringIO(cli(*SMALL_JOB, "--csv", "--top", "3").stdout)))
    assert [r["rank"] for r in three] == ["1", "2", "3"]  # the issue: --top 3 printed 6 rows


def test_plan_csv_cells_are_flat_values(cli: Cli) -> None:
    # STYLE.md "No structured values inside a CSV cell": a spreadsheet user sorts by cost, so the cost and the
    # offer are columns of their own, not JSON objects inside one cell.
    result = cli(*SMALL_JOB, "--csv")
    rows = list(csv.DictReader(io.StringIO(result.stdout)))
    nested = sorted({k for r in rows for k, v in r.items() if v.startswith(("{", "["))})
    assert not nested, f"columns holding JSON: {nested}"


def test_plan_budget_and_deadline_on_the_command_line(cli: Cli) -> None:
    # tiny catalog (tests/fixtures/tiny_catalog): TINY-SLOW plans cost ~$0.12 and take ~14 min; one
    # TINY-FAST on demand costs ~$1.17 and takes ~9 min; eight take ~1 min
    job = ("plan", "finetune", "Qwen2.5-0.5B", "--samples", "20k", "--tokens-per-sample", "512",
           "--provider", "TinyFast", "--provider", "TinyCheap", "--no-spot", "--json")
    everything = _json(cli("--catalog", TINY, *job))
    assert {p["provider"] for p in everything["ranked"]} == {"TinyFast", "TinyCheap"}
    cheap = _json(cli("--catalog", TINY, *job, "--budget", "0.5USD"))
    assert cheap["ranked"] and all(p["cost"]["total"] <= 0.5 for p in cheap["ranked"])
    assert {p["gpu"] for p in cheap["ranked"]} == {"TINY-SLOW"}
    quick = _json(cli("--catalog", TINY, *job, "--deadline", "10min"))
    assert quick["ranked"] and all(p["calendar_seconds"] <= 600 for p in quick["ranked"])
    assert {p["gpu"] for p in quick["ranked"]} == {"TINY-FAST"}
    capped = _json(cli("--catalog", TINY, *job, "--max-gpus", "1", "--objective", "time"))
    assert all(p["n_gpus"] * p["replicas"] <= 1 for p in capped["ranked"])


# ---------------------------------------------------------------- estimate


def test_estimate_qlora_json_breakdown_band_and_assumptions(cli: Cli) -> None:
    d = _json(cli("estimate", "Llama-2-7B", "--task", "finetune", "--method", "qlora", "--gpu", "4090", "--json"))
    assert d["gpu"] == "RTX4090" and d["model"] == "Llama-2-7B"
    mem = d["memory"]
    assert sum(mem["breakdown_bytes"].values()) == pytest.approx(mem["total_bytes"], rel=1e-9)
    assert all(v >= 0 for v in mem["breakdown_bytes"].values())
    assert {"weights", "optimizer", "activations"} <= set(mem["breakdown_bytes"])
    assert mem["low_bytes"] <= mem["total_bytes"] <= mem["high_bytes"]
    assert {"p10_ratio", "p90_ratio", "class"} <= set(mem["band"])
    assert mem["assumptions"] and all({"name", "value", "source"} <= set(a) for a in mem["assumptions"])
    # training: what must fit is the floor (no allocator cache) or the whole estimate, raised by the margin shown
    assert mem["floor"]["bytes"] < mem["total_bytes"] and mem["floor"]["given_back"] == ["allocator_slack"]
    assert any(d["memory_needed_bytes"] == pytest.approx(base * (1 + d["headroom"]))
               for base in (mem["floor"]["bytes"], mem["total_bytes"]))
    assert d["fits"] == (d["memory_needed_bytes"] <= d["memory_available_bytes"])


def test_estimate_with_a_dataset_adds_a_time_breakdown_and_band(cli: Cli) -> None:
    d = _json(cli("estimate", "Llama-2-7B", "--task", "finetune", "--method", "qlora", "--gpu", "4090",
                  "--samples", "1k", "--tokens-per-sample", "512", "--json"))
    t = d["time"]
    assert sum(t["breakdown_seconds"].values()) == pytest.approx(t["total_seconds"], rel=1e-9)
    assert t["low_seconds"] <= t["total_seconds"] <= t["high_seconds"]
    assert t["band"]["class"] == "finetune_time"


# ---------------------------------------------------------------- errors


def _assert_error(result: subprocess.CompletedProcess[str], *needles: str) -> None:
    assert result.returncode == 2, (result.returncode, result.stdout[-500:], result.stderr[-500:])
    assert result.stderr.startswith("error:"), result.stderr[:300]
    assert "To fix:" in result.stderr
    assert "Traceback" not in result.stderr + result.stdout
    for needle in needles:
        assert needle in result.stderr, (needle, result.stderr)


def test_estimate_tp_that_does_not_divide_the_heads(cli: Cli) -> None:
    result = cli("estimate", "Llama-2-7B", "--task", "infer", "--tp", "3")
    _assert_error(result, "--tp", "1, 2, 4, 8, 16")


def test_estimate_context_longer_than_the_model(cli: Cli) -> None:
    result = cli("estimate", "Llama-2-7B", "--task", "infer", "--prompt", "8000", "--output", "1000")
    _assert_error(result, "4096")


def test_negative_samples(cli: Cli) -> None:
    _assert_error(cli("plan", "finetune", "Llama-2-7B", "--samples", "-5", "--tokens-per-sample", "100"), "--samples")


@pytest.mark.parametrize(
    ("args", "needles"),
    [
        (("--provider", "Lambdda"), ("--provider", "Did you mean 'Lambda'", "gpuplan offers")),
        (("--gpus", "H10"), ("--gpus", "Did you mean", "'H100'", "gpuplan gpus")),
    ],
)
def test_unknown_provider_or_gpu_gets_a_did_you_mean(cli: Cli, args: tuple[str, ...], needles: tuple[str, ...]) -> None:
    _assert_error(cli(*SMALL_JOB, *args), *needles)


def test_unknown_model_gets_a_did_you_mean(cli: Cli) -> None:
    result = cli("plan", "finetune", "Qwen2.5-0.5c", "--samples", "1k", "--tokens-per-sample", "256")
    _assert_error(result, "Did you mean 'Qwen2.5-0.5B'", "gpuplan models")


def test_unknown_gpu_in_estimate_gets_a_did_you_mean(cli: Cli) -> None:
    _assert_error(cli("estimate", "Llama-2-7B", "--gpu", "H10"), "Did you mean", "'H100'")


JOB_1K = ("plan", "finetune", "Llama-2-7B", "--samples", "1k", "--tokens-per-sample", "100")


@pytest.mark.parametrize(
    "args",
    [
        # library errors (GpuplanError)
        pytest.param(("plan", "finetune", "Llama-2-7B"), id="no-training-tokens"),
        pytest.param((*JOB_1K, "--budget", "abc"), id="bad-budget"),
        pytest.param((*JOB_1K, "--max-gpus", "0"), id="max-gpus-0"),
        pytest.param(("plan", "serve", "Llama-2-7B", "--rps", "0"), id="rps-0"),
        pytest.param(("buy",), id="buy-nothing"),
        pytest.param(("compare", "A100-80GB", "H1000"), id="compare-unknown-gpu"),
        pytest.param(("fit", "Falcon-40b-instruct-x"), id="fit-unknown-model"),
        pytest.param(("plan", "finetune", "Llama-2-7B", "--samples", "inf", "--tokens-per-sample", "100"),
                     id="infinite-samples"),
        pytest.param(("plan", "pretrain", "Llama-2-7B", "--tokens", "1e20"), id="tokens-beyond-any-job"),
        pytest.param(("estimate", "Llama-2-7B", "--task", "finetune", "--framework", "bogus"), id="bad-framework"),
        pytest.param((*JOB_1K, "--budget", "-5"), id="negative-budget"),
        pytest.param((*JOB_1K, "--budget", "0"), id="zero-budget"),
        pytest.param(("plan", "serve", "Llama-2-7B", "--rps", "1", "--ttft", "-1s"), id="negative-ttft"),
        pytest.param(("buy", "--gpu", "RTX4090", "--pue", "0.5"), id="pue-below-1"),
        pytest.param(("offers", "--min-gpus", "-1"), id="negative-min-gpus"),
        pytest.param(("fit", "./no-such-folder/config.json"), id="missing-config-path"),
        pytest.param(("plan", "serve", "Llama-2-7B", "--rps", "1", "--tpot", "10"), id="duration-without-unit"),
        pytest.param(("plan", "pretrain", "Llama-2-7B", "--tokens", "1.4"), id="pretrain-tokens-without-unit"),
        pytest.param((*JOB_1K, "--dataset-tokens", "5M"), id="dataset-tokens-and-samples"),
        pytest.param((*JOB_1K, "--compare-buy", "--hours-per-month", "-5"), id="negative-hours-per-month"),
        pytest.param((*JOB_1K, "--hours-per-month", "100"), id="hours-per-month-without-compare-buy"),
        # option values checked in the CLI itself (typer.BadParameter): same format as every other error
        pytest.param((*JOB_1K, "--objective", "speed"), id="bad-objective"),
        pytest.param((*JOB_1K, "--market", "us"), id="bad-market"),
        pytest.param((*JOB_1K, "--json", "--csv"), id="json-and-csv"),
    ],
)
def test_every_error_exits_2_with_error_and_fix(cli: Cli, args: tuple[str, ...]) -> None:
    _assert_error(cli(*args))


@pytest.mark.parametrize(("args", "needles"), [
    # a context longer than the model: the estimators' reason, not "no GPU can run this job"
    (("plan", "infer", "Llama-2-7B", "--prompt", "8000", "--output", "500", "--requests", "100"),
     ("longer than Llama-2-7B supports (4096 positions)", "To fix:")),
    # a latency target no GPU meets: which target, the best any configuration reaches, and on what
    (("plan", "serve", "Llama-3.1-70B", "--rps", "2", "--ttft", "10ms"),
     ("none meets the latency targets", "target --ttft 10 ms", "the quickest first token is")),
])
def test_no_plan_says_why_and_exits_1(cli: Cli, args: tuple[str, ...], needles: tuple[str, ...]) -> None:
    result = cli(*args)
    assert result.returncode == 1, result.stderr
    assert "No plan:" in result.stdout and "Traceback" not in result.stderr
    for needle in needles:
        assert needle in result.stdout


def test_serving_table_shows_latency_and_concurrency_priced_per_hour(cli: Cli) -> None:
    r = cli("plan", "serve", "Qwen2.5-0.5B", "--rps", "2", "--prompt", "500", "--output", "200", "--tpot", "50ms")
    assert r.returncode == 0, r.stderr
    assert "TTFT / TPOT" in r.stdout and "band on latency" in r.stdout and "Seqs/replica" in r.stdout
    hourly = re.search(r"^(\$[\d.,]+)/h at peak, .* per million output tokens", r.stdout, re.M)
    assert hourly, r.stdout[-600:]  # the fleet priced per hour and per token


def test_value_explanation_says_how_much_more_the_runner_up_pays(cli: Cli) -> None:
    r = cli(*SMALL_JOB, "--objective", "value")
    assert r.returncode == 0, r.stderr
    m = re.search(r"pays (\d+\.\d\d)× as much for the same work", r.stdout)
    assert m and float(m.group(1)) >= 1.0


# ---------------------------------------------------------------- fit, compare, buy


def test_fit_falcon_40b_json(cli: Cli) -> None:
    d = _json(cli("fit", "Falcon-40B", "--json"))
    assert d["model"] == "Falcon-40B"
    cases = {r["use_case"]: r for r in d["rows"]}
    assert {"inference 16-bit", "inference int8", "inference int4 (AWQ)", "LoRA fine-tune", "QLoRA fine-tune",
            "full fine-tune"} == set(cases)
    for row in d["rows"]:
        assert row["settings"]
        for o in row["options"]:
            assert {"config", "gpu", "n_gpus", "memory_needed_bytes", "memory_per_gpu_bytes"} <= set(o)
            assert o["memory_needed_bytes"] <= o["memory_per_gpu_bytes"]
    # less memory per GPU as the weights shrink (single-GPU options)
    single = {k: min((o["memory_needed_bytes"] for o in r["options"] if o["n_gpus"] == 1), default=None)
              for k, r in cases.items()}
    assert single["inference int8"] < single["inference 16-bit"]  # type: ignore[operator]
    assert single["inference int4 (AWQ)"] < single["inference int8"]  # type: ignore[operator]


def test_compare_a100_h100_json(cli: Cli) -> None:
    d = _json(cli("compare", "A100-80GB", "H100", "--json"))
    assert d["model"] == "Llama-3.1-8B"
    rows = {r["measure"]: r for r in d["rows"]}
    for measure in ("training (LoRA, tokens/s)", "training (full, tokens/s)", "inference batch-1 decode (tokens/s)",
                    "inference throughput (tokens/s)"):
        r = rows[measure]
        assert r["ratio"] > 1, (measure, r["ratio"])
        assert r["ratio"] == pytest.approx(r["H100"] / r["A100-80GB"])
        assert r["A100-80GB_config"] and r["H100_config"]


def test_buy_json_keys_and_figures(cli: Cli) -> None:
    # the tiny catalog's TINY-SLOW, worked out by hand in test_planner_tiny.test_break_even_by_hand: $37.50 of
    # capital and $0.0366 of power an hour; renting at TinyHourly's $0.40/h for 200 h is $80 a month
    rows = _json(cli("--catalog", TINY, "buy", "--gpu", "TINY-SLOW", "--json"))
    assert len(rows) == 1
    r = rows[0]
    assert {"gpu", "n_gpus", "currency", "purchase_with_host", "price_source", "price_kind", "price_as_of",
            "capital_per_month", "power_per_hour", "own_per_month", "rent_per_hour", "rent_per_month", "rent_offer",
            "hours_per_month", "years", "pue", "break_even_hours_per_month", "verdict"} <= set(r)
    assert r["gpu"] == "TINY-SLOW" and r["currency"] == "USD" and r["hours_per_month"] == 200
    # the JSON rounds each figure to cents (power to 1/10000)
    assert (r["capital_per_month"], r["power_per_hour"], r["own_per_month"]) == (37.5, 0.0366, 44.82)
    assert (r["rent_per_hour"], r["rent_per_month"]) == (0.4, 80.0)
    assert r["break_even_hours_per_month"] == pytest.approx(103.197, abs=0.01)


# ---------------------------------------------------------------- Chinese


def test_lang_zh_plan_prints_chinese_headers(cli: Cli) -> None:
    result = cli("--lang", "zh", *SMALL_JOB, "--top", "3")
    assert result.returncode == 0, result.stderr
    out = result.stdout
    for word in ("方案", "配置", "时间", "费用", "所需显存", "原因"):
        assert word in out, word
    assert re.search(r"最便宜的方案是", out)
    assert "Why:" not in out and "Config" not in out
    assert "种装得下" in out and "时间误差带" in out and "含 " in out  # caption and notes too
    assert "configurations fit" not in out and "start-up" not in out


def test_method_is_case_insensitive(cli: Cli) -> None:
    upper = _json(cli("estimate", "Qwen2.5-0.5B", "--task", "finetune", "--method", "QLoRA", "--json"))
    lower = _json(cli("estimate", "Qwen2.5-0.5B", "--task", "finetune", "--method", "qlora", "--json"))
    assert upper["memory"]["total_bytes"] == lower["memory"]["total_bytes"]


@pytest.mark.parametrize("args", [
    ("plan", "serve", "Qwen2.5-0.5B", "--rps", "2"), (*SMALL_JOB,), ("estimate", "Qwen2.5-0.5B"), ("gpus",),
    ("fit", "Qwen2.5-0.5B"), ("compare", "A100-80GB", "H100", "--model", "Qwen2.5-0.5B"), ("buy", "--gpu", "H100"),
    ("platforms",),
], ids=lambda a: "-".join(a[:2]))
def test_json_is_never_wrapped_to_the_terminal(cli: Cli, args: tuple[str, ...]) -> None:
    # a narrow terminal wraps sentences, never JSON strings
    result = cli(*args, "--json", env={"COLUMNS": "60"})
    assert result.returncode == 0, result.stderr
    json.loads(result.stdout)


def test_export_without_out_is_the_standard_output(cli: Cli) -> None:
    # `gpuplan plan … --export skypilot > task.yaml` must capture the task, not the table (a one-group fleet:
    # several SkyPilot services are one file each, written to a folder)
    import yaml

    result = cli("plan", "serve", "Qwen2.5-0.5B", "--rps", "1", "--tolerate", "none", "--export", "skypilot")
    assert result.returncode == 0, result.stderr
    task = yaml.safe_load(result.stdout)
    assert task["resources"]["accelerators"] and task["service"]["replica_policy"]["min_replicas"] >= 1
    assert "Why:" in result.stderr  # the plan itself went to stderr


def test_export_into_a_missing_folder_is_an_input_error(cli: Cli, tmp_path: Path) -> None:
    result = cli(*SMALL_JOB, "--export", "skypilot", "--out", str(tmp_path / "no-such-folder" / "task.yaml"))
    _assert_error(result, "--out", "does not exist")
    assert not list(tmp_path.iterdir())  # nothing half-written


def test_estimate_that_does_not_fit_names_knobs_that_can_help(cli: Cli) -> None:
    # Llama-3.1-8B full fine-tune on one 24 GB card: 16-bit weights + fp32 AdamW states alone exceed it, so
    # recomputation or a smaller micro-batch cannot help; LoRA or sharding over more GPUs can
    alone = cli("estimate", "Llama-3.1-8B", "--task", "finetune", "--gpu", "4090", "--micro-batch", "4")
    assert "Does not fit" in alone.stdout and "weights and optimizer states alone" in alone.stdout
    assert "--recompute" not in alone.stdout and "--method lora" in alone.stdout
    # activations are what overflow a LoRA run with long sequences: recomputation is the first knob
    acts = cli("estimate", "Llama-3.1-8B", "--task", "finetune", "--method", "lora", "--gpu", "4090",
               "--seq-len", "4096")
    assert "Does not fit" in acts.stdout and "try --recompute full" in acts.stdout
    # on several GPUs without ZeRO-3 the weights are replicated: sharding them is the hint
    shard = cli("estimate", "Llama-3.1-70B", "--task", "finetune", "--gpu", "H100", "--n-gpus", "8")
    assert "--zero 3" in shard.stdout


def test_an_estimate_that_does_not_fit_gives_its_time_and_speed_only_as_if_it_fit(cli: Cli) -> None:
    # a setup that cannot run has no time of its own: the figure is what it would take with the memory it lacks
    def words(*args: str) -> str:  # a table title wraps to the table's width
        return " ".join(cli(*args).stdout.split())

    data = ("--samples", "1k", "--tokens-per-sample", "512")
    full = words("estimate", "Llama-3.1-8B", "--task", "finetune", "--gpu", "4090", "--micro-batch", "4", *data)
    assert "Does not fit" in full and "Time if it fit:" in full
    fits = words("estimate", "Llama-3.1-8B", "--task", "finetune", "--method", "lora", "--gpu", "H100", *data)
    assert "Time:" in fits and "if it fit" not in fits
    serve = cli("estimate", "Llama-3.1-70B", "--task", "infer", "--gpu", "RTX4090").stdout
    assert "If it fit: TTFT" in serve
    zh = cli("--lang", "zh", "estimate", "Llama-3.1-70B", "--task", "infer", "--gpu", "RTX4090").stdout
    assert "若能装下：TTFT" in zh


def test_estimate_sentences_in_chinese(cli: Cli) -> None:
    out = cli("--lang", "zh", "estimate", "Llama-3.1-70B", "--task", "serve", "--batch", "64").stdout
    for needle in ("装不下：差", "KV 缓存容量", "每条序列", "误差带"):
        assert needle in out, needle
    assert "Does not fit" not in out and "KV cache capacity" not in out


def test_llamacpp_fit_hints_name_gguf_formats_and_pipeline_stages(cli: Cli) -> None:
    out = cli("estimate", "Llama-3.1-70B", "--gpu", "RTX4090", "--engine", "llamacpp").stdout
    assert "gguf-q4_k_m" in out and "--pp" in out
    assert "awq-int4" not in out and "--tp" not in out


def test_pretraining_a_short_context_model_uses_its_positions(cli: Cli) -> None:
    d = _json(cli("plan", "pretrain", "GPT-2-124M", "--tokens", "1B", "--max-gpus", "8", "--json"))
    assert d["pick"]["estimate"]["setup"]["seq_len"] == 1024
