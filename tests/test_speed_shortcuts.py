"""The shortcuts that make plans fast give the same answers as the long way round.

The planner sizes training memory once per setup (it does not depend on the GPU), estimates time only for
setups that fit, and makes its estimates without their words (assumptions), which only a shown plan gets; parameter
counts are cached per architecture; FX rates are indexed; the longest context is read off the KV cache's line
instead of bisected. Each is checked here against the plain function it stands in for. Also: the cached
catalog is read-only, and errors pickle.
"""

from __future__ import annotations

import dataclasses
import math
import pickle
from collections import Counter

import pytest

from gpuplan.catalog import Catalog, load_catalog
from gpuplan.errors import (
    CatalogError,
    GpuplanError,
    InfeasibleError,
    InputError,
    ModelConfigError,
    OfflineError,
    UnknownNameError,
)
from gpuplan.estimate.calibration import fitted
from gpuplan.estimate.job import check_training, estimate_training, half_format, training_setup
from gpuplan.estimate.memory import kv_cache_bytes, max_context
from gpuplan.estimate.params import count_params
from gpuplan.estimate.train_time import GpuTerms, gpu_terms, training_links
from gpuplan.plan.candidates import Constraints
from gpuplan.plan.enumeration import (
    MICRO_BATCHES,
    PlanMemo,
    _Sized,
    best_training,
    described,
    training_layouts,
)
from gpuplan.types import Job, Parallelism, TrainSetup

JOBS = (
    ("Llama-2-7B", Job(task="finetune", method="lora", samples=10_000, tokens_per_sample=1024, seq_len=1024)),
    ("Llama-2-7B", Job(task="finetune", method="full", samples=10_000, tokens_per_sample=2048, seq_len=2048)),
    ("Qwen2.5-0.5B", Job(task="finetune", method="qlora", tokens=1e8, seq_len=4096, framework="torchtune")),
    ("Mixtral-8x7B", Job(task="pretrain", tokens=1e11, seq_len=4096)),
    ("ChatGLM2-6B", Job(task="finetune", method="ptuning", samples=1000, tokens_per_sample=512, seq_len=512)),
)
LAYOUTS = (Parallelism(), Parallelism(dp=8, zero=3), Parallelism(tp=8, dp=2, zero=1), Parallelism(tp=8, pp=2, dp=4))


@pytest.mark.parametrize(("name", "job"), JOBS, ids=[f"{n}-{j.task}-{j.method}" for n, j in JOBS])
def test_memory_sized_once_for_all_gpus_then_timed_is_estimate_training(catalog: Catalog, name: str,
                                                                         job: Job) -> None:
    m = catalog.model(name)
    job = job.for_model(m)
    cal = fitted()
    compared = Counter[bool]()
    for par in LAYOUTS:
        for mb, recompute in ((8, "none"), (1, "full")):
            shared: dict[TrainSetup, _Sized] = {}  # as in one plan: sized on the first GPU, reused on the others
            for gpu in catalog.gpus.values():
                try:
                    setup = training_setup(job, par, mb, recompute, gpu=gpu)
                    check_training(m, gpu, job, setup)
                    want = estimate_training(m, gpu, job, setup, cal, 0.1)
                except InfeasibleError:
                    continue
                size = shared.setdefault(setup, _Sized.of(m, gpu, job, setup, cal, 0.1))
                assert size.fits(gpu.memory_bytes) == want.fits
                assert size.shortfall_bytes(gpu.memory_bytes) == want.shortfall_bytes
                if want.fits:
                    lean = size.estimate(m, gpu, job, setup, cal, 0.1)  # made without its words ...
                    assert not lean.memory.assumptions and lean.time is not None and not lean.time.assumptions
                    assert (lean.memory.breakdown, lean.memory.floor, lean.memory.answers, lean.time.breakdown) == (
                        want.memory.breakdown, want.memory.floor, want.memory.answers, want.time.breakdown)
                    assert described(lean, cal).as_dict() == want.as_dict()  # ... which a shown plan gets back
                    # the planner compares layouts by this
                    parts = size.time(m, gpu, job, setup, cal)
                    assert parts is not None and parts.seconds == want.seconds
                compared[want.fits] += 1
    assert compared[True] and compared[False]  # both paths were exercised


@pytest.mark.parametrize(("name", "job"), JOBS, ids=[f"{n}-{j.task}-{j.method}" for n, j in JOBS])
def test_what_a_search_reads_of_the_gpu_once_serves_every_setup_it_times(catalog: Catalog, name: str,
                                                                         job: Job) -> None:
    """The training search reads a GPU's timing terms once per recomputation and its links once per GPU count,
    from the first setup it times: every other setup of the count, timed with those, gets the seconds it gets
    when its own are read (T4 and V100 train in FP16, the others in BF16: other setup fields)."""
    m, cal = catalog.model(name), fitted()
    job = job.for_model(m)
    memo = PlanMemo()
    timed = 0
    for gpu in (catalog.gpu("H100"), catalog.gpu("RTX4090"), catalog.gpu("T4"), catalog.gpu("V100")):
        half = half_format(gpu)
        for n in (1, 8, 64):
            link = None
            terms: dict[int, GpuTerms] = {}
            for par, rows in memo.grid(m, n, job, half):
                for j, row in enumerate(rows):
                    recompute = row.recompute
                    for mb in MICRO_BATCHES:
                        entry = memo.found(m, job, par, mb, recompute, gpu, half)
                        if isinstance(entry, InfeasibleError):
                            continue
                        s = entry.setup
                        link = link or training_links(gpu, s, cal)
                        size = _Sized.of(m, gpu, job, s, cal, None)
                        own = size.time(m, gpu, job, s, cal)
                        assert size.time(m, gpu, job, s, cal, math.inf, terms.setdefault(j, gpu_terms(gpu, s, cal)),
                                         link) == own
                        timed += 1
    assert timed >= 40  # 8 micro-batch and recomputation setups per layout, 1 to 6 layouts per count


@pytest.mark.parametrize(("field", "value"), [("attention_kernel", "flash3"), ("ep_dispatcher", "ring"),
                                               ("adam_step", "trainer"), ("recompute_modules", ("mlp", "attn"))])
def test_a_setup_checks_its_choices_behind_the_quick_path(field: str, value: object) -> None:
    """TrainSetup lets the usual choices through at a glance (a search makes hundreds); any other value still gets
    the full check ("trainer" is an adam_step of the stacks, not of a setup)."""
    TrainSetup(attention_kernel="cudnn", ep_dispatcher="deepep", adam_step="fused", recompute_modules=("mlp",))
    with pytest.raises(InputError, match=f"TrainSetup.{field}"):
        TrainSetup(**{field: value})  # type: ignore[arg-type]


def test_the_closest_miss_is_shown_with_its_whole_estimate(catalog: Catalog) -> None:
    """A configuration that does not fit is sized by memory alone while searching; the one reported as the
    closest carries the same estimate as estimate_training, time included."""
    m = catalog.model("Llama-2-70B")
    job = Job(task="finetune", method="full", samples=1000, tokens_per_sample=2048, seq_len=2048).for_model(m)
    gpu = catalog.gpu("RTX4090")
    best, near = best_training(m, gpu, job, 8, Constraints(), fitted(), Counter(), PlanMemo())
    assert best is None and near is not None and near.time is not None
    assert isinstance(near.setup, TrainSetup)
    want = estimate_training(m, gpu, job, near.setup, fitted())
    assert (near.needed_bytes, near.shortfall_bytes, near.seconds) == (want.needed_bytes, want.shortfall_bytes,
                                                                       want.seconds)
    assert described(near, fitted()).as_dict() == want.as_dict()
    assert near.setup.parallel in training_layouts(m, 8, job)


def test_parameter_counts_are_cached_and_exact(catalog: Catalog) -> None:
    m = catalog.model("Llama-2-7B")
    assert count_params(m) is count_params(m)
    assert count_params(m).total == 6_738_415_616  # transformers LlamaForCausalLM numel
    odd = dataclasses.replace(m, notes=["a list: not hashable"])  # type: ignore[arg-type]
    assert count_params(odd) == count_params(m)


def test_fx_conversion_picks_the_newest_rate_either_way(catalog: Catalog) -> None:
    usd_cny = sorted((r for r in catalog.fx_rates if (r.base, r.quote) == ("USD", "CNY")), key=lambda r: r.date)
    assert usd_cny, "the bundled FX table converts USD and CNY"
    assert catalog.convert(2.0, "USD", "CNY") == 2.0 * usd_cny[-1].rate
    assert catalog.convert(2.0, "CNY", "USD") == 2.0 / usd_cny[-1].rate
    assert catalog.convert(2.0, "USD", "CNY", usd_cny[0].date) == 2.0 * usd_cny[0].rate


# ---------------------------------------------------------------- the cached catalog is read-only


def test_a_caller_cannot_change_the_cached_catalog_for_the_next() -> None:
    cat = load_catalog()
    n_gpus, n_models = len(cat.gpus), len(cat.models)
    with pytest.raises(TypeError):
        del cat.gpus["H100"]  # type: ignore[attr-defined]
    with pytest.raises(TypeError):
        cat.gpus["H100"] = cat.gpus["A100"]  # type: ignore[index]
    with pytest.raises(TypeError):
        cat.gpu_keys["h100"] = "A100"  # type: ignore[index]
    with pytest.raises(AttributeError):
        cat.models.pop("Llama-2-7B")  # type: ignore[attr-defined]
    with pytest.raises(AttributeError):
        cat.offers.append(cat.offers[0])  # type: ignore[attr-defined]
    with pytest.raises(dataclasses.FrozenInstanceError):
        cat.gpus = {}  # type: ignore[misc]
    with pytest.raises(dataclasses.FrozenInstanceError):
        cat.gpus["H100"].tdp_w = 1  # type: ignore[misc]
    again = load_catalog()
    assert again is cat
    assert len(again.gpus) == n_gpus and len(again.models) == n_models and again.gpu("H100").name == "H100"


# ---------------------------------------------------------------- errors fit Python


ERRORS: tuple[tuple[GpuplanError, tuple[type[Exception], ...]], ...] = (
    (GpuplanError("something broke.", "try again."), ()),
    (InputError("--batch", "-1 is not a batch.", "give 1 or more."), (ValueError,)),
    (UnknownNameError("--gpu", "GPU", "h10", ["H100", "H200", "A100"], "gpuplan gpus"), (ValueError, LookupError)),
    (InfeasibleError("--tp", "TP 3 does not divide 32 heads.", "use 1, 2, 4 or 8."), (ValueError,)),
    (CatalogError("gpus.csv", 12, "tdp_w", "-5", "must be greater than 0.", "write the TDP."), (ValueError,)),
    (ModelConfigError("'x' is not valid JSON.", "pass a config.json."), (ValueError,)),
    (OfflineError("a Hub id needs the network.", "pass a local config.json."), ()),
)


@pytest.mark.parametrize(("err", "bases"), ERRORS, ids=[type(e).__name__ for e, _ in ERRORS])
def test_errors_pickle_and_subclass_the_matching_built_in(err: GpuplanError, bases: tuple[type, ...]) -> None:
    back = pickle.loads(pickle.dumps(err))
    assert type(back) is type(err)
    assert str(back) == str(err) and back.args == err.args
    assert vars(back) == vars(err)  # message, fix, field, suggestions, file:line ...
    assert all(isinstance(back, b) for b in bases)
    assert isinstance(back, ValueError) == (ValueError in bases)
    assert isinstance(back, LookupError) == (LookupError in bases)


def test_an_unknown_name_is_caught_as_a_lookup_error_with_its_suggestions(catalog: Catalog) -> None:
    with pytest.raises(LookupError) as info:
        catalog.gpu("h10")
    back = pickle.loads(pickle.dumps(info.value))
    assert isinstance(back, UnknownNameError)
    assert back.suggestions and back.suggestions == info.value.suggestions  # the did-you-mean list survives
    assert back.field == "--gpu" and "Did you mean" in str(back)


# ---------------------------------------------------------------- the longest context, read off the line


def _bisected_context(m, budget, batch, kv_dtype, tp, pp, latent):  # type: ignore[no-untyped-def]
    """The long way: the largest context in 0..2^26 whose cache fits, by bisection over kv_cache_bytes."""
    lo, hi = 0, 1 << 26
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if kv_cache_bytes(m, batch, mid, kv_dtype, tp, pp, latent) <= budget:
            lo = mid
        else:
            hi = mid - 1
    return lo


@pytest.mark.parametrize("name", ["Llama-3.1-8B", "Qwen2.5-0.5B", "DeepSeek-V3", "Mixtral-8x7B", "Gemma-2-9B",
                                  "gpt-oss-20b", "Gemma-3-27B"])
def test_longest_context_equals_the_bisection(catalog: Catalog, name: str) -> None:
    """Sliding-window models (Gemma 2/3, gpt-oss) bend the line at the window; MLA (DeepSeek-V3) caches a
    latent; every budget from nothing to far beyond 2^26 tokens gives the bisection's answer."""
    if name not in catalog.models:
        pytest.fail(f"{name} is not a bundled preset any more: pick another with the same property")
    m = catalog.model(name)
    per = kv_cache_bytes(m, 1, 1, "bf16")
    windows = [m.sliding_window] if m.sliding_window else []
    for batch, tp, pp, kv, latent in ((1, 1, 1, "bf16", True), (7, 2, 1, "fp8", True), (3, 4, 2, "bf16", False)):
        budgets = [0.0, per * 0.5, per, per * 1000.3, per * 131_072, per * 1e9, 1e18]
        budgets += [kv_cache_bytes(m, batch, w + d, kv, tp, pp, latent) + e for w in windows for d in (-1, 0, 1)
                    for e in (-1.0, 0.0, 1.0)]
        for budget in budgets:
            assert max_context(m, budget, batch, kv, tp, pp, latent) == \
                _bisected_context(m, budget, batch, kv, tp, pp, latent), (budget, batch, tp, pp, kv, latent)


@pytest.mark.parametrize(("name", "targets"), [("Qwen2.5-7B", {}), ("Qwen2.5-7B", {"tpot_s": 0.02}),
                                               ("Llama-3.1-70B", {"tpot_s": 0.05, "ttft_s": 0.4}),
                                               ("Mixtral-8x7B", {"ttft_s": 0.2}), ("Phi-2", {"tpot_s": 0.008})])
def test_serving_concurrency_and_batch_are_the_long_searches_answers(catalog: Catalog, name: str,
                                                                   targets: dict[str, float]) -> None:
    # the planner bisects the concurrency and tries the engine's cap first; the long way: every doubling in turn,
    # and every batch from the top down
    from gpuplan.estimate.calibration import fitted
    from gpuplan.estimate.engines import with_engine_defaults
    from gpuplan.estimate.infer_speed import max_batch, speed
    from gpuplan.estimate.job import JobEstimate, estimate_inference, inference_setup, largest_batch
    from gpuplan.estimate.memory import inference_memory

    cal, m = fitted(), catalog.model(name)
    job = Job(task="serve", rps=2, prompt_len=1500, output_len=250, **targets)  # type: ignore[arg-type]
    compared = 0
    for gpu_name, tp in (("H100", 1), ("A100", 2), ("L4", 1), ("RTX4090", 1), ("H100", 4)):
        gpu = catalog.gpu(gpu_name)  # vLLM's caps on this GPU, as estimate_inference takes them
        s = with_engine_defaults(inference_setup(job, tp, "vllm", "bf16"), gpu)
        top = max_batch(m, gpu, s, cal)
        fits = [b for b in range(top, 0, -1) if JobEstimate(job, m, gpu, s.n_gpus, dataclasses.replace(s, batch=b),
                inference_memory(m, gpu, dataclasses.replace(s, batch=b), cal, describe=False), None, None, 1,
                None).fits]
        cap = fits[0] if fits else 0
        assert largest_batch(m, gpu, job, s, cal, None, top) == cap
        if cap < 1:
            continue
        alone, chosen = speed(m, gpu, s, 1, cal).ttft_s, None
        for b in (1 << k for k in range(cap.bit_length())):
            sp = speed(m, gpu, s, b, cal)
            if (job.tpot_s and sp.tpot_s > job.tpot_s) or (job.ttft_s and alone + sp.tpot_s > job.ttft_s):
                break
            chosen = b
        e = estimate_inference(m, gpu, job, s, cal)
        assert (e.setup.batch if e.replicas else None) == chosen
        compared += chosen is not None
    assert compared  # some GPU serves it within the targets: the searches were compared on a real answer
