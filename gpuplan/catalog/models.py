"""Find a model by preset name, local path, or (online only) Hugging Face Hub id."""

from __future__ import annotations

import os
import re
from dataclasses import replace
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
    matches the one Hub repo of that name. A quantized or re-published copy resolves to the checkpoint it was made
    from (:func:`base_names`). Case, spaces, '-' and '_' do not matter; nothing else is guessed."""
    for candidate in base_names(name):
        entry = _find_exact(catalog, candidate)
        if entry is not None:
            return entry
    return None


# A suffix that names a quantized or converted copy of a checkpoint, not another architecture: the weight format is
# the --quant option's (or a benchmark row's precision column), never read from the name. GGUF files
# (bartowski/…-GGUF, unsloth/…-GGUF), AutoAWQ/AutoGPTQ exports (Qwen/Qwen-7B-Chat-AWQ, Qwen/Qwen1.5-7B-Chat-GPTQ-Int4),
# MLX conversions (mlx-community/Qwen2.5-7B-Instruct-4bit, …-MLX-4bit), bitsandbytes uploads (unsloth/…-bnb-4bit),
# and the files inside a GGUF repository (…-Instruct-Q4_K_M.gguf, …-UD-Q4_K_XL.gguf, …-Q8_0-00001-of-00002.gguf)
_COPY_SUFFIX = re.compile(r"[-_.](?:gguf|awq|gptq(?:[-_]int[348])?|int[348]|mlx(?:[-_]\d+[-_]?bit)?|\d+[-_]?bits?"
                          r"|bnb[-_]\d+bit|fp8(?:[-_]dynamic)?"
                          r"|(?:ud[-_])?i?q\d_[a-z0-9]+(?:_[a-z]{1,2})?|\d{5}-of-\d{5})$", re.IGNORECASE)
_GGUF_COPY = re.compile(r"[-_.]gguf$", re.IGNORECASE)
# bartowski writes a re-published repo as '<original owner>_<original name>' (bartowski/google_gemma-3-12b-it-GGUF)
_OWNER_IN_NAME = re.compile(r"^([A-Za-z0-9][A-Za-z0-9.\-]*?)_([A-Za-z0-9].*)$")


def base_names(name: str) -> list[str]:
    """``name`` and the names of the checkpoint it was made from, most specific first: without the suffixes of a
    quantized copy (``-GGUF``, ``-AWQ``, ``-GPTQ-Int4``, ``-4bit``, ``-MLX-4bit``), without the re-publisher
    (``bartowski/``, ``unsloth/``), and with the original owner a re-publisher folded into the name
    (``google_gemma-3-12b-it`` -> ``google/gemma-3-12b-it``)."""
    stem = name.strip()
    while _COPY_SUFFIX.search(stem):
        stem = _COPY_SUFFIX.sub("", stem)
    names = [name.strip(), stem]
    owner, _, repo = stem.rpartition("/")
    if owner:
        folded = _OWNER_IN_NAME.match(repo)
        names += [f"{folded.group(1)}/{folded.group(2)}"] if folded else []
        names += [repo]
    return list(dict.fromkeys(n for n in names if n))


def hub_repo(catalog: Catalog, name: str) -> str | None:
    """The Hub repo an engine should load for ``name``: a preset's repo, or the name itself when it is the Hub id of
    a quantized or re-published copy (the engine must load that copy, not the checkpoint it was made from)."""
    entry = find_preset(catalog, name)
    if entry is None:
        return None
    if _find_exact(catalog, name) is None and _HUB_ID.match(name.strip()):  # a copy named by its own Hub id
        return name.strip()
    return entry.hf_repo or None


def _find_exact(catalog: Catalog, name: str) -> ModelEntry | None:
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
    """The architecture for a preset name, a config.json path (or its folder), a quantized or re-published copy of a
    preset's checkpoint (:func:`base_names`), or a Hub id when online. A local path wins over a copy's base name."""
    if not text.strip():
        raise InputError(field, "the model name is empty.",
                         "give a preset from 'gpuplan models' or the path of a config.json.")
    entry = _find_exact(catalog, text)
    if entry is not None:
        return _read_preset(entry.path, entry.name, bool(entry.head_stored), bool(entry.remote_code))
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
    entry = find_preset(catalog, text)
    if entry is not None:
        return _read_preset(entry.path, entry.name, bool(entry.head_stored), bool(entry.remote_code))
    base = base_names(text)[-1]
    if _GGUF_COPY.search(text) and base != text.strip():  # a GGUF repository holds .gguf files and no config.json
        raise InputError(field, f"'{text}' is a GGUF copy of '{base}', which is not a model preset.",
                         f"pass the path of the config.json of '{base}', or use a preset from 'gpuplan models'.")
    if _HUB_ID.match(text) and not text.endswith(".json"):
        return read_config_file(_hub_config(text), text)
    if text.endswith(".json") or text.startswith((".", "/", "~")) or os.sep in text:
        raise InputError(field, f"'{text}' is not a model preset, and no config.json is there.",
                         "check the path (a config.json or the folder holding one), or run 'gpuplan models'.")
    raise UnknownNameError(field, "model", text, list(catalog.models), "gpuplan models")


@cache
def _read_preset(path: str, name: str, head_stored: bool = False, remote_code: bool = False) -> ModelSpec:
    """A preset's config.json, with what its index row adds that a config.json does not say: ``head_stored``, and
    ``remote_code`` where the copy kept lacks the Hub file's ``auto_map`` (Baichuan2's, InternLM2's)."""
    spec = read_config_file(Path(path), name)
    if head_stored and spec.tied_embeddings:
        spec = replace(spec, head_stored=True)
    return replace(spec, remote_code=True) if remote_code and not spec.remote_code else spec


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
