"""Read one catalog CSV against its schema, with errors that point at ``file:line``.

A schema is a tuple of :class:`Column`. Reading checks the header (missing and unknown columns), each cell's
type, range and enumerated values, required cells, and that no two rows share a key. It returns plain dicts
of typed values plus the line each row came from; the typed loaders in this package build domain objects.
"""

from __future__ import annotations

import csv
import datetime as dt
import io
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from gpuplan.errors import CatalogError

MAX_FILE_BYTES = 16 * 1024 * 1024


@dataclass(frozen=True, slots=True)
class Column:
    name: str
    kind: str = "str"  # str | float | int | date | enum | bool
    required: bool = False
    values: tuple[str, ...] = ()  # for enum
    min: float | None = None  # inclusive
    max: float | None = None  # inclusive
    positive: bool = False  # strictly > 0


@dataclass(frozen=True, slots=True)
class Row:
    values: dict[str, Any]
    line: int


def read_table(path: Path, columns: Sequence[Column], key: Sequence[str], label: str = "") -> list[Row]:
    """Rows of ``path`` typed by ``columns``; raises :class:`CatalogError` on the first bad cell."""
    shown = label or path.name
    text = _read_text(path, shown)
    reader = csv.DictReader(io.StringIO(text))
    _check_header(reader.fieldnames or [], columns, shown)
    rows: list[Row] = []
    seen: dict[tuple[Any, ...], int] = {}
    for raw in reader:
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
        if path.stat().st_size > MAX_FILE_BYTES:
            raise CatalogError(shown, 0, "", "", "file is larger than 16 MiB.", "split it or trim it.")
        return path.read_text(encoding="utf-8-sig")
    except UnicodeDecodeError:
        raise CatalogError(shown, 0, "", "", "file is not UTF-8 text.", "save it as UTF-8 CSV.") from None
    except OSError as exc:
        raise CatalogError(shown, 0, "", "", f"cannot read file ({exc.strerror}).",
                           "check the path and its permissions.") from None


def _check_header(found: Sequence[str], columns: Sequence[Column], shown: str) -> None:
    names = [c.name for c in columns]
    missing = [n for n in names if n not in found]
    unknown = [f for f in found if f not in names]
    if missing or unknown:
        parts = ([f"missing columns {missing}"] if missing else []) + (
            [f"unknown columns {unknown}"] if unknown else [])
        raise CatalogError(shown, 1, "", "", "; ".join(parts) + ".",
                           "the header must be: " + ",".join(names) + " (see the data README).")


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


def _bool(text: str, col: Column) -> bool:
    if text.lower() not in ("yes", "no"):
        raise ValueError("is not yes or no.")
    return text.lower() == "yes"


_PARSERS: dict[str, Callable[[str, Column], Any]] = {
    "str": lambda text, col: text, "float": _float, "int": _int, "date": _date, "enum": _enum, "bool": _bool,
}
