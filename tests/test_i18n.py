"""One translation catalogue for the CLI and the web page; the language comes from --lang, GPUPLAN_LANG or the
locale; JSON values never depend on it (issue 14, item 6)."""

from __future__ import annotations

import json
import re
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest

from gpuplan.i18n import ZH, lang, normalize, using

Cli = Callable[..., subprocess.CompletedProcess[str]]
STATIC = Path(__file__).resolve().parents[1] / "gpuplan" / "web" / "static"
PLAN = ("plan", "finetune", "Qwen2.5-0.5B", "--samples", "1k", "--tokens-per-sample", "256", "--top", "3")
ESTIMATE = ("estimate", "Qwen2.5-0.5B", "--gpu", "T4", "--task", "finetune", "--method", "lora", "--samples", "1k",
            "--tokens-per-sample", "256")
LOCALES = [((), {}), (("--lang", "zh"), {}), (("--lang", "zh-CN"), {}), ((), {"GPUPLAN_LANG": "zh"}),
           ((), {"LANG": "zh_CN.UTF-8"})]


@pytest.mark.parametrize(("command", "fmt"), [(PLAN, "--json"), (PLAN, "--csv"), (ESTIMATE, "--json")])
def test_json_and_csv_do_not_depend_on_the_language(cli: Cli, command: tuple[str, ...], fmt: str) -> None:
    outputs = []
    for args, env in LOCALES:
        result = cli(*args, *command, fmt, env={"LC_ALL": "", "LC_MESSAGES": "", **env})
        assert result.returncode == 0, result.stderr
        outputs.append(result.stdout)
    assert all(out == outputs[0] for out in outputs)  # byte for byte (catalog rows may hold Chinese names)


def test_a_plan_carries_its_explanation_in_both_languages(cli: Cli) -> None:
    d = json.loads(cli(*PLAN, "--json").stdout)
    assert d["explanation"].endswith(".") and "is the cheapest choice" in d["explanation"]
    assert d["explanation_zh"].startswith("最便宜的方案是")


def test_the_cli_and_the_page_translate_cheapest_the_same_way(cli: Cli) -> None:
    table = cli("--lang", "zh", *PLAN).stdout
    assert f"— {ZH['cheapest']}" in table and ZH["cheapest"] == "最便宜"
    page = (STATIC / "app.js").read_text(encoding="utf-8")
    assert not re.search(r"[\u4e00-\u9fff]", page)  # no labels of its own: it loads gpuplan.i18n.ZH
    assert "state.labels = meta.labels.zh" in page
    html = (STATIC / "index.html").read_text(encoding="utf-8")
    for key in re.findall(r'data-i18n="([^"]+)"', html):
        assert key in ZH, key  # every label the page marks has its Chinese form in the catalogue


@pytest.mark.parametrize(("text", "expected"), [
    ("zh", "zh"), ("zh-CN", "zh"), ("zh_CN.UTF-8", "zh"), ("zh_TW", "zh"), ("en_US.UTF-8", "en"), ("C", "en"),
    ("C.UTF-8", "en"), ("", None),
])
def test_locales(text: str, expected: str | None) -> None:
    assert normalize(text) == expected


def test_using_restores_the_language(monkeypatch: pytest.MonkeyPatch) -> None:
    for var in ("GPUPLAN_LANG", "LC_ALL", "LC_MESSAGES"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("LANG", "zh_CN.UTF-8")
    assert lang() == "zh"
    with using("en"):
        assert lang() == "en"
    assert lang() == "zh"


@pytest.mark.parametrize(("argv", "expected"), [
    (["plan", "finetune", "M", "--lang", "zh"], ["--lang", "zh", "plan", "finetune", "M"]),
    (["gpus", "--lang=zh-CN", "--json"], ["--lang=zh-CN", "gpus", "--json"]),
    (["--lang", "en", "gpus", "--lang", "zh"], ["--lang", "zh", "gpus"]),  # the last one wins
    (["fit", "M", "--", "--lang", "zh"], ["fit", "M", "--", "--lang", "zh"]),  # nothing after -- is an option
    (["gpus"], ["gpus"]),
])
def test_lang_is_a_global_option_given_anywhere(argv: list[str], expected: list[str]) -> None:
    from gpuplan.cli import lang_first

    assert lang_first(argv) == expected


def test_lang_after_the_subcommand_changes_tables_help_and_errors() -> None:
    from clirun import run_cli

    code, out, _ = run_cli([*PLAN, "--lang", "zh"])
    assert code == 0 and "方案" in out and "— 最便宜" in out
    code, out, _ = run_cli(["plan", "finetune", "--help", "--lang", "zh-CN"])
    assert code == 0 and "用法：gpuplan plan finetune" in out
    code, _, err = run_cli(["gpus", "--sort", "speed", "--lang", "zh"])
    assert code == 2 and err.startswith("错误：")
    code, _, err = run_cli(["gpus", "--lang", "fr"])
    assert code == 2 and "--lang" in err and "'fr'" in err
    code, _, err = run_cli(["gpus", "--lang"])
    assert code == 2 and "--lang" in err and "needs a language" in err


def test_lang_after_the_subcommand_leaves_json_english(cli: Cli) -> None:
    english = cli(*PLAN, "--json", env={"LC_ALL": "", "LC_MESSAGES": "", "LANG": "C"}).stdout
    assert cli(*PLAN, "--json", "--lang", "zh", env={"LC_ALL": "", "LC_MESSAGES": "", "LANG": "C"}).stdout == english
