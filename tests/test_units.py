"""gpuplan.units: parse what people type into base units, format base units for people.

Memory capacity is binary (a "48 GB" card holds 48 GiB), counts take SI suffixes, durations accept mixed
units. Every parse error is an InputError that names the field it came from.
"""

from __future__ import annotations

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from gpuplan.errors import InputError
from gpuplan.units import (
    GiB,
    KiB,
    MiB,
    TiB,
    fmt_bytes,
    fmt_count,
    fmt_money,
    fmt_seconds,
    parse_bytes,
    parse_count,
    parse_currency,
    parse_money,
    parse_seconds,
)

# ---------------------------------------------------------------- parse: reference values


@pytest.mark.parametrize(("text", "expected", "why"), [
    ("48GB", 48 * GiB, "capacity is binary: a 48 GB card holds 48 GiB (units.py docstring)"),
    ("80GiB", 80 * GiB, "explicit binary unit"),
    ("512MiB", 512 * MiB, "explicit binary unit"),
    ("512 mb", 512 * MiB, "case and a space do not matter"),
    ("1.5TiB", 1.5 * TiB, "fractional values"),
    ("64k", 64 * KiB, "k = KiB for sizes"),
    ("100b", 100.0, "b = bytes"),
    ("24", 24 * GiB, "a bare number is GiB"),
])
def test_parse_bytes(text: str, expected: float, why: str) -> None:
    assert parse_bytes(text, "--min-memory") == expected


def test_parse_bytes_number_is_gib() -> None:
    assert parse_bytes(24, "--min-memory") == 24 * GiB


@pytest.mark.parametrize(("text", "expected"), [
    ("10000", 10_000), ("10k", 10_000), ("7B", 7e9), ("1.4T", 1.4e12), ("2e12", 2e12), ("3M", 3e6),
    ("1,000,000", 1e6), ("1_000", 1000), ("6.74b", 6.74e9),
])
def test_parse_count(text: str, expected: float) -> None:
    assert parse_count(text, "--tokens") == pytest.approx(expected, rel=1e-12)


@pytest.mark.parametrize(("text", "expected"), [
    ("50ms", 0.05), ("2s", 2.0), ("2", 2.0), ("1h30m", 5400.0), ("1.5h", 5400.0), ("21d", 21 * 86400.0),
    ("2w", 14 * 86400.0), ("90 min", 5400.0), ("3 days", 3 * 86400.0), ("1 h 29 min", 3600.0 + 29 * 60),
])
def test_parse_seconds(text: str, expected: float) -> None:
    assert parse_seconds(text, "--deadline") == pytest.approx(expected)


@pytest.mark.parametrize(("text", "expected"), [
    ("500", (500.0, None)), ("500USD", (500.0, "USD")), ("$500", (500.0, "USD")), ("¥3000", (3000.0, "CNY")),
    ("3000 CNY", (3000.0, "CNY")), ("3,000元", (3000.0, "CNY")), ("US$12.5", (12.5, "USD")),
])
def test_parse_money(text: str, expected: tuple[float, str | None]) -> None:
    assert parse_money(text, "--budget") == expected


@pytest.mark.parametrize(("text", "expected"), [("usd", "USD"), ("CNY", "CNY"), ("rmb", "CNY"), ("¥", "CNY")])
def test_parse_currency(text: str, expected: str) -> None:
    assert parse_currency(text, "--currency") == expected


# ---------------------------------------------------------------- format: exact text


@pytest.mark.parametrize(("n_bytes", "text"), [
    (15.2 * GiB, "15.2 GiB"), (512 * MiB, "512.0 MiB"), (2 * TiB, "2.0 TiB"), (1536, "1.5 KiB"), (100, "100 B"),
])
def test_fmt_bytes(n_bytes: float, text: str) -> None:
    assert fmt_bytes(n_bytes) == text


@pytest.mark.parametrize(("n", "text"), [
    (6_738_415_616, "6.74B"), (1.4e12, "1.4T"), (10_000, "10k"), (2.5e6, "2.5M"), (42, "42"),
])
def test_fmt_count(n: float, text: str) -> None:
    assert fmt_count(n) == text


@pytest.mark.parametrize(("seconds", "text"), [
    (0.35, "350 ms"), (42, "42.0 s"), (90, "1.5 min"), (5340, "1 h 29 min"), (21.3 * 86400, "21.3 days"),
    (math.inf, "∞"),
])
def test_fmt_seconds(seconds: float, text: str) -> None:
    assert fmt_seconds(seconds) == text


@pytest.mark.parametrize(("amount", "currency", "text"), [
    (1.29, "USD", "$1.29"), (11.63, "CNY", "¥11.63"), (1234, "USD", "$1,234"), (-5, "USD", "-$5.00"),
])
def test_fmt_money(amount: float, currency: str, text: str) -> None:
    assert fmt_money(amount, currency) == text


# ---------------------------------------------------------------- round trips (hypothesis)


@given(st.integers(min_value=1, max_value=2**52))
def test_bytes_round_trip(n_bytes: int) -> None:
    # fmt_bytes picks the largest unit the value reaches, so the shown number is >= 1: with 6 decimals the
    # rounding error is below 5e-7 of the value; below 1 KiB the value is shown as whole bytes (exact).
    assert parse_bytes(fmt_bytes(n_bytes, digits=6), "x") == pytest.approx(n_bytes, rel=1e-6)


@given(st.floats(min_value=0, max_value=1e18, allow_nan=False))
def test_count_round_trip(n: float) -> None:
    assert parse_count(fmt_count(n, digits=6), "x") == pytest.approx(n, rel=1e-5, abs=1e-6)


@given(st.floats(min_value=0.01, max_value=1e8, allow_nan=False))
def test_seconds_round_trip(seconds: float) -> None:
    # fmt_seconds is for people: ms below 1 s, 0.1 s, 0.1 min, whole minutes, 0.1 day. The coarsest step
    # relative to the value is half a unit of the last digit at the bottom of each range: at most 5 %.
    assert parse_seconds(fmt_seconds(seconds), "x") == pytest.approx(seconds, rel=0.05)


@given(st.floats(min_value=0, max_value=1e9, allow_nan=False), st.sampled_from(["USD", "CNY"]))
def test_money_round_trip(amount: float, currency: str) -> None:
    value, parsed_currency = parse_money(fmt_money(amount, currency, digits=4), "x")
    assert parsed_currency == currency
    assert value == pytest.approx(amount, rel=1e-6, abs=1e-4)


# ---------------------------------------------------------------- bad input names the field


@pytest.mark.parametrize(("parse", "text", "field"), [
    (parse_bytes, "lots", "--min-memory"),
    (parse_bytes, "48 GX", "--min-memory"),
    (parse_bytes, "1e999GB", "--min-memory"),
    (parse_bytes, "", "--min-memory"),
    (parse_count, "ten", "--tokens"),
    (parse_count, "7Q", "--tokens"),
    (parse_count, "-5", "--tokens"),
    (parse_count, "1e999", "--tokens"),
    (parse_seconds, "2 fortnights", "--deadline"),
    (parse_seconds, "soon", "--deadline"),
    (parse_seconds, "", "--deadline"),
    (parse_money, "£5", "--budget"),
    (parse_money, "$500 CNY", "--budget"),
    (parse_money, "five dollars", "--budget"),
    (parse_currency, "GBP", "--currency"),
])
def test_bad_input_raises_input_error_naming_the_field(parse, text: str, field: str) -> None:
    with pytest.raises(InputError) as info:
        parse(text, field)
    assert info.value.field == field
    assert str(info.value).startswith(f"{field}: ")
    assert info.value.fix, "every input error says what to type instead"
