"""Provider terms (providers.csv): every offer's provider has a row, facts carry their sources, bad rows are load
errors that name the file, and the SkyPilot cloud names are the ones the installed skypilot package registers."""

from __future__ import annotations

import csv
import importlib.metadata
import re
import shutil
import warnings
from pathlib import Path

import pytest

from gpuplan.catalog import BUNDLED_DIR, load_catalog, normalize
from gpuplan.catalog.schemas import PROVIDERS
from gpuplan.errors import CatalogError, UnknownNameError
from gpuplan.export import skypilot_clouds

TINY = Path(__file__).resolve().parent / "fixtures" / "tiny_catalog"
HEADER = [c.name for c in PROVIDERS]


@pytest.fixture(scope="module")
def registry(tmp_path_factory: pytest.TempPathFactory) -> dict[str, object]:
    """SkyPilot's own cloud registry (canonical names; aliases such as 'digitalocean' are not canonical). Importing
    sky writes state under ~/.sky, so the import sees a scratch home folder."""
    with pytest.MonkeyPatch.context() as mp, warnings.catch_warnings():
        mp.setenv("HOME", str(tmp_path_factory.mktemp("home")))
        warnings.simplefilter("ignore")  # sky's SQLAlchemy 1.x idioms and passlib's 'crypt' import
        import sky.clouds  # noqa: F401  (importing the package registers every cloud)
        from sky.utils import registry

        return dict(registry.CLOUD_REGISTRY)


def test_every_offer_provider_has_terms() -> None:
    cat = load_catalog()
    assert set(cat.providers()) <= set(cat.provider_terms)


def test_mainland_providers_still_to_come_have_terms() -> None:
    # the mainland offer files being added name these providers; their rows are in place first
    cat = load_catalog()
    for name in ("Huawei Cloud", "Baidu AI Cloud", "恒源云", "矩池云", "UCloud", "Alibaba Cloud", "AutoDL"):
        assert cat.provider(name).provider == name


@pytest.mark.parametrize(("provider", "tier", "production"), [
    ("AWS", "hyperscaler", True),  # aws.amazon.com/compute/sla: region- and instance-level SLAs
    ("RunPod", "gpu-cloud", True),
    ("Vast.ai", "marketplace", False),  # peer-to-peer hosts
    ("AutoDL", "notebook", False),  # container notebooks, no serving terms
])
def test_tier_decides_production_grade(provider: str, tier: str, production: bool) -> None:
    terms = load_catalog().provider(provider)
    assert (terms.tier, terms.production_grade) == (tier, production)


@pytest.mark.parametrize(("provider", "sla", "multi_zone", "notice_s"), [
    ("AWS", 99.5, 99.99, 120),  # aws.amazon.com/compute/sla; EC2 two-minute Spot interruption notice
    ("GCP", 99.9, 99.99, 30),  # cloud.google.com/compute/sla (Premium Tier); Spot VMs: 30 s
    ("Azure", 99.9, 99.99, 30),  # Azure VM SLA (Premium SSD single VM); Scheduled Events Preempt: 30 s
])
def test_published_terms_of_the_big_three(provider: str, sla: float, multi_zone: float, notice_s: float) -> None:
    t = load_catalog().provider(provider)
    assert (t.sla_pct, t.sla_multi_zone_pct, t.preemption_notice_s) == (sla, multi_zone, notice_s)


@pytest.mark.parametrize(("provider", "notice_s", "min_billing_s"), [
    ("UCloud", 1800, 3600),  # UCloud docs: spot GPU hosts go 30 min after the e-mail; 按小时计费 bills a begun hour
    ("UCloud Compshare", None, 1),  # compshare 计费方式说明: 按量 秒级计费; spot warning of unstated lead time
    ("恒源云", None, 1),  # en.gpushare.com/docs/product/price: pay-as-you-go charged in yuan per second
])
def test_published_terms_of_mainland_providers(provider: str, notice_s: float | None, min_billing_s: float) -> None:
    t = load_catalog().provider(provider)
    assert (t.preemption_notice_s, t.min_billing_s) == (notice_s, min_billing_s)
    assert t.sla_pct is None  # none of them publishes an SLA document (UCloud's 99.95 % is a product-page claim)


def test_lookup_ignores_case_and_suggests_close_names() -> None:
    cat = load_catalog()
    assert cat.provider("vast.ai") is cat.provider("Vast.ai")
    with pytest.raises(UnknownNameError, match="Did you mean 'Lambda'"):
        cat.provider("Lamda")


def test_every_fact_has_its_source_on_disk() -> None:
    with (BUNDLED_DIR / "providers.csv").open(encoding="utf-8") as f:
        rows = list(csv.DictReader(f))
    pairs = [("sla_pct", "sla_source"), ("sla_multi_zone_pct", "sla_source"),
             ("preemption_notice_s", "preemption_source"), ("min_billing_s", "billing_source"),
             ("egress_usd_per_gb", "egress_source"), ("zones_per_region", "zones_source"),
             ("skypilot_cloud", "skypilot_source")]
    missing = [(r["provider"], fact) for r in rows for fact, src in pairs if r[fact] and not r[src].strip()]
    assert not missing


# ---------------------------------------------------------------- SkyPilot's registry


def test_every_skypilot_cloud_is_registered_by_the_installed_skypilot(registry: dict[str, object]) -> None:
    named = {t.provider: t.skypilot_cloud for t in load_catalog().provider_terms.values() if t.skypilot_cloud}
    assert named, "providers.csv names no SkyPilot cloud"
    wrong = {p: c for p, c in named.items() if c not in registry}
    assert not wrong, f"not clouds of skypilot {importlib.metadata.version('skypilot')}: {wrong}"


def test_no_provider_misses_a_cloud_skypilot_registers_under_its_own_name(registry: dict[str, object]) -> None:
    # a provider whose name is a SkyPilot cloud ('Mithril' -> 'mithril') must say so in skypilot_cloud
    missed = [t.provider for t in load_catalog().provider_terms.values()
              if not t.skypilot_cloud and normalize(re.sub(r"\(.*\)", "", t.provider)) in registry]
    assert not missed


def test_skypilot_sources_name_the_installed_release() -> None:
    version = importlib.metadata.version("skypilot")
    sources = {t.skypilot_source for t in load_catalog().provider_terms.values() if t.skypilot_cloud}
    assert all(f"skypilot {version} " in s for s in sources), (version, sources)


def test_export_uses_the_providers_column() -> None:
    clouds = skypilot_clouds()
    assert clouds["Verda (DataCrunch)"] == "verda" and clouds["Prime Intellect"] == "primeintellect"
    assert "Hyperstack" not in clouds  # skypilot 0.14.1 registers no Hyperstack cloud


# ---------------------------------------------------------------- load errors


def _user_folder(tmp_path: Path, providers: list[list[str]] | None) -> Path:
    folder = tmp_path / "cat"
    shutil.copytree(TINY, folder)
    if providers is None:
        (folder / "providers.csv").unlink()
    else:
        with (folder / "providers.csv").open("w", newline="", encoding="utf-8") as f:
            csv.writer(f).writerows([HEADER, *providers])
    return folder


def _row(provider: str, **cells: str) -> list[str]:
    values = dict.fromkeys(HEADER, "") | {"provider": provider, "tier": "gpu-cloud", "source": "fixture",
                                          "as_of": "2026-01-01"} | cells
    return [values[c] for c in HEADER]


def test_offer_provider_without_terms_names_the_offer_file_and_the_fix(tmp_path: Path) -> None:
    folder = _user_folder(tmp_path, [_row(p) for p in ("TinyFast", "TinyCheap", "TinyHourly", "TinyDisk")])
    with pytest.raises(CatalogError) as err:
        load_catalog([folder])
    text = str(err.value)
    assert "offers/tinyyuan.csv:2" in text and "'TinyYuan'" in text and "has no row in providers.csv" in text
    assert str(folder / "providers.csv") in text


def test_a_fact_without_its_source_is_a_load_error(tmp_path: Path) -> None:
    names = ("TinyFast", "TinyCheap", "TinyHourly", "TinyDisk", "TinyYuan")
    folder = _user_folder(tmp_path, [_row(p) for p in names[:-1]] + [_row("TinyYuan", preemption_notice_s="30")])
    with pytest.raises(CatalogError, match=r"providers.csv:6: column 'preemption_source'.*'preemption_notice_s'"):
        load_catalog([folder])


def test_an_unknown_tier_lists_the_accepted_ones(tmp_path: Path) -> None:
    folder = _user_folder(tmp_path, [_row("TinyFast", tier="cheap")])
    with pytest.raises(CatalogError, match="hyperscaler, gpu-cloud, marketplace, notebook"):
        load_catalog([folder])


def test_a_user_row_replaces_the_bundled_terms(tmp_path: Path) -> None:
    names = ("TinyFast", "TinyCheap", "TinyHourly", "TinyDisk", "TinyYuan")
    folder = _user_folder(tmp_path, [_row(p) for p in names] + [_row("RunPod", tier="marketplace")])
    cat = load_catalog([folder])
    assert cat.provider("RunPod").tier == "marketplace"
    assert any(r.startswith("providers.csv 'RunPod'") for r in cat.replaced)
