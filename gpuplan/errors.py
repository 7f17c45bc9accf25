"""The errors gpuplan raises on purpose.

Every error a user can cause carries a message that names what was wrong and a ``fix`` that says what to
type or change next; the CLI and the HTTP API print both and never a traceback::

    GpuplanError                  base; .fix says what to do next
    ├── InputError                a value the user gave (option, argument, API field) is wrong
    │   ├── UnknownNameError      a GPU, model, provider, ... name that is not in the catalog (did you mean)
    │   └── InfeasibleError       the request is well-formed but cannot be met (TP that does not divide heads)
    ├── CatalogError              a row of a bundled or user catalog file is wrong (file:line, column, value)
    ├── ModelConfigError          a config.json that cannot be turned into an architecture
    └── OfflineError              a lookup that needs the network while gpuplan runs offline
"""

from __future__ import annotations

import difflib
import math
from collections.abc import Iterable


class GpuplanError(Exception):
    """Base class: ``str(err)`` is the problem, ``err.fix`` what to do about it."""

    def __init__(self, message: str, fix: str = "") -> None:
        super().__init__(message)
        self.message = message
        self.fix = fix

    def __str__(self) -> str:
        return f"{self.message} To fix: {self.fix}" if self.fix else self.message


class InputError(GpuplanError):
    """A value given by the user is malformed or out of range.

    ``field`` names the option, argument or API field (``--batch``, ``model``) so that every interface can
    point at it.
    """

    def __init__(self, field: str, message: str, fix: str = "") -> None:
        super().__init__(f"{field}: {message}", fix)
        self.field = field


class UnknownNameError(InputError):
    """A name that the catalog does not hold; the message suggests the closest known names."""

    def __init__(self, field: str, kind: str, name: str, known: Iterable[str], listing: str) -> None:
        self.suggestions = close_matches(name, known)
        hint = f" Did you mean {_or_list(self.suggestions)}?" if self.suggestions else ""
        super().__init__(field, f"unknown {kind} '{name}'.{hint}", f"run '{listing}' to list them.")
        self.name = name


class InfeasibleError(InputError):
    """A combination of valid values that cannot work (e.g. TP 3 with 32 attention heads)."""


class CatalogError(GpuplanError):
    """A data row that fails validation; the message locates it as ``file:line``."""

    def __init__(self, path: str, line: int, column: str, value: str, problem: str, fix: str) -> None:
        where = f"{path}:{line}" if line else path
        col = f" column '{column}'" if column else ""
        val = f" value {value!r}" if value is not None and column else ""
        super().__init__(f"{where}:{col}{val}: {problem}", fix)
        self.path, self.line, self.column, self.value = path, line, column, value


class ModelConfigError(GpuplanError):
    """A Hugging Face config.json that is not JSON, lacks a needed key, or describes an absurd model."""


class OfflineError(GpuplanError):
    """Something needs the network (a Hugging Face Hub id) while gpuplan is offline."""


def check_choice(field: str, value: str | None, choices: Iterable[str]) -> None:
    """``value`` (None: not given) must be one of ``choices``."""
    options = tuple(choices)
    if value is not None and value not in options:
        raise InputError(field, f"'{value}' is not one of: {', '.join(options)}.",
                         "use one of: " + ", ".join(options) + ".")


def check_positive(field: str, value: float | None, limit: float | None = None) -> None:
    """``value`` (None: not given) must be a finite number above 0, and at most ``limit`` when one is given."""
    if value is None:
        return
    if not math.isfinite(value):
        raise InputError(field, f"{value} is not a finite number.", f"give a positive {field.lstrip('-')}.")
    if value <= 0:
        raise InputError(field, f"{value:g} must be greater than 0.", f"give a positive {field.lstrip('-')}.")
    if limit is not None and value > limit:
        raise InputError(field, f"{value:g} is beyond any real job (at most {limit:g}).",
                         f"check the unit of {field}.")


def close_matches(name: str, known: Iterable[str], n: int = 3) -> list[str]:
    """Names in ``known`` that look like ``name`` (case-insensitive), best first."""
    by_key = {k.lower(): k for k in known}
    hits = difflib.get_close_matches(name.lower(), list(by_key), n=n, cutoff=0.5)
    substr = [v for k, v in by_key.items() if name.lower() and name.lower() in k and k not in hits]
    return ([by_key[h] for h in hits] + sorted(substr, key=len))[:n]


def _or_list(items: list[str]) -> str:
    quoted = [f"'{i}'" for i in items]
    return quoted[0] if len(quoted) == 1 else ", ".join(quoted[:-1]) + " or " + quoted[-1]
