"""The command line builds only the command it runs (gpuplan.cli.command_tree), and answers as the whole app does."""

from __future__ import annotations

import contextlib
import inspect
import io
import os
import subprocess
import sys
import typing
from pathlib import Path
from types import SimpleNamespace

import pytest
import typer

from gpuplan import cli
from gpuplan.cli_options import _parameter, table_options
from gpuplan.options import of_command
from gpuplan.signatures import spliced
from tests.clirun import run_cli

ROOT = Path(__file__).resolve().parent.parent


def _names(argv: list[str]) -> dict[str, list[str]]:
    root = typer.main.get_command(cli.command_tree(argv))
    assert isinstance(root, typer.core.TyperGroup)
    return {name: sorted(getattr(c, "commands", {})) for name, c in root.commands.items()}


def test_a_named_command_builds_only_itself() -> None:
    # the root's --lang and --catalog take a value: the value is not read as a command
    argv = ["--lang", "zh", "--catalog", "plan", "plan", "finetune", "ChatGLM2-6B", "--method", "lora"]
    assert _names(argv) == {"plan": ["finetune"]}
    assert _names(["buy", "--gpu", "H100"]) == {"buy": []}


@pytest.mark.parametrize("argv", [["--help"], ["gps"], ["plan", "finetun"], ["plan", "--help"], ["plan"]])
def test_help_and_misspelt_commands_see_every_command(argv: list[str]) -> None:
    names = _names(argv)
    if argv[0] == "plan":  # the plan group whole: its help lists the four, the error suggests one
        assert names == {"plan": ["finetune", "infer", "pretrain", "serve"]}
    else:
        assert cli.command_tree(argv) is cli.app and "buy" in names and len(names["plan"]) == 4


def _whole(argv: list[str]) -> tuple[int, str, str]:
    """``gpuplan ARGV`` run on the command tree of every command, as before command_tree."""
    out, err = io.StringIO(), io.StringIO()
    code = 0
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            typer.main.get_command(cli.app).main(args=argv, prog_name="gpuplan", standalone_mode=False)
        except SystemExit as exc:
            code = int(exc.code or 0)
    return code, out.getvalue(), err.getvalue()


@pytest.mark.parametrize("argv", [["plan", "finetune", "--help"], ["buy", "--help"],
                                  ["buy", "--gpu", "RTX4090D", "--market", "cn", "--hours-per-month", "200",
                                   "--json"]])
def test_the_pruned_tree_answers_as_the_whole_one(argv: list[str]) -> None:
    pruned = run_cli(argv)
    assert pruned[1] and pruned == _whole(argv)


def test_a_command_line_makes_the_table_options_of_its_command_alone() -> None:
    # a fresh process: in this one other tests have built every command
    probe = ("import typer; from gpuplan import cli; from gpuplan.cli_options import TableCommand; "
             "typer.main.get_command(cli.command_tree(['plan', 'finetune', 'ChatGLM2-6B'])); "
             "print(sorted(n for n, v in vars(cli).items() if isinstance(v, TableCommand) and 'spliced' in vars(v)))")
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True,
                         env={**os.environ, "PYTHONPATH": str(ROOT)}, cwd=ROOT).stdout
    assert out.strip() == "['plan_finetune']"


def test_a_table_command_reads_and_runs_as_its_spliced_function() -> None:
    def offers(opts: SimpleNamespace, json_out: bool = False) -> tuple[object, ...]:
        """List offers."""
        return opts.gpu, opts.market, json_out

    lazy = table_options("offers")(offers)
    eager = spliced(offers, "opts", [_parameter(o, "offers") for o in of_command("offers")])
    assert "spliced" not in vars(lazy)  # nothing made yet
    assert _shown(inspect.signature(lazy).parameters) == _shown(inspect.signature(eager).parameters)
    assert _shown(typing.get_type_hints(lazy, include_extras=True)) \
        == _shown(typing.get_type_hints(eager, include_extras=True))
    assert (lazy.__name__, lazy.__doc__) == ("offers", "List offers.")
    assert lazy(**{**{p: None for p in inspect.signature(eager).parameters}, "gpu": "H100", "json_out": True}) \
        == ("H100", None, True)


@pytest.mark.parametrize(("argv", "absent"), [
    # an inference command never loads the training time model (its step terms and dataclasses) ...
    (["plan", "serve", "Qwen2.5-7B", "--rps", "5"], "gpuplan.estimate.train_time"),
    (["estimate", "Qwen2.5-7B", "--gpu", "H100", "--json"], "gpuplan.estimate.train_time"),
    # ... nor a training command the inference speed model
    (["plan", "finetune", "ChatGLM2-6B", "--method", "lora", "--samples", "10k", "--json"],
     "gpuplan.estimate.infer_speed"),
])
def test_a_command_imports_no_estimator_it_does_not_run(argv: list[str], absent: str) -> None:
    code = ("import sys, contextlib, io; from gpuplan.cli import main; sys.argv = ['gpuplan', *sys.argv[1:]]\n"
            "with contextlib.suppress(SystemExit), contextlib.redirect_stdout(io.StringIO()): main()\n"
            "print(sorted(m for m in sys.modules if m.startswith('gpuplan.estimate.')))")
    out = subprocess.run([sys.executable, "-c", code, *argv], capture_output=True, text=True, check=True,
                         env={**os.environ, "GPUPLAN_OFFLINE": "1"})
    loaded = out.stdout.strip().splitlines()[-1]
    assert "gpuplan.estimate.memory" in loaded  # the command ran its estimate
    assert absent not in loaded


@pytest.mark.parametrize("argv", [["gpus", "--json"], ["offers", "--gpu", "H100", "--json"]])
def test_a_listing_imports_no_estimator(argv: list[str]) -> None:
    # the memory estimator and what it imports were about a seventh of a listing's CPU (docs/planner.md)
    code = ("import sys, contextlib, io; from gpuplan.cli import main; sys.argv = ['gpuplan', *sys.argv[1:]]\n"
            "with contextlib.suppress(SystemExit), contextlib.redirect_stdout(io.StringIO()): main()\n"
            "print(sorted(m for m in sys.modules if m.startswith('gpuplan.estimate.')))")
    out = subprocess.run([sys.executable, "-c", code, *argv], capture_output=True, text=True, check=True,
                         env={**os.environ, "GPUPLAN_OFFLINE": "1"})
    assert out.stdout.strip().splitlines()[-1] == "['gpuplan.estimate.params']"  # gpuplan's own import: count_params


@pytest.mark.parametrize("enabled", [True, False])
@pytest.mark.parametrize(("argv", "status"), [
    (["gpus", "--json"], 0),
    (["model", "no-such-model-xyz"], 2),  # an input error: main() turns it into a SystemExit
])
def test_a_command_leaves_the_collector_as_it_found_it(enabled: bool, argv: list[str], status: int) -> None:
    # main() holds the collector off while a command runs; the process (a test run, a notebook) gets it back,
    # whether the command succeeds or fails
    import gc

    if enabled:
        gc.enable()
    else:
        gc.disable()
    try:
        assert run_cli(argv)[0] == status
        assert gc.isenabled() is enabled
    finally:
        gc.enable()


@pytest.mark.parametrize("enabled", [True, False])
def test_the_web_server_runs_with_the_collector_on_and_gives_it_back(enabled: bool,
                                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    # a server's requests leave cyclic garbage for as long as it runs: it serves with the collector on, whatever
    # main() paused, and a caller that had it off finds it off again when the server stops
    import gc

    web = pytest.importorskip("gpuplan.web")
    seen: list[bool] = []
    monkeypatch.setattr(web, "serve", lambda *args: seen.append(gc.isenabled()))
    if enabled:
        gc.enable()
    else:
        gc.disable()
    try:
        assert run_cli(["web"])[0] == 0
        assert seen == [True]
        assert gc.isenabled() is enabled
    finally:
        gc.enable()


def _shown(params: typing.Mapping[str, typing.Any]) -> list[tuple[object, ...]]:
    """What typer reads of each parameter or annotation: name, kind, default, type and the option's flags and help
    (the option objects themselves are made anew on each reading)."""
    out = []
    for name, p in params.items():
        annotation = getattr(p, "annotation", p)
        meta = getattr(annotation, "__metadata__", ())
        info = [(m.param_decls, m.help, m.envvar) for m in meta]
        out.append((name, getattr(p, "kind", None), getattr(p, "default", None),
                    typing.get_args(annotation)[:1] if meta else annotation, info))
    return out
