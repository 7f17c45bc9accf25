"""Find a model by preset name, local path, or (online only) Hugging Face Hub id."""

from __future__ import annotations

import os
import re
from functools import cache
from pathlib import Path

from gpuplan.catalog.hfconfig import read_config_file
from gpuplan.catalog.store import Catalog, normalize
from gpuplan.errors import InputError, OfflineError, UnknownNameError
from gpuplan.types import ModelEntry, ModelSpec

_HUB_ID = re.compile(r"^[A-Za-z0-9][\w.\-]*/[\w.\-]+$")


def find_preset(catalog: Catalog, name: str) -> ModelEntry | None:
    """The preset called ``name``: its preset name or Hub repo (``models/index.csv``), or a published variant that
    ``models/aliases.csv`` says shares its architecture; a name without an owner (``Llama-3.1-8B-Instruct``)
    matches the one Hub repo of that name. Case, spaces, '-' and '_' do not matter; nothing else is guessed."""
    if name in catalog.models:
        return catalog.models[name]
    wanted = normalize(name)
    found = _preset_keys(catalog).get(wanted) or catalog.model_aliases.get(wanted)
    if found is None and "/" not in name:
        owners = {target for repo, target in _repo_names(catalog) if normalize(repo.split("/", 1)[-1]) == wanted}
        found = owners.pop() if len(owners) == 1 else None
    return catalog.models[found] if found else None


def _preset_keys(catalog: Catalog) -> dict[str, str]:
    keys = {normalize(e.hf_repo): e.name for e in catalog.models.values() if e.hf_repo}
    return keys | {normalize(e.name): e.name for e in catalog.models.values()}


def _repo_names(catalog: Catalog) -> list[tuple[str, str]]:
    """(Hub repo id, preset) for every repo a preset's row or an alias row names (alias keys are normalized)."""
    repos = [(e.hf_repo, e.name) for e in catalog.models.values() if "/" in e.hf_repo]
    return repos + [(alias, target) for alias, target in catalog.model_aliases.items() if "/" in alias]


def resolve_model(catalog: Catalog, text: str, field: str = "model") -> ModelSpec:
    """The architecture for a preset name, a config.json path (or its folder), or a Hub id when online."""
    entry = find_preset(catalog, text)
    if entry is not None:
        return _read_preset(entry.path, entry.name)
    try:
        path = Path(text).expanduser()
        is_folder, is_file = path.is_dir() and (path / "config.json").is_file(), path.is_file()
    except (OSError, RuntimeError) as exc:  # RuntimeError: '~user' for a user this machine does not have
        raise InputError(field, f"'{text}' is not a model preset, and it cannot be opened as a path ({exc}).",
                         "check the path (a config.json or the folder holding one), or run 'gpuplan models'.") from None
    if is_folder:
        return read_config_file(path / "config.json", path.resolve().name)
    if is_file:
        return read_config_file(path, path.resolve().parent.name if path.name == "config.json" else path.stem)
    if _HUB_ID.match(text) and not text.endswith(".json"):
        return read_config_file(_hub_config(text), text)
    if text.endswith(".json") or text.startswith((".", "/", "~")) or os.sep in text:
        raise InputError(field, f"'{text}' is not a model preset, and no config.json is there.",
                         "check the path (a config.json or the folder holding one), or run 'gpuplan models'.")
    raise UnknownNameError(field, "model", text, list(catalog.models), "gpuplan models")


@cache
def _read_preset(path: str, name: str) -> ModelSpec:
    return read_config_file(Path(path), name)


def _hub_config(repo_id: str) -> Path:
    """Download only ``config.json`` of ``repo_id`` through huggingface_hub; never any code or weights."""
    from gpuplan.market import is_offline

    offline = os.environ.get("HF_HUB_OFFLINE", "") not in ("", "0") or is_offline()
    fix = (f"download config.json of '{repo_id}' and pass its path, or use a preset from 'gpuplan models'.")
    if offline:
        raise OfflineError(f"'{repo_id}' looks like a Hugging Face Hub id, but gpuplan is offline "
                           "(HF_HUB_OFFLINE/GPUPLAN_OFFLINE is set).", fix)
    try:
        from huggingface_hub import hf_hub_download
    except ImportError:
        raise OfflineError(f"'{repo_id}' looks like a Hugging Face Hub id, but huggingface_hub is not installed.",
                           f"pip install 'gpuplan[hub]', or {fix}") from None
    try:
        return Path(hf_hub_download(repo_id, "config.json", etag_timeout=5))
    except Exception as exc:  # network errors, gated repos, missing repos: all end the same way for users
        raise OfflineError(f"could not fetch config.json of '{repo_id}' from the Hub ({type(exc).__name__}).",
                           fix) from None
