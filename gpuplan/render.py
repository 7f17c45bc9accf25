"""Turn library results into text: rich tables for people, JSON and CSV for machines.

Library functions return plain dicts (the JSON twin); this module only formats them.
"""

from __future__ import annotations

import csv
import io
import json
import math
import os
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from enum import Enum
from pathlib import PurePath
from typing import Any, TextIO

FORMATS = ("table", "json", "csv")


@dataclass(frozen=True, slots=True)
class Col:
    """A table column: header, the row key it shows, and how to format the value."""

    header: str
    key: str
    fmt: Callable[[Any], str] | None = None
    justify: str = "left"


def _plain(value: Any) -> str:
    if value is None:
        return "—"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, float):
        if math.isinf(value):
            return "∞"
        return f"{value:,.2f}".rstrip("0").rstrip(".") if abs(value) < 1e6 else f"{value:,.0f}"
    return str(value)


def to_json(data: Any) -> str:
    """JSON text of ``data`` as :func:`to_jsonable` makes it (a non-finite number, an infinite break-even, is
    ``null``): the CLI's ``--json``, which the HTTP API writes with the same function."""
    return json.dumps(to_jsonable(data), ensure_ascii=False, indent=2, allow_nan=False)


def to_jsonable(data: Any) -> Any:
    """``data`` as JSON values, the one conversion of the CLI's ``--json`` and the HTTP API's answers: NaN and
    infinity are None, an enum its value, a date or time its ISO text, a result its ``as_dict()``, a tuple a list,
    a path its text."""
    if isinstance(data, float):
        return data if math.isfinite(data) else None
    if isinstance(data, Enum):
        return data.value
    if data is None or isinstance(data, (str, int)):
        return data
    if isinstance(data, dict):
        return {to_jsonable(k) if isinstance(k, Enum) else k: to_jsonable(v) for k, v in data.items()}
    if isinstance(data, (list, tuple)):
        return [to_jsonable(v) for v in data]
    if hasattr(data, "as_dict"):
        return to_jsonable(data.as_dict())
    if hasattr(data, "isoformat"):
        return data.isoformat()
    if isinstance(data, PurePath):
        return str(data)
    raise TypeError(f"cannot serialise {type(data).__name__}")


def to_csv(rows: Sequence[dict[str, Any]]) -> str:
    if not rows:
        return ""
    fields: list[str] = []
    for row in rows:
        fields += [k for k in row if k not in fields]
    out = io.StringIO()
    writer = csv.DictWriter(out, fieldnames=fields, lineterminator="\n")
    writer.writeheader()
    for row in rows:
        writer.writerow({k: _csv_cell(row.get(k)) for k in fields})
    return out.getvalue()


def _csv_cell(value: Any) -> Any:
    if isinstance(value, (dict, list, tuple)):
        return json.dumps(to_jsonable(value), ensure_ascii=False)
    return "" if value is None else value


def table(rows: Sequence[dict[str, Any]], cols: Sequence[Col], title: str | None = None,
          caption: str | None = None, out: TextIO | None = None) -> None:
    from rich.console import Console
    from rich.table import Table

    t = Table(title=title, caption=caption, header_style="bold", show_lines=False, caption_justify="left")
    for c in cols:
        t.add_column(c.header, justify=c.justify)  # type: ignore[arg-type]
    for row in rows:
        t.add_row(*[(c.fmt or _plain)(row.get(c.key)) for c in cols])
    stream = out or sys.stdout
    Console(file=stream, soft_wrap=False, width=output_width(stream), emoji=False).print(t)


def output_width(stream: TextIO) -> int | None:
    """Columns to lay out for: $COLUMNS when set, the terminal's width (None lets rich ask), else 240 so that
    pipes and files get whole rows."""
    columns = os.environ.get("COLUMNS", "")
    if columns.isdigit() and int(columns) >= 40:
        return int(columns)
    return None if getattr(stream, "isatty", lambda: False)() else 240


def paragraph(text: str, stream: TextIO | None = None) -> str:
    """``text`` wrapped to the output width on a terminal (or $COLUMNS); unwrapped for pipes, so grep sees
    whole sentences."""
    import shutil
    import textwrap

    stream = stream or sys.stdout
    columns = os.environ.get("COLUMNS", "")
    if not (columns.isdigit() or getattr(stream, "isatty", lambda: False)()):
        return text
    width = output_width(stream) or shutil.get_terminal_size().columns
    return "\n".join(textwrap.fill(line, width=max(40, width), break_on_hyphens=False) if line else line
                     for line in text.split("\n"))


def emit(rows: Sequence[dict[str, Any]], cols: Sequence[Col], fmt: str, title: str | None = None,
         caption: str | None = None, payload: Any = None, out: TextIO | None = None) -> None:
    """Write rows as a table, JSON (``payload`` if given, else the rows) or CSV."""
    stream = out or sys.stdout
    if fmt == "json":
        stream.write(to_json(rows if payload is None else payload) + "\n")
    elif fmt == "csv":
        stream.write(to_csv(rows))
    else:
        table(rows, cols, title, caption, out=stream)
