"""The HTTP API as a client sees it: JSON keys, the same dicts as the CLI's ``--json`` (datasette's twin),
listing filters, the lesson's plan, and errors that name the field and say what to type next, never a
traceback. Runs in-process with FastAPI's TestClient; skipped without fastapi and httpx."""

from __future__ import annotations

import importlib.util
import json
import math
import subprocess
import sys
import warnings
from collections.abc import Callable
from typing import Any, get_args

import pytest

if importlib.util.find_spec("fastapi") is None:
    pytest.skip("the web API tests need fastapi (pip install 'gpuplan[web]')", allow_module_level=True)
if importlib.util.find_spec("httpx") is None and importlib.util.find_spec("httpx2") is None:
    pytest.skip("the web API tests need httpx for FastAPI's TestClient (pip install httpx)", allow_module_level=True)

with warnings.catch_warnings():
    # starlette >= 1 prefers httpx2 to httpx for its TestClient and warns; both work
    warnings.filterwarnings("ignore", message="Using `httpx` with `starlette.testclient`")
    from fastapi.testclient import TestClient

from conftest import REPO

from gpuplan import types as domain
from gpuplan.catalog import Catalog
from gpuplan.catalog.schemas import PRICINGS
from gpuplan.estimate.calibration import fitted
from gpuplan.listing import gpu_row, match_gpus
from gpuplan.options import option
from gpuplan.plan.planner import OBJECTIVES
from gpuplan.units import CURRENCIES
from gpuplan.web import app as web_app
from gpuplan.web import models as web_models
from gpuplan.web.app import create_app

ERROR_KEYS = {"error", "field", "fix", "error_zh", "fix_zh"}
LESSON = {"model": "ChatGLM2-6B", "task": "finetune", "method": "lora", "samples": "10k",
          "tokens_per_sample": 1088, "market": "cn"}
Cli = Callable[..., subprocess.CompletedProcess[str]]


@pytest.fixture(scope="module")
def client() -> TestClient:
    return TestClient(create_app())


def _ok(response: Any) -> Any:
    assert response.status_code == 200, response.text
    return response.json()


def _error(response: Any, status: int, field: str | None) -> dict[str, Any]:
    """An error response: the status, exactly the three keys, the field, a fix, and no traceback."""
    assert response.status_code == status, response.text
    body = response.json()
    assert set(body) == ERROR_KEYS
    assert body["field"] == field
    assert body["error"] and body["fix"]
    assert "Traceback" not in response.text and 'File "' not in response.text
    return body


def _cli_json(cli: Cli, *args: str) -> Any:
    """The CLI's JSON; an estimate that does not fit exits 1 (its JSON printed all the same)."""
    result = cli(*args, "--json")
    out = json.loads(result.stdout) if result.returncode in (0, 1) else None
    fits = out is None or args[0] != "estimate" or out["fits"]
    assert result.returncode == (0 if fits else 1), result.stderr
    return out


# ---------------------------------------------------------------- listings


def test_gpus_are_the_listing_rows(client: TestClient, catalog: Catalog) -> None:
    rows = _ok(client.get("/api/gpus"))
    assert len(rows) == len(catalog.gpus)
    assert list(rows[0]) == list(gpu_row(catalog.gpus["H100"]))
    h100 = next(r for r in rows if r["name"] == "H100")
    assert h100["memory_nominal_gb"] == 80 and h100["bf16_tflops"] and h100["date_checked"]


@pytest.mark.parametrize(("params", "check"), [
    ({"vendor": "AMD"}, lambda r: r["vendor"] == "AMD"),
    ({"segment": "consumer"}, lambda r: r["segment"] == "consumer"),
    ({"min_memory": "80GB"}, lambda r: r["memory_nominal_gb"] >= 79.5),
], ids=["vendor", "segment", "min_memory"])
def test_gpu_filters(client: TestClient, params: dict[str, str], check: Callable[[dict[str, Any]], bool]) -> None:
    rows = _ok(client.get("/api/gpus", params=params))
    assert rows and all(check(r) for r in rows)
    assert len(rows) < len(_ok(client.get("/api/gpus")))


def test_gpus_sorted_by_memory_and_cn_market(client: TestClient) -> None:
    rows = _ok(client.get("/api/gpus", params={"sort": "memory"}))
    sizes = [r["memory_usable_gib"] for r in rows]
    assert sizes == sorted(sizes, reverse=True)
    cn = {r["name"] for r in _ok(client.get("/api/gpus", params={"market": "cn"}))}
    assert "RTX4090D" in cn and cn < {r["name"] for r in rows}


def test_cn_offers_in_cny_cheapest_per_gpu_hour_first(client: TestClient, catalog: Catalog) -> None:
    rows = _ok(client.get("/api/offers", params={"gpu": "A100", "market": "cn", "currency": "CNY", "limit": 0}))
    assert rows and {r["market"] for r in rows} == {"cn"} and {r["currency"] for r in rows} == {"CNY"}
    assert {r["gpu"] for r in rows} <= match_gpus(catalog, ["A100"])
    prices = [r["price_per_gpu_hour"] for r in rows]
    assert prices == sorted(prices)


def test_offer_filters_repeatable_gpu_provider_spot_and_limit(client: TestClient) -> None:
    two = _ok(client.get("/api/offers", params=[("gpu", "H100"), ("gpu", "RTX4090"), ("exact", "true"),
                                                 ("limit", "0")]))
    assert {r["gpu"] for r in two} == {"H100", "RTX4090"}
    autodl = _ok(client.get("/api/offers", params={"provider": "autodl", "limit": 0}))
    assert autodl and {r["provider"] for r in autodl} == {"AutoDL"}
    spot = _ok(client.get("/api/offers", params={"spot": "true", "limit": 0}))
    assert spot and {r["pricing"] for r in spot} == {"spot"}
    assert len(_ok(client.get("/api/offers", params={"limit": 5}))) == 5


def test_models_search_and_detail(client: TestClient) -> None:
    rows = _ok(client.get("/api/models", params={"q": "qwen"}))
    assert rows and all("qwen" in (r["name"] + r["hf_repo"] + r["family"]).lower() for r in rows)
    detail = _ok(client.get("/api/models/Llama-2-7B"))
    assert {"name", "architecture", "params", "source", "hf_repo", "notes"} <= set(detail)
    assert detail["params"]["total"] == 6_738_415_616  # transformers LlamaForCausalLM numel
    by_repo = _ok(client.get("/api/models/THUDM/chatglm2-6b"))  # a Hub id of a preset, slash and all
    assert by_repo["name"] == "ChatGLM2-6B"


def test_platforms_by_market(client: TestClient) -> None:
    rows = _ok(client.get("/api/platforms", params={"market": "cn"}))
    assert rows and {r["market"] for r in rows} == {"cn"}
    assert {"platform", "tier", "gpu", "weekly_gpu_hours", "session_max_hours", "source", "as_of"} <= set(rows[0])


def test_meta(client: TestClient, catalog: Catalog) -> None:
    meta = _ok(client.get("/api/meta"))
    assert meta["version"]
    assert meta["counts"] == {"gpus": len(catalog.gpus), "offers": len(catalog.offers),
                              "providers": len(catalog.providers()), "models": len(catalog.models),
                              "platforms": len(catalog.platforms)}
    assert meta["calibration"]["fitted_on"] == fitted().fitted_on
    assert meta["languages"] == ["en", "zh"]
    assert meta["labels"]["zh"]["weights"] == "权重"
    assert meta["choices"]["method"] == list(domain.METHODS)


@pytest.mark.parametrize(("args", "path", "params"), [
    (("gpus", "--vendor", "NVIDIA", "--sort", "memory"), "/api/gpus", {"vendor": "NVIDIA", "sort": "memory"}),
    (("offers", "--market", "cn", "--gpu", "RTX4090"), "/api/offers", {"market": "cn", "gpu": "RTX4090"}),
    (("models", "llama"), "/api/models", {"q": "llama"}),
    (("model", "Qwen2-7B"), "/api/models/Qwen2-7B", {}),
    (("platforms", "--market", "global"), "/api/platforms", {"market": "global"}),
], ids=["gpus", "offers", "models", "model", "platforms"])
def test_listings_are_the_cli_json(client: TestClient, cli: Cli, args: tuple[str, ...], path: str,
                                   params: dict[str, str]) -> None:
    assert _ok(client.get(path, params=params)) == _cli_json(cli, *args)


# ---------------------------------------------------------------- estimate and plan


def test_estimate_keys_for_training(client: TestClient) -> None:
    body = {"model": "ChatGLM2-6B", "task": "finetune", "method": "lora", "gpu": "RTX4090", "samples": "10k",
            "tokens_per_sample": 1088, "precision": "bf16", "recompute": "full", "micro_batch": 1}
    e = _ok(client.post("/api/estimate", json=body))
    assert {"model", "gpu", "n_gpus", "config", "fits", "memory_needed_bytes", "memory_available_bytes",
            "headroom", "memory", "setup", "time"} <= set(e)
    mem = e["memory"]
    assert {"total_bytes", "low_bytes", "high_bytes", "breakdown_bytes", "band", "assumptions"} <= set(mem)
    assert sum(mem["breakdown_bytes"].values()) == pytest.approx(mem["total_bytes"])
    assert e["time"]["total_seconds"] > 0 and e["time"]["breakdown_seconds"]
    assert e["fits"] and e["gpu"] == "RTX4090"


def test_estimate_keys_for_inference(client: TestClient) -> None:
    e = _ok(client.post("/api/estimate", json={"model": "Llama-2-7B", "gpu": "A100-80GB", "batch": 8}))
    assert {"ttft_seconds", "tpot_seconds", "batch", "output_tokens_per_second", "bound"} <= set(e["speed"])
    assert "kv_cache" in e["memory"]["breakdown_bytes"]


@pytest.mark.parametrize(("args", "body"), [
    (("estimate", "Llama-2-7B", "--task", "finetune", "--method", "qlora", "--gpu", "4090", "--samples", "1k",
      "--tokens-per-sample", "512", "--micro-batch", "2"),
     {"model": "Llama-2-7B", "task": "finetune", "method": "qlora", "gpu": "4090", "samples": "1k",
      "tokens_per_sample": 512, "micro_batch": 2}),
    (("estimate", "Qwen2-7B", "--task", "serve", "--gpu", "L40S", "--quant", "awq-int4", "--batch", "16"),
     {"model": "Qwen2-7B", "task": "serve", "gpu": "L40S", "quant": "awq-int4", "batch": 16}),
], ids=["qlora", "serve"])
def test_estimate_is_the_cli_json(client: TestClient, cli: Cli, args: tuple[str, ...], body: dict[str, Any]) -> None:
    assert _ok(client.post("/api/estimate", json=body)) == _cli_json(cli, *args)


def test_lesson_plan_picks_a_fitting_offer_in_cny(client: TestClient) -> None:
    plan = _ok(client.post("/api/plan", json=LESSON))
    assert {"model", "task", "objective", "currency", "pick", "ranked", "pareto", "explanation", "assumptions",
            "configs_considered", "configs_that_fit", "nothing_fits", "suggestions", "platforms"} <= set(plan)
    ranked = plan["ranked"]
    assert ranked and plan["pick"] == ranked[0]
    first = ranked[0]
    assert first["memory_needed_bytes"] <= first["memory_available_bytes"] and first["estimate"]["fits"]
    assert plan["currency"] == "CNY" and first["cost"]["currency"] == "CNY" and first["offer"]["market"] == "cn"
    costs = [c["cost"]["total"] for c in ranked]
    steps = [math.floor(math.log(c / min(costs)) / math.log1p(0.02) + 1e-9) for c in costs]
    assert steps == sorted(steps)  # objective cost: costs within 2 % tie (the faster wins)
    assert all(c["estimate"]["fits"] for c in ranked)
    assert plan["explanation"].startswith(first["config"])


def test_plan_is_the_cli_json(client: TestClient, cli: Cli) -> None:
    args = ("plan", "finetune", "ChatGLM2-6B", "--method", "lora", "--samples", "10k", "--tokens-per-sample",
            "1088", "--market", "cn", "--objective", "value", "--top", "5")
    # the CLI always prices the alternatives; the API does when asked (test_priced_alternatives_are_asked_for)
    body = {**LESSON, "objective": "value", "top": 5, "alternatives": True}
    assert _ok(client.post("/api/plan", json=body)) == _cli_json(cli, *args)


def test_priced_alternatives_are_asked_for(client: TestClient, cli: Cli) -> None:
    # pricing the cheaper changes plans once more per change (about twice the work), so the API does it when
    # asked (the web page asks); the CLI always does, and the two then agree
    body = {"model": "Llama-3.1-8B", "task": "infer", "requests": 10000, "top": 3}
    assert _ok(client.post("/api/plan", json=body))["alternatives"] == []
    asked = _ok(client.post("/api/plan", json={**body, "alternatives": True}))["alternatives"]
    cli_json = _cli_json(cli, "plan", "infer", "Llama-3.1-8B", "--requests", "10k", "--top", "3")
    assert asked and asked == cli_json["alternatives"]
    assert any(a["change"] == "quantize to fp8" for a in asked)


def test_plan_serving_adds_costs_per_million_tokens(client: TestClient) -> None:
    plan = _ok(client.post("/api/plan", json={"model": "Llama-2-7B", "task": "serve", "rps": 2, "top": 3}))
    assert len(plan["serving"]) == len(plan["ranked"]) > 0
    assert {"cost_per_hour", "cost_per_million_input_tokens", "cost_per_million_output_tokens"} <= set(
        plan["serving"][0])


def test_plan_constraints_are_applied(client: TestClient, catalog: Catalog) -> None:
    body = {**LESSON, "market": "global", "gpus": ["A100"], "budget": 50, "budget_currency": "USD",
            "spot": False, "currency": "USD", "top": 20}
    plan = _ok(client.post("/api/plan", json=body))
    assert plan["ranked"] and plan["currency"] == "USD"
    for c in plan["ranked"]:
        assert c["gpu"] in match_gpus(catalog, ["A100"]) and c["offer"]["pricing"] != "spot"
        assert c["cost"]["total"] <= 50


def test_a_plan_that_cannot_fit_says_by_how_much(client: TestClient) -> None:
    body = {"model": "Llama-2-70B", "task": "finetune", "method": "full", "samples": "1k", "tokens_per_sample": 512,
            "gpus": ["RTX4090"], "max_gpus": 1}
    plan = _ok(client.post("/api/plan", json=body))
    assert plan["pick"] is None and plan["ranked"] == []
    assert "short" in plan["nothing_fits"]


def test_fit_compare_and_buy(client: TestClient) -> None:
    fit = _ok(client.get("/api/fit/Llama-2-7B", params={"context": 1024}))
    assert fit["model"] == "Llama-2-7B" and {r["use_case"] for r in fit["rows"]} >= {"LoRA fine-tune"}
    assert {"config", "gpu", "n_gpus", "memory_needed_bytes"} <= set(fit["rows"][0]["options"][0])
    cmp = _ok(client.get("/api/compare", params={"a": "A100-80GB", "b": "H100", "model": "Llama-2-7B"}))
    assert cmp["model"] == "Llama-2-7B" and all({"measure", "A100-80GB", "H100", "ratio"} <= set(r)
                                                   for r in cmp["rows"])
    own = _ok(client.get("/api/buy", params={"gpu": "RTX4090D", "market": "cn", "hours_per_month": 200}))
    assert own[0]["currency"] == "CNY" and {"own_per_month", "rent_per_month", "break_even_hours_per_month",
                                            "verdict"} <= set(own[0])


def test_buy_takes_years_pue_and_electricity_as_the_cli_does(client: TestClient, cli: Cli) -> None:
    params = {"gpu": "RTX4090D", "market": "cn", "years": 4, "pue": 1.3, "electricity": "0.6CNY"}
    own = _ok(client.get("/api/buy", params=params))
    # RTX 4090 D: 425 W (gpus.csv) × PUE 1.3 = 0.5525 kW × 0.6 CNY/kWh = 0.3315 CNY per hour
    assert own[0]["power_per_hour"] == pytest.approx(0.3315)
    # straight-line over 4 years: 17,548.65 CNY (12,999 + the host share) / 48 months = 365.60 CNY a month
    assert own[0]["purchase_with_host"] == pytest.approx(17548.65)
    assert own[0]["capital_per_month"] == pytest.approx(365.60, abs=0.01)
    assert own == _cli_json(cli, "buy", "--gpu", "RTX4090D", "--market", "cn", "--years", "4", "--pue", "1.3",
                            "--electricity", "0.6CNY")
    default = _ok(client.get("/api/buy", params={"gpu": "RTX4090D", "market": "cn"}))
    assert default[0]["power_per_hour"] != own[0]["power_per_hour"]  # the market's defaults when not given


@pytest.mark.parametrize(("params", "field", "fix_part"), [
    ({"years": 0}, "years", "more than 0 and at most 50 years"),
    ({"years": 51}, "years", "more than 0 and at most 50 years"),
    ({"pue": 0.5}, "pue", "1 to 4"),  # a PUE below 1 would have the facility make power
    ({"electricity": "500"}, "electricity", "0 to 100 per kWh"),
    ({"electricity": "-1"}, "electricity", "positive amount"),
    ({"electricity": "cheap"}, "electricity", "500USD"),
], ids=["years-0", "years-51", "pue", "electricity-range", "electricity-negative", "electricity-text"])
def test_buy_refuses_what_the_cli_refuses(client: TestClient, params: dict[str, Any], field: str,
                                          fix_part: str) -> None:
    err = _error(client.get("/api/buy", params={"gpu": "RTX4090D", **params}), 400, field)
    assert fix_part in err["fix"] or fix_part in err["error"]
    assert "--" not in err["error"] + err["fix"]


# ---------------------------------------------------------------- errors


def test_negative_samples(client: TestClient) -> None:
    body = _error(client.post("/api/plan", json={**LESSON, "samples": -5}), 400, "samples")
    assert "greater than 0" in body["error"]


def test_unknown_gpu_says_did_you_mean(client: TestClient) -> None:
    est = _error(client.post("/api/estimate", json={"model": "Llama-2-7B", "gpu": "h10"}), 400, "gpu")
    assert "unknown GPU 'h10'" in est["error"] and "'H100'" in est["error"] and "gpuplan gpus" in est["fix"]
    plan = _error(client.post("/api/plan", json={**LESSON, "gpus": ["h10"]}), 400, "gpus")
    assert "Did you mean" in plan["error"]


def test_tp_that_does_not_divide_the_heads(client: TestClient) -> None:
    body = {"model": "Llama-2-7B", "task": "finetune", "tp": 3, "n_gpus": 3, "tokens": "1M"}
    err = _error(client.post("/api/estimate", json=body), 400, "tp")
    assert "TP 3" in err["error"] and "1, 2, 4, 8" in err["fix"]


@pytest.mark.parametrize(("request_", "status", "field", "fix_part"), [
    (("post", "/api/plan", {**LESSON, "market": "eu"}), 400, "market", "'cn' or 'global'"),
    (("post", "/api/plan", {**LESSON, "top": 0}), 400, "top", "above 0"),
    (("post", "/api/plan", {**LESSON, "sample": 5}), 400, "sample", "did you mean 'samples'"),
    (("post", "/api/plan", {**LESSON, "top": "many"}), 422, "top", "integer"),
    (("post", "/api/plan", {"task": "finetune"}), 422, "model", "add 'model'"),
    (("post", "/api/estimate", {"model": "Llama-2-7B", "seq_len": 100_000, "task": "finetune", "tokens": "1M"}),
     400, "seq_len", "seq_len 4096 or less"),
    (("post", "/api/estimate", {"model": "Llama-2-7B", "quant": "awq4"}), 400, "quant", "awq-int4"),
    (("post", "/api/plan", {**LESSON, "model": "ChatGLM-6"}), 400, "model", "gpuplan models"),
    (("get", "/api/models/..%2F..%2Fetc%2Fpasswd", None), 400, "name", "gpuplan models"),
    (("get", "/api/gpus?sort=speed", None), 400, "sort", "memory"),
    (("get", "/api/gpus?segment=gaming", None), 400, "segment", "'consumer'"),
    (("get", "/api/gpus?vendor=nvidai", None), 400, "vendor", "gpuplan gpus"),
    (("get", "/api/offers?provider=autodll", None), 400, "provider", "gpuplan offers"),
    (("get", "/api/compare?a=H100&b=H1OO", None), 400, "b", "gpuplan gpus"),
    (("get", "/api/buy?gpu=H100&market=cn", None), 400, "gpu", "rent it"),
    (("get", "/api/buy?gpu=RTX4090D&hours_per_month=800", None), 400, "hours_per_month", "0 to 744"),
    (("get", "/api/nowhere", None), 404, None, "docs/web.md"),
], ids=["enum", "positive", "extra-field", "type", "missing", "seq-len", "quant", "model", "model-path", "sort",
        "segment", "vendor", "provider", "compare", "export-rule", "hours", "route"])
def test_errors_name_the_field_and_the_fix(client: TestClient, request_: tuple[str, str, Any], status: int,
                                           field: str | None, fix_part: str) -> None:
    method, path, body = request_
    response = client.post(path, json=body) if method == "post" else client.get(path)
    err = _error(response, status, field)
    assert fix_part in err["fix"] or fix_part in err["error"]
    assert "--" not in err["error"] + err["fix"]  # API field names, not CLI options


def test_an_unexpected_error_is_a_500_without_a_traceback(monkeypatch: pytest.MonkeyPatch) -> None:
    def broken(*args: Any, **kwargs: Any) -> Any:
        raise RuntimeError("secret internals")

    monkeypatch.setattr(web_app, "model_rows", broken)
    with TestClient(create_app(), raise_server_exceptions=False) as c:
        err = _error(c.get("/api/models"), 500, None)
    assert "RuntimeError" in err["error"] and "secret" not in err["error"]


def test_non_finite_numbers_are_null(monkeypatch: pytest.MonkeyPatch, client: TestClient) -> None:
    class Never:
        def as_dict(self) -> dict[str, Any]:
            return {"break_even_hours_per_month": math.inf, "ratio": math.nan}

    monkeypatch.setattr(web_app, "ownership", lambda *a, **k: Never())
    assert _ok(client.get("/api/buy", params={"gpu": "RTX4090"})) == [
        {"break_even_hours_per_month": None, "ratio": None}]


# ---------------------------------------------------------------- the page and the package


def test_the_page_and_its_assets_are_served_without_outside_references(client: TestClient) -> None:
    page = client.get("/")
    assert page.status_code == 200 and "text/html" in page.headers["content-type"]
    assert "/static/app.js" in page.text and "/static/style.css" in page.text
    for asset in ("app.js", "style.css", "index.html"):
        text = _ok_text(client.get(f"/static/{asset}"))
        assert "https://" not in text and "http://" not in text.replace("http://www.w3.org/2000/svg", "")


def test_the_forms_offer_every_method_and_pick_the_librarys_precision_for_it(client: TestClient) -> None:
    import re

    page = _ok_text(client.get("/static/index.html"))
    methods = re.search(r'<select id="\{p\}-method" name="method">(.*?)</select>', page, re.S)
    assert methods and set(re.findall(r'value="([^"]+)"', methods[1])) == {m.value for m in domain.Method}
    # the estimate form's precision follows training_setup: pure bf16 for the methods that train new weights
    script = _ok_text(client.get("/static/app.js"))
    listed = re.search(r"const NEW_WEIGHTS = \[(.*?)\];", script)
    assert listed and set(re.findall(r'"([^"]+)"', listed[1])) == {m.value for m in domain.Method if m.new_weights}


def _ok_text(response: Any) -> str:
    assert response.status_code == 200
    return str(response.text)


def test_request_enums_are_the_library_choices(client: TestClient) -> None:
    # the request models use the library's enums themselves, and the other choices are the library's lists
    for enum in (domain.Task, domain.Method, domain.Engine, domain.Recompute, domain.Objective, domain.Market):
        assert getattr(web_models, enum.__name__) is enum
    pairs = [(web_models.Precision, domain.PRECISIONS), (web_models.Optimizer, domain.OPTIMIZERS),
             (web_models.Currency, CURRENCIES), (web_models.Tier, PRICINGS)]
    for literal, choices in pairs:
        assert set(get_args(literal)) == set(choices), literal
    # and the OpenAPI document lists the same values as before the enums (JSON values unchanged)
    schemas = client.get("/openapi.json").json()["components"]["schemas"]
    assert schemas["Task"]["enum"] == ["finetune", "pretrain", "infer", "serve"]
    assert schemas["Method"]["enum"] == ["full", "lora", "qlora", "dora", "adalora", "galore", "lisa", "adapter",
                                         "adapter-v2", "ptuning", "freeze"]
    assert schemas["Objective"]["enum"] == list(OBJECTIVES) == ["cost", "time", "value"]


def test_an_unknown_framework_is_a_400_naming_the_field(client: TestClient) -> None:
    body = {"model": "Qwen2.5-7B", "task": "finetune", "method": "lora", "gpu": "H100", "samples": "1k",
            "tokens_per_sample": 512, "framework": "llamafactorx"}
    r = client.post("/api/estimate", json=body)
    assert r.status_code == 400 and "framework" in r.text and "llama-factory" in r.text


def test_importing_the_web_package_does_no_io_and_needs_no_fastapi() -> None:
    code = ("import sys, gpuplan.web, gpuplan.web.app; from gpuplan.catalog.store import _load; "
            "print(_load.cache_info().currsize)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=REPO, timeout=60)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "0"  # no catalog read at import
    code = "import sys, gpuplan.web; print('fastapi' in sys.modules, 'uvicorn' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=REPO, timeout=60)
    assert out.stdout.strip() == "False False"


@pytest.mark.parametrize(("body", "field"), [
    ({"model": "Llama-3.1-8B", "task": "infer", "requests": "1k", "ttft_s": 0.001}, "ttft_s"),
    ({"model": "Llama-3.1-8B", "task": "infer", "requests": "1k", "rps": 1000}, "rps"),
    ({"model": "Llama-3.1-8B", "task": "finetune", "samples": "1k", "tokens_per_sample": 512, "engine": "sglang"},
     "engine"),
])
def test_plan_refuses_fields_that_do_not_apply(client: TestClient, body: dict[str, Any], field: str) -> None:
    _error(client.post("/api/plan", json=body), 400, field)


@pytest.mark.parametrize("command", sorted(web_models.QUERIES))
def test_the_api_docs_list_every_query_parameter_of_a_listing(command: str) -> None:
    # the endpoint table of docs/web.md: one row per endpoint, its query parameters in backquotes
    table = (REPO / "docs" / "web.md").read_text(encoding="utf-8")
    row = next(line for line in table.splitlines() if line.startswith(f"| `GET /api/{command}"))
    args = [option(name).arg for name in web_models.QUERIES[command]]
    missing = [arg for arg in args if f"`{arg}`" not in row]
    assert not missing, f"docs/web.md's row of GET /api/{command} lacks {missing}"


def test_a_method_the_framework_does_not_run_is_refused_by_estimate_and_plan(client: TestClient) -> None:
    # frameworks.csv methods: Unsloth runs full, LoRA, QLoRA and DoRA, not LLaMA-Adapter
    body = {**LESSON, "method": "adapter", "framework": "unsloth"}
    one = {k: v for k, v in body.items() if k != "market"}  # an estimate has no market
    est = _error(client.post("/api/estimate", json={**one, "gpu": "A100-80GB", "micro_batch": 1}), 400, "method")
    assert "(framework unsloth) does not run method adapter" in est["error"] and "full, lora, qlora, dora" in est["fix"]
    plan = _error(client.post("/api/plan", json=body), 400, "method")
    assert plan["error"] == est["error"]
