"""The HTTP API's job requests are made from the table of options (issue 10, part 2): a row added to
gpuplan.options.OPTIONS and named in a command's list is a field of that command's request, with its help, default
and range in the OpenAPI document, checked against its range and refused where it does not apply, naming the
field; the descriptions are the command line's help in the API's words."""

from __future__ import annotations

import importlib
from collections.abc import Iterator
from typing import Any

import pytest
from fastapi.testclient import TestClient

from gpuplan import options
from gpuplan.options import TRAINING, Option, Range

_ESTIMATE = {"model": "Qwen2.5-7B", "task": "finetune", "method": "lora", "gpu": "H100", "samples": "1k",
             "tokens_per_sample": 512}


def _reload_web() -> Any:
    from gpuplan.web import app, models

    importlib.reload(models)
    return importlib.reload(app)


def _clear_caches() -> None:
    for lookup in (options._by_name, options._by_flag, options._by_arg):
        lookup.cache_clear()


@pytest.fixture
def warmup_client(monkeypatch: pytest.MonkeyPatch) -> Iterator[TestClient]:
    """The API with a new row, warmup_steps (100 by default, 0 to 1,000,000, training only), named in estimate's
    list of options; the web modules are made again from the table, and again without it afterwards."""
    row = Option("warmup_steps", "--warmup-steps", int, 100, Range(0, 1e6), applies=TRAINING, stages=("layout",),
                 help=("Learning-rate warm-up steps.", "学习率预热步数。"))
    monkeypatch.setattr(options, "OPTIONS", (*options.OPTIONS, row))
    monkeypatch.setitem(options.RANGES, row.flag, row.range)
    monkeypatch.setitem(options.COMMANDS, "estimate", (*options.COMMANDS["estimate"], "warmup_steps"))
    _clear_caches()
    try:
        yield TestClient(_reload_web().create_app())
    finally:
        monkeypatch.undo()
        _clear_caches()
        _reload_web()


def _request_schema(client: TestClient, model: str) -> dict[str, Any]:
    schema: dict[str, Any] = client.get("/openapi.json").json()["components"]["schemas"][model]
    return schema


def test_a_new_row_is_a_field_of_its_commands_request_with_its_help_default_and_range(
        warmup_client: TestClient) -> None:
    field = _request_schema(warmup_client, "EstimateRequest")["properties"]["warmup_steps"]
    assert field == {"default": 100, "description": "Learning-rate warm-up steps.", "minimum": 0.0,
                     "maximum": 1000000.0, "title": "Warmup Steps", "type": "integer"}
    # only the command that names it takes it
    assert "warmup_steps" not in _request_schema(warmup_client, "ServeRequestBody")["properties"]


def test_a_new_row_out_of_its_range_is_refused_naming_the_field(warmup_client: TestClient) -> None:
    r = warmup_client.post("/api/estimate", json=_ESTIMATE | {"warmup_steps": 2_000_000})
    assert r.status_code == 400  # a number out of range is a 400, as every range of the table is
    body = r.json()
    assert body["field"] == "warmup_steps"
    assert body["fix"] == "give 1000000 or less: warmup_steps takes 0 to 1,000,000."


def test_a_new_row_of_the_wrong_type_is_a_422_naming_the_field(warmup_client: TestClient) -> None:
    r = warmup_client.post("/api/estimate", json=_ESTIMATE | {"warmup_steps": "many"})
    assert r.status_code == 422
    assert r.json()["field"] == "warmup_steps"


def test_a_new_row_is_refused_where_it_does_not_apply(warmup_client: TestClient) -> None:
    infer = {"model": "Qwen2.5-7B", "task": "infer", "gpu": "H100", "warmup_steps": 10}
    r = warmup_client.post("/api/estimate", json=infer)
    assert r.status_code == 400
    assert r.json()["field"] == "warmup_steps"
    assert "applies to training" in r.json()["error"]
    assert warmup_client.post("/api/estimate", json=_ESTIMATE | {"warmup_steps": 10}).status_code == 200


def test_without_the_row_the_field_is_unknown() -> None:
    from gpuplan.web.app import create_app

    r = TestClient(create_app()).post("/api/estimate", json=_ESTIMATE | {"warmup_steps": 10})
    assert r.status_code == 400 and r.json()["field"] == "warmup_steps"  # an unknown field, as a typo is


# the descriptions: the row's help, in the API's words (flags as field names, durations in seconds)
@pytest.mark.parametrize(("model", "field", "text"), [
    ("ServeRequestBody", "rps", "Mean requests per second (default 1; with profile, the profile's mean)."),
    ("ServeRequestBody", "ttft_s", "Median time-to-first-token target, e.g. 0.5 s."),  # --ttft 500ms
    ("PlanRequest", "deadline_s", "Must finish within, e.g. 43200 s or 259200 s."),  # 12h = 43,200 s; 3d = 259,200 s
    ("PlanRequest", "budget", "Most you will spend, e.g. 500 or 3000."),  # 500USD or ¥3000; budget_currency says
    ("PlanRequest", "providers", "Only these providers."),  # a list is repeatable
    ("ServeRequestBody", "tiers", "Pricing tiers the fleet may rent: on-demand, spot, reserved, marketplace "
     "(default: on-demand, with spot under spot: true; reserved is a committed term, paid whether or not the "
     "instance runs)."),
    ("ServeRequestBody", "adapter_rank", "Rank of the largest adapter (vLLM reserves its next --max-lora-rank "
     "choice)."),  # vLLM's flag, not a field
    ("EstimateRequest", "prefix_len", "P-tuning v2 prefix length."),
])
def test_descriptions_are_the_help_in_the_apis_words(model: str, field: str, text: str) -> None:
    from gpuplan.web.app import create_app

    schema = _request_schema(TestClient(create_app()), model)
    assert schema["properties"][field]["description"] == text
