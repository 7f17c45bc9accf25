"""The table of options is the one place an option is declared (issue 10, part 2): a row added to
gpuplan.options.OPTIONS and named in a command's list is an option of that command's line, with its help, default
and range, read into the command; the help on every job command's line is its row's, in English and Chinese; an
option given where it does not apply is refused naming its flag."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
import typer
from clirun import run_cli
from typer.testing import CliRunner

from gpuplan import options
from gpuplan.cli import Opts, RangedCommand
from gpuplan.cli_options import table_options
from gpuplan.errors import InputError
from gpuplan.options import TRAINING, Option, Range
from gpuplan.types import Task


@pytest.fixture
def warmup(monkeypatch: pytest.MonkeyPatch) -> Iterator[Option]:
    """A new row, --warmup-steps (100 by default, 0 to 1,000,000), added to the table and to plan pretrain."""
    row = Option("warmup_steps", "--warmup-steps", int, 100, Range(0, 1e6), applies=TRAINING, stages=("layout",),
                 help=("Learning-rate warm-up steps.", "学习率预热步数。"))
    monkeypatch.setattr(options, "OPTIONS", (*options.OPTIONS, row))
    monkeypatch.setitem(options.RANGES, row.flag, row.range)
    monkeypatch.setitem(options.COMMANDS, "plan pretrain", (*options.COMMANDS["plan pretrain"], "warmup_steps"))
    options._by_name.cache_clear()
    yield row
    options._by_name.cache_clear()


def _command(seen: dict[str, Any]) -> typer.Typer:
    app = typer.Typer()

    @app.command(cls=RangedCommand)
    @table_options("plan pretrain")
    def pretrain(opts: Opts) -> None:
        seen.update(vars(opts))

    return app


def test_a_new_row_is_an_option_of_the_command_line_with_its_help_and_range(warmup: Option) -> None:
    result = CliRunner().invoke(_command({}), ["--help"], env={"COLUMNS": "200"})
    assert result.exit_code == 0
    line = next(t for t in result.output.splitlines() if "--warmup-steps" in t)
    assert "Learning-rate warm-up steps. Range: 0 to 1,000,000." in line
    assert "[default: 100]" in result.output.split("--warmup-steps")[1]


def test_a_new_row_reaches_the_command_given_or_at_its_default(warmup: Option) -> None:
    seen: dict[str, Any] = {}
    assert CliRunner().invoke(_command(seen), ["--tokens", "1T", "--warmup-steps", "5"]).exit_code == 0
    assert (seen["warmup_steps"], seen["tokens"]) == (5, "1T")
    assert CliRunner().invoke(_command(seen), ["--tokens", "1T"]).exit_code == 0
    assert seen["warmup_steps"] == 100


def test_a_new_row_is_checked_against_its_range_naming_its_flag(warmup: Option) -> None:
    result = CliRunner().invoke(_command({}), ["--tokens", "1T", "--warmup-steps", "2000000"])
    assert isinstance(result.exception, InputError)
    assert result.exception.field == "--warmup-steps"
    assert "2,000,000 is out of range: --warmup-steps takes 0 to 1,000,000" in result.exception.message


def test_a_new_row_is_refused_where_it_does_not_apply(warmup: Option) -> None:
    with pytest.raises(InputError, match="--warmup-steps applies to training") as err:
        options.refuse_inapplicable("layout", {"warmup_steps"}, Task.INFER)
    assert err.value.field == "--warmup-steps"
    options.refuse_inapplicable("layout", {"warmup_steps"}, Task.PRETRAIN)  # where it applies: no refusal


# the help of the options of the job commands, as typed in the table's rows (gpuplan.options)
@pytest.mark.parametrize(("argv", "flag", "text"), [
    (["estimate"], "--tp", "Tensor parallel size."),
    (["plan", "pretrain"], "--tokens", "Training tokens, e.g. 1.4T."),  # pretrain's own words
    (["estimate"], "--tokens", "Training tokens in total, e.g. 1.4T (instead of samples)."),
    (["plan", "serve"], "--budget", "Most the fleet may cost per hour, e.g. 40USD."),
    (["plan", "infer"], "--budget", "Most you will spend, e.g. 500USD or ¥3000."),
    (["--lang", "zh", "plan", "finetune"], "--quant", "P-tuning、LoRA 和 LLaMA-Adapter 冻结底座的格式"),
    (["--lang", "zh", "estimate"], "--lora-rank", "LoRA 秩（AdaLoRA：初始秩；GaLore：梯度投影的秩）。"),
])
def test_the_help_of_an_option_is_its_rows(argv: list[str], flag: str, text: str,
                                           monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COLUMNS", "300")
    code, out, _ = run_cli([*argv, "--help"])
    assert code == 0
    line = next(t for t in out.splitlines() if f" {flag} " in t)
    assert text in line, line


def test_lora_rank_with_full_fine_tuning_is_refused_on_the_command_line() -> None:
    code, _, err = run_cli(["plan", "finetune", "Qwen2.5-7B", "--method", "full", "--lora-rank", "16",
                            "--samples", "1k", "--tokens-per-sample", "512"])
    assert code == 2
    assert "--lora-rank applies to --method lora, qlora, dora, adalora or galore, not full." in err
    assert "drop --lora-rank" in err


def test_the_default_lora_rank_with_full_fine_tuning_is_not_a_refusal() -> None:
    code, out, _ = run_cli(["plan", "finetune", "Qwen2.5-7B", "--method", "full", "--samples", "1k",
                            "--tokens-per-sample", "512", "--top", "1", "--json"])
    assert code == 0, out
