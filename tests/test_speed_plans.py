"""The plan-level shortcuts answer as the long way round (issue 10, part 5).

A plan makes its estimates without their words and describes only the candidates it shows; the plans of its
changes (alternatives, suggestions) share its offer terms and are read for their pick alone; the batch searches
copy setups directly. Each is checked against the plain computation it stands in for.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
from collections import Counter
from dataclasses import replace

import pytest

from gpuplan.catalog import Catalog
from gpuplan.estimate.calibration import fitted
from gpuplan.estimate.job import JobEstimate
from gpuplan.plan import enumeration, planner, pricing
from gpuplan.plan.candidates import Constraints
from gpuplan.plan.costing import rental_cost, startup_seconds
from gpuplan.types import InferSetup, Job

JOBS = (
    ("Qwen2.5-7B", Job(task="infer", requests=100_000, prompt_len=1000, output_len=300), Constraints()),
    ("Qwen2.5-7B", Job(task="serve", rps=5, prompt_len=1000, output_len=300), Constraints()),
    ("Llama-2-70B", Job(task="infer", requests=1000, prompt_len=2000, output_len=200), Constraints(quant="fp8")),
    ("ChatGLM2-6B", Job(task="finetune", method="lora", samples=10_000, tokens_per_sample=1088, seq_len=1088),
     Constraints(market="cn", currency="CNY")),
    ("Llama-2-7B", Job(task="pretrain", tokens=1e11, seq_len=4096), Constraints(max_gpus=256)),
)
IDS = [f"{name}-{job.task}" for name, job, _ in JOBS]


def _numbers(e: JobEstimate) -> tuple[object, ...]:
    """What ranking and pricing read of an estimate."""
    time = e.time.breakdown if e.time else None
    return (e.setup, e.n_gpus, e.replicas, e.speed, e.memory.breakdown, e.memory.floor, e.needed_bytes, e.fits,
            e.shortfall_bytes, e.seconds, time)


@pytest.mark.parametrize(("name", "job", "c"), JOBS, ids=IDS)
def test_estimates_made_without_words_have_the_numbers_of_the_described_ones(catalog: Catalog, name: str,
                                                                            job: Job, c: Constraints) -> None:
    m, cal = catalog.model(name), fitted()
    job = job.for_model(m)
    offers = pricing.usable_offers(catalog, c, None, job.task == "serve")
    fitting, closest = enumeration.estimates(m, job, c, cal, enumeration.candidate_gpus(catalog, c), catalog,
                                             offers, Counter())
    assert len(fitting) > 5
    for e in [*fitting, *closest]:
        full = enumeration.described(e, cal)
        assert full.memory.assumptions and not e.memory.assumptions  # the words are what was left out ...
        assert _numbers(e) == _numbers(full)  # ... and nothing else


@pytest.mark.parametrize(("name", "job", "c"), JOBS[:4], ids=IDS[:4])
def test_a_changes_pick_is_the_first_of_its_whole_plan(catalog: Catalog, name: str, job: Job,
                                                         c: Constraints) -> None:
    m, cal = catalog.model(name), fitted()
    changes = planner._cheaper_changes(job.for_model(m), replace(c, gpus=("H100", "A100")))
    assert changes
    for _, j2, c2 in changes:
        whole = planner.plan(catalog, m, j2, c2, cal, suggest=False).pick
        pick = planner._pick_of(catalog, m, j2, c2, cal, None)
        assert whole is not None and pick is not None
        assert (pick.label(), pick.cost, pick.seconds) == (whole.label(), whole.cost, whole.seconds)


def test_offer_terms_made_in_another_currency_are_not_reused(catalog: Catalog) -> None:
    m, cal = catalog.model("Qwen2.5-7B"), fitted()
    job = Job(task="finetune", method="lora", samples=20_000, tokens_per_sample=512, seq_len=512).for_model(m)
    usd, cny = Constraints(), Constraints(currency="CNY")
    offers = pricing.usable_offers(catalog, usd, None, False)
    found, _ = enumeration.estimates(m, job, usd, cal, enumeration.candidate_gpus(catalog, usd), catalog, offers,
                                     Counter())
    terms = pricing.OfferTerms(catalog, usd, False, dt.date.today())
    first = pricing.Pricer(catalog, usd, offers, cal, terms=terms)
    [first.price(e) for e in found]  # the terms now hold every offer's USD tariff
    second = pricing.Pricer(catalog, cny, offers, cal, terms=terms)
    assert second.terms is not terms
    checked = 0
    for e in found:
        seconds = e.seconds + startup_seconds(pricing.checkpoint_bytes(m))  # the work + boot and download
        for x in second.price(e):
            assert x.offer is not None
            assert x.cost == rental_cost(catalog, x.offer, seconds, "CNY", x.cost.instances,
                                         pricing.disk_bytes(m, job), cny.spot_overhead)
            checked += 1
    assert checked > 100


def test_with_batch_is_replace_in_every_field() -> None:
    # every field away from its default, so a field the direct copy forgot would come back as its default
    values = {"engine": "sglang", "weight_format": "fp8", "kv_dtype": "fp8", "batch": 3, "prompt_len": 17,
              "output_len": 19, "tp": 2, "pp": 4, "gpu_memory_utilization": 0.8, "max_num_seqs": 64,
              "full_logits": True, "lora_adapters": 5, "lora_rank": 8, "flash_attention": False,
              "engine_version": "0.7.3", "launcher": "trtllm-bench", "cuda_graphs": False,
              "attention_dp": True, "attention_dp_balance": True, "max_model_len": 32768, "max_batched_tokens": 4096,
              "async_scheduling": True, "chunked_prefill": False, "quantized_head": True, "quant_release": "0.40.0",
              "quantized_at_build": True, "runner_release": "0.6.6"}
    assert set(values) == {f.name for f in dataclasses.fields(InferSetup)}
    s = InferSetup(**values)  # type: ignore[arg-type]
    assert all(getattr(s, k) != f.default for k, f in InferSetup.__dataclass_fields__.items())
    assert s.with_batch(41) == replace(s, batch=41)
    assert s.with_batch(3) == s


class _Forgetful(dict):  # type: ignore[type-arg]
    """A dictionary that finds nothing it was given."""

    def get(self, key, default=None):  # type: ignore[no-untyped-def]
        return default


class _Fresh(enumeration.PlanMemo):
    """A memo that remembers nothing: every setup and check made afresh, as check_training makes them (the search
    reads the memo's entries directly too, so they are a dictionary that finds nothing)."""

    def __init__(self) -> None:
        super().__init__(_Forgetful())

    def hardware_error(self, gpu, job, s):  # type: ignore[no-untyped-def]
        self._hardware.clear()
        return super().hardware_error(gpu, job, s)


@pytest.mark.parametrize(("name", "job"), [
    ("DeepSeek-V2-Lite", Job(task="finetune", method="ptuning", samples=1000, tokens_per_sample=512, seq_len=512)),
    ("Llama-2-7B", Job(task="finetune", method="qlora", samples=1000, tokens_per_sample=8192, seq_len=8192)),
    ("Qwen2.5-7B", Job(task="finetune", method="full", samples=1000, tokens_per_sample=2048, seq_len=2048,
                       framework="unsloth")),
], ids=["ptuning-mla", "qlora-too-long", "unsloth-full"])
def test_the_training_search_refuses_as_check_training_does_on_every_gpu(catalog: Catalog, name: str,
                                                                          job: Job) -> None:
    """The setups' checks are made once per plan (the GPU's once per GPU, method and precision): the refusals
    counted and the estimates found are those of checking every setup on every GPU afresh."""
    m, cal, c = catalog.model(name), fitted(), Constraints()
    job = job.for_model(m)
    memo, fresh = enumeration.PlanMemo(), _Fresh()
    kept, plain = Counter[tuple[str, str]](), Counter[tuple[str, str]]()
    for gpu in enumeration.candidate_gpus(catalog, c):  # V100/T4 (FP16), AMD, Apple, Ascend among them
        for n in (1, 8):
            got = enumeration.best_training(m, gpu, job, n, c, cal, kept, memo)
            want = enumeration.best_training(m, gpu, job, n, c, cal, plain, fresh)
            assert [e and _numbers(e) for e in got] == [e and _numbers(e) for e in want]
    assert kept == plain and sum(plain.values()) > 0
