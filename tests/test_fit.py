"""The fitting machinery (bench/fit.py): what a fit may and may not do with a parameter, and the held-out
bands."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "bench"))

from calib import Case
from fit import INITIAL, PRIORS, Group, fit_group, groups, identified, start_values


@pytest.fixture(scope="module")
def cases(calibration_cases: tuple[list[Case], list[object]]) -> list[Case]:
    return calibration_cases[0]


def _training_time_group():  # type: ignore[no-untyped-def]
    return next(g for g in groups() if g.name == "training time")


def _start():  # type: ignore[no-untyped-def]
    """Where fit_all starts: the neutral values plus the stated priors."""
    return start_values().with_values(**{k: v for k, (v, _) in PRIORS.items()})


def _not_torchtitan(c: Case) -> bool:
    """Rows of any stack but torchtitan's efficiency class (torchtitan itself, llm-foundry)."""
    setup = c.meta.get("setup")
    return getattr(setup, "framework", "") != "torchtitan"


def test_a_parameter_no_row_moves_is_not_identified(cases: list[Case]) -> None:
    # without the torchtitan-class runs, nothing depends on u_torchtitan; Megatron rows depend on u_megatron
    group = _training_time_group()
    rows = [c for c in cases if c.cls in group.classes and _not_torchtitan(c)]
    free = identified(group, rows, _start())
    assert "u_torchtitan" not in free and "u_megatron" in free


def _quantized_base(c: Case) -> bool:
    setup = c.meta.get("setup")
    return bool(getattr(setup, "base_quant", None)) or getattr(setup, "method", "") == "qlora"


def test_the_dequantization_efficiency_is_fitted_on_the_quantized_base_runs_only(cases: list[Case]) -> None:
    # the refit sets eta_dequant (train_time.dequantize_seconds) from the QLoRA and int4-base time rows, inside a
    # streaming kernel's physical range; no other row depends on it
    group = _training_time_group()
    low, high = group.bounds[group.params.index("eta_dequant")]
    assert 0 < low < INITIAL["eta_dequant"] < high <= 0.95
    rows = [c for c in cases if c.cls in group.classes]
    assert "eta_dequant" in identified(group, rows, _start())
    assert "eta_dequant" not in identified(group, [c for c in rows if not _quantized_base(c)], _start())


@pytest.mark.benchmark  # a refit of the training-time group (about 10 s of CPU): scripts/test.sh runs it apart
def test_an_unidentified_parameter_keeps_its_start_value(cases: list[Case]) -> None:
    # before this rule, a refit without the torchtitan source drove u_torchtitan to its lower bound on no
    # evidence, and its held-out predictions were off by 6-11x
    group = _training_time_group()
    rows = [c for c in cases if _not_torchtitan(c)]
    cal = fit_group(group, rows, _start())
    assert cal.values["u_torchtitan"] == INITIAL["u_torchtitan"]
    assert cal.values["u_megatron"] != INITIAL["u_megatron"]  # the others are still fitted


def _slow_decode_row() -> Case:
    # a decode row measured at twice the time an efficiency of 0.9 predicts (predicted 0.9 / eta seconds,
    # measured 2 s): on its own it fits eta = 0.45
    return Case(id="t-1", cls="decode_batch1", measured=2.0, source="test", describe="synthetic decode row",
                predict=lambda cal: 0.9 / cal.values["eta_memory_x"])


@pytest.mark.parametrize(("pooled", "expected"), [
    (None, 0.45),
    # pooled towards 0.9: with u = ln(eta / 0.45) the fit minimises rho(100 u^2) + rho(100 ((u - ln 2) / ln 4)^2),
    # rho(z) = 2(sqrt(1 + z) - 1) (soft-L1 at f_scale 0.1); the prior's pull in its linear part, 10 / ln 4 = 7.2,
    # balances the row's 100 u / sqrt(1 + 100 u^2) at u = 0.099: eta = 0.45 e^0.099 = 0.497
    ({"eta_memory_x": 0.9}, 0.497),
])
def test_a_pooled_efficiency_leaves_the_pooled_value_as_far_as_its_rows_demand(
        pooled: dict[str, float] | None, expected: float) -> None:
    from gpuplan.estimate.calibration import Calibration

    group = Group("test", ["eta_memory_x"], [(0.1, 0.95)], ("decode_batch1",), pooled=pooled)
    cal = fit_group(group, [_slow_decode_row()], Calibration(values={"eta_memory_x": 0.8}))
    assert cal.values["eta_memory_x"] == pytest.approx(expected, rel=0.01)


def test_held_out_bands_cover_each_class_and_are_no_narrower_in_sum() -> None:
    from gpuplan.estimate.calibration import fitted

    committed = fitted()
    assert set(committed.held_out_bands) == set(committed.bands)
    for cls, (low, high, n) in committed.held_out_bands.items():
        in_low, in_high, in_n = committed.bands[cls]
        # a refit may fail to predict a few rows another fit predicts (a model that no longer fits its GPU)
        assert abs(n - in_n) <= 0.01 * in_n and low <= high
        # a fit that never saw a source cannot be tighter on it than one that did, on the whole
        assert high / low >= 0.9 * in_high / in_low, cls


@pytest.mark.parametrize(("rate", "expected"), [(True, 2.0), (False, 0.5)])
def test_bands_face_the_way_the_estimate_is_shown(rate: bool, expected: float) -> None:
    # a rate measured at half the predicted tokens/s is a job that takes twice the estimated time; a time
    # measured at half the prediction is half the time
    from fit import _ratio

    case = Case(id="x", cls="inference_throughput", measured=50.0, predict=lambda cal: 100.0, source="test",
                describe="", rate=rate)
    assert _ratio(case, start_values()) == pytest.approx(expected)


def test_every_speed_row_says_whether_it_measured_a_rate(cases: list[Case]) -> None:
    by_measure: dict[str, set[bool]] = {}
    for c in cases:
        if c.cls.endswith("_memory"):
            assert not c.rate
        elif "measure" in c.meta:
            by_measure.setdefault(c.meta["measure"], set()).add(c.rate)
    assert by_measure.get("tokens_per_s") == {True} and by_measure.get("tokens_per_s_per_gpu") == {True}


def test_the_host_time_per_sequence_is_fitted_on_the_rows_whose_steps_wait_on_the_host(cases: list[Case]) -> None:
    # TensorRT-LLM's perf overview v1.0 (PyTorch backend): Qwen3-30B-A3B NVFP4 on a DGX B200 at 128/128 tokens
    # makes 39,827 tokens/s, 25 µs per sequence and step where its GPU step takes about 5; the fit finds a value of
    # that size (tens of µs, not the bound's 100: 38 µs once attention-DP runs all-gather instead of all-reducing
    # twice), and a fold without any PyTorch-backend row holds none (its steps pay no host time)
    from fit import HOST_SEQUENCE_KEY, fit_host_per_sequence, fit_rows

    from gpuplan.estimate.calibration import Calibration, fitted

    start = Calibration({k: v for k, v in fitted().values.items() if k != HOST_SEQUENCE_KEY})
    rows = [c for c in fit_rows(cases) if c.group == "TensorRT-LLM perf-overview v1.0"]
    assert 15e-6 < fit_host_per_sequence(rows, start).values[HOST_SEQUENCE_KEY] < 50e-6
    older = [c for c in fit_rows(cases) if c.group == "TensorRT-LLM perf-overview v0.17"]
    assert HOST_SEQUENCE_KEY not in fit_host_per_sequence(older, start).values


def test_the_expert_launch_cost_is_fitted_on_the_moe_runs_only() -> None:
    # the per-expert GEMM launch cost moves only mixture-of-experts steps: its group fits it on their class, within
    # 0-50 µs, and no other group frees it
    group = next(g for g in groups() if g.name == "moe training time")
    assert group.params == ["expert_gemm_launch_s"] and group.classes == ("pretrain_throughput_moe",)
    assert group.bounds == [(0.0, 5e-5)]
    assert not any("expert_gemm_launch_s" in g.params for g in groups() if g.name != group.name)


def _light_ttft_row(n: int, gpu: object, prefill_s: float, measured_s: float, setup: object = None) -> Case:
    """A TTFT row of one vLLM client with a 200-token prompt (of the current release unless ``setup`` says
    otherwise): its prediction is the prefill plus the fixed cost per request that
    ``gpuplan.estimate.load.request_seconds`` looks up for its GPU and release."""
    from gpuplan.estimate.load import request_seconds
    from gpuplan.types import InferSetup

    setup = setup or InferSetup(engine="vllm", prompt_len=200, output_len=200)
    return Case(id=f"t-{n}", cls="ttft", measured=measured_s, source="test", describe="synthetic TTFT row",
                predict=lambda cal: prefill_s + request_seconds(setup, gpu, cal),  # type: ignore[arg-type]
                meta={"kind": "load", "clients": 1, "engine": "vllm", "gpu": gpu, "setup": setup})


def test_a_backend_with_its_own_worker_does_not_set_the_fixed_request_cost_of_the_cuda_servers(catalog) -> None:  # type: ignore[no-untyped-def]
    from fit import fit_request_overhead

    from gpuplan.estimate.calibration import Calibration

    # three H100 rows 20 ms above a 10 ms prefill, three 910B rows (vllm-ascend) 300 ms above it: pooled, the
    # 910B rows would pull the H100 servers' cost up; apart, each backend keeps what its own rows show, the
    # 910B's capped at the fit's 100 ms bound
    h100, ascend = catalog.gpu("H100"), catalog.gpu("Ascend-910B")
    rows = [_light_ttft_row(i, h100, 0.010, 0.030) for i in range(3)]
    rows += [_light_ttft_row(3 + i, ascend, 0.010, 0.310) for i in range(3)]
    cal = fit_request_overhead(rows, Calibration(values={}))
    assert cal.values["request_overhead_s_vllm"] == pytest.approx(0.020, rel=0.02)
    assert cal.values["request_overhead_s_vllm_ascend"] == pytest.approx(0.100, rel=0.02)



def test_vllm_v0_and_v1_servers_each_set_their_own_fixed_request_cost(catalog) -> None:  # type: ignore[no-untyped-def]
    from fit import fit_request_overhead

    from gpuplan.estimate.calibration import Calibration
    from gpuplan.types import InferSetup

    # three V1 rows 20 ms above a 10 ms prefill and three V0 rows (vLLM 0.6.2) 5 ms above it: each generation keeps
    # what its own rows show, and V1's is not pulled towards V0's
    h100 = catalog.gpu("H100")
    rows = [_light_ttft_row(i, h100, 0.010, 0.030) for i in range(3)]
    old = InferSetup(engine="vllm", prompt_len=200, output_len=200, engine_version="0.6.2")
    rows += [_light_ttft_row(3 + i, h100, 0.010, 0.015, old) for i in range(3)]
    cal = fit_request_overhead(rows, Calibration(values={}))
    assert cal.values["request_overhead_s_vllm"] == pytest.approx(0.020, rel=0.02)
    assert cal.values["request_overhead_s_vllm_v0"] == pytest.approx(0.005, rel=0.05)


def test_an_open_stream_counts_as_light_load_only_while_few_requests_are_in_the_server(catalog) -> None:  # type: ignore[no-untyped-def]
    from fit import light_ttft_row

    from gpuplan.estimate.calibration import fitted
    from gpuplan.types import InferSetup

    # Llama-3.1-8B on one H100, 200-token prompts and answers: a request spends about 1.4 s in the server (200
    # decode steps of ~7 ms), so one a second keeps fewer than two in it on average (Little's law) and thirty a
    # second about seventy
    m, g = catalog.model("Llama-3.1-8B"), catalog.gpu("H100")

    def row(rate: float, prompt: int = 200, output: int = 200) -> Case:
        setup = InferSetup(engine="vllm", prompt_len=prompt, output_len=output)
        return Case(id=f"r-{rate}", cls="ttft", measured=0.05, source="test", describe="synthetic rate row",
                    predict=lambda cal: 0.05,
                    meta={"kind": "load", "rate": rate, "clients": None, "engine": "vllm", "model": m, "gpu": g,
                          "setup": setup})

    cal = fitted()
    assert light_ttft_row(row(1.0), cal)
    assert not light_ttft_row(row(30.0), cal)
    # prompts of 1,000 tokens with 6-token answers, ten a second: under two requests in the server, yet the GPU
    # spends close to half its time on prompts (about 45 ms each), so a prompt waits for the one before it
    assert not light_ttft_row(row(10.0, 1000, 6), cal)
    assert not light_ttft_row(row(1.0, 4000), cal)  # a long prompt: the prefill, not the fixed cost, dominates


def _decode_row(n: int, catalog, batch: int, measured_s: float) -> Case:  # type: ignore[no-untyped-def]
    """A TPOT row of vLLM 0.11 serving Llama-3.1-8B on an H200 at ``batch`` running sequences."""
    from gpuplan.estimate.infer_speed import decode_step_seconds
    from gpuplan.types import InferSetup

    m, g = catalog.model("Llama-3.1-8B"), catalog.gpu("H200")
    setup = InferSetup(engine="vllm", engine_version="v0.11.0", prompt_len=200, output_len=200)
    return Case(id=f"d-{n}", cls="tpot", measured=measured_s, source="test", describe="synthetic decode row",
                predict=lambda cal: decode_step_seconds(m, g, setup, batch, 300, cal)[0],
                meta={"kind": "clients", "engine": "vllm", "gpu": g, "setup": setup})


def test_the_eager_step_cost_is_fitted_only_where_rows_run_above_the_largest_graph(catalog) -> None:  # type: ignore[no-untyped-def]
    from fit import fit_eager_overhead

    from gpuplan.estimate.calibration import fitted

    # Llama-3.1-8B has 32 layers: steps of 1,000 sequences (above vLLM 0.11's 512 graphs) measured at 96 ms are
    # 3 ms of host time per layer, above the GPU's step (~57 ms); the fit starts from transformers' stand-in (2 ms,
    # 64 ms a step: the host already binds). Steps of 400 sequences replay a graph, whatever the key. The GPU's step
    # is held at the vLLM efficiencies of the 2026-12-05 fit and the step overhead of the 2026-12-07 one, so that a
    # refit does not move the rows' premise
    start = fitted().with_values(layer_overhead_s_hf=2e-3, host_seq_s_vllm=0.0,  # no host time per sequence
                                 eta_kv_vllm=0.668, eta_compute_vllm=0.309, eta_memory_vllm=0.95,
                                 layer_overhead_s_vllm=5.3e-5)
    start = type(start)({k: v for k, v in start.values.items() if k != "layer_overhead_s_vllm_eager"})
    above = [_decode_row(i, catalog, 1000, 0.096) for i in range(3)]
    assert fit_eager_overhead(above, start).values["layer_overhead_s_vllm_eager"] == pytest.approx(3e-3, rel=0.05)
    graphed = [_decode_row(i, catalog, 400, 0.020) for i in range(3)]
    assert "layer_overhead_s_vllm_eager" not in fit_eager_overhead(graphed, start).values
