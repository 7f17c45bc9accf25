"""The planner's stages meet in typed values: the pricing stage's shortcuts cost what the one money formula says,
the result is frozen, and notes become sentences only on the skin side, in either language (issue 10, part 1)."""

from __future__ import annotations

import dataclasses
import re
from collections import Counter

import pytest

from gpuplan.catalog import Catalog
from gpuplan.estimate.calibration import fitted
from gpuplan.i18n import using
from gpuplan.plan import enumeration, pricing
from gpuplan.plan.candidates import Constraints
from gpuplan.plan.costing import rental_cost, startup_seconds
from gpuplan.plan.planner import plan
from gpuplan.plan_text import NOTE_TEXT, notes_text
from gpuplan.requests import make_job

HAN = re.compile(r"[\u4e00-\u9fff]")


def test_the_pricer_costs_each_offer_as_rental_cost_does(catalog: Catalog) -> None:
    # Pricer makes each offer's tariff once a plan; every candidate must cost what the reference formula gives
    m = catalog.model("Qwen2.5-7B")
    job = make_job("finetune", method="lora", samples=20_000, tokens_per_sample=512).for_model(m)
    c, cal = Constraints(currency="CNY"), fitted()
    offers = pricing.usable_offers(catalog, c, None, False)
    found, _ = enumeration.estimates(m, job, c, cal, enumeration.candidate_gpus(catalog, c), catalog, offers,
                                     Counter())
    pricer = pricing.Pricer(catalog, c, offers, cal)
    checked = 0
    for e in found:
        for x in pricer.price(e):
            assert x.offer is not None
            seconds = e.seconds + startup_seconds(pricing.checkpoint_bytes(m))  # the work + boot and download
            direct = rental_cost(catalog, x.offer, seconds, "CNY", x.cost.instances, pricing.disk_bytes(m, job),
                                 c.spot_overhead)
            assert x.cost == direct
            checked += 1
    assert checked > 100


def test_a_plan_is_frozen(catalog: Catalog) -> None:
    r = plan(catalog, catalog.model("Qwen2.5-0.5B"), make_job("finetune", samples=1_000, tokens_per_sample=256),
             Constraints(top=3))
    with pytest.raises(dataclasses.FrozenInstanceError):
        r.ranked = ()  # type: ignore[misc]
    assert isinstance(r.ranked, tuple) and isinstance(r.ranked[0].notes, tuple)


def test_notes_are_sentences_on_the_skin_side_in_both_languages(catalog: Catalog) -> None:
    # pretraining on up to 64 GPUs spans nodes and starts up for minutes
    r = plan(catalog, catalog.model("Llama-3.1-8B"), make_job("pretrain", tokens=50e9),
             Constraints(max_gpus=64, top=20))
    codes = {n.code for x in r.ranked for n in x.notes}
    assert {"startup", "multi_node"} <= codes
    for x in r.ranked:
        en = notes_text(x, "en")
        with using("zh"):
            assert x.as_dict()["notes"] == en  # JSON holds the English sentence whatever the language
            zh = notes_text(x)
        assert len(zh) == len(en) == len(x.notes)
        for note, e_text, z_text in zip(x.notes, en, zh, strict=True):
            assert not HAN.search(e_text), e_text
            assert HAN.search(z_text) and z_text != e_text, (note.code, z_text)


def test_every_note_code_has_both_sentences() -> None:
    for code, (en, zh) in NOTE_TEXT.items():
        assert en.__code__.co_argcount == zh.__code__.co_argcount, code  # the same values feed both
