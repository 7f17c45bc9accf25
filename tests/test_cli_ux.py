"""The command line as a new user meets it (issue 14, item 9): --version, shell completion, real choices in
help, one exit status for "does not fit", honest platform prices, the language from --lang or the locale."""

from __future__ import annotations

import json
import subprocess
from collections.abc import Callable

import pytest
import typer.main

from gpuplan import __version__
from gpuplan.cli import app

Cli = Callable[..., subprocess.CompletedProcess[str]]
WIDE = {"COLUMNS": "250"}


def _commands() -> list[list[str]]:
    root = typer.main.get_command(app)
    out: list[list[str]] = [[]]
    for name, cmd in root.commands.items():  # type: ignore[attr-defined]
        subs = getattr(cmd, "commands", None)
        out += [[name, sub] for sub in subs] if subs else [[name]]
    return out


def test_version(cli: Cli) -> None:
    result = cli("--version")
    assert result.returncode == 0 and result.stdout.strip() == f"gpuplan {__version__}"


def test_shell_completion_script(cli: Cli) -> None:
    # typer reads the shell from the parent process (shellingham) unless its test switch lets the option take
    # the shell's name: without it the test would depend on the shell that started pytest (sh: "not supported")
    result = cli("--show-completion", "bash", env={"_TYPER_COMPLETE_TEST_DISABLE_SHELL_DETECTION": "1"})
    assert result.returncode == 0, result.stderr
    assert "_gpuplan_completion" in result.stdout and "complete " in result.stdout


@pytest.mark.parametrize(("words", "cword", "expected"), [
    ("gpuplan plan finetune --objective ", 4, ["cost", "time", "value"]),  # an option's values
    ("gpuplan estimate M --task f", 4, ["finetune"]),
    ("gpuplan plan finetune --ma", 3, ["--market", "--max-gpus"]),  # option names
    ("gpuplan pl", 1, ["platforms", "plan"]),  # commands
])
def test_the_shell_completes_commands_options_and_values(cli: Cli, words: str, cword: int,
                                                        expected: list[str]) -> None:
    result = cli(env={"_GPUPLAN_COMPLETE": "complete_bash", "COMP_WORDS": words, "COMP_CWORD": str(cword)})
    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == expected


@pytest.mark.parametrize("path", _commands(), ids=lambda p: " ".join(p) or "gpuplan")
def test_help_shows_values_not_python_types(cli: Cli, path: list[str]) -> None:
    result = cli(*path, "--help", env=WIDE)
    assert result.returncode == 0, result.stderr
    for python_type in ("<str>", "<int>", "<float>", "<bool>", "<list"):
        assert python_type not in result.stdout, (path, python_type)


def test_help_lists_the_choices(cli: Cli) -> None:
    out = cli("plan", "finetune", "--help", env=WIDE).stdout
    for choices in ("[full|lora|qlora|dora|adalora|galore|lisa|adapter|adapter-v2|ptuning|freeze]", "[cn|global]",
                    "[cost|time|value]", "[USD|CNY|EUR]"):
        assert choices in out
    assert "COUNT" in out and "MONEY" in out and "DURATION" in out
    est = cli("estimate", "--help", env=WIDE).stdout
    assert "[finetune|pretrain|infer|serve]" in est and "[none|selective|full]" in est


def test_an_estimate_that_does_not_fit_exits_1_as_a_plan_does(cli: Cli) -> None:
    # Llama-3.1-70B in 16-bit (~131 GiB of weights) cannot fit one 24 GiB card
    no = cli("estimate", "Llama-3.1-70B", "--gpu", "4090", "--json")
    assert no.returncode == 1 and json.loads(no.stdout)["fits"] is False
    yes = cli("estimate", "Qwen2.5-0.5B", "--gpu", "4090")
    assert yes.returncode == 0, yes.stderr
    plan = cli("plan", "infer", "Llama-3.1-70B", "--gpus", "4090", "--max-gpus", "1")
    assert plan.returncode == 1


def test_colab_pay_as_you_go_is_not_free(cli: Cli) -> None:
    # its compute units cost $9.99 per 100 and Google publishes no hourly rate: the price is unknown, not 0
    rows = json.loads(cli("platforms", "--json").stdout)
    payg = next(r for r in rows if (r["platform"], r["tier"]) == ("Google Colab", "Pay As You Go"))
    assert payg["price_per_month"] is None and payg["price_per_hour"] is None
    line = next(x for x in cli("platforms", env=WIDE).stdout.splitlines() if "Pay As You Go" in x)
    assert "free" not in line and "rate not published" in line
    # and no plan prices it at zero
    plan = json.loads(cli("plan", "finetune", "Qwen2.5-0.5B", "--samples", "1k", "--tokens-per-sample", "256",
                          "--json").stdout)
    assert all(p["platform"]["tier"] != "Pay As You Go" for p in plan["platforms"])


@pytest.mark.parametrize(("args", "env"), [
    (("--lang", "zh-CN"), {}), (("--lang", "zh"), {}), ((), {"GPUPLAN_LANG": "zh"}),
    ((), {"LANG": "zh_CN.UTF-8"}), ((), {"LC_ALL": "zh_CN.UTF-8", "LANG": "en_US.UTF-8"}),
])
def test_chinese_from_the_option_or_the_locale(cli: Cli, args: tuple[str, ...], env: dict[str, str]) -> None:
    result = cli(*args, "gpus", "--vendor", "NVIDIA", env={"LC_ALL": "", "LC_MESSAGES": "", **env})
    assert result.returncode == 0, result.stderr
    assert "加速卡" in result.stdout


def test_english_wins_over_the_locale_with_lang_en(cli: Cli) -> None:
    result = cli("--lang", "en", "gpus", env={"LANG": "zh_CN.UTF-8"})
    assert "Accelerators" in result.stdout
    refused = cli("--lang", "fr", "gpus")
    assert refused.returncode == 2 and "--lang" in refused.stderr
