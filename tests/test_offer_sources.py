"""Every offer's source is something a reader can open: a page, an API, or a repository file at a revision.
A cell that says the source could not be identified is no source (issue: "every source cell names a real,
citable page, file at a revision, or API")."""

from __future__ import annotations

import re

from gpuplan.catalog import Catalog

# the wordings rows used for a source nobody could locate
UNIDENTIFIED = re.compile(r"not (?:be )?identified|unidentified|unknown (?:repository|source)|source unknown", re.I)
# the product's seed documents (course notes the project started from) name no page a reader could open: a price
# copied from one is a price without a source (the seed 004 A100/T4 table named neither an instance nor a page)
SEED_DOCUMENT = re.compile(r"\bseed \d+ (?:source )?document|\[seed \d+\]", re.I)


def test_no_offer_source_says_it_could_not_be_identified(catalog: Catalog) -> None:
    vague = [f"{o.file}:{o.line}" for o in catalog.offers if UNIDENTIFIED.search(o.source)]
    assert not vague, f"{len(vague)} offers without an identified source, e.g. {vague[:5]}"


def test_no_offer_cites_a_seed_document(catalog: Catalog) -> None:
    seeded = [f"{o.file}:{o.line}" for o in catalog.offers
              if SEED_DOCUMENT.search(o.source) or SEED_DOCUMENT.search(o.instance_type)]
    assert not seeded, f"{len(seeded)} offers priced from a seed document, e.g. {seeded[:5]}"


def test_no_provider_terms_source_says_it_could_not_be_identified(catalog: Catalog) -> None:
    sources = [s for t in catalog.provider_terms.values() for s in (t.source, t.sla_source, t.preemption_source,
                                                                     t.billing_source, t.egress_source,
                                                                     t.zones_source, t.skypilot_source)]
    assert not [s for s in sources if UNIDENTIFIED.search(s)]


def test_the_pattern_catches_the_wordings_it_is_for() -> None:
    assert UNIDENTIFIED.search("GitHub markdown 'X' (repository not identified by the search index)")
    assert UNIDENTIFIED.search("'本页为广州三区实例价格'; file path not identified)")
    assert SEED_DOCUMENT.search("seed 004 source document (Chinese course notes, NVIDIA A100 price table)")
    assert SEED_DOCUMENT.search("A100 instance (16 vCPU/125 GiB) [seed 004]")
    assert not SEED_DOCUMENT.search("https://cloud.baidu.com/doc/EASYDL/s/qki8mvs3z")
    assert not UNIDENTIFIED.search("0x0shephard/h200 h200_pricing_summary.md @2a1d56dfba08b5d23fcf26da80d6c96e53b27297")
