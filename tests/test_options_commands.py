"""The commands besides the job commands take their options from the table too (issue 10, part 2): a row added to
gpuplan.options.OPTIONS and named in ``offers``' list is an option of ``gpuplan offers`` with its help and range,
checked against that range naming its flag; named in the endpoint's list as well, it is a query parameter of GET
/api/offers with the same range, refused out of it naming the parameter."""

from __future__ import annotations

import importlib
from collections.abc import Iterator
from typing import Any

import pytest
import typer
from clirun import run_cli
from fastapi.testclient import TestClient
from typer.testing import CliRunner

from gpuplan import cli, options
from gpuplan.cli import RangedCommand
from gpuplan.cli_options import table_options
from gpuplan.errors import InputError
from gpuplan.options import Option, Range


def _clear_caches() -> None:
    for lookup in (options._by_name, options._by_flag, options._by_arg):
        lookup.cache_clear()


@pytest.fixture
def max_price(monkeypatch: pytest.MonkeyPatch) -> Iterator[Option]:
    """A new row, --max-price (more than 0 and at most 10,000, no default), added to the table and to offers."""
    row = Option("max_price", "--max-price", float, None, Range(0, 10_000, above=True),
                 help=("Most per GPU-hour.", "每卡时最高价格。"))
    monkeypatch.setattr(options, "OPTIONS", (*options.OPTIONS, row))
    monkeypatch.setitem(options.RANGES, row.flag, row.range)
    monkeypatch.setitem(options.COMMANDS, "offers", (*options.COMMANDS["offers"], "max_price"))
    _clear_caches()
    yield row
    monkeypatch.undo()
    _clear_caches()


def _offers_line() -> typer.Typer:
    """``gpuplan offers`` made again from the table: the command's own body under the table's options."""
    app = typer.Typer()
    app.command(cls=RangedCommand)(table_options("offers")(cli.offers.__wrapped__))  # type: ignore[attr-defined]
    return app


def test_a_new_row_is_an_option_of_offers_with_its_help_and_range(max_price: Option) -> None:
    result = CliRunner().invoke(_offers_line(), ["--help"], env={"COLUMNS": "200"})
    assert result.exit_code == 0
    line = next(t for t in result.output.splitlines() if "--max-price" in t)
    assert "Most per GPU-hour. Range: more than 0 and at most 10,000." in line
    assert CliRunner().invoke(_offers_line(), ["--max-price", "3", "--gpu", "H100", "--limit", "1"]).exit_code == 0


@pytest.mark.parametrize("given", ["0", "20000"])
def test_a_new_row_of_offers_is_checked_against_its_range_naming_its_flag(max_price: Option, given: str) -> None:
    result = CliRunner().invoke(_offers_line(), ["--max-price", given])
    assert isinstance(result.exception, InputError)
    assert result.exception.field == "--max-price"
    assert f"{int(given):,} is out of range: --max-price takes more than 0 and at most 10,000." in \
        result.exception.message


def test_without_the_row_offers_has_no_such_option() -> None:
    status, _, err = run_cli(["offers", "--max-price", "3"])
    assert status == 2
    assert "--max-price" in err


def _reload_web() -> Any:
    from gpuplan.web import app, models

    importlib.reload(models)
    return models, app


@pytest.fixture
def offers_client(max_price: Option) -> Iterator[TestClient]:
    """The API with the row named in GET /api/offers' query parameters too (the web modules made again)."""
    models, app = _reload_web()
    models.QUERIES["offers"] = (*models.QUERIES["offers"], "max_price")
    try:
        yield TestClient(importlib.reload(app).create_app())
    finally:
        importlib.reload(models)  # QUERIES as shipped
        importlib.reload(app)


def test_a_new_row_is_a_query_parameter_of_its_endpoint_with_its_range(offers_client: TestClient) -> None:
    params = offers_client.get("/openapi.json").json()["paths"]["/api/offers"]["get"]["parameters"]
    param = next(p for p in params if p["name"] == "max_price")
    assert param["required"] is False
    assert param["schema"]["anyOf"][0] == {"type": "number", "exclusiveMinimum": 0.0, "maximum": 10000.0}
    assert offers_client.get("/api/offers", params={"max_price": 3, "gpu": "H100", "limit": 1}).status_code == 200


@pytest.mark.parametrize("given", [0, 20_000])
def test_a_new_query_parameter_out_of_its_range_is_refused_naming_it(offers_client: TestClient, given: int) -> None:
    r = offers_client.get("/api/offers", params={"max_price": given})
    assert r.status_code == 400
    assert r.json()["field"] == "max_price"


def test_every_query_parameter_is_an_option_of_its_command() -> None:
    from gpuplan.web.models import QUERIES

    for command, names in QUERIES.items():
        assert set(names) <= set(options.COMMANDS[command]), command
