"""The only module that knows human units.

Inside gpuplan every quantity is a plain number in one base unit per dimension: bytes, seconds, FLOPs (a
count), FLOP/s, bytes/s, and money as (amount, currency). Memory *capacity* is binary (KiB, MiB, GiB);
*bandwidth* and FLOP rates are decimal (GB/s = 1e9 B/s, TFLOP/s = 1e12 FLOP/s). ``parse_*`` turn what a
user types into base units and raise :class:`~gpuplan.errors.InputError` naming the field; ``fmt_*`` turn
base units into text for people.
"""

from __future__ import annotations

import math
import re

from gpuplan.errors import InputError

KiB = 1024
MiB = 1024**2
GiB = 1024**3
TiB = 1024**4
GB = 10**9  # decimal, for bandwidth and for disk sizes as providers sell them
TB = 10**12
TERA = 1e12
HOUR = 3600.0
DAY = 86400.0
WEEK = 7 * DAY
MONTH = 30.4375 * DAY  # mean Gregorian month; used for per-month prices only

CURRENCIES = ("USD", "CNY", "EUR")
_CURRENCY_SIGNS = {"$": "USD", "us$": "USD", "usd": "USD", "¥": "CNY", "￥": "CNY", "cny": "CNY",
                   "rmb": "CNY", "元": "CNY",
                   "€": "EUR", "eur": "EUR"}

_NUM = r"([0-9]*\.?[0-9]+(?:[eE][+-]?[0-9]+)?)"
_BYTE_UNITS = {"": GiB, "b": 1, "k": KiB, "kb": KiB, "kib": KiB, "m": MiB, "mb": MiB, "mib": MiB,
               "g": GiB, "gb": GiB, "gib": GiB, "t": TiB, "tb": TiB, "tib": TiB}
_COUNT_UNITS = {"": 1, "k": 1e3, "m": 1e6, "b": 1e9, "g": 1e9, "t": 1e12}
_TIME_UNITS = {"ms": 1e-3, "s": 1.0, "sec": 1.0, "m": 60.0, "min": 60.0, "h": HOUR, "hr": HOUR,
               "hour": HOUR, "d": DAY, "day": DAY, "w": WEEK, "week": WEEK}


def _number(text: str, field: str, what: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise InputError(field, f"'{text}' is not a number.", f"give {what}.") from None
    if not math.isfinite(value):
        raise InputError(field, f"'{text}' is not a finite number.", f"give {what}.")
    return value


def parse_bytes(text: str | float, field: str) -> float:
    """Memory size in bytes. Units are binary: ``48GB`` = ``48GiB`` = 48·2^30 (a "48 GB" card holds
    48 GiB); a bare number is GiB."""
    if isinstance(text, (int, float)):
        return float(text) * GiB
    m = re.fullmatch(_NUM + r"\s*([a-zA-Z]*)", text.strip())
    unit = m.group(2).lower() if m else None
    if not m or unit not in _BYTE_UNITS:
        raise InputError(field, f"'{text}' is not a memory size.", "write it like 24GB, 80GiB or 512MiB.")
    return _number(m.group(1), field, "a size such as 24GB") * _BYTE_UNITS[unit]


def parse_count(text: str | float, field: str) -> float:
    """A count with an optional SI suffix: ``10k``, ``7B``, ``1.4T``, ``2e12``."""
    if isinstance(text, (int, float)):
        return float(text)
    cleaned = text.strip().replace(",", "").replace("_", "")
    if cleaned.startswith("-"):
        raise InputError(field, f"'{text}' is negative.", "give a positive count, e.g. 10k.")
    m = re.fullmatch(_NUM + r"\s*([a-zA-Z]?)", cleaned)
    if not m or m.group(2).lower() not in _COUNT_UNITS:
        raise InputError(field, f"'{text}' is not a count.", "write it like 10000, 10k, 7B or 1.4T.")
    return _number(m.group(1), field, "a count such as 10k") * _COUNT_UNITS[m.group(2).lower()]


def parse_seconds(text: str | float, field: str, require_unit: bool = False) -> float:
    """A duration: ``50ms``, ``2s``, ``1h30m``, ``1.5h``, ``21d``, ``2w``; a bare number is seconds, unless
    ``require_unit`` (the command line: is ``50`` seconds or milliseconds?) refuses every number without one."""
    if isinstance(text, (int, float)):
        return float(text)
    cleaned = text.strip().lower().replace(" ", "")
    if cleaned.startswith("-"):
        raise InputError(field, f"'{text}' is negative.", "give a positive duration, e.g. 2s or 21d.")
    parts = re.findall(_NUM + r"([a-z]*)", cleaned)
    if not parts or "".join(n + u for n, u in parts) != cleaned:
        raise InputError(field, f"'{text}' is not a duration.", "write it like 50ms, 2s, 1h30m or 21d.")
    total = 0.0
    for num, unit in parts:
        if require_unit and not unit:
            raise InputError(field, f"'{text}' has no unit." if len(parts) == 1 else
                             f"'{num}' in '{text}' has no unit.",
                             f"write every number with its unit, e.g. {field} 50ms, 2s, 1h30min or 3d.")
        unit = unit.rstrip("s") if unit not in ("s", "ms") else unit
        if unit not in _TIME_UNITS and unit != "":
            raise InputError(field, f"unknown time unit '{unit}' in '{text}'.", "use ms, s, min, h, d or w.")
        total += _number(num, field, "a duration such as 2s") * _TIME_UNITS.get(unit, 1.0)
    return total


def parse_money(text: str | float, field: str) -> tuple[float, str | None]:
    """An amount with an optional currency: ``500``, ``500USD``, ``$500``, ``¥3000``, ``3000 CNY``."""
    if isinstance(text, (int, float)):
        return float(text), None
    cleaned = text.strip().replace(",", "")
    if cleaned.startswith("-") or cleaned[1:2] == "-":  # -5, $-5
        raise InputError(field, f"'{text}' is negative.", "give a positive amount, e.g. 500USD.")
    m = re.fullmatch(r"([^\d.\s]*)\s*" + _NUM + r"\s*([^\d\s]*)", cleaned)
    if not m:
        raise InputError(field, f"'{text}' is not an amount of money.", "write it like 500, 500USD or ¥3000.")
    signs = [s.lower() for s in (m.group(1), m.group(3)) if s]
    currencies = {_CURRENCY_SIGNS.get(s) for s in signs}
    if None in currencies or len(currencies) > 1:
        raise InputError(field, f"unknown currency in '{text}'.", "use USD ($), CNY (¥) or EUR (€).")
    return _number(m.group(2), field, "an amount"), (currencies.pop() if currencies else None)


def parse_currency(text: str, field: str) -> str:
    code = _CURRENCY_SIGNS.get(text.strip().lower())
    if code is None:
        raise InputError(field, f"unknown currency '{text}'.", "use USD, CNY or EUR.")
    return code


def fmt_bytes(n_bytes: float, digits: int = 1) -> str:
    """Binary units: '15.2 GiB'."""
    for unit, size in (("TiB", TiB), ("GiB", GiB), ("MiB", MiB), ("KiB", KiB)):
        if abs(n_bytes) >= size:
            return f"{n_bytes / size:.{digits}f} {unit}"
    return f"{n_bytes:.0f} B"


def fmt_count(n: float, digits: int = 2) -> str:
    """'6.74B', '1.4T', '10k'."""
    for unit, size in (("T", 1e12), ("B", 1e9), ("M", 1e6), ("k", 1e3)):
        if abs(n) >= size:
            return f"{n / size:.{digits}f}".rstrip("0").rstrip(".") + unit
    return f"{n:.{digits}f}".rstrip("0").rstrip(".")


def fmt_seconds(seconds: float) -> str:
    """'350 ms', '42 s', '1 h 29 min', '21.3 days'."""
    if not math.isfinite(seconds):
        return "∞"
    if seconds < 0.01:
        return f"{seconds * 1000:.1f} ms"
    if seconds < 1:
        return f"{seconds * 1000:.0f} ms"
    if seconds < 60:
        return f"{seconds:.1f} s"
    if seconds < HOUR:
        return f"{seconds / 60:.1f} min"
    if seconds < 2 * DAY:
        hours, minutes = divmod(round(seconds / 60), 60)
        return f"{hours} h {minutes:02d} min"
    return f"{seconds / DAY:.1f} days"


def fmt_money(amount: float, currency: str, digits: int | None = None) -> str:
    """'$1.29', '¥11.63', '$1,234'."""
    sign = {"USD": "$", "CNY": "¥", "EUR": "€"}.get(currency, currency + " ")
    if digits is None:
        digits = 0 if abs(amount) >= 1000 else 2 if abs(amount) >= 0.1 or amount == 0 else 4
    return f"{'-' if amount < 0 else ''}{sign}{abs(amount):,.{digits}f}"


def fmt_rate(flops_per_s: float) -> str:
    return f"{flops_per_s / TERA:.1f} TFLOP/s"
