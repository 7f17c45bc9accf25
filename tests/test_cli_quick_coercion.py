"""The CLI's quick coercion gives each option the value typer's own coercion gives it (issue 10, part 5).

typer 0.29 coerces every parameter through a pydantic TypeAdapter it builds on first use; ``gpuplan.cli`` lets a
value already of the parameter's type, and plain digits for a number, through without building one. Here every
parameter of every command is given the values the command line and the defaults hand it, and the quick answer
must equal the one typer's pydantic adapter makes, type included; what the quick path leaves to typer keeps
typer's message.
"""

from __future__ import annotations

from typing import Any

import pytest
import typer
import typer.main
from typer import _coercion as coercion  # typer's own coercion (0.29 on), which the quick path stands in for

from gpuplan import cli

VALUES = {str: ["qwen", "", "5", "-1"], int: [40, "5", "-3", "0", "007"], float: [0.05, "5", "-2", "0.05", "10.50"],
          bool: [True, False], list[str]: [("H100",), ("H100", "A100"), ["a", "b"]]}


def _params() -> list[Any]:
    out: list[Any] = []

    def walk(command: Any, ctx: Any) -> None:
        out.extend(command.get_params(ctx))
        for name, sub in getattr(command, "commands", {}).items():
            walk(sub, typer.Context(sub, info_name=name, parent=ctx))

    root = typer.main.get_command(cli.app)
    walk(root, typer.Context(root, info_name="gpuplan"))
    return out


def test_every_parameter_takes_the_quick_path_with_typers_answers() -> None:
    params = _params()
    quick = [p for p in params if type(p._runtime_param).__name__ == "QuickParam"]
    assert len(quick) == len(params) > 150  # every option, argument, help and completion flag of every command
    checked = 0
    for p in quick:
        descriptor = p.type_descriptor
        ctx = typer.Context(typer.main.get_command(cli.app))
        for value in VALUES[descriptor.annotation]:
            got = p._runtime_param._coerce_value(value, param=p, ctx=ctx)
            want = coercion.build_runtime_param(descriptor)._coerce_value(value, param=p, ctx=ctx)
            assert (got, type(got)) == (want, type(want)), (p.name, value)
            checked += 1
    assert checked > 600


@pytest.mark.parametrize(("value", "message"), [("abc", "valid integer"), ("3.5", "valid integer"),
                                                 ("1e3", "valid integer")])
def test_a_number_the_quick_path_cannot_read_gets_typers_message(value: str, message: str) -> None:
    from typer.testing import CliRunner

    result = CliRunner().invoke(cli.app, ["offers", "--limit", value])
    assert result.exit_code == 2 and message in result.output
