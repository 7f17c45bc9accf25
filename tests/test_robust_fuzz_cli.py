"""Property-based fuzzing of every CLI command, in-process: whatever the arguments (huge, negative, non-finite,
unitless, overlong, unknown names, broken config files and catalog folders), ``gpuplan`` ends with status 0,
1 (no plan fits) or 2 (the input is wrong, with ``error:`` naming it) — never a traceback, never status 3
(an internal error).

CI runs ``GPUPLAN_FUZZ_EXAMPLES`` (default 800) command lines from a fixed seed, so a CI run is repeatable;
``GPUPLAN_FUZZ_RANDOM=1`` draws new ones, as the full run of the robustness issue does:
``GPUPLAN_FUZZ_RANDOM=1 GPUPLAN_FUZZ_EXAMPLES=100000 python -m pytest -s tests/test_robust_fuzz_cli.py`` (``-s``
prints the count and the exit statuses). ``GPUPLAN_FUZZ_COMMANDS="plan serve"`` restricts it to the commands named, and
``-p hypothesis --hypothesis-seed N`` lets several processes share a run.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Iterator
from typing import Any

import pytest
import typer.main
from clirun import run_cli
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from gpuplan import cli

EXAMPLES = int(os.environ.get("GPUPLAN_FUZZ_EXAMPLES", "800"))
RANDOM = os.environ.get("GPUPLAN_FUZZ_RANDOM") == "1"
RUNS = {"count": 0, "by_status": {}}  # reported at the end of the module (pytest -s shows it)


def _leaves(cmd: Any, path: tuple[str, ...] = ()) -> Iterator[tuple[tuple[str, ...], Any]]:
    subs = getattr(cmd, "commands", None)
    if path and not subs:
        yield path, cmd
    for name, sub in sorted((subs or {}).items()):
        yield from _leaves(sub, (*path, name))


ROOT = typer.main.get_command(cli.app)
ALL_COMMANDS = list(_leaves(ROOT))
# GPUPLAN_FUZZ_COMMANDS="plan serve,estimate" fuzzes only those commands (a change to one command, at a high count)
_ONLY = {c.strip() for c in os.environ.get("GPUPLAN_FUZZ_COMMANDS", "").split(",") if c.strip()}
COMMANDS = [(path, cmd) for path, cmd in ALL_COMMANDS if not _ONLY or " ".join(path) in _ONLY]
if _ONLY and len(COMMANDS) != len(_ONLY):
    raise ValueError(f"GPUPLAN_FUZZ_COMMANDS names commands gpuplan does not have: {sorted(_ONLY)}")

# values that broke or fooled the CLI before, and their neighbours
NUMBERS = ["0", "1", "2", "-1", "3", "8", "64", "1024", "65536", "99999", "100001", "1e3", "1.5", "0.5", "1e308",
           "1e309", "-1e308", "nan", "inf", "-inf", "1e-300", "9" * 400, "-" + "9" * 400, "0x10", "1_000"]
UNITS = ["10k", "1.4T", "1e20", "100B", "7", "2s", "50ms", "12h", "3d", "1h30", "1h30m", "1e308s", "-1s", "0s",
         "500USD", "¥3000", "0.45USD", "0.6CNY", "$-5", "1e400USD", "48GB", "1e30GB", "0GB", "512MiB", "abc"]
NAMES = ["H100", "h100", "A100", "RTX4090", "RTX-4090", "H10", "MI300X", "AWS", "autodl", "lambda", "cn", "global",
         "USD", "CNY", "EUR", "vllm", "sglang", "hf", "lora", "qlora", "full", "freeze", "ptuning", "int4", "nf4",
         "awq-int4", "fp8", "bf16", "llama-factory", "deepspeed", "skypilot", "k8s", "cost", "time", "value",
         "selective", "adamw", "price", "memory", "zh", "en", "Llama-3.1-8B", "Qwen2.5-0.5B"]
ODD = ["", " ", "a" * 300, "b" * 5000, "中文", "--", "-x", "'", '"', "..", "/", "/dev/null", "/dev/zero", "~",
       "con", "%s%n", "{}", "\t\n"]
MODELS = ["Qwen2.5-0.5B", "Llama-3.1-8B", "ChatGLM2-6B", "Mixtral-8x7B", "DeepSeek-V3", "llama-3.1-8b", "Qwen2.5-0.5c",
          "meta-llama/Llama-3.1-8B", "./nope/config.json", "a" * 300, "x/" * 2100, ""]


def _value(broken: dict[str, str]) -> st.SearchStrategy[str]:
    text = st.text(st.characters(blacklist_characters="\x00", blacklist_categories=("Cs",)), max_size=12)
    return st.one_of(st.sampled_from(NUMBERS), st.sampled_from(UNITS), st.sampled_from(NAMES), st.sampled_from(ODD),
                     st.sampled_from(sorted(broken.values())), st.integers(-10**6, 10**6).map(str),
                     st.floats(allow_nan=True, allow_infinity=True).map(repr), text)


def _plausible(param: Any) -> st.SearchStrategy[str]:
    """A value near what the option takes (for a text option: a word of its help, where the choices are
    listed), so that many command lines get past validation and into the planner and the exporters."""
    kind = getattr(getattr(param, "type_descriptor", None), "annotation", None)
    if kind is int:
        return st.one_of(st.integers(0, 8), st.integers(0, 4096)).map(str)
    if kind is float:
        return st.floats(0, 1000, allow_nan=False).map(lambda x: f"{x:g}")
    words = sorted(set(re.findall(r"[A-Za-z0-9][\w.\-]*[A-Za-z0-9]", param.help or "")))
    return st.sampled_from(words + UNITS if words else NAMES + UNITS)


def _argv(broken: dict[str, str]) -> st.SearchStrategy[list[str]]:
    value = _value(broken)
    valid = st.sampled_from(MODELS[:5])
    model = st.one_of(valid, valid, valid, st.sampled_from(MODELS), st.sampled_from(sorted(broken.values())), value)

    @st.composite
    def argv(draw: Any) -> list[str]:
        path, cmd = draw(st.sampled_from(COMMANDS))
        args: list[str] = []
        if draw(st.booleans()) and draw(st.booleans()):
            args += [draw(st.sampled_from(["--lang", "--catalog"])), draw(value)]
        args += list(path)
        for param in cmd.params:
            if param.param_type_name == "argument" and (param.required or draw(st.booleans())):
                args.append(draw(model if param.name in ("model", "name") else value))
        options = [p for p in cmd.params if p.param_type_name == "option" and p.name != "help"]
        for param in draw(st.lists(st.sampled_from(options), max_size=4, unique_by=lambda p: p.name)) if options \
                else []:
            flag = draw(st.sampled_from(param.opts + param.secondary_opts))
            plausible = _plausible(param)
            args += [flag] if param.is_flag else [flag, draw(st.one_of(plausible, plausible, value))]
        return args

    return argv()


@pytest.fixture(scope="module")
def broken(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, str]]:
    """Broken inputs on disk (config files and catalog folders), a working folder to write --out files into,
    and ``gpuplan web`` replaced by a recorder (the fuzzer must not start servers)."""
    root = tmp_path_factory.mktemp("fuzz")
    files = {
        "inf": '{"model_type": "llama", "hidden_size": Infinity, "intermediate_size": 1, "num_attention_heads": 1, '
               '"num_hidden_layers": 1, "vocab_size": 1}',
        "huge": '{"model_type": "llama", "hidden_size": 1e400}',
        "deep": "[" * 100_000 + "]" * 100_000,
        "zero": json.dumps({"model_type": "llama", "hidden_size": 64, "intermediate_size": 0, "num_attention_heads": 4,
                            "num_hidden_layers": 2, "vocab_size": 100}),
        "remote": json.dumps({"model_type": "custom9", "auto_map": {"AutoModel": "modeling.X"}, "hidden_size": 64}),
        "array": "[1, 2]",
    }
    paths: dict[str, str] = {}
    for name, text in files.items():
        (root / name).mkdir()
        (root / name / "config.json").write_text(text, encoding="utf-8")
        paths[name] = str(root / name / "config.json")
    catalogs = root / "catalogs"
    for name in ("fifo", "dangling", "loop", "cell", "ok"):
        (catalogs / name).mkdir(parents=True)
    os.mkfifo(catalogs / "fifo" / "gpus.csv")
    (catalogs / "dangling" / "fx.csv").symlink_to(catalogs / "dangling" / "missing.csv")
    (catalogs / "loop" / "fx.csv").symlink_to(catalogs / "loop" / "fx.csv")
    (catalogs / "cell" / "fx.csv").write_text("date,base,quote,rate,source\n" + '"' + "x" * 200_000 + "\n")
    (root / "folder-loop").symlink_to(root / "folder-loop")
    paths.update({f"catalog-{n}": str(catalogs / n) for n in ("fifo", "dangling", "loop", "cell", "ok")},
                 folder_loop=str(root / "folder-loop"), out=str(root / "out" / "task.yaml"),
                 out_missing=str(root / "no-such-folder" / "task.yaml"))
    (root / "out").mkdir()
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr("gpuplan.web.serve", lambda *args, **kwargs: None)
        mp.chdir(root / "out")
        yield paths
    total = RUNS["count"]
    print(f"\nCLI fuzz: {total} command lines, exit statuses {dict(sorted(RUNS['by_status'].items()))}")


def run(argv: list[str]) -> tuple[int, str]:
    """``gpuplan ARGV`` in-process: (exit status, stdout + stderr); the language a --lang sets stays in the call."""
    code, out, err = run_cli(argv)
    return code, out + err


@settings(max_examples=EXAMPLES, deadline=None, database=None, derandomize=not RANDOM,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.filter_too_much])
@given(data=st.data())
def test_no_command_line_ends_in_a_traceback(broken: dict[str, str], data: st.DataObject) -> None:
    argv = data.draw(_argv(broken), label="argv")
    code, output = run(argv)
    RUNS["count"] += 1
    RUNS["by_status"][code] = RUNS["by_status"].get(code, 0) + 1
    assert "Traceback" not in output and "internal error" not in output, (argv, output[-2000:])
    assert code in (0, 1, 2), (argv, code, output[-2000:])
    if code == 2:
        assert "error:" in output or "错误：" in output, (argv, output[-2000:])  # --lang zh translates it


def test_the_fuzzer_reaches_every_command() -> None:
    paths = {" ".join(path) for path, _ in ALL_COMMANDS}
    assert {"estimate", "plan finetune", "plan serve", "buy", "web", "offers", "fit"} <= paths
