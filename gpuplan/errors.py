"""The errors gpuplan raises on purpose.

Every error a user can cause carries a message that names what was wrong and a ``fix`` that says what to
type or change next; the CLI and the HTTP API print both and never a traceback::

    GpuplanError                  base; .fix says what to do next
    ├── InputError                a value the user gave (option, argument, API field) is wrong      (ValueError)
    │   ├── UnknownNameError      a GPU, model, provider, ... name that is not in the catalog (did you mean)
    │   │                                                                                          (LookupError)
    │   └── InfeasibleError       the request is well-formed but cannot be met (TP that does not divide heads)
    ├── CatalogError              a row of a bundled or user catalog file is wrong (file:line, column, value)
    │                                                                                               (ValueError)
    ├── ModelConfigError          a config.json that cannot be turned into an architecture          (ValueError)
    ├── BudgetError               a request needs more work than the caller allows                (TimeoutError)
    ├── OfflineError              a lookup that needs the network while gpuplan runs offline   (ConnectionError)
    ├── market.store.StoreError   the local price store cannot be read or written (locked, corrupt)   (OSError)
    └── market.http.ProviderError a provider's price API could not be read (HTTP, network, answer)    (OSError)
        └── MissingKeyError       the environment variable holding the provider's key is not set (LookupError)

The built-in in brackets is a second base, so ``except ValueError`` / ``except LookupError`` (``TimeoutError``,
``ConnectionError``, ``OSError``) catch them too.
Every error pickles (a web worker or a process pool can hand it back) with its message, fix and fields.
Messages are made in English; :meth:`GpuplanError.in_chinese` gives them in Chinese (the CLI in ``--lang zh``,
the HTTP API's ``error_zh``/``fix_zh``) through the sentence templates of :mod:`gpuplan.i18n`.
"""

from __future__ import annotations

import difflib
import math
import re
from collections.abc import Iterable
from typing import Any


class GpuplanError(Exception):
    """Base class: ``str(err)`` is the problem, ``err.fix`` what to do about it."""

    def __init__(self, message: str, fix: str = "") -> None:
        super().__init__(message)
        self.message = message
        self.fix = fix
        self.detail = message  # the message without the place it names (a field, a file:line), which subclasses add

    def in_chinese(self) -> tuple[str, str]:
        """(message, fix) in Chinese; a sentence with no Chinese form stays English."""
        from gpuplan.i18n import zh_sentence

        return self._where_zh() + self._detail_zh(), zh_sentence(self.fix)

    def in_language(self) -> tuple[str, str]:
        """(message, fix) in the language of the moment (:func:`gpuplan.i18n.lang`)."""
        from gpuplan.i18n import lang

        return self.in_chinese() if lang() == "zh" else (self.message, self.fix)

    def _where_zh(self) -> str:
        where = self.message.removesuffix(self.detail) if self.message.endswith(self.detail) else ""
        return where[:-2] + "：" if where.endswith(": ") else where

    def _detail_zh(self) -> str:
        from gpuplan.i18n import zh_sentence

        return zh_sentence(self.detail)

    def __str__(self) -> str:
        return f"{self.message} To fix: {self.fix}" if self.fix else self.message

    def __reduce__(self) -> tuple[Any, ...]:
        # the default rebuilds with ``type(self)(*self.args)``, which the subclasses' signatures do not take
        return _rebuild, (type(self), self.args, dict(self.__dict__))


def _rebuild(cls: type[GpuplanError], args: tuple[Any, ...], state: dict[str, Any]) -> GpuplanError:
    """An unpickled error: the same class, arguments and attributes, without running ``__init__`` again."""
    err = cls.__new__(cls, *args)
    err.args = args
    err.__dict__.update(state)
    return err


class InputError(GpuplanError, ValueError):
    """A value given by the user is malformed or out of range.

    ``field`` names the option, argument or API field (``--batch``, ``model``) so that every interface can
    point at it.
    """

    def __init__(self, field: str, message: str, fix: str = "") -> None:
        super().__init__(f"{field}: {message}", fix)
        self.field = field
        self.detail = message


class UnknownNameError(InputError, LookupError):
    """A name that the catalog does not hold; the message suggests the closest known names."""

    def __init__(self, field: str, kind: str, name: str, known: Iterable[str], listing: str) -> None:
        self.suggestions = close_matches(name, known)
        hint = f" Did you mean {_or_list(self.suggestions)}?" if self.suggestions else ""
        super().__init__(field, f"unknown {kind} '{name}'.{hint}", f"run '{listing}' to list them.")
        self.name, self.kind, self.listing = name, kind, listing

    def in_chinese(self) -> tuple[str, str]:
        from gpuplan.i18n import zh_sentence

        hint = f"你是不是想用 {_or_list(self.suggestions, ' 或 ', '、')}？" if self.suggestions else ""
        message = f"{self.field}：未知的{zh_sentence(self.kind)} '{self.name}'。{hint}"
        return message, f"运行 '{self.listing}' 查看全部。"


class InfeasibleError(InputError):
    """A combination of valid values that cannot work (e.g. TP 3 with 32 attention heads)."""


class CatalogError(GpuplanError, ValueError):
    """A data row that fails validation; the message locates it as ``file:line``."""

    def __init__(self, path: str, line: int, column: str, value: str, problem: str, fix: str) -> None:
        where = f"{path}:{line}" if line else path
        col = f" column '{column}'" if column else ""
        val = f" value {value!r}" if value is not None and column else ""
        super().__init__(f"{where}:{col}{val}: {problem}" if col else f"{where}: {problem}", fix)
        self.path, self.line, self.column, self.value = path, line, column, value
        self.detail = problem

    def _where_zh(self) -> str:
        where = f"{self.path}:{self.line}" if self.line else self.path
        if not self.column:
            return where + "："
        val = f" 值 {self.value!r}" if self.value is not None else ""
        return f"{where}：列 '{self.column}'{val}："


class ModelConfigError(GpuplanError, ValueError):
    """A Hugging Face config.json that is not JSON, lacks a needed key, or describes an absurd model."""


class BudgetError(GpuplanError, TimeoutError):
    """A request needs more work than the caller allows (the HTTP API bounds each plan; the CLI does not)."""

    def __init__(self, seconds: float) -> None:
        super().__init__(f"this plan needs more than the {seconds:g} s of work a request may take here.",
                         "narrow it: fewer GPU types (gpu), a lower max_gpus, or a provider; or run "
                         "'gpuplan plan' locally, which has no limit.")
        self.seconds = seconds


class OfflineError(GpuplanError, ConnectionError):
    """Something needs the network (a Hugging Face Hub id) while gpuplan is offline."""


def check_choice(field: str, value: str | None, choices: Iterable[str]) -> None:
    """``value`` (None: not given) must be one of ``choices``."""
    options = tuple(choices)
    if value is not None and value not in options:
        raise InputError(field, f"'{value}' is not one of: {', '.join(options)}.",
                         f"use one of: {', '.join(options)}.")


def check_positive(field: str, value: float | None, limit: float | None = None) -> None:
    """``value`` (None: not given) must be a finite number above 0, and at most ``limit`` when one is given."""
    if value is None:
        return
    if isinstance(value, float) and not math.isfinite(value):
        raise InputError(field, f"{value} is not a finite number.", f"give a positive {field.lstrip('-')}.")
    huge = isinstance(value, int) and abs(value) >= 10**15
    shown = f"a {len(str(abs(value)))}-digit number" if huge else f"{value:g}"
    if value <= 0:
        raise InputError(field, f"{shown} must be greater than 0.", f"give a positive {field.lstrip('-')}.")
    if limit is not None and value > limit:
        raise InputError(field, f"{shown} is beyond any real job (at most {limit:g}).", f"check the unit of {field}.")


NAME_MAX_BYTES = 255  # Linux and macOS: the longest file or folder name
PATH_MAX_BYTES = 4096  # and the longest path


def check_path(field: str, text: str) -> None:
    """``text`` (a name or a path) is short enough to be a path, so that asking the file system about it
    cannot fail with "File name too long"."""
    encoded = text.encode("utf-8", "surrogateescape")
    longest = max((len(part) for part in encoded.split(b"/")), default=0)
    if longest > NAME_MAX_BYTES or len(encoded) > PATH_MAX_BYTES:
        raise InputError(field, f"'{text}' is too long for a name or a path ({len(encoded):,} bytes; a file name "
                         f"has at most {NAME_MAX_BYTES} bytes, a path {PATH_MAX_BYTES}).",
                         "check what was pasted; give a preset name, or a path to an existing file or folder.")


ECHO_CHARS = 200  # the most of a user's text that an error message repeats


def clip_echo(text: str, limit: int = ECHO_CHARS) -> str:
    """``text`` with every run of more than ``limit`` characters between quotes (a value echoed back) cut to
    ``limit`` characters and "…", and the whole at most ten such runs long: a 10 MB name is not sent back."""
    clipped = re.sub(f"'([^'\\n]{{{limit}}})[^'\\n]+'", lambda m: f"'{m.group(1)}…'", text)
    return clipped if len(clipped) <= 10 * limit else clipped[: 10 * limit] + "…"


def close_matches(name: str, known: Iterable[str], n: int = 3) -> list[str]:
    """Names in ``known`` that look like ``name`` (case-insensitive), best first."""
    by_key = {k.lower(): k for k in known}
    hits = difflib.get_close_matches(name.lower(), list(by_key), n=n, cutoff=0.5)
    substr = [v for k, v in by_key.items() if name.lower() and name.lower() in k and k not in hits]
    return ([by_key[h] for h in hits] + sorted(substr, key=len))[:n]


def _or_list(items: list[str], last: str = " or ", sep: str = ", ") -> str:
    quoted = [f"'{i}'" for i in items]
    return quoted[0] if len(quoted) == 1 else sep.join(quoted[:-1]) + last + quoted[-1]
