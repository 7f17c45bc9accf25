"""Read one catalog CSV against its schema, with errors that point at ``file:line``.

A schema is a tuple of :class:`Column`. Reading checks the header (missing and unknown columns), each cell's
type, range and enumerated values, required cells, and that no two rows share a key. It returns plain dicts
of typed values plus the line each row came from; the typed loaders in this package build domain objects.
"""

from __future__ import annotations

import csv
import datetime as dt
import errno
import io
import os
import stat
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from gpuplan.errors import CatalogError

MAX_FILE_BYTES = 16 * 1024 * 1024


@dataclass(frozen=True, slots=True)
class Column:
    """One column of a catalog table: its name, its type and the values it allows."""

    name: str
    kind: str = "str"  # str | float | int | date | enum | enums (";"-separated, a tuple) | bool
    required: bool = False
    values: tuple[str, ...] = ()  # for enum and enums
    min: float | None = None  # inclusive
    max: float | None = None  # inclusive
    positive: bool = False  # strictly > 0
    optional: bool = False  # the header may leave the column out (every cell then reads as empty)


@dataclass(frozen=True, slots=True)
class Row:
    """One row of a table read: the typed values by column, and its line in the file."""

    values: dict[str, Any]
    line: int


def read_table(path: Path, columns: Sequence[Column], key: Sequence[str], label: str = "") -> list[Row]:
    """Rows of ``path`` typed by ``columns``; raises :class:`CatalogError` on the first bad cell."""
    shown = label or path.name
    text = _read_text(path, shown)
    reader = csv.DictReader(io.StringIO(text))
    try:
        fieldnames = reader.fieldnames or []
    except csv.Error as exc:
        raise CatalogError(shown, 1, "", "", f"the header cannot be read as CSV ({exc}).",
                           "the first line names the columns (see the data README).") from None
    _check_header(fieldnames, columns, shown)
    rows: list[Row] = []
    seen: dict[tuple[Any, ...], int] = {}
    for raw in _records(reader, shown):
        line = reader.line_num
        if None in raw:
            raise CatalogError(shown, line, "", "", "this row has more cells than the header.",
                               "quote cells that contain commas.")
        if not any((v or "").strip() for v in raw.values()):
            continue
        values = {c.name: _cell(raw.get(c.name), c, shown, line) for c in columns}
        k = tuple(values[name] for name in key)
        if k in seen:
            raise CatalogError(shown, line, ",".join(key), "/".join(map(str, k)),
                               f"duplicate key (first at line {seen[k]}).", "remove or merge one of the rows.")
        seen[k] = line
        rows.append(Row(values, line))
    return rows


def _read_text(path: Path, shown: str) -> str:
    try:
        data = read_regular_file(path, MAX_FILE_BYTES)
    except FileProblem as problem:
        raise CatalogError(shown, 0, "", "", problem.problem, problem.fix) from None
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError:
        raise CatalogError(shown, 0, "", "", "file is not UTF-8 text.", "save it as UTF-8 CSV.") from None


class FileProblem(Exception):
    """Why a data file cannot be read (each reader turns it into its own error, naming the file)."""

    def __init__(self, problem: str, fix: str) -> None:
        super().__init__(problem)
        self.problem, self.fix = problem, fix


def read_regular_file(path: Path, max_bytes: int) -> bytes:
    """The bytes of ``path``, a regular file (or a link to one) of at most ``max_bytes``. A FIFO, a device
    (``/dev/zero``), a folder, a dangling link or a link loop raises :class:`FileProblem`: reading one would
    hang, never end, or silently skip the user's data."""
    try:
        info = os.stat(path)
    except OSError as exc:
        raise _problem(path, exc) from None
    if not stat.S_ISREG(info.st_mode):
        raise FileProblem(f"is {_kind(info.st_mode)}, not a regular file.", "put the data in a plain file.")
    if info.st_size > max_bytes:
        raise FileProblem(f"file is larger than {max_bytes // (1024 * 1024)} MiB.", "split it or trim it.")
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOCTTY", 0))
    except OSError as exc:
        raise _problem(path, exc) from None
    with os.fdopen(fd, "rb") as f:
        if not stat.S_ISREG(os.fstat(f.fileno()).st_mode):  # replaced between the two looks
            raise FileProblem("is not a regular file.", "put the data in a plain file.")
        data = f.read(max_bytes + 1)
    if len(data) > max_bytes:
        raise FileProblem(f"file is larger than {max_bytes // (1024 * 1024)} MiB.", "split it or trim it.")
    return data


def _problem(path: Path, exc: OSError) -> FileProblem:
    if exc.errno == errno.ELOOP:
        return FileProblem("is a symbolic link that loops (it points back at itself).",
                           "point the link at the real file, or replace it with the file.")
    if exc.errno == errno.ENOENT and os.path.islink(path):
        return FileProblem(f"is a symbolic link to '{os.readlink(path)}', which does not exist.",
                           "point the link at an existing file, or remove it.")
    return FileProblem(f"cannot read file ({exc.strerror}).", "check the path and its permissions.")


def _kind(mode: int) -> str:
    kinds = ((stat.S_ISDIR, "a folder"), (stat.S_ISFIFO, "a named pipe (FIFO)"), (stat.S_ISCHR, "a device"),
             (stat.S_ISBLK, "a device"), (stat.S_ISSOCK, "a socket"))
    return next((name for test, name in kinds if test(mode)), "not a file")


def _records(reader: csv.DictReader[str], shown: str) -> Iterator[dict[str, Any]]:
    """The reader's rows; a csv error (a cell over the csv module's field limit) is a :class:`CatalogError`
    at its line."""
    while True:
        try:
            raw = next(reader)
        except StopIteration:
            return
        except csv.Error as exc:
            raise CatalogError(shown, reader.line_num + 1, "", "", f"the row cannot be read as CSV ({exc}).",
                               "look for a quote that is never closed; no cell needs more than a few "
                               "hundred characters.") from None
        yield raw


def _check_header(found: Sequence[str], columns: Sequence[Column], shown: str) -> None:
    names = [c.name for c in columns]
    missing = [c.name for c in columns if c.name not in found and not c.optional]
    unknown = [f for f in found if f not in names]
    if missing or unknown:
        parts = ([f"missing columns {missing}"] if missing else []) + (
            [f"unknown columns {unknown}"] if unknown else [])
        optional = [c.name for c in columns if c.optional]
        header = ",".join(names)
        raise CatalogError(shown, 1, "", "", "; ".join(parts) + ".",
                           f"the header must be: {header} (see the data README); {', '.join(optional)} may be "
                           "left out." if optional else f"the header must be: {header} (see the data README).")


def _cell(raw: str | None, col: Column, shown: str, line: int) -> Any:
    text = (raw or "").strip()
    if not text:
        if col.required:
            raise CatalogError(shown, line, col.name, text, "is empty but required.",
                               f"fill in '{col.name}' (see the data README).")
        return None
    try:
        value = _PARSERS[col.kind](text, col)
    except ValueError as exc:
        raise CatalogError(shown, line, col.name, text, str(exc), _fix(col)) from None
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        _check_range(value, col, shown, line, text)
    return value


def _check_range(value: float, col: Column, shown: str, line: int, text: str) -> None:
    if col.positive and not value > 0:
        raise CatalogError(shown, line, col.name, text, "must be greater than 0.",
                           "leave the cell empty if unknown; never write 0 for unknown.")
    if (col.min is not None and value < col.min) or (col.max is not None and value > col.max):
        raise CatalogError(shown, line, col.name, text, f"is outside [{col.min}, {col.max}].",
                           "check the unit in the column name.")


def _fix(col: Column) -> str:
    return {
        "float": "write a plain number in the column's unit (no units or thousands separators).",
        "int": "write a whole number.",
        "date": "write the date as YYYY-MM-DD.",
        "enum": "use one of: " + ", ".join(col.values) + ".",
        "enums": f"separate the values with ';', each once, from: {', '.join(col.values)}.",
        "bool": "write yes or no.",
    }.get(col.kind, "")


def _float(text: str, col: Column) -> float:
    try:
        value = float(text)
    except ValueError:
        raise ValueError("is not a number.") from None
    if value != value or value in (float("inf"), float("-inf")):
        raise ValueError("is not a finite number.")
    return value


def _int(text: str, col: Column) -> int:
    try:
        return int(text)
    except ValueError:
        raise ValueError("is not a whole number.") from None


def _date(text: str, col: Column) -> dt.date:
    try:
        return dt.date.fromisoformat(text)
    except ValueError:
        raise ValueError("is not a YYYY-MM-DD date.") from None


def _enum(text: str, col: Column) -> str:
    if text not in col.values:
        raise ValueError("is not an accepted value.")
    return text


def _enums(text: str, col: Column) -> tuple[str, ...]:
    parts = tuple(part.strip() for part in text.split(";"))
    if any(part not in col.values for part in parts):
        raise ValueError("is not an accepted value.")
    if len(set(parts)) != len(parts):
        raise ValueError("names a value twice.")
    return parts


def _bool(text: str, col: Column) -> bool:
    if text.lower() not in ("yes", "no"):
        raise ValueError("is not yes or no.")
    return text.lower() == "yes"


_PARSERS: dict[str, Callable[[str, Column], Any]] = {
    "str": lambda text, col: text, "float": _float, "int": _int, "date": _date, "enum": _enum, "enums": _enums,
    "bool": _bool,
}
