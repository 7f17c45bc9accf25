"""One serializer (issue 10, part 3): the CLI's ``--json`` and the HTTP API write the same result with the same
function, gpuplan.render.to_jsonable: a non-finite number (an infinite break-even) is null, an enum its value, a
date its ISO text, a tuple a list."""

from __future__ import annotations

import datetime as dt
import json
import math
from pathlib import Path
from typing import Any

import pytest
from clirun import run_cli
from fastapi.testclient import TestClient

from gpuplan.render import to_json, to_jsonable
from gpuplan.types import Market, Method


class _Owning:
    """An ownership result whose break-even is never reached (renting costs less than the power): infinite."""

    def as_dict(self) -> dict[str, Any]:
        return {"gpu": "H100", "n_gpus": 1, "market": Market.CN, "price_as_of": dt.date(2026, 11, 29),
                "break_even_hours_per_month": math.inf, "rent_per_hour": 1.45, "spread": (math.nan, 2)}


# written out by hand: what both skins must print for _Owning
EXPECTED = [{"gpu": "H100", "n_gpus": 1, "market": "cn", "price_as_of": "2026-11-29",
             "break_even_hours_per_month": None, "rent_per_hour": 1.45, "spread": [None, 2]}]


@pytest.mark.parametrize(("value", "expected"), [
    (math.inf, None), (-math.inf, None), (math.nan, None), (1.5, 1.5), (True, True), (0, 0),
    (Method.QLORA, "qlora"), (dt.date(2026, 1, 2), "2026-01-02"),
    (dt.datetime(2026, 1, 2, 3, 4), "2026-01-02T03:04:00"),
    ((1, math.inf, "x"), [1, None, "x"]), ({"a": {"b": [math.nan]}}, {"a": {"b": [None]}}),
    (Path("a") / "b.yaml", str(Path("a") / "b.yaml")), (None, None),
])
def test_to_jsonable(value: Any, expected: Any) -> None:
    assert to_jsonable(value) == expected


def test_an_unknown_object_is_a_type_error_not_a_guess() -> None:
    with pytest.raises(TypeError, match="cannot serialise object"):
        to_jsonable(object())


def test_to_json_writes_null_for_infinity() -> None:
    assert json.loads(to_json({"x": math.inf})) == {"x": None}
    assert "Infinity" not in to_json([math.inf, -math.inf])


def test_the_cli_and_the_api_write_the_same_result_the_same(monkeypatch: pytest.MonkeyPatch) -> None:
    from gpuplan.plan import buy
    from gpuplan.web import app

    monkeypatch.setattr(buy, "ownership", lambda *a, **k: _Owning())  # the CLI imports it when it runs
    monkeypatch.setattr(app, "ownership", lambda *a, **k: _Owning())
    status, out, _ = run_cli(["buy", "--gpu", "H100", "--json"])
    assert status == 0
    r = TestClient(app.create_app()).get("/api/buy", params={"gpu": "H100"})
    assert r.status_code == 200
    assert json.loads(out) == EXPECTED
    assert r.json() == EXPECTED
