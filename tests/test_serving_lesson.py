"""The lesson's scenario end to end: a fine-tuned ChatGLM2-6B and a Qwen2.5-7B (a fine-tune keeps its base's
architecture, so the presets stand for them) served at 99.9 % to users in mainland China, in mainland regions,
with a guard model and the China compliance checklist; the export gives both servers' commands, their flags
checked against the pinned engine release."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import MARKET_SNAPSHOT

from gpuplan.catalog import load_catalog
from gpuplan.export.registry import flags
from gpuplan.plan.serving import ServeRequest, plan_serving

MODELS = ("ChatGLM2-6B", "Qwen2.5-7B")
GUARD = "Llama-Guard-3-1B"
REPO = Path(__file__).resolve().parent.parent


@pytest.fixture(scope="module")
def catalog():  # type: ignore[no-untyped-def]
    return load_catalog(market=MARKET_SNAPSHOT)  # a plan end to end on mainland prices: the frozen snapshot's


@pytest.fixture(scope="module", params=MODELS)
def plan(request, catalog):  # type: ignore[no-untyped-def]
    r = ServeRequest(2.0, availability=0.999, users="cn", market="cn", currency="CNY", guard=GUARD)
    return plan_serving(catalog, catalog.model(request.param), r)


def test_the_plan_exists_and_meets_the_availability_target(plan) -> None:  # type: ignore[no-untyped-def]
    assert plan.fleet is not None, plan.nothing_fits
    assert plan.availability >= 0.999  # main fleet × guard fleet, each planned to √0.999
    assert plan.cost_per_hour_peak > plan.fleet.cost_per_hour or plan.guard.placement == "colocated"


def test_every_replica_runs_on_a_production_tier_in_mainland_china(plan, catalog) -> None:  # type: ignore[no-untyped-def]
    groups = list(plan.fleet.groups) + list(plan.guard.fleet.groups if plan.guard.fleet else ())
    for g in groups:
        assert g.market == "cn", g.provider
        assert g.pricing != "marketplace" and catalog.provider(g.provider).production_grade, g.provider
        assert "AutoDL" not in g.provider


def test_the_plan_carries_the_guard_and_the_china_checklist(plan) -> None:  # type: ignore[no-untyped-def]
    assert plan.guard.name == GUARD and plan.guard.kind == "model"
    assert plan.guard.added_ttft_p99_s is not None and plan.guard.added_ttft_p99_s > 0
    c = plan.checklist
    assert c is not None and not c.abroad  # every group in a mainland region: no data-export item applies
    ids = {i.id for i in c.items}
    assert len(ids) >= 10 and all(i.source.startswith("http") for i in c.items)
    d = plan.as_dict()
    assert d["compliance"]["disclaimer"] and d["guard"]["model"] == GUARD


@pytest.mark.parametrize("model", MODELS)
def test_the_export_gives_both_servers_with_checked_flags(model: str) -> None:
    env = {**os.environ, "PYTHONPATH": str(REPO), "HF_HUB_OFFLINE": "1", "GPUPLAN_OFFLINE": "1"}
    r = subprocess.run([sys.executable, "-m", "gpuplan", "plan", "serve", model, "--rps", "2", "--availability",
                        "99.9", "--users", "cn", "--market", "cn", "--guard", GUARD, "--export", "vllm", "--json"],
                       capture_output=True, text=True, timeout=300, env=env)
    assert r.returncode == 0, r.stderr
    d = json.loads(r.stdout)
    main_argvs = d["export"]["document"]  # one server command per group of the main fleet
    guard_argv = d["export"]["guard"]["argv"]
    assert main_argvs and all(a[:2] == ["vllm", "serve"] for a in main_argvs)
    assert guard_argv[:3] == ["vllm", "serve", "meta-llama/Llama-Guard-3-1B"]
    known = flags("vllm")["options"]
    for argv in (*main_argvs, guard_argv):
        assert all(a in known for a in argv if a.startswith("--")), argv  # what check_options accepted
    assert d["export"]["guard"]["text"] in d["export"]["text"]  # the written export holds the guard's command too
    # ChatGLM's tokenizer and modelling code live in its repository (config.json auto_map): vLLM refuses to load
    # it without --trust-remote-code; a model without custom code is not given the flag
    assert all(("--trust-remote-code" in a) == (model == "ChatGLM2-6B") for a in main_argvs), main_argvs
    assert "--trust-remote-code" not in guard_argv
