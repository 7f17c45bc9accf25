"""Shared state is read-only (issue 10, part 4): the cached catalog and the cached data tables (weight formats,
engines, frameworks, stacks, guard models, moderation services) are handed to every caller, so none may change
them for the next: assigning to or deleting from them is a TypeError, and each call gives the same table."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping
from typing import Any

import pytest

from gpuplan.catalog import load_catalog
from gpuplan.estimate.engines import engines
from gpuplan.estimate.frameworks import frameworks, stacks
from gpuplan.estimate.quant import weight_formats
from gpuplan.plan.guard import presets, services

# (the table, a name it holds: its file's first row or a well-known one)
TABLES: list[tuple[Callable[[], Mapping[str, Any]], str]] = [
    (weight_formats, "bf16"), (engines, "vllm"), (frameworks, "hf"), (stacks, "deepspeed"),
    (presets, "Llama-Guard-3-8B"), (services, "openai-moderation"),
]


@pytest.mark.parametrize(("table", "name"), TABLES, ids=[t.__name__ for t, _ in TABLES])
def test_a_cached_table_cannot_be_changed(table: Callable[[], Mapping[str, Any]], name: str) -> None:
    rows = table()
    assert name in rows
    with pytest.raises(TypeError):
        rows[name] = rows[name]  # type: ignore[index]
    with pytest.raises(TypeError):
        del rows[name]  # type: ignore[attr-defined]
    assert table() is rows and name in table()


def test_the_cached_catalog_cannot_be_changed() -> None:
    cat = load_catalog(())
    with pytest.raises(TypeError):
        cat.gpus["H100"] = cat.gpus["H100"]  # type: ignore[index]
    with pytest.raises(TypeError):
        del cat.models[next(iter(cat.models))]  # type: ignore[attr-defined]
    with pytest.raises(dataclasses.FrozenInstanceError):
        cat.offers = ()  # type: ignore[misc]
    with pytest.raises(AttributeError):  # a frozen row (FrozenInstanceError is an AttributeError)
        cat.gpus["H100"].name = "H200"  # type: ignore[misc]
    assert isinstance(cat.offers, tuple) and load_catalog(()) is cat
