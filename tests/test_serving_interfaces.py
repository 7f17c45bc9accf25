"""`gpuplan plan serve` and `POST /api/serve`: the same plan through both skins, and bad input refused with the
field and the fix (exit status 2 on the command line, 400 over HTTP)."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
from fastapi.testclient import TestClient

from gpuplan.web.app import create_app


def _cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "gpuplan", *args], capture_output=True, text=True, timeout=300)


@pytest.fixture(scope="module")
def client() -> TestClient:
    return TestClient(create_app())


@pytest.mark.parametrize(("args", "field"), [
    (("--availability", "100"), "--availability"),
    (("--ttft", "2s", "--ttft-p99", "1s"), "--ttft-p99"),
    (("--rps", "0"), "--rps"),
    (("--region", "us-east-9"), "--region"),
    (("--bucket", "100:10:0.5"), "--bucket"),
    (("--tolerate", "rack"), "--tolerate"),
])
def test_cli_refuses_bad_input_with_field_and_fix(args: tuple[str, ...], field: str) -> None:
    r = _cli("plan", "serve", "Qwen2.5-0.5B", *args)
    assert r.returncode == 2, r.stderr
    assert f"error: {field}: " in r.stderr and "To fix:" in r.stderr and "Traceback" not in r.stderr


def test_cli_json_and_api_answer_the_same_plan(client: TestClient) -> None:
    r = _cli("plan", "serve", "Qwen2.5-0.5B", "--rps", "2", "--peak-rps", "4", "--ttft-p99", "2s", "--json")
    assert r.returncode == 0, r.stderr
    cli = json.loads(r.stdout)
    api = client.post("/api/serve", json={"model": "Qwen2.5-0.5B", "rps": 2, "peak_rps": 4, "ttft_p99_s": 2})
    assert api.status_code == 200, api.text
    body = api.json()
    for key in ("cost_per_hour_peak", "cost_per_hour_average", "expected_availability",
                "cost_per_million_input_tokens", "cost_per_million_output_tokens"):
        assert body[key] == pytest.approx(cli[key], rel=1e-9), key
    assert [g["gpu"] for g in body["fleet"]["groups"]] == [g["gpu"] for g in cli["fleet"]["groups"]]


@pytest.mark.parametrize(("body", "field"), [
    ({"availability": 100}, "availability"),
    ({"ttft_s": 2, "ttft_p99_s": 1}, "ttft_p99_s"),
    ({"rps": 0}, "rps"),
    ({"regions": ["us-east-9"]}, "regions"),
    ({"buckets": [{"prompt": 100, "output": 10, "share": 0.5}]}, "buckets"),
    ({"tolerate": "rack"}, "tolerate"),
])
def test_api_refuses_bad_input_with_field_and_fix(client: TestClient, body: dict[str, object], field: str) -> None:
    r = client.post("/api/serve", json={"model": "Qwen2.5-0.5B", **body})
    assert r.status_code == 400, r.text
    err = r.json()
    assert err["field"] == field and err["fix"] and "--" not in err["error"]


def test_openapi_documents_the_serve_errors(client: TestClient) -> None:
    doc = client.get("/openapi.json").json()
    responses = doc["paths"]["/api/serve"]["post"]["responses"]
    assert {"200", "400", "422"} <= set(responses)
    props = doc["components"]["schemas"]["ServeRequestBody"]["properties"]
    assert props["tolerate"]["enum"] == ["zone", "region", "none"]
    assert props["availability"]["exclusiveMinimum"] == 0 and props["availability"]["maximum"] == 100
