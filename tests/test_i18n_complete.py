"""Chinese is complete in the CLI (issue 14, item 6): every help text, every error message and fix, the assumptions,
explanations and notes. Each test fails when a translation is missing, so a new option or a new error without its
Chinese form does not pass."""

from __future__ import annotations

import importlib.util
import re
from pathlib import Path
from typing import Any

import pytest
from clirun import run_cli

from gpuplan import cli
from gpuplan.i18n import TEMPLATES, ZH, translate, using, zh_sentence

ROOT = Path(__file__).resolve().parents[1]
CJK = re.compile(r"[\u4e00-\u9fff]")
HOLE = re.compile(r"\{[^{}]*\}")


def _templates_module() -> Any:
    spec = importlib.util.spec_from_file_location("i18n_templates", ROOT / "scripts" / "i18n_templates.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def run(argv: list[str]) -> tuple[int, str, str]:
    """``gpuplan ARGV`` in-process: (exit status, stdout, stderr)."""
    return run_cli(argv)


def _commands(command: Any, path: tuple[str, ...] = ()) -> list[tuple[tuple[str, ...], Any]]:
    found = [(path, command)]
    for name, sub in sorted(getattr(command, "commands", {}).items()):
        found += _commands(sub, (*path, name))
    return found


# ---------------------------------------------------------------- help


def test_every_help_text_has_its_chinese_form() -> None:
    with cli.help_in("zh") as root:
        missing = []
        for path, command in _commands(root):
            texts = [("help", command.help)] + [(p.opts[0] if p.opts else p.name, p.help) for p in command.params
                                                 if getattr(p, "help", None)]
            missing += [f"gpuplan {' '.join(path)} {where}: {text}" for where, text in texts  # the range apart
                        if text and not CJK.search(text.split("范围：")[0])]
    assert not missing, "\n".join(missing)


@pytest.mark.parametrize("path", [(), ("plan",), ("plan", "finetune"), ("plan", "serve"), ("estimate",), ("buy",),
                                  ("refresh",)])
def test_help_pages_are_chinese_around_the_options(path: tuple[str, ...]) -> None:
    code, out, _ = run(["--lang", "zh", *path, "--help"])
    assert code == 0
    assert "用法：gpuplan" in out and "选项" in out and "显示本帮助并退出。" in out
    assert not re.search(r"\bUsage:|\bOptions\b|Show this message|\[default:|\[required\]", out)
    assert not re.search(r"[\u4e00-\u9fff，。：；、（]…", out)  # Chinese lines fold rather than being cut
    code, english, _ = run([*path, "--help"])  # the English help is untouched by a Chinese run before it
    assert code == 0 and "Usage:" in english and not CJK.search(english.replace("性价比", ""))


def test_the_language_of_help_comes_from_the_environment_too(monkeypatch: pytest.MonkeyPatch) -> None:
    for var in ("GPUPLAN_LANG", "LC_ALL", "LC_MESSAGES"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("LANG", "zh_CN.UTF-8")
    assert "用法：" in run(["gpus", "--help"])[1]
    monkeypatch.setenv("LANG", "C.UTF-8")
    monkeypatch.setenv("GPUPLAN_LANG", "zh")
    assert "用法：" in run(["fit", "--help"])[1]
    assert "Usage:" in run(["--lang", "en", "fit", "--help"])[1]  # --lang wins, wherever it is


# ---------------------------------------------------------------- the catalogue of sentences


def test_every_sentence_of_the_source_has_a_chinese_form() -> None:
    """Every literal error message and fix and assumption value (scripts/i18n_templates.py lists them)."""
    module = _templates_module()
    missing = [f"{where}:{line}: {text}" for where, line, text in module.sites()
               if text is not None and not module.translated(text)]
    assert not missing, "\n".join(missing)


def test_the_source_scan_sees_sentences_built_away_from_an_error(tmp_path: Path) -> None:
    """Assumptions written as dicts, notes added to a tuple or list, a fix held in a variable, a branch added to a
    sentence: each is a sentence the catalogue must hold, and one that is not literal at all is reported."""
    (tmp_path / "m.py").write_text(
        "def f(x, notes, out):\n"
        "    out.append({'name': 'warp speed', 'value': f'{x} parsecs an hour', 'source': 'a book'})\n"
        "    notes += (f'{x} tribbles aboard',)\n"
        "    notes.append('the shields hold')\n"
        "    fix = f'reverse the polarity of {x}'\n"
        "    raise InputError('--x', 'the warp core ' + ('hums' if x else 'sings'), fix)\n"
        "def g(err):\n"
        "    raise InputError('--x', err.explain(), 'ask the captain.')\n", encoding="utf-8")
    module = _templates_module()
    found = {text for _, _, text in module.sites(tmp_path)}
    assert {"warp speed", "{x} parsecs an hour", "{x} tribbles aboard", "the shields hold", "reverse the polarity of "
            "{x}", "the warp core hums", "the warp core sings", "ask the captain."} <= found
    assert "<not literal> err.explain()" in found and not module.translated("<not literal> err.explain()")
    assert "a book" not in found  # sources are cited as published


def test_a_hole_with_an_fstring_inside_has_its_output_forms_in_the_catalogue() -> None:
    """A nested f-string hole cannot become a pattern; the sentences it produces are in the catalogue as they come
    out (the moderation price of plan serve --guard api)."""
    nested = [en for en in TEMPLATES if re.search(r"\{[^{}]*\{", en)]
    for en in nested:
        assert "'request' if s.unit == 'request'" in en, en  # the only one; a new one needs its output forms
    assert zh_sentence("0.002 CNY per 3000 characters; the prompt and the response are each one call") == \
        "每 3000 字符 0.002 CNY；提示词和回答各算一次调用"
    assert zh_sentence("0.01 USD per request; the prompt and the response are each one call") == \
        "每次请求 0.01 USD；提示词和回答各算一次调用"


def test_a_citation_with_to_and_a_number_is_not_read_as_a_range() -> None:
    """Ranges (``0 to 3``) are translated; a sentence that merely has "to" and a digit is not cut into one."""
    assert zh_sentence("0 to 1,000,000 (0: as many as fit)") == "0 到 1,000,000（0：装得下的最大值）"
    text = "LlamaRMSNorm casts its input to float32 before pow/rsqrt, from v2"
    assert zh_sentence(text) == text


def test_each_chinese_template_uses_only_the_values_of_its_english() -> None:
    for en, zh in TEMPLATES.items():
        holes = set(HOLE.findall(en))
        for hole in HOLE.findall(zh):
            assert "{" + hole[1:-1].split("|")[0] + "}" in holes, (en, zh, hole)
        assert CJK.search(zh) or zh.upper() == en.upper() or not re.search(r"\b[a-z]{3,}\b", HOLE.sub("", en)), (en, zh)


@pytest.mark.parametrize(("english", "chinese"), [
    ("--batch: -1 is out of range: --batch takes 0 to 1,000,000 (0: as many as fit).",
     "--batch：-1 超出范围：--batch 的取值为 0 到 1,000,000（0：装得下的最大值）。"),
    ("--years: 60 is out of range: --years takes more than 0 and at most 50 years.",
     "--years：60 超出范围：--years 的取值为 大于 0、至多 50 年。"),
])
def test_a_sentence_with_values_is_translated_with_them(english: str, chinese: str) -> None:
    field, _, detail = english.partition(": ")
    assert f"{field}：{zh_sentence(detail)}" == chinese


# ---------------------------------------------------------------- errors


# bad input of every kind (values of tests/test_robust_fuzz_cli.py and the error tests), each an `error:` line
BAD = [
    ["plan", "finetune", "Qwen2.5-7B", "--method", "lora", "--samples", "20k"],
    ["plan", "finetune", "Qwen2.5-0.5B", "--samples", "-1", "--tokens-per-sample", "256"],
    ["plan", "finetune", "Qwen2.5-0.5B", "--samples", "1e309", "--tokens-per-sample", "256"],
    ["plan", "finetune", "Qwen2.5-0.5B", "--samples", "abc", "--tokens-per-sample", "256"],
    ["plan", "finetune", "Qwen2.5-0.5c", "--samples", "1k", "--tokens-per-sample", "256"],
    ["plan", "finetune", "Qwen2.5-0.5B", "--samples", "1k", "--tokens-per-sample", "256", "--budget", "$-5"],
    ["plan", "finetune", "Qwen2.5-0.5B", "--samples", "1k", "--tokens-per-sample", "256", "--deadline", "1h30"],
    ["plan", "finetune", "Qwen2.5-0.5B", "--samples", "1k", "--tokens-per-sample", "256", "--gpus", "H10"],
    ["plan", "finetune", "Qwen2.5-0.5B", "--samples", "1k", "--tokens-per-sample", "256", "--market", "mars"],
    ["plan", "finetune", "Qwen2.5-0.5B", "--samples", "1k", "--tokens-per-sample", "256", "--json", "--csv"],
    ["plan", "finetune", "Qwen2.5-0.5B", "--samples", "1k", "--tokens-per-sample", "256", "--out", "x.yaml"],
    ["plan", "finetune", "Qwen2.5-0.5B", "--samples", "1k", "--dataset-tokens", "1M"],
    ["plan", "finetune", "Qwen2.5-0.5B", "--samples", "1k", "--tokens-per-sample", "256", "--framework", "nope"],
    ["plan", "finetune", "Qwen2.5-0.5B", "--samples", "1k", "--tokens-per-sample", "256", "--method", "qlora",
     "--quant", "int8"],
    ["plan", "pretrain", "Qwen2.5-0.5B", "--tokens", "1e20"],
    ["plan", "pretrain", "Qwen2.5-0.5B"],
    ["plan", "infer", "Qwen2.5-0.5B", "--requests", "-5"],
    ["plan", "infer", "Qwen2.5-0.5B", "--quant", "int3"],
    ["plan", "serve", "Qwen2.5-0.5B", "--rps", "0"],
    ["plan", "serve", "Qwen2.5-0.5B", "--ttft", "2"],
    ["plan", "serve", "Qwen2.5-0.5B", "--availability", "100"],
    ["plan", "serve", "Qwen2.5-0.5B", "--bucket", "512:128"],
    ["plan", "serve", "Qwen2.5-0.5B", "--tolerate", "planet"],
    ["plan", "serve", "Qwen2.5-0.5B", "--ttft-p99", "1s", "--ttft", "2s"],
    ["estimate", "Qwen2.5-0.5B", "--gpu", "T4", "--tp", "3"],
    ["estimate", "Qwen2.5-0.5B", "--gpu", "T4", "--engine", "nope"],
    ["estimate", "Qwen2.5-0.5B", "--gpu", "T4", "--kv-dtype", "fp4"],
    ["estimate", "Qwen2.5-0.5B", "--gpu", "T4", "--precision", "fp8-mixed", "--task", "finetune", "--samples", "1k",
     "--tokens-per-sample", "256"],
    ["estimate", "Qwen2.5-0.5B", "--gpu", "H100", "--precision", "fp4-mixed", "--task", "pretrain", "--tokens",
     "1B"],
    ["estimate", "Qwen2.5-0.5B", "--gpu", "T4", "--batch", "-1"],
    ["estimate", "Qwen2.5-0.5B", "--gpu", "T4", "--task", "dance"],
    ["estimate", "./nope/config.json", "--gpu", "T4"],
    ["estimate", "someone/unknown-model", "--gpu", "T4"],
    ["estimate", "a" * 300, "--gpu", "T4"],
    ["gpus", "--min-memory", "48 potatoes"],
    ["gpus", "--sort", "speed"],
    ["offers", "--currency", "DOGE"],
    ["offers", "--limit", "nan"],
    ["history", "--gpu", "H100", "--tier", "cheap"],
    ["buy", "--gpu", "H100", "--years", "60"],
    ["buy"],
    ["buy", "--gpu", "H100", "--electricity", "abc"],
    ["compare", "H100", "H10"],
    ["fit", "Qwen2.5-0.5B", "--context", "0"],
    ["--catalog", "/dev/null", "gpus"],
    ["--lang", "klingon", "gpus"],
    ["gpus", "--no-such-option"],
    ["plan", "finetune"],
    ["plan", "dance"],
    ["gpus", "extra", "arguments"],
    ["estimate", "Qwen2.5-0.5B", "--gpu"],
    ["estimate", "Qwen2.5-0.5B", "--gpu", "T4", "--tp", "x"],
    ["web", "--host", "", "--port", "8000"],
]


@pytest.mark.parametrize("argv", BAD, ids=lambda a: " ".join(a)[:60])
def test_every_error_line_is_chinese(argv: list[str], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GPUPLAN_OFFLINE", "1")
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    code, _, err = run(["--lang", "zh", *argv])
    lines = [line for line in err.splitlines() if line.startswith(("错误：", "解决办法："))]
    assert code == 2 and lines and lines[0].startswith("错误："), err
    for line in lines:
        # what the user typed and the names of options, files and values may stay as they are; the words not
        assert CJK.search(line), line
        words = re.sub(r"'[^']*'|\"[^\"]*\"|--?[\w-]+|\S*[/.]\S*|\b[A-Z][\w-]*\b|\w*\d\w*", "", line)
        assert not re.search(r"\b[a-z]{3,} [a-z]{3,} [a-z]{3,}\b", words), line
    code_en, _, err_en = run(["--lang", "en", *argv])  # and in English the same error, in English
    assert code_en == 2 and err_en.startswith("error: ") and "To fix:" in err_en
    assert not CJK.search(err_en.replace("中文", "")), err_en


def test_the_http_api_sends_errors_in_both_languages() -> None:
    fastapi = pytest.importorskip("fastapi.testclient")
    from gpuplan.web.app import create_app

    client = fastapi.TestClient(create_app())
    answer = client.post("/api/estimate", json={"model": "Qwen2.5-0.5B", "gpu": "H10"})
    assert answer.status_code == 400
    data = answer.json()
    assert data["error"].startswith("gpu: unknown GPU 'H10'") and not CJK.search(data["error"] + data["fix"])
    assert data["error_zh"].startswith("gpu：未知的显卡 'H10'") and CJK.search(data["fix_zh"])


# ---------------------------------------------------------------- assumptions, explanations, notes


def _english_words(text: str) -> list[str]:
    """Runs of three or more English words left in ``text`` (names, flags, units and values aside)."""
    stripped = re.sub(r"'[^']*'|--?[\w-]+|\S*[/._=+]\S*|\b[A-Z][\w-]*\b|\w*\d\w*|\([^)]*\)", " ", text)
    return re.findall(r"\b[a-z]{3,}(?: [a-z]{2,}){2,}\b", stripped)


@pytest.mark.parametrize("argv", [
    ["estimate", "Qwen2.5-7B", "--gpu", "RTX4090", "--task", "finetune", "--method", "lora", "--samples", "20k",
     "--tokens-per-sample", "512"],
    ["estimate", "Qwen2.5-7B", "--gpu", "A100-80GB", "--task", "finetune", "--method", "full", "--samples", "1k",
     "--tokens-per-sample", "512", "--n-gpus", "8", "--zero", "3", "--framework", "llama-factory"],
    ["estimate", "Qwen2.5-7B", "--gpu", "L40S", "--task", "serve", "--engine", "vllm"],
    ["estimate", "DeepSeek-V3", "--gpu", "H200", "--task", "infer", "--tp", "8", "--quant", "fp8"],
    ["estimate", "Llama-3.1-8B", "--gpu", "B200", "--task", "pretrain", "--tokens", "1B", "--precision",
     "fp4-mixed"],
    # serving fleets: the guard's and multi-LoRA's assumptions and notes (built as dicts, away from any error)
    ["plan", "serve", "Qwen2.5-7B", "--rps", "5", "--guard", "api", "--users", "cn"],
    ["plan", "serve", "Qwen2.5-7B", "--rps", "5", "--ttft-p99", "2s", "--guard", "Llama-Guard-3-1B"],
    ["plan", "serve", "Qwen2.5-7B", "--rps", "5", "--adapters", "8", "--adapter-rank", "16"],
])
def test_assumptions_are_chinese(argv: list[str]) -> None:
    code, out, _ = run(["--lang", "zh", *argv])
    assert code in (0, 1) and "假设" in out
    for line in out.splitlines():
        if line.startswith(("注意", "内容安全")):
            assert not _english_words(re.sub(r"https?://\S+|\([^)]*\)|（[^）]*）", " ", line)), line
    table = out[out.rindex("假设"):]
    for line in table.splitlines()[3:-1]:  # rows: name │ value │ source (a citation, kept as published)
        cells = [c.strip() for c in line.strip("│ ").split("│")]
        if len(cells) == 3 and cells[0]:
            assert CJK.search(cells[0]) or cells[0] in ("logits",), line
            assert not _english_words(cells[1]), line


def test_plan_explanations_and_notes_are_chinese() -> None:
    code, out, _ = run(["--lang", "zh", "plan", "finetune", "Qwen2.5-0.5B", "--samples", "1k", "--tokens-per-sample",
                        "256", "--top", "3"])
    assert code == 0
    why = next(line for line in out.splitlines() if line.startswith("原因"))
    assert why.startswith("原因: 最便宜的方案是") or why.startswith("原因：最便宜的方案是")
    code, out, _ = run(["--lang", "zh", "plan", "serve", "Qwen2.5-0.5B", "--rps", "2", "--ttft", "1s"])
    assert code in (0, 1)
    for line in out.splitlines():
        if line.startswith(("注意", "原因", "没有方案")):
            assert CJK.search(line) and not _english_words(line), line


@pytest.mark.parametrize("argv", [["fit", "Qwen2.5-7B"], ["buy", "--gpu", "RTX4090", "--gpu", "H100"],
                                  ["compare", "A100-80GB", "H100"], ["gpus"], ["offers", "--limit", "3"],
                                  ["model", "Qwen2.5-7B"], ["history", "--gpu", "H100", "--provider", "nowhere"]])
def test_listings_fit_buy_and_compare_are_chinese(argv: list[str], monkeypatch: pytest.MonkeyPatch,
                                                   tmp_path: Path) -> None:
    monkeypatch.setenv("GPUPLAN_DATA_DIR", str(tmp_path))  # no refreshed prices: history says so
    code, out, err = run(["--lang", "zh", *argv])
    assert code in (0, 2), err
    lines = [line for line in (out + err).splitlines() if line.strip() and not line.startswith(("┏", "┡", "└"))]
    assert lines
    for line in lines:
        assert not _english_words(line), line


@pytest.mark.parametrize("extra", [[], ["--deadline", "3d"], ["--objective", "time"], ["--spot"]])
def test_the_plans_assumptions_have_their_chinese_form(extra: list[str]) -> None:
    """What the page and the API show beside a plan (the JSON's assumptions, in both languages there)."""
    import json

    code, out, _ = run(["plan", "finetune", "Qwen2.5-0.5B", "--samples", "1k", "--tokens-per-sample", "256",
                        "--top", "1", *extra, "--json"])
    assert code == 0
    for a in json.loads(out)["assumptions"]:
        for text in (a["name"], a["value"]):
            assert text == "FX" or CJK.search(zh_sentence(text)) or not _english_words(text), text


def test_every_phrase_of_the_modeling_code_line_has_its_chinese_form() -> None:
    """describe_stack joins its phrases with ", " and the Chinese line translates them one by one (the ``{rest|l}``
    hole), so each literal phrase is in the catalogue and holds no ", " of its own (a LitGPT q,v LoRA on Llama-2-7B
    showed 'attention keeps the fused QKV output whole' and 'padded to the QKV width' in English)."""
    import ast
    import inspect
    import textwrap

    from gpuplan.estimate.memory import describe_stack

    tree = ast.parse(textwrap.dedent(inspect.getsource(describe_stack)))
    phrases = [node.elts[1].value for node in ast.walk(tree) if isinstance(node, ast.Tuple) and len(node.elts) == 2
               and isinstance(node.elts[1], ast.Constant) and isinstance(node.elts[1].value, str)]
    assert len(phrases) > 10
    with using("zh"):
        untranslated = [p for p in phrases if ", " in p or not CJK.search(zh_sentence(p))]
    assert not untranslated


def test_the_page_gets_the_sentence_templates_with_the_labels() -> None:
    fastapi = pytest.importorskip("fastapi.testclient")
    from gpuplan.web.app import create_app

    meta = fastapi.TestClient(create_app()).get("/api/meta").json()
    assert meta["templates"]["zh"] == TEMPLATES and meta["labels"]["zh"] == ZH
    page = (ROOT / "gpuplan" / "web" / "static" / "app.js").read_text(encoding="utf-8")
    assert "compileTemplates(state.templates)" in page and "ts(a.value)" in page


def test_a_missing_translation_shows_english_not_garbage() -> None:
    with using("zh"):
        assert translate("a sentence gpuplan never says") == "a sentence gpuplan never says"
        assert translate("nothing fits.") == "都装不下。"
    assert ZH["Usage: "] == "用法："
