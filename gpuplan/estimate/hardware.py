"""Which accelerators each serving engine, training framework and library runs on, from ``data/runs_on.csv``.

A row says that a piece of software runs on one vendor's parts, from its oldest supported architecture on (an
empty ``oldest_architecture``: every architecture of that vendor); a vendor with no row is not supported. Only
NVIDIA and AMD architectures are ordered (:data:`ARCHITECTURES`): the other vendors' rows cover all their parts.
A row that names a ``chip`` (gpus.csv's) covers only the parts built on it, whatever their architecture: software
that supports some chips of an architecture and not others (vLLM on ROCm: the Radeon RX 7900's Navi 31, not the
Radeon 780M's Phoenix, both RDNA 3).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from functools import cache, lru_cache
from types import MappingProxyType

from gpuplan.catalog.csvload import Column, read_table
from gpuplan.catalog.schemas import VENDORS
from gpuplan.catalog.store import BUNDLED_DIR
from gpuplan.errors import CatalogError
from gpuplan.types import Method

KINDS = ("engine", "framework", "library")
NVIDIA_GENERATIONS = ("Pascal", "Volta", "Turing", "Ampere", "Ada Lovelace", "Hopper", "Blackwell", "Blackwell Ultra")
# oldest first; the gpus.csv architecture names of AMD Instinct parts
ARCHITECTURES: Mapping[str, tuple[str, ...]] = MappingProxyType(
    {"NVIDIA": NVIDIA_GENERATIONS, "AMD": ("CDNA 2", "CDNA 3", "CDNA 4")})

_LABEL = "gpuplan/data/runs_on.csv"
_COLUMNS = (
    Column("kind", "enum", True, KINDS), Column("software", required=True),
    Column("vendor", "enum", True, VENDORS), Column("oldest_architecture"),
    Column("source", required=True), Column("as_of", "date", True), Column("notes"), Column("chip", optional=True),
)


@dataclass(frozen=True, slots=True)
class Support:
    """One vendor's parts a piece of software runs on: all of them, or ``oldest`` and newer."""

    vendor: str
    oldest: str | None
    source: str
    chip: str | None = None  # only the parts built on this chip (gpus.csv ``chip``)

    def covers(self, vendor: str, architecture: str, chip: str | None = None) -> bool:
        if vendor != self.vendor:
            return False
        if self.chip is not None:
            return chip == self.chip
        return self.oldest is None or generation(vendor, architecture) >= generation(vendor, self.oldest)

    def describe(self) -> str:
        if self.chip is not None:
            return f"{self.vendor} {self.chip}"
        return self.vendor + (f" ({self.oldest} or newer)" if self.oldest else "")


def generation(vendor: str, architecture: str) -> int:
    """Order of ``architecture`` among ``vendor``'s (0 the oldest); -1 when unknown."""
    order = ARCHITECTURES.get(vendor, ())
    return order.index(architecture) if architecture in order else -1


def nvidia_generation(architecture: str) -> int:
    """Order of an NVIDIA architecture (Pascal 0 … Blackwell Ultra 7); -1 when unknown."""
    return generation("NVIDIA", architecture)


@cache
def support_table() -> Mapping[tuple[str, str], tuple[Support, ...]]:
    """``(kind, software)`` → the vendors it runs on, as read (and checked) from ``data/runs_on.csv``."""
    rows = read_table(BUNDLED_DIR / "runs_on.csv", _COLUMNS, ["kind", "software", "vendor", "chip"], _LABEL)
    table: dict[tuple[str, str], list[Support]] = {}
    for r in rows:
        v = r.values
        oldest = v["oldest_architecture"] or None
        if oldest is not None and generation(v["vendor"], oldest) < 0:
            known = ", ".join(ARCHITECTURES.get(v["vendor"], ())) or "none: leave it empty"
            raise CatalogError(_LABEL, r.line, "oldest_architecture", oldest,
                               f"not an ordered {v['vendor']} architecture.", f"use one of: {known}.")
        if oldest is not None and v["chip"] is not None:
            raise CatalogError(_LABEL, r.line, "oldest_architecture", oldest, "a row that names a chip covers that "
                               "chip only.", "leave oldest_architecture empty on it.")
        table.setdefault((v["kind"], v["software"]), []).append(Support(v["vendor"], oldest, v["source"], v["chip"]))
    return MappingProxyType({k: tuple(s) for k, s in table.items()})


def supports(kind: str, software: str) -> tuple[Support, ...]:
    """The vendors ``software`` (an engine, framework or library name) runs on; () when it has no row."""
    return support_table().get((kind, software), ())


def runs_on(kind: str, software: str, vendor: str, architecture: str, chip: str | None = None) -> bool:
    """Whether ``software`` runs on a part of this vendor, architecture and (for rows that name one) chip."""
    return any(s.covers(vendor, architecture, chip) for s in supports(kind, software))


def where(kind: str, software: str) -> str:
    """Where ``software`` runs, in words: "NVIDIA (Volta or newer), AMD, Huawei"."""
    return ", ".join(s.describe() for s in supports(kind, software)) or "nowhere listed"


def runs_here(kind: str, vendor: str, architecture: str) -> list[str]:
    """Names of the software of ``kind`` that runs on this part, sorted."""
    return sorted(name for k, name in support_table() if k == kind and runs_on(k, name, vendor, architecture))


def runs_any(kind: str, vendor: str, architecture: str) -> bool:
    """Whether any software of ``kind`` runs on this part (:func:`runs_here` not empty, stopping at the first)."""
    return any(k == kind and runs_on(k, name, vendor, architecture) for k, name in support_table())


@dataclass(frozen=True, slots=True)
class Blocker:
    """What keeps a training job off a part: its framework (``software`` "" when no listed framework runs
    there, for a job that names none) or the library its method needs (bitsandbytes for QLoRA)."""

    kind: str
    software: str


@lru_cache(maxsize=1024)
def training_blocker(vendor: str, architecture: str, framework: str | None, method: str) -> Blocker | None:
    """Why a job with ``framework`` (None: unstated) and ``method`` cannot train on this part; None when it can.

    A job that names no framework may use any listed one, so it is kept wherever at least one runs. Answered once
    per part, framework and method (from the bundled table, read once): a plan's search asks for every setup.
    """
    if framework is not None and not runs_on("framework", framework, vendor, architecture):
        return Blocker("framework", framework)
    if framework is None and not runs_any("framework", vendor, architecture):
        return Blocker("framework", "")
    if method == Method.QLORA and not runs_on("library", "bitsandbytes", vendor, architecture):
        return Blocker("library", "bitsandbytes")
    return None
