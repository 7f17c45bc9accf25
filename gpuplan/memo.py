"""A bounded memo keyed by the identity of objects, for the questions a plan asks thousands of times.

Hashing a model spec (40 fields), a GPU or a calibration is what such a memo would otherwise spend its time on;
their ``id()`` is free. An entry holds the objects it was made for, so while it lives no other object can take
their ids, and a hit is checked to be for those same objects (not merely equal ones).
"""

from __future__ import annotations

import gc
import weakref
from collections.abc import Hashable
from typing import Any, Generic, TypeVar

V = TypeVar("V")


class IdentityMemo(Generic[V]):
    """Answers kept per (the identities of up to three objects ``a``, ``b``, ``c`` — None where a memo needs fewer —
    and the hashable ``values``); at ``limit`` entries it starts again empty. An answer is never None (None means
    not kept). Three fixed slots rather than a tuple of any length: a hit costs about 0.5 µs more than writing the
    dictionary out by hand, where a general tuple cost 1.4 µs more, and the estimators ask tens of thousands of
    times a plan."""

    __slots__ = ("__weakref__", "_entries", "_limit")

    def __init__(self, limit: int = 4096) -> None:
        self._entries: dict[tuple[Hashable, ...], tuple[object, object, object, V]] = {}
        self._limit = limit
        _every.add(self)

    def get(self, a: object, b: object, c: object, values: tuple[Hashable, ...]) -> V | None:
        hit = self._entries.get((id(a), id(b), id(c), *values))
        if hit is not None and hit[0] is a and hit[1] is b and hit[2] is c:
            return hit[3]
        return None

    def put(self, a: object, b: object, c: object, values: tuple[Hashable, ...], answer: V) -> V:
        if len(self._entries) >= self._limit:
            self._entries.clear()
        self._entries[(id(a), id(b), id(c), *values)] = (a, b, c, answer)
        return answer

    def clear(self) -> None:
        self._entries.clear()

    def __len__(self) -> int:
        return len(self._entries)


_every: weakref.WeakSet[IdentityMemo[Any]] = weakref.WeakSet()  # for clear_memos


def clear_memos() -> None:
    """Empty every memo, as in a fresh process: ``bench/speed.py`` times a plan cold (its first in a process, the
    CLI's case) after this, and warm (repeated) without it."""
    for memo in list(_every):
        memo.clear()


class collector_paused:  # lower case: it stands in for the function of that name it replaced
    """The cyclic garbage collector held off while a batch of objects that all live on is built (it finds nothing
    to free in them: a plan's estimates, kept in its lists and memos, and their prices). Its passes are due after
    every 700 allocations, and the full ones walk every live object, a large catalog's included: at 200× the
    bundled offers they were over a third of the pricing stage's time (bench/speed.py, its "GC paused" column).
    Left off when the caller or another thread had turned it off. A class rather than a ``contextmanager``
    generator: the pricing stage enters it once per estimate, and a generator's setup cost 2.6 µs there, this
    0.6 µs."""

    __slots__ = ("_was_on",)

    def __enter__(self) -> None:
        self._was_on = gc.isenabled()
        gc.disable()

    def __exit__(self, *exc: object) -> None:
        if self._was_on:
            gc.enable()
