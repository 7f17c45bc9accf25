"""One table of job options (gpuplan.options): every skin takes its defaults from it, and an option the user gave
where it does not apply is refused naming it, even at its default value, on the command line, in the Python API
and in the HTTP API alike."""

from __future__ import annotations

import importlib.util
from typing import Any

import pytest
import typer

import gpuplan
from gpuplan import options
from gpuplan.cli import app
from gpuplan.errors import InputError
from gpuplan.options import OPTIONS, RANGES, default, of_command, option_of_flag
from gpuplan.requests import make_job
from gpuplan.types import Method, Task
from gpuplan.units import parse_count

COMMANDS = ("estimate", "plan finetune", "plan pretrain", "plan infer", "plan serve")


def _commands() -> dict[str, Any]:
    root = typer.main.get_command(app)
    plan = root.commands["plan"]  # type: ignore[attr-defined]
    return {**root.commands,  # type: ignore[attr-defined]
            **{f"plan {name}": cmd for name, cmd in plan.commands.items()}}


@pytest.mark.parametrize("command", COMMANDS)
def test_the_command_lines_defaults_are_the_tables(command: str) -> None:
    flags = {o.flag for o in OPTIONS}
    checked = 0
    for param in _commands()[command].params:
        flag = param.opts[0] if param.opts else ""
        if flag not in flags or param.default is None:
            continue
        o = option_of_flag(flag)
        shown = parse_count(param.default, flag) if o.form == "COUNT" else param.default
        assert shown == default(o.name, command), (command, flag)
        checked += 1
    assert checked >= 4, f"{command}: only {checked} options compared"  # the table describes this command


# the other commands' defaults, as docs/cli.md lists them, written out
@pytest.mark.parametrize(("command", "flag", "expected"), [
    ("gpus", "--sort", "name"), ("gpus", "--wide", False), ("offers", "--sort", "gpu-price"), ("offers", "--limit", 40),
    ("offers", "--exact/--no-exact", False), ("fit", "--context", 2048), ("compare", "--model", "Llama-3.1-8B"),
    ("buy", "--n-gpus", 1), ("buy", "--hours-per-month", 200), ("buy", "--market", "global"),
    ("web", "--host", "127.0.0.1"), ("web", "--port", 8000), ("web", "--workers", 1),
])
def test_the_other_commands_defaults_are_their_rows(command: str, flag: str, expected: object) -> None:
    param = next(p for p in _commands()[command].params if "/".join(p.opts + p.secondary_opts) == flag)
    assert param.default == expected
    assert default(option_of_flag(flag.split("/")[0]).name, command) == expected


@pytest.mark.parametrize(("command", "flags"), [
    ("gpus", ["--market", "--min-memory", "--vendor", "--segment", "--sort", "--wide"]),
    ("offers", ["--gpu", "--exact", "--market", "--currency", "--spot", "--tier", "--provider", "--min-gpus", "--sort",
                "--limit"]),
    ("history", ["--gpu", "--provider", "--region", "--tier", "--points"]),
    ("fit", ["--context", "--gpus"]),
    ("buy", ["--gpu", "--n-gpus", "--hours-per-month", "--market", "--currency", "--years", "--pue", "--electricity"]),
    ("web", ["--host", "--port", "--token", "--workers"]),
])
def test_every_option_of_the_other_commands_is_a_row_of_the_table(command: str, flags: list[str]) -> None:
    """Their options besides --json and --csv are the table's, in its order (issue 10, part 2)."""
    given = [p.opts[0] for p in _commands()[command].params
             if p.param_type_name == "option" and p.opts[0] not in ("--json", "--csv")]
    assert given == flags
    assert [o.flag for o in of_command(command)] == flags


def test_every_default_lies_in_its_options_range() -> None:
    for o in OPTIONS:
        values = [o.default, *(v for _, v in o.by_command)]
        for v in values:
            if o.range is not None and v is not None and not (v == 0 == o.default):  # 0 there: not given
                assert o.range.contains(v), (o.flag, v)


def test_commands_named_for_their_own_defaults_help_or_kind_exist() -> None:
    named = {command for o in OPTIONS for command, _ in (*o.by_command, *o.kind_in)}
    named |= {command for o in OPTIONS for command, *_ in o.helps} | {c for o in OPTIONS for c in o.required_in}
    assert named <= set(options.COMMANDS)


def test_every_range_belongs_to_an_option_of_the_table() -> None:
    assert set(RANGES) == {o.flag for o in OPTIONS if o.range is not None}


# the defaults each plan command documents in its --help (docs/cli.md), written out
@pytest.mark.parametrize(("task", "field", "expected"), [
    ("finetune", "method", Method.LORA),
    ("infer", "requests", 1000),
    ("serve", "prompt_len", 1000), ("serve", "output_len", 300), ("serve", "rps", 1.0),
])
def test_a_plan_job_takes_the_plan_commands_defaults(task: str, field: str, expected: object) -> None:
    assert getattr(make_job(task, command="plan"), field) == expected


def test_an_estimate_job_takes_the_estimate_commands_defaults() -> None:
    job = make_job("serve")
    assert (job.method, job.prompt_len, job.output_len) == (Method.FULL, 1024, 256)


@pytest.mark.parametrize(("task", "given", "flag"), [
    ("infer", {"lora_rank": 16}, "--lora-rank"),
    ("finetune", {"method": "full", "lora_targets": "all-linear"}, "--lora-targets"),
    ("finetune", {"method": "lora", "prompt": 1024}, "--prompt"),
    ("serve", {"requests": 1000}, "--requests"),
    ("infer", {"rps": 1.0}, "--rps"),
    ("pretrain", {"tokens": 1e9, "train_embeddings": False}, "--train-embeddings"),
])
def test_the_library_refuses_an_option_given_at_its_default(task: str, given: dict[str, Any], flag: str) -> None:
    with pytest.raises(InputError) as err:
        make_job(task, **given)
    assert err.value.field == flag
    assert err.value.fix.startswith(("drop ", "use --task"))


def test_an_unknown_option_is_a_callers_bug() -> None:
    with pytest.raises(TypeError, match="lora_ranks"):
        make_job("finetune", lora_ranks=8)


def test_the_python_api_plans_the_job_the_cli_plans() -> None:
    # `gpuplan plan infer MODEL` prices 1,000 requests ([default: 1000] in its help); so does gpuplan.plan
    p = gpuplan.plan("Qwen2.5-0.5B", "infer", top=1)
    assert p.result.job.requests == 1000


def test_the_python_apis_estimate_applies_the_framework() -> None:
    e = gpuplan.estimate("Qwen2.5-0.5B", "H100", "finetune", method="lora", samples="1k", tokens_per_sample=256,
                         framework="unsloth")
    assert e.result.job.framework == "unsloth"


def test_the_python_api_refuses_an_engine_for_a_training_plan() -> None:
    with pytest.raises(InputError, match="--engine applies to inference"):
        gpuplan.plan("Qwen2.5-0.5B", "finetune", samples="1k", tokens_per_sample=256, engine="vllm")


web = pytest.mark.skipif(importlib.util.find_spec("fastapi") is None or importlib.util.find_spec("httpx") is None,
                         reason="the HTTP API tests need fastapi and httpx")


@pytest.fixture(scope="module")
def client() -> Any:
    from fastapi.testclient import TestClient

    from gpuplan.web.app import create_app

    return TestClient(create_app())


FINETUNE = {"model": "Qwen2.5-0.5B", "task": "finetune", "samples": "1k", "tokens_per_sample": 256}


@web
@pytest.mark.parametrize(("path", "body", "field"), [
    ("/api/plan", {**FINETUNE, "method": "full", "lora_rank": 16}, "lora_rank"),
    ("/api/plan", {**FINETUNE, "engine": "vllm"}, "engine"),
    ("/api/plan", {"model": "Qwen2.5-0.5B", "task": "serve", "deadline_s": 3600}, "deadline_s"),
    ("/api/estimate", {"model": "Qwen2.5-0.5B", "task": "infer", "zero": 0}, "zero"),
    ("/api/estimate", {**FINETUNE, "kv_dtype": "bf16"}, "kv_dtype"),
])
def test_the_http_api_refuses_a_field_sent_where_it_does_not_apply(client: Any, path: str, body: dict[str, Any],
                                                                    field: str) -> None:
    r = client.post(path, json=body)
    assert r.status_code == 400, r.text
    assert r.json()["field"] == field and field in r.json()["fix"]


@web
def test_the_http_api_plans_a_request_without_the_fields_that_do_not_apply(client: Any) -> None:
    r = client.post("/api/plan", json={**FINETUNE, "method": "full", "top": 1})
    assert r.status_code == 200, r.text
    assert r.json()["ranked"][0]["estimate_options"]["--method"] == "full"


@web
def test_a_training_plan_over_http_trains_lora_as_the_cli_does(client: Any) -> None:
    r = client.post("/api/plan", json={**FINETUNE, "top": 1})
    assert r.status_code == 200, r.text
    assert r.json()["ranked"][0]["estimate_options"]["--method"] == default("method", "plan finetune") == "lora"


def test_tasks_of_the_table_are_tasks() -> None:
    tasks = {t for o in OPTIONS if o.applies.tasks for t in o.applies.tasks}
    assert tasks <= set(Task)
