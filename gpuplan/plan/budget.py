"""A bound on the planning work done inside a block (the HTTP API's per-request bound): past it, the next
candidate any stage reaches raises :class:`~gpuplan.errors.BudgetError`."""

from __future__ import annotations

import contextlib
import contextvars
import time
from collections.abc import Iterator

from gpuplan.errors import BudgetError

_DEADLINE: contextvars.ContextVar[tuple[float, float] | None] = contextvars.ContextVar("plan_deadline", default=None)


@contextlib.contextmanager
def work_budget(seconds: float) -> Iterator[None]:
    """Bound the planning done inside the block to ``seconds`` of wall time."""
    token = _DEADLINE.set((time.monotonic() + seconds, seconds))
    try:
        yield
    finally:
        _DEADLINE.reset(token)


def check_budget() -> None:
    deadline = _DEADLINE.get()
    if deadline is not None and time.monotonic() > deadline[0]:
        raise BudgetError(deadline[1])
