"""What a C library prints to standard output never mixes into gpuplan's: HiGHS (the serving MILP) printf's a
debug line on some problems, which made ``plan serve --json`` output that is not JSON."""

from __future__ import annotations

import ctypes
import json
import subprocess
from collections.abc import Callable

import pytest

from gpuplan.plan.quiet import c_stdout_to_stderr


def test_c_printf_inside_goes_to_stderr_and_python_output_after_to_stdout(capfd: pytest.CaptureFixture[str]) -> None:
    libc = ctypes.CDLL(None)
    with c_stdout_to_stderr(), c_stdout_to_stderr():  # nested (the planner solves inside a solve's loop)
        libc.printf(b"from C\n")
    print("from Python")
    out, err = capfd.readouterr()
    assert "from C" in err and "from C" not in out
    assert "from Python" in out


def test_a_fleet_that_makes_highs_print_still_writes_json(cli: Callable[..., subprocess.CompletedProcess[str]]
                                                          ) -> None:
    # DeepSeek-R1 on these three providers: the mixes HiGHS solves here reach its debug printf (seen 2026-12-02)
    r = cli("plan", "serve", "DeepSeek-R1", "--provider", "GCP", "--provider", "RunPod", "--provider", "AWS", "--json")
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)["model"] == "DeepSeek-R1"
