"""A daily traffic profile: 24 hourly mean request rates, read from a list or a CSV file, checked, and the day's
cost of a fleet that follows it.

The fleet is sized for the profile's peak. Following the profile means the peak fleet **scaled down by groups**:
each hour keeps, of every group, the fewest replicas that still carry that hour's rate within the targets with
the tolerated failure domain lost and the availability target met (:func:`gpuplan.plan.serving.follow_profile`).
That is what the exported autoscalers do — each Kubernetes HPA or SkyServe replica policy adds and removes
replicas of its own group, on the offers and zones already chosen. The other reading, the cheapest mix of any
GPU types for each hour, would rent other offers every hour, each new replica taking the recovery time
(provisioning, weight load, warm-up: minutes) before it serves, on capacity nobody has reserved; it is not what a
fleet runs, so it is not what is priced.
"""

from __future__ import annotations

import csv
import io
import math
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from gpuplan.errors import InputError
from gpuplan.options import RANGES
from gpuplan.plan import costing
from gpuplan.units import HOUR

HOURS = 24
FIELD = "--profile"
EXAMPLE = "--profile 2,2,1,1,1,1,2,4,8,10,12,12,11,10,10,11,12,12,10,8,6,4,3,2"


def check_profile(values: Sequence[float], field: str = FIELD) -> tuple[float, ...]:
    """The 24 hourly rates (requests/s, hour 0 first), or an error naming ``field``."""
    rates = tuple(float(v) for v in values)
    if len(rates) != HOURS:
        raise InputError(field, f"a daily profile has {HOURS} hourly rates; {len(rates)} were given.",
                         f"give one mean rate per hour, 0 to 23, e.g. {EXAMPLE}.")
    top = RANGES["--rps"].high
    for hour, rate in enumerate(rates):
        if not math.isfinite(rate) or not 0 <= rate <= top:
            raise InputError(field, f"hour {hour} has a rate of {rate:g} requests/s.",
                             f"give every hour a finite rate from 0 to {top:,.0f} (the range of --rps).")
    if not any(rates):
        raise InputError(field, "every hour of the profile is 0 requests/s: there is nothing to serve.",
                         f"give the mean rate of each hour, e.g. {EXAMPLE}.")
    return rates


def parse_profile(text: str) -> tuple[float, ...]:
    """Rates from ``text``: 24 comma-separated numbers, or the path of a CSV file of ``hour,rps`` rows (a header
    row is allowed; every hour 0-23 once)."""
    path = Path(text)
    try:
        is_file = path.is_file()
    except (OSError, ValueError):  # a name too long for a path, or one with a NUL: it is not a file
        is_file = False
    if is_file:
        return check_profile(_read_csv(path))
    if "," not in text:
        raise InputError(FIELD, f"'{text}' is neither a file nor a list of 24 rates.",
                         f"give a CSV file of hour,rps rows, or the rates: {EXAMPLE}.")
    try:
        rates = [float(x) for x in text.split(",")]
    except ValueError:
        raise InputError(FIELD, f"'{text}' is not a list of numbers.", f"give the rates, e.g. {EXAMPLE}.") from None
    return check_profile(rates)


MAX_FILE_BYTES = 64 * 1024  # 24 rows of hour,rps fit in a few hundred bytes


def _read_csv(path: Path) -> list[float]:
    try:
        with path.open(encoding="utf-8", newline="") as f:
            text = f.read(MAX_FILE_BYTES + 1)
    except (OSError, UnicodeDecodeError) as exc:
        raise InputError(FIELD, f"cannot read '{path}' ({exc}).", "give a readable UTF-8 CSV file.") from None
    if len(text) > MAX_FILE_BYTES:
        raise InputError(FIELD, f"'{path}' is longer than a daily profile ({MAX_FILE_BYTES // 1024} KiB at most).",
                         "give a CSV file of 24 hour,rps rows.")
    try:
        rows = [r for r in csv.reader(io.StringIO(text)) if r and any(c.strip() for c in r)]
    except csv.Error as exc:  # a NUL byte, an unclosed quote over a huge field
        raise InputError(FIELD, f"'{path}' is not a CSV file ({exc}).", "give a CSV file of 24 hour,rps rows.") \
            from None
    if rows and not _numeric(rows[0]):
        rows = rows[1:]  # a header
    by_hour: dict[int, float] = {}
    for n, row in enumerate(rows, 1):
        if len(row) != 2 or not _numeric(row):
            raise InputError(FIELD, f"{path}: row {n} {','.join(row)!r} is not hour,rps.",
                             "write one row per hour: the hour (0-23) and its mean requests per second.")
        hour, rate = float(row[0]), float(row[1])  # the rate is checked with the others (check_profile)
        if hour != int(hour) or not 0 <= hour < HOURS or int(hour) in by_hour:
            raise InputError(FIELD, f"{path}: row {n} has hour {row[0].strip()}.",
                             "give each hour from 0 to 23 exactly once.")
        by_hour[int(hour)] = rate
    if sorted(by_hour) != list(range(HOURS)):
        missing = sorted(set(range(HOURS)) - set(by_hour))
        raise InputError(FIELD, f"{path}: hours {', '.join(map(str, missing))} are missing.",
                         "give each hour from 0 to 23 exactly once.")
    return [by_hour[h] for h in range(HOURS)]


def _numeric(row: Sequence[str]) -> bool:
    try:
        [float(c) for c in row]
    except ValueError:
        return False
    return True


def mean_rate(rates: Sequence[float]) -> float:
    return sum(rates) / len(rates)


@dataclass(frozen=True, slots=True)
class DayCost:
    """A day of the profile: the fleet's cost per hour when it follows the profile, against the peak fleet kept
    all day; money in the plan's currency."""

    hourly_rps: tuple[float, ...]
    hourly_cost: tuple[float, ...]  # per hour of the day, following the profile
    peak_cost_per_hour: float  # the fleet sized for the peak
    tokens_per_request: float  # prompt + output, averaged over the buckets
    quiet_replicas: tuple[int, ...] = ()  # per group of the peak fleet, the replicas kept at the cheapest hour

    @property
    def autoscaled_per_day(self) -> float:
        return costing.day_cost(self.hourly_cost)

    @property
    def fixed_per_day(self) -> float:
        return costing.all_day_cost(self.peak_cost_per_hour)

    @property
    def tokens_per_day(self) -> float:
        return sum(self.hourly_rps) * HOUR * self.tokens_per_request

    def per_million_tokens(self, per_day: float) -> float:
        """``per_day`` spread over the day's tokens: the price of a token at the profile's mean rate."""
        return costing.per_million_tokens(per_day, self.tokens_per_day)

    def as_dict(self) -> dict[str, Any]:
        return {"method": "peak fleet scaled down by groups", "hourly_rps": list(self.hourly_rps),
                "mean_rps": mean_rate(self.hourly_rps), "peak_rps": max(self.hourly_rps),
                "hourly_cost": list(self.hourly_cost), "autoscaled_per_day": self.autoscaled_per_day,
                "fixed_per_day": self.fixed_per_day, "saving_per_day": self.fixed_per_day - self.autoscaled_per_day,
                "tokens_per_day": self.tokens_per_day,
                "autoscaled_per_million_tokens": self.per_million_tokens(self.autoscaled_per_day),
                "fixed_per_million_tokens": self.per_million_tokens(self.fixed_per_day),
                "quiet_hour_replicas": list(self.quiet_replicas)}
