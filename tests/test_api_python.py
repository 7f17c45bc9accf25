"""The Python API (issue 14, item 8): ``import gpuplan; gpuplan.plan(...)`` and ``gpuplan.estimate(...)`` with the
CLI's text forms, giving what the CLI gives; readable results, an HTML view for notebooks, ``.to_pandas()``."""

from __future__ import annotations

import contextvars
import json
import subprocess
from collections.abc import Callable

import pandas as pd
import pytest

import gpuplan
from gpuplan.errors import InputError
from gpuplan.types import Job

Cli = Callable[..., subprocess.CompletedProcess[str]]


def test_job_takes_the_cli_text_forms() -> None:
    job = Job("finetune", samples="20k", tokens_per_sample="1k", epochs=2, ttft_s="2s")  # type: ignore[arg-type]
    assert job.samples == 20_000 and job.tokens_per_sample == 1_000
    assert job.train_tokens == 40_000_000  # 20k samples × 1k tokens × 2 epochs
    assert job.ttft_s == 2.0
    with pytest.raises(InputError, match="samples"):
        Job("finetune", samples="twenty")  # type: ignore[arg-type]


def test_plan_is_the_clis_plan(cli: Cli) -> None:
    p = gpuplan.plan("Qwen2.5-0.5B", "finetune", samples="2k", tokens_per_sample=512, budget="5USD", top=3)
    result = cli("plan", "finetune", "Qwen2.5-0.5B", "--samples", "2k", "--tokens-per-sample", "512",
                 "--budget", "5USD", "--top", "3", "--json")
    assert result.returncode == 0, result.stderr
    assert json.loads(json.dumps(p.as_dict())) == json.loads(result.stdout)
    assert p.pick is not None and p.pick.cost.total <= 5  # attributes of the result pass through


def test_estimate_is_the_clis_estimate(cli: Cli) -> None:
    e = gpuplan.estimate("Qwen2.5-7B", "4090", task="finetune", method="qlora", samples="20k",
                         tokens_per_sample="1k", micro_batch=2)
    result = cli("estimate", "Qwen2.5-7B", "--gpu", "4090", "--task", "finetune", "--method", "qlora",
                 "--samples", "20k", "--tokens-per-sample", "1k", "--micro-batch", "2", "--json")
    assert json.loads(result.stdout) == json.loads(json.dumps(e.as_dict()))
    assert result.returncode == (0 if e.fits else 1)


def test_results_read_well_in_a_terminal_and_a_notebook() -> None:
    p = gpuplan.plan("Qwen2.5-0.5B", "finetune", samples="2k", tokens_per_sample=512, top=7)
    text = repr(p)
    assert text.startswith("<Plan: Qwen2.5-0.5B, finetune, objective cost: 7 plans")
    assert p.pick is not None and p.pick.estimate.describe() in text and "… 2 more" in text
    page = p._repr_html_()
    assert page.startswith("<table>") and page.count("<tr>") == 1 + 7 and "<th>settings</th>" in page
    e = gpuplan.estimate("Qwen2.5-0.5B", "T4", task="infer", prompt=1024, output=256)
    assert repr(e).startswith("<Estimate: Qwen2.5-0.5B on 1× T4, infer: fits;")
    assert "<td>weights</td>" in e._repr_html_()


def test_to_pandas() -> None:
    p = gpuplan.plan("Qwen2.5-0.5B", "finetune", samples="2k", tokens_per_sample=512, top=4)
    df = p.to_pandas()
    assert isinstance(df, pd.DataFrame) and len(df) == 4
    assert list(df["rank"]) == [1, 2, 3, 4] and p.pick is not None
    assert df["cost_total"].iloc[0] == pytest.approx(p.pick.cost.total, abs=1e-4)  # the CSV's 4 decimal places
    e = gpuplan.estimate("Qwen2.5-0.5B", "T4")
    parts = e.to_pandas()
    assert parts["bytes"].sum() == pytest.approx(e.memory.total) and parts["share"].sum() == pytest.approx(1)


def test_an_unknown_option_names_the_near_one() -> None:
    with pytest.raises(InputError, match="did you mean tokens_per_sample"):
        gpuplan.plan("Qwen2.5-0.5B", "finetune", samples="2k", tokens_per_sampel=512)


# the API takes and refuses what the CLI takes and refuses, and its error names the argument
@pytest.mark.parametrize(("task", "name", "value", "accepted"), [
    ("infer", "currency", "JPY", False), ("infer", "currency", "€", True), ("serve", "currency", "eur", True),
    ("infer", "currency", 5, False), ("serve", "rps", "abc", False), ("serve", "rps", 0, False),
    ("serve", "rps", "5", True), ("serve", "rps", 2e6, False), ("infer", "top", 0, False),
    ("infer", "top", 2.5, False), ("infer", "top", "3", True), ("infer", "top", 1001, False),
    ("infer", "max_gpus", 0, False), ("infer", "prompt", -1, False), ("infer", "deadline", "11y", False),
    ("infer", "budget", "-5", False)])
def test_the_api_accepts_and_refuses_what_the_cli_does(task: str, name: str, value: object, accepted: bool,
                                                        capsys: pytest.CaptureFixture[str]) -> None:
    from gpuplan.cli import main

    options = {**({"rps": 5} if task == "serve" else {"requests": "1000"}), name: value}
    argv = ["plan", task, "Llama-3.1-8B"] + [
        a for k, v in options.items() for a in (f"--{k.replace('_', '-')}", str(v))]
    try:  # in a context of its own: the CLI sets the language for the rest of its context
        contextvars.copy_context().run(main, [*argv, "--json"])
        cli_code = 0
    except SystemExit as exit_:
        cli_code = int(exit_.code or 0)
    err_text = capsys.readouterr().err
    assert "No such option" not in err_text  # refused for the value, not for the option
    assert (cli_code == 0) is accepted
    if accepted:
        assert gpuplan.plan("Llama-3.1-8B", task, **options).ranked
        return
    with pytest.raises(InputError) as err:
        gpuplan.plan("Llama-3.1-8B", task, **options)
    assert err.value.field == name and "fx.csv" not in str(err.value)


def test_serving_rows_show_latency_and_hourly_cost() -> None:
    p = gpuplan.plan("Qwen2.5-0.5B", "serve", rps=2, ttft="2s", top=3)
    rows = p.rows()
    assert rows and all("time" not in r and r["cost"].endswith("/h") and " / " in r["latency"] for r in rows)
    assert "1 h 00 min" not in repr(p)
