"""The content-safety guard of a serving plan: its load from the checks, the TTFT it takes, co-location's memory
and time split, MIG slices, moderation prices, the JSON/API shape and the refusals."""

from __future__ import annotations

import dataclasses
import json
import subprocess
import sys
from typing import Any

import pytest
from conftest import MARKET_SNAPSHOT
from fastapi.testclient import TestClient

from gpuplan.catalog import load_catalog
from gpuplan.errors import InputError
from gpuplan.estimate.calibration import fitted
from gpuplan.estimate.infer_speed import max_batch
from gpuplan.estimate.job import inference_setup
from gpuplan.estimate.memory import weights_bytes
from gpuplan.estimate.params import count_params
from gpuplan.estimate.quant import weight_format
from gpuplan.plan import guard
from gpuplan.plan import serving as sv
from gpuplan.plan.serving import Bucket, ReplicaConfig, ServeRequest, Targets, plan_serving
from gpuplan.types import Job
from gpuplan.units import MiB
from gpuplan.web.app import create_app

TTFT = Targets(ttft_p99_s=2.0)


@pytest.fixture(scope="module")
def catalog():  # type: ignore[no-untyped-def]
    return load_catalog(market=MARKET_SNAPSHOT)  # plans whose pick depends on prices: the frozen snapshot's


@pytest.fixture(scope="module")
def plans(catalog) -> dict[str, Any]:  # type: ignore[no-untyped-def]
    m = catalog.model("Qwen2.5-7B")
    out = {"none": plan_serving(catalog, m, ServeRequest(5.0, targets=TTFT))}
    for mode in ("serial", "parallel"):
        out[mode] = plan_serving(catalog, m, ServeRequest(5.0, targets=TTFT, guard="Llama-Guard-3-1B", guard_mode=mode))
    return out


# ---------------------------------------------------------------- the guard's load


def test_every_preset_is_a_model_with_a_source() -> None:
    cat = load_catalog()
    for p in guard.presets().values():
        assert cat.model(p.name).name == p.name and p.source.startswith("https://") and p.as_of
        assert cat.model(p.base_model)  # the base the card names is a preset too


def test_the_checks_become_buckets_of_prefill_work() -> None:
    # Llama Guard 3 checks the prompt and the whole conversation, each with its 200-token template and a
    # 5-token verdict: a 1000 + 300 request brings a 1200-token and a 1500-token check, half the guard's traffic each
    p = guard.presets()["Llama-Guard-3-1B"]
    assert p.buckets((Bucket(1000, 300),)) == (Bucket(1200, 5, 0.5), Bucket(1500, 5, 0.5))
    # ShieldGemma's verdict is the first token's Yes/No logits: one step
    s = guard.presets()["ShieldGemma-2B"]
    assert s.buckets((Bucket(400, 100, 0.25), Bucket(2000, 500, 0.75)))[3] == Bucket(2690, 1, 0.375)


def test_guard_load_is_the_request_rate_times_the_prefill_tokens() -> None:
    # 5 requests/s of 1000 + 300 tokens: 5 input checks of 1200 tokens and 5 output checks of 1500 tokens per
    # second, 13,500 prefill tokens/s for the guard
    r = ServeRequest(5.0, targets=TTFT, guard="Llama-Guard-3-1B")
    gr = guard.guard_request(r, guard.presets()["Llama-Guard-3-1B"])
    assert gr.mean_rps == pytest.approx(10.0)
    assert sum(gr.mean_rps * b.share * b.prompt_len for b in gr.buckets) == pytest.approx(13_500.0)
    assert gr.targets.ttft_p99_s == pytest.approx(0.5)  # serial: a quarter of the 2 s target
    parallel = guard.guard_request(dataclasses.replace(r, guard_mode="parallel"), guard.presets()["Llama-Guard-3-1B"])
    assert parallel.targets.ttft_p99_s == pytest.approx(2.0)


# ---------------------------------------------------------------- the Qwen3Guard and Llama Guard 4 presets

# Parameter counts derived by hand from each preset's shapes (the transformers numel in tests/data/param_counts.csv
# agrees); a guard runs at its native bf16, 2 bytes a weight, whatever --quant the main model gets.
NEW_GUARDS = [
    # Qwen3-0.6B shape, tied embedding: 151936 x 1024 = 155,582,464, plus 28 layers of 15,730,944 (q 1024x2048,
    # k and v 1024x1024 each, o 2048x1024, q/k norms 2x128: 6,291,712; MLP 3 x 1024 x 3072 = 9,437,184; two norms
    # 2048) = 440,466,432, plus the final norm 1024
    ("Qwen3Guard-Gen-0.6B", 596_049_920),
    # Qwen3-4B shape, tied: 151936 x 2560 = 388,956,160, plus 36 x 100,930,816 (attention 26,214,656; MLP 3 x 2560 x
    # 9728 = 74,711,040; norms 5120) = 3,633,509,376, plus 2560
    ("Qwen3Guard-Gen-4B", 4_022_468_096),
    # Qwen3-8B shape, untied: 2 x 151936 x 4096 = 1,244,659,712, plus 36 x 192,946,432 (attention 41,943,296; MLP
    # 3 x 4096 x 12288 = 150,994,944; norms 8192) = 6,946,071,552, plus 4096
    ("Qwen3Guard-Gen-8B", 8_190_735_360),
    # Llama 4 Scout's text stack with only the shared expert left (dense, 8192 wide), untied:
    # 2 x 202048 x 5120 = 2,068,971,520, plus 48 x 188,753,920 (q and o 5120x5120 each, k and v 5120x1024 each:
    # 62,914,560; MLP 3 x 5120 x 8192 = 125,829,120; norms 10,240) = 9,060,188,160, plus 5120
    ("Llama-Guard-4-12B", 11_129_164_800),
]


@pytest.mark.parametrize(("name", "n_params"), NEW_GUARDS, ids=[n for n, _ in NEW_GUARDS])
def test_the_new_guards_are_planned_end_to_end_at_their_weights(catalog, name: str, n_params: int) -> None:  # type: ignore[no-untyped-def]
    r = ServeRequest(5.0, targets=TTFT, guard=name)
    plan = plan_serving(catalog, catalog.model("Qwen2.5-7B"), r)
    g = plan.guard
    assert plan.fleet is not None and g is not None and g.name == name and g.kind == "model"
    assert g.placement in guard.PLACEMENTS and plan.cost_per_hour_peak >= plan.fleet.cost_per_hour
    gm = catalog.model(name)
    assert count_params(gm).total == n_params
    # planned at bf16: the guard's request drops the main model's quantization
    assert sv._basics(gm, guard.guard_request(r, guard.presets()[name]))[1] == "bf16"
    if g.fleet is not None:
        assert {grp.config.quant for grp in g.fleet.groups} == {"bf16"}
    # one GPU holds the guard's whole bf16 weights: 2 bytes x the count above
    assert weights_bytes(gm, weight_format("bf16")) == 2 * n_params
    if g.placement == "colocated":  # its share of the GPU holds them and its KV cache besides
        assert g.memory_bytes_per_gpu > 2 * n_params


def test_qwen3guard_checks_read_the_card_template_and_write_a_short_verdict() -> None:
    # a 1000 + 300 request: the prompt check reads 1000 + 300 template tokens, the response check the whole
    # conversation, 1300 + 300; each writes the 13-token response-form verdict
    p = guard.presets()["Qwen3Guard-Gen-4B"]
    assert p.kinds == ("input", "output") and p.base_model == "Qwen3-4B"
    assert p.buckets((Bucket(1000, 300),)) == (Bucket(1300, 13, 0.5), Bucket(1600, 13, 0.5))


def test_llama_guard_4_is_sized_as_its_dense_text_model(catalog) -> None:  # type: ignore[no-untyped-def]
    spec = catalog.model("Llama-Guard-4-12B")
    # pruned from Llama 4 Scout (16 routed experts + 1 shared per layer): no routed expert is left
    assert not spec.is_moe and spec.ffn_hidden == 8192 and spec.n_layers == 48
    assert count_params(spec).total < count_params(catalog.model("Llama-4-Scout-17B-16E")).total / 9
    assert any("vision tower not counted" in n for n in spec.notes)


def test_a_misspelt_new_guard_is_refused_naming_the_field() -> None:
    with pytest.raises(InputError) as e:
        ServeRequest(1.0, guard="Qwen3Guard-Gen-4")
    assert e.value.field == "--guard" and "'Qwen3Guard-Gen-4B'" in str(e.value)
    assert "Llama-Guard-4-12B" in e.value.fix and "Qwen3Guard-Gen-0.6B" in e.value.fix


def test_the_cli_plans_a_qwen3guard() -> None:
    r = subprocess.run([sys.executable, "-m", "gpuplan", "plan", "serve", "Qwen2.5-0.5B", "--rps", "1", "--json",
                        "--guard", "Qwen3Guard-Gen-4B"], capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    g = json.loads(r.stdout)["guard"]
    assert g["model"] == "Qwen3Guard-Gen-4B" and g["placement"] in guard.PLACEMENTS


# ---------------------------------------------------------------- latency inside the TTFT budget


def test_serial_guard_takes_its_verdict_from_the_main_ttft_target(plans: dict[str, Any]) -> None:
    g = plans["serial"].guard
    assert g.verdict_p99_s > 0
    assert g.main_ttft_p99_s == pytest.approx(2.0 - g.verdict_p99_s)
    assert g.added_ttft_p99_s == pytest.approx(g.verdict_p99_s)
    # the main replicas meet the smaller target: their p99 TTFT at the load they are given leaves room for the verdict
    for grp in plans["serial"].fleet.groups:
        assert max(grp.config.ttft_p99_s) + g.verdict_p99_s <= 2.0 + 1e-9


def test_a_serial_guard_costs_main_capacity_a_parallel_one_does_not(plans: dict[str, Any]) -> None:
    none, serial, parallel = plans["none"], plans["serial"], plans["parallel"]
    assert parallel.guard.main_ttft_p99_s == pytest.approx(2.0)
    assert serial.cost_per_hour_peak > none.cost_per_hour_peak  # the guard's own cost at least
    assert serial.fleet.cost_per_hour >= none.fleet.cost_per_hour - 1e-9  # the main fleet never gets cheaper


def test_a_tight_ttft_that_fits_alone_needs_more_capacity_with_a_serial_guard(catalog) -> None:  # type: ignore[no-untyped-def]
    # 4000-token prompts at a 0.8 s p99 TTFT on H100s: the prompt queue bounds a replica's rate, so the 0.2 s the
    # serial guard's verdict takes (a quarter of the target, planned for it) leaves each replica serving less
    m = catalog.model("Qwen2.5-7B")
    r = ServeRequest(5.0, buckets=(Bucket(4000, 100),), targets=Targets(ttft_p99_s=0.8), gpus=("H100",))
    alone = plan_serving(catalog, m, r)
    guarded = plan_serving(catalog, m, dataclasses.replace(r, guard="Llama-Guard-3-8B"))
    assert alone.fleet is not None and guarded.fleet is not None
    before = {c.describe(): c.capacity_per_s[0] for c in alone.configs}
    after = {c.describe(): c.capacity_per_s[0] for c in guarded.configs}
    same = "1× H100 TP1 bf16"
    assert after[same] < before[same]
    assert guarded.fleet.cost_per_hour > alone.fleet.cost_per_hour  # more replicas of the main model


# ---------------------------------------------------------------- co-location and MIG


def test_colocation_leaves_the_main_model_less_kv_cache(catalog) -> None:  # type: ignore[no-untyped-def]
    cal = fitted()
    gpu, m, gm = catalog.gpus["L40S"], catalog.model("Qwen2.5-7B"), catalog.model("Llama-Guard-3-1B")
    gr = guard.guard_request(ServeRequest(2.0, guard="Llama-Guard-3-1B"), guard.presets()["Llama-Guard-3-1B"])
    need = guard.guard_bytes(gm, gpu, gr, cal)
    # at least the guard's 1.50B bf16 weights: 2.997 GB
    assert need > 1_498_482_688 * 2
    smaller = dataclasses.replace(gpu, memory_visible_mib=(gpu.memory_bytes - need) / MiB)
    s = inference_setup(Job(task="serve", prompt_len=1000, output_len=300), 1, "vllm", "bf16")
    assert max_batch(m, smaller, dataclasses.replace(s, max_num_seqs=100_000), cal) < \
        max_batch(m, gpu, dataclasses.replace(s, max_num_seqs=100_000), cal)


def test_colocated_capacity_shares_the_gpu_time() -> None:
    # a replica serving 10 req/s alone, whose guard takes 1/40 s (input) and 1/20 s (output) per request:
    # 1 / (1/10 + 1/40 + 1/20) = 1 / 0.175 = 5.714 req/s
    main = ReplicaConfig("L40S", 1, 1, "bf16", "vllm", (10.0,), (0.3,), 64)
    g = ReplicaConfig("L40S", 1, 1, "bf16", "vllm", (40.0, 20.0), (0.9, 0.9), 8)
    assert guard.share_time(main, g, 2).capacity_per_s[0] == pytest.approx(1 / 0.175)
    assert guard.share_time(main, None, 2).capacity_per_s == (0.0,)


def test_a_mig_slice_is_its_share_of_the_gpu(catalog) -> None:  # type: ignore[no-untyped-def]
    h100 = catalog.gpus["H100"]
    p = next(x for x in guard.mig_profiles() if x.gpu == "H100" and x.profile == "1g.10gb")
    s = guard.mig_gpu(h100, p)
    assert s.memory_bytes == pytest.approx(h100.memory_bytes / 8)
    assert s.memory_bandwidth_bytes_per_s == pytest.approx(h100.memory_bandwidth_bytes_per_s / 8)
    assert s.bf16_flops_per_s == pytest.approx(h100.bf16_flops_per_s / 7)
    assert p.instances_per_gpu == 7
    assert all(catalog.gpus[x.gpu] for x in guard.mig_profiles())  # every profile's GPU is in gpus.csv


def test_every_placement_is_priced_and_the_cheapest_is_chosen(plans: dict[str, Any]) -> None:
    g = plans["serial"].guard
    assert {o.placement for o in g.options} == set(guard.PLACEMENTS)
    priced = [o for o in g.options if o.cost_per_hour_peak is not None]
    assert min(o.cost_per_hour_peak for o in priced) == pytest.approx(plans["serial"].cost_per_hour_peak)
    assert g.placement in g.reason


def test_an_own_guard_fleet_halves_the_availability_budget(plans: dict[str, Any]) -> None:
    p = plans["serial"]
    if p.guard.placement == "colocated":
        pytest.fail("this scenario's cheapest guard is expected on its own fleet")
    # main and guard are both needed: each is planned to √0.999 and the product meets 0.999
    assert p.availability == pytest.approx(p.fleet.availability * p.guard.availability)
    assert p.availability >= 0.999


# ---------------------------------------------------------------- moderation services


def test_api_adds_the_documented_price_times_the_rate(catalog) -> None:  # type: ignore[no-untyped-def]
    # Azure AI Content Safety, $0.38 per 1000 records of up to 1000 characters: a 1000-token prompt (4000
    # characters) is 4 records, a 300-token answer (1200 characters) 2: 6 × $0.00038 per request; at 2 req/s
    # 2 × 3600 × 0.00228 = $16.416 an hour
    m = catalog.model("Qwen2.5-0.5B")
    p = plan_serving(catalog, m, ServeRequest(2.0, guard="api:azure-content-safety"))
    assert p.guard.cost_per_hour_peak == pytest.approx(16.416)
    assert p.cost_per_hour_peak == pytest.approx(p.fleet.cost_per_hour + 16.416)
    assert p.cost_per_hour_average == pytest.approx(p.average.cost_per_hour + 16.416)
    alone = plan_serving(catalog, m, ServeRequest(2.0))
    # the 4 input records cost per million input tokens: 4 × 0.00038 / 1000 tokens × 1e6 = $1.52 more
    assert p.cost_per_m_input == pytest.approx(alone.cost_per_m_input + 1.52)
    assert p.cost_per_m_output == pytest.approx(alone.cost_per_m_output + 2 * 0.00038 / 300 * 1e6)


def test_openai_moderation_is_free(catalog) -> None:  # type: ignore[no-untyped-def]
    p = plan_serving(catalog, catalog.model("Qwen2.5-0.5B"), ServeRequest(2.0, guard="api:openai-moderation"))
    assert p.guard.cost_per_hour_peak == 0.0 and p.cost_per_hour_peak == p.fleet.cost_per_hour


def test_users_in_mainland_china_get_a_mainland_service(catalog) -> None:  # type: ignore[no-untyped-def]
    r = ServeRequest(2.0, guard="api", users="cn")
    s, why = guard.pick_service(r)
    assert s.mainland and "mainland" in why
    assert not guard.pick_service(ServeRequest(2.0, guard="api"))[0].mainland  # elsewhere the free one
    # an abroad service for mainland users: the plan says the data leaves the country
    p = plan_serving(catalog, catalog.model("Qwen2.5-0.5B"),
                     ServeRequest(2.0, guard="api:openai-moderation", users="cn"))
    assert any("outside mainland China" in n for n in p.notes)
    assert p.checklist is not None and p.checklist.abroad


# ---------------------------------------------------------------- JSON, API and errors


def test_json_carries_the_guard(plans: dict[str, Any]) -> None:
    d = json.loads(json.dumps(plans["serial"].as_dict()))
    g = d["guard"]
    assert {"model", "placement", "replicas", "gpus", "cost_per_hour_peak", "cost_per_hour_average",
            "added_latency_p50_s", "added_latency_p99_s", "options", "assumptions", "mode"} <= set(g)
    assert g["model"] == "Llama-Guard-3-1B" and g["mode"] == "serial"
    assert all(a["source"] for a in g["assumptions"])
    assert d["request"]["guard"] == "Llama-Guard-3-1B"
    assert json.loads(json.dumps(plans["none"].as_dict()))["guard"] is None


def test_api_answers_the_guard_and_documents_its_names() -> None:
    client = TestClient(create_app())
    r = client.post("/api/serve", json={"model": "Qwen2.5-0.5B", "rps": 1, "guard": "api:azure-content-safety"})
    assert r.status_code == 200, r.text
    assert r.json()["guard"]["service"] == "azure-content-safety"
    schema = client.get("/openapi.json").json()["components"]["schemas"]["ServeRequestBody"]["properties"]
    assert set(schema["guard"]["enum"]) == set(guard.names())
    bad = client.post("/api/serve", json={"model": "Qwen2.5-0.5B", "guard": "llama-gaurd-3-1b"})
    assert bad.status_code == 400 and bad.json()["field"] == "guard"


def test_an_unknown_guard_names_the_option_the_close_matches_and_the_list() -> None:
    with pytest.raises(InputError) as e:
        ServeRequest(1.0, guard="Llama-Gaurd-3-1B")
    assert e.value.field == "--guard" and "'Llama-Guard-3-1B'" in str(e.value)
    assert "ShieldGemma-9B" in e.value.fix and "api" in e.value.fix
    with pytest.raises(InputError) as e:
        ServeRequest(1.0, guard="api", guard_mode="after")
    assert e.value.field == "--guard-mode"


def test_the_cli_refuses_an_unknown_guard() -> None:
    r = subprocess.run([sys.executable, "-m", "gpuplan", "plan", "serve", "Qwen2.5-0.5B", "--guard", "shieldgema"],
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 2 and "error: --guard: " in r.stderr and "Traceback" not in r.stderr


def test_a_guard_that_fits_nowhere_is_refused(catalog) -> None:  # type: ignore[no-untyped-def]
    # on T4s only with a 0.1 s p99 TTFT: the 0.5B main model reads a 200-token prompt in time, but
    # ShieldGemma-9B (18.5 GB of bf16 weights) holds on no single T4 beside it, a T4 has no MIG, and across
    # T4s its prefill is far slower than the 25 ms a serial guard gets
    r = ServeRequest(1.0, buckets=(Bucket(200, 50),), targets=Targets(ttft_p99_s=0.1), gpus=("T4",))
    m = catalog.model("Qwen2.5-0.5B")
    assert plan_serving(catalog, m, r).fleet is not None
    p = plan_serving(catalog, m, dataclasses.replace(r, guard="ShieldGemma-9B"))
    assert p.fleet is None and "fits nowhere" in p.nothing_fits and "--guard" in p.nothing_fits
    assert all(part in p.nothing_fits for part in ("colocated:", "separate:", "mig:"))


def test_a_guard_joins_a_daily_profile_and_multi_lora(catalog) -> None:  # type: ignore[no-untyped-def]
    """The guard checks every request of the day (its load follows the profile, times its checks) and serves no
    LoRA adapter of the main model; the plan carries the guard, the day's cost and the adapters together."""
    day = (2.0,) * 12 + (10.0,) * 12
    r = ServeRequest(6.0, 10.0, targets=TTFT, profile=day, adapters=4, guard="Llama-Guard-3-1B")
    p = guard.presets()["Llama-Guard-3-1B"]
    g = guard.guard_request(r, p)
    k = len(p.kinds)
    assert g.profile == tuple(x * k for x in day) and g.mean_rps == 6.0 * k and g.adapters == 0
    plan = plan_serving(catalog, catalog.model("Qwen2.5-7B"), r)
    assert plan.guard is not None and plan.day is not None and plan.fleet is not None
    assert all(grp.config.lora_adapters == 4 for grp in plan.fleet.groups)
