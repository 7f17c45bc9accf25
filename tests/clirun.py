"""``gpuplan ARGV`` in-process, for the tests that drive the CLI many times (a subprocess each would take
minutes): the exit status as the shell would see it, and what went to stdout and stderr."""

from __future__ import annotations

import contextlib
import contextvars
import io
from typing import Any

from gpuplan import cli


def run_cli(argv: list[str]) -> tuple[int, str, str]:
    """(exit status, stdout, stderr) of ``gpuplan ARGV``; the language a --lang sets stays inside the call."""
    out, err = io.StringIO(), io.StringIO()
    code: Any = 0
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            contextvars.copy_context().run(cli.main, argv)
        except SystemExit as exc:
            code = exc.code
    # SystemExit(None) is success, a message (a string) is failure, as for the interpreter itself
    return (code if isinstance(code, int) else 1 if code else 0), out.getvalue(), err.getvalue()
