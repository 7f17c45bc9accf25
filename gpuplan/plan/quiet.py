"""C libraries that print to standard output: HiGHS (scipy.optimize.milp) writes a debug line
("HighsMipSolverData::transformNewIntegerFeasibleSolution tmpSolver.run();") with C's printf on some serving
problems, whatever its output options say, which turned ``gpuplan plan serve … --json`` into text that is not
JSON. :func:`c_stdout_to_stderr` sends file descriptor 1 to standard error while such a call runs, so what the
library prints is still seen but never mixed into gpuplan's output."""

from __future__ import annotations

import contextlib
import os
import sys
import threading
from collections.abc import Iterator

_LOCK = threading.Lock()
_state: dict[str, int] = {"depth": 0, "saved": -1}  # nested or concurrent users share one redirection


def _flush_c_stdout() -> None:
    """Write out what C's stdio holds for standard output (buffered when it is a pipe or a file). ctypes is
    imported here: only a solve that goes to HiGHS needs it, and a plan that never does is spared its import."""
    import ctypes

    with contextlib.suppress(OSError, AttributeError, TypeError):  # no C library to ask: nothing buffered there
        ctypes.CDLL(None).fflush(None)


@contextlib.contextmanager
def c_stdout_to_stderr() -> Iterator[None]:
    """While the block runs, anything written to file descriptor 1 goes to descriptor 2."""
    with _LOCK:
        if _state["depth"] == 0:
            try:
                sys.stdout.flush()
                _flush_c_stdout()
                _state["saved"] = os.dup(1)
                os.dup2(2, 1)
            except (OSError, ValueError, AttributeError):  # no descriptor 1 or 2 (a daemon): nothing to protect
                _state["saved"] = -1
        _state["depth"] += 1
    try:
        yield
    finally:
        with _LOCK:
            _state["depth"] -= 1
            if _state["depth"] == 0 and _state["saved"] >= 0:
                _flush_c_stdout()
                os.dup2(_state["saved"], 1)
                os.close(_state["saved"])
                _state["saved"] = -1
