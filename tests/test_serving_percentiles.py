"""Request sizes given as length percentiles (issue 11, part 1: "prompt and output length distributions (buckets or
percentiles)"): the buckets they become, the refusals, and the same plan through the CLI and the HTTP API."""

from __future__ import annotations

import json

import pytest
from clirun import run_cli
from fastapi.testclient import TestClient

from gpuplan.errors import InputError
from gpuplan.plan.serving import Bucket, parse_percentiles, percentile_buckets
from gpuplan.web.app import create_app


def test_each_interval_is_a_bucket_at_its_upper_lengths() -> None:
    # p50 500+150, p90 2000+400, p99 8000+1000: half the requests count at 500+150, the next 40 % at 2000+400,
    # the last 10 % (p90 to p99, and the 1 % above p99) at 8000+1000
    got = parse_percentiles(["90:2000:400", "50:500:150", "99:8000:1000"])  # any order
    assert [(b.prompt_len, b.output_len) for b in got] == [(500, 150), (2000, 400), (8000, 1000)]
    assert [b.share for b in got] == pytest.approx([0.5, 0.4, 0.1])
    assert percentile_buckets([(100, 300, 50)]) == (Bucket(300, 50, 1.0),)  # p100 alone: one bucket


@pytest.mark.parametrize(("texts", "says"), [
    (["50:500"], "is not PCT:PROMPT:OUTPUT"),
    (["0:500:100"], "is not a percentile above 0"),
    (["101:500:100"], "is not a percentile above 0"),
    (["50:500:100", "50:600:100"], "p50 is given twice"),
    (["50:3000:100", "90:2000:400"], "the lengths fall from p50"),
    (["50:0:100"], "are not 1 to 10,000,000 tokens"),
])
def test_bad_percentiles_are_refused_naming_the_option(texts: list[str], says: str) -> None:
    with pytest.raises(InputError, match=says) as e:
        parse_percentiles(texts)
    assert e.value.field == "--percentile" and e.value.fix


def test_cli_and_api_plan_the_same_buckets() -> None:
    code, out, err = run_cli(["plan", "serve", "Qwen2.5-0.5B", "--rps", "2", "--percentile", "50:500:150",
                              "--percentile", "90:2000:400", "--json"])
    assert code == 0, err
    cli = json.loads(out)
    api = TestClient(create_app()).post("/api/serve", json={
        "model": "Qwen2.5-0.5B", "rps": 2, "percentiles": [{"percentile": 50, "prompt": 500, "output": 150},
                                                           {"percentile": 90, "prompt": 2000, "output": 400}]})
    assert api.status_code == 200, api.text
    assert api.json()["cost_per_hour_peak"] == pytest.approx(cli["cost_per_hour_peak"], rel=1e-9)


def test_buckets_and_percentiles_together_are_refused() -> None:
    code, _, err = run_cli(["plan", "serve", "Qwen2.5-0.5B", "--bucket", "100:10:1", "--percentile", "50:100:10"])
    assert code == 2 and "error: --percentile: both --bucket and --percentile" in err
    r = TestClient(create_app()).post("/api/serve", json={
        "model": "Qwen2.5-0.5B", "buckets": [{"prompt": 100, "output": 10, "share": 1}],
        "percentiles": [{"percentile": 50, "prompt": 100, "output": 10}]})
    assert r.status_code == 400 and r.json()["field"] == "percentiles"
