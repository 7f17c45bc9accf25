"""The CI gate of bench/accuracy.py: a class regresses when its LOSO figures get worse than the committed
baseline by more than refit noise."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "bench"))

import accuracy
from accuracy import Summary, check


@pytest.fixture
def baseline(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "accuracy_loso.json"
    path.write_text(json.dumps({"finetune_memory": {"rows": 200, "median_abs": 0.17, "under_rate": 0.50},
                                "tpot": {"rows": 200, "median_abs": 0.40, "under_rate": 0.6}}))
    monkeypatch.setattr(accuracy, "BASELINE", path)


def _memory(under_rows: int) -> Summary:
    return Summary("finetune_memory", 200, 0.17, 0.4, under_rows / 200, 0.06)


def test_one_memory_row_changing_side_is_noise_but_two_are_a_regression(baseline: None) -> None:
    assert check([_memory(101)], goals=False) == 0  # 50.5 %: one row more under-predicted
    assert check([_memory(102)], goals=False) == 1  # 51 %: two rows


def test_a_median_worse_than_the_slack_fails_and_a_missed_goal_fails_only_with_goals(baseline: None) -> None:
    assert check([Summary("tpot", 200, 0.404, 0.9, 0.6, 0.20)], goals=False) == 0
    assert check([Summary("tpot", 200, 0.41, 0.9, 0.6, 0.20)], goals=False) == 1
    assert check([Summary("tpot", 200, 0.40, 0.9, 0.6, 0.20)], goals=True) == 1



def test_a_run_is_listed_when_its_card_is_smaller_than_what_plans_would_ask_for(
        calibration_cases: tuple[list[Any], list[Any]]) -> None:
    # the same published run (torchtune's Llama-3.1-8B LoRA, 16.2 GiB allocated) checked against a card smaller
    # and one larger than what a plan asks for: listed on the first, not on the second
    from dataclasses import replace

    from gpuplan.estimate.calibration import fitted

    cal = fitted()
    case = next(c for c in calibration_cases[0] if c.id == "torchtune-readme-8b-lora-rtx4090-peak")
    result = accuracy.evaluate([case], cal)[0]
    gpu = case.meta["gpu"]
    small = replace(gpu, memory_visible_mib=int(case.measured / 2**20))  # the card the reading alone fills
    large = replace(gpu, memory_visible_mib=10 * gpu.memory_visible_mib)
    on_small = replace(result, case=replace(case, meta={**case.meta, "gpu": small}))
    on_large = replace(result, case=replace(case, meta={**case.meta, "gpu": large}))
    refused, n = accuracy.refused_runs([on_small, on_large], cal)
    assert n == 2
    assert [r.case.meta["gpu"] for r, _, _ in refused] == [small]
