"""Priced alternatives for plans that fit (issue 14, item 5): each change planned again, the largest saving
first, e.g. "quantize to fp8 would cost 33 % less"."""

from __future__ import annotations

import subprocess
from collections.abc import Callable

import pytest

from gpuplan.catalog import Catalog
from gpuplan.plan.planner import COST_TIE_SHARE, Constraints, plan
from gpuplan.requests import make_job

Cli = Callable[..., subprocess.CompletedProcess[str]]


def test_batch_inference_is_told_what_a_smaller_format_saves(frozen_catalog: Catalog) -> None:
    m = frozen_catalog.model("Llama-3.1-8B")
    job = make_job("infer", requests=10_000)
    r = plan(frozen_catalog, m, job, Constraints())
    assert r.pick is not None and r.alternatives
    savings = [a["saving"] for a in r.alternatives]
    assert savings == sorted(savings, reverse=True) and min(savings) > COST_TIE_SHARE
    for a in r.alternatives:
        assert a["saving"] == pytest.approx(1 - a["cost"] / r.pick.cost.total, abs=1e-3)  # cost rounded to 4 places
    # each is the pick of the plan made with the change
    fp8 = next(a for a in r.alternatives if a["change"] == "quantize to fp8")
    direct = plan(frozen_catalog, m, make_job("infer", requests=10_000, quant="fp8"), Constraints(quant="fp8"),
                  suggest=False)
    assert direct.pick is not None and fp8["pick"] == direct.pick.label()
    assert fp8["cost"] == pytest.approx(direct.pick.cost.total, abs=1e-4)


def test_full_fine_tuning_is_told_what_lora_saves(frozen_catalog: Catalog) -> None:
    m = frozen_catalog.model("Qwen2.5-7B")
    job = make_job("finetune", method="full", samples=5_000, tokens_per_sample=1_000)
    r = plan(frozen_catalog, m, job, Constraints())
    changes = [a["change"] for a in r.alternatives]
    assert "switch to LoRA" in changes and all(a["saving"] > 0.5 for a in r.alternatives)  # 16-bit states: > 2×
    assert r.as_dict()["alternatives"] == list(r.alternatives)


def test_a_plan_that_cannot_be_beaten_lists_none(frozen_catalog: Catalog) -> None:
    # QLoRA is the lightest method, and no --gpus narrowed the search: nothing to change
    m = frozen_catalog.model("Qwen2.5-0.5B")
    job = make_job("finetune", method="qlora", samples=1_000, tokens_per_sample=256)
    r = plan(frozen_catalog, m, job, Constraints())
    assert r.pick is not None and not r.alternatives


def test_the_cli_says_how_much_less(cli: Cli) -> None:
    result = cli("plan", "infer", "Llama-3.1-8B", "--requests", "10k", "--top", "3")
    assert result.returncode == 0, result.stderr
    assert "Cheaper: quantize to fp8 would cost" in result.stdout and "% less." in result.stdout
    assert "Cheaper alternatives" in result.stdout
