"""The names and options the target tools accept, read from data files with sources (``gpuplan/data``):

- ``flags/<tool>.json``: every option of the pinned vLLM, SGLang, LLaMA-Factory, Megatron-LM, TRL, torchtitan,
  LitGPT, ms-swift and Axolotl (its config schema's fields), recorded from the tool's own argument parser by
  ``scripts/record_flags.py``; for Unsloth, the parameters of ``FastLanguageModel.from_pretrained`` and
  ``get_peft_model`` (read from its source); for DeepSpeed-Chat, its step-1 script's ``add_argument`` calls (read
  with ``ast`` at a revision); for torchtune, its fine-tuning recipes with the config keys each reads
  and the model families of its shipped configs with their builders;
- ``skypilot_accelerators.csv``: SkyPilot's accelerator registry (its catalog's ``common/accelerators.csv``), one
  row per accelerator and cloud, with the gpuplan GPU each name is;
- ``gfd_labels.csv``: the ``nvidia.com/gpu.product`` label NVIDIA GPU feature discovery sets for a GPU;
- ``k8s_capacity_labels.csv``: the node label (and taint) each managed Kubernetes puts on spot and on-demand nodes.
"""

from __future__ import annotations

import csv
import functools
import json
from dataclasses import dataclass
from enum import Enum
from types import MappingProxyType
from typing import Any

import yaml

from gpuplan.catalog.store import BUNDLED_DIR
from gpuplan.errors import InputError

TOOLS = ("vllm", "sglang", "llamafactory", "megatron", "trl", "torchtitan", "litgpt", "swift", "axolotl",
         "torchtune", "unsloth", "deepspeed_chat")


@functools.cache
def flags(tool: str) -> MappingProxyType[str, Any]:
    """The record of ``tool``'s options: version, source, and ``options`` (name -> takes_value, choices)."""
    with (BUNDLED_DIR / "flags" / f"{tool}.json").open(encoding="utf-8") as f:
        return MappingProxyType(json.load(f))


def version(tool: str) -> str:
    return str(flags(tool)["version"])


def check_options(tool: str, used: dict[str, str | None], record: str = "options") -> None:
    """Raise if an option (or a value with recorded choices) is not one ``tool`` accepts: an export must never
    write what the engine would refuse. ``record``: which of the record's option sets (LitGPT's ``lora_options``
    are ``finetune_lora``'s)."""
    options = flags(tool)[record]
    for name, value in used.items():
        spec = options.get(name)
        if spec is None:
            raise InputError("--export", f"{tool} {version(tool)} has no option '{name}'.",
                             "report this: the export and the recorded options disagree.")
        if value is not None and spec["choices"] and value not in spec["choices"]:
            raise InputError("--export", f"{tool} {version(tool)} does not accept {name} {value}.",
                             f"accepted: {', '.join(spec['choices'])}.")


@functools.cache
def _accelerators() -> tuple[tuple[str, str, str], ...]:
    with (BUNDLED_DIR / "skypilot_accelerators.csv").open(encoding="utf-8") as f:
        return tuple((r["skypilot_cloud"], r["accelerator"], r["gpu"]) for r in csv.DictReader(f))


def skypilot_accelerator(gpu: str, cloud: str) -> str | None:
    """SkyPilot's name for ``gpu`` on ``cloud`` (its registry names some GPUs per cloud: RunPod's 'H100' is the
    PCIe part, its SXM one 'H100-SXM'); None where SkyPilot's catalog lists no such accelerator there."""
    for row_cloud, accelerator, row_gpu in _accelerators():
        if row_cloud == cloud and row_gpu == gpu:
            return accelerator
    return None


def skypilot_clouds_with(gpu: str) -> list[str]:
    return sorted({c for c, _, g in _accelerators() if g == gpu})


@functools.cache
def _gfd() -> MappingProxyType[str, str]:
    with (BUNDLED_DIR / "gfd_labels.csv").open(encoding="utf-8") as f:
        return MappingProxyType({r["gpu"]: r["gpu_product_label"] for r in csv.DictReader(f)})


def gfd_product_label(gpu: str) -> str:
    """The ``nvidia.com/gpu.product`` value GPU feature discovery sets on nodes with ``gpu``."""
    label = _gfd().get(gpu)
    if label is None:
        raise InputError("--export", f"no sourced GPU feature discovery label for {gpu} "
                         "(gpuplan/data/gfd_labels.csv), so the manifest could not select its nodes.",
                         f"plan with --gpus set to one of: {', '.join(sorted(_gfd()))}.")
    return label


@dataclass(frozen=True, slots=True)
class CapacityLabel:
    """How one node provisioner of a managed Kubernetes marks spot nodes (a row of ``k8s_capacity_labels.csv``)."""

    provider: str
    provisioner: str
    label: str
    spot_value: str
    on_demand_value: str  # "" where on-demand nodes carry no value (selected as "not spot")
    spot_taint: str  # KEY=VALUE:EFFECT spot nodes carry, "" for none
    source: str


@functools.cache
def _capacity() -> tuple[CapacityLabel, ...]:
    with (BUNDLED_DIR / "k8s_capacity_labels.csv").open(encoding="utf-8") as f:
        return tuple(CapacityLabel(r["provider"], r["provisioner"], r["label"], r["spot_value"],
                                   r["on_demand_value"], r["spot_taint"], r["source"]) for r in csv.DictReader(f))


def capacity_labels(provider: str) -> tuple[CapacityLabel, ...]:
    """The labels ``provider``'s managed Kubernetes (each of its node provisioners) sets on spot nodes; () for a
    provider with none published."""
    return tuple(c for c in _capacity() if c.provider == provider)


def write_vocabulary_as_value(dumper: type[yaml.SafeDumper]) -> None:
    """Teach a YAML dumper to write a vocabulary member (Method, Engine …) as its value, as the JSON output does."""
    dumper.add_multi_representer(Enum, lambda d, v: d.represent_str(str(v.value)))
