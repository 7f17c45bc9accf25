"""The command line builds only the command it runs (gpuplan.cli.command_tree), and answers as the whole app does."""

from __future__ import annotations

import contextlib
import io

import pytest
import typer

from gpuplan import cli
from tests.clirun import run_cli


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
