"""A plan row shows the settings it priced, and ``gpuplan estimate`` with them reproduces the row (issue 14,
item 4): the same memory per GPU and the same time. Both commands run as a user runs them."""

from __future__ import annotations

import json
import subprocess
from collections.abc import Callable
from typing import Any

import pytest

Cli = Callable[..., subprocess.CompletedProcess[str]]

PLANS = {
    # the case: a 4090 plan for Qwen2.5-7B LoRA that `estimate` with the same job said did not fit
    "lora-4090": ("finetune", "Qwen2.5-7B", "--samples", "20k", "--tokens-per-sample", "1k", "--gpus", "4090"),
    "qlora": ("finetune", "Llama-3.1-8B", "--method", "qlora", "--samples", "10k", "--tokens-per-sample", "2k"),
    "full-framework": ("finetune", "Qwen2.5-1.5B", "--method", "full", "--samples", "5k", "--tokens-per-sample",
                       "1k", "--framework", "llama-factory"),
    "lora-int4": ("finetune", "ChatGLM2-6B", "--samples", "10k", "--tokens-per-sample", "1088", "--quant", "int4",
                  "--market", "cn"),
    "pretrain": ("pretrain", "Llama-3.1-8B", "--tokens", "100B", "--max-gpus", "64"),
    "infer": ("infer", "Qwen2.5-7B", "--requests", "10k", "--quant", "awq-int4"),
}


def _json(cli: Cli, *args: str) -> Any:
    result = cli(*args, "--json")
    assert result.returncode in (0, 1), result.stderr
    return json.loads(result.stdout)


@pytest.mark.parametrize("case", list(PLANS))
def test_estimate_with_a_rows_settings_reproduces_it(cli: Cli, case: str) -> None:
    task, model, *rest = PLANS[case]
    plan = _json(cli, "plan", task, model, *rest, "--top", "3")
    assert plan["ranked"], plan["nothing_fits"]
    for row in plan["ranked"][:2]:
        argv = ["estimate", model]
        for flag, value in row["estimate_options"].items():
            argv += [flag] if value is True else [flag, f"{value:g}" if isinstance(value, float) else str(value)]
        est = _json(cli, *argv)
        planned = row["estimate"]
        assert est["config"] == planned["config"] == row["config"]
        assert est["fits"] is True
        assert est["memory_needed_bytes"] == pytest.approx(planned["memory_needed_bytes"], rel=1e-9)
        assert est["setup"] == planned["setup"]
        # training and batch inference: the work the row's cost pays for (its billed time adds the start-up)
        assert est["time"]["total_seconds"] == pytest.approx(planned["time"]["total_seconds"], rel=1e-9)
        assert row["seconds"] >= planned["time"]["total_seconds"]


def test_plan_rows_show_the_settings_compactly(cli: Cli) -> None:
    result = cli("plan", *PLANS["lora-4090"], "--top", "2")
    assert result.returncode == 0, result.stderr
    plan = _json(cli, "plan", *PLANS["lora-4090"], "--top", "2")
    for row in plan["ranked"]:
        s = row["estimate"]["setup"]
        text = f"mb {s['micro_batch']} × ga {s['grad_accum']} · recompute {s['recompute']} · {s['precision']}"
        assert row["settings"] == text
        assert text in result.stdout
    csv = cli("plan", *PLANS["lora-4090"], "--top", "2", "--csv")
    assert "settings" in csv.stdout.splitlines()[0].split(",")
