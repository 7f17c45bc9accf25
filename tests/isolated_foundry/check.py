"""Reads llm-foundry train configs with LLM Foundry 0.22.0's own checks, in an interpreter whose path starts with
the folder scripts/test.sh installs it in (tests/requirements-export-foundry.txt); run by tests/test_export_foundry.py.

stdin: a JSON list of cases, each {"yaml": the exported config, "overrides": the run's command-line overrides,
"world_size": the GPUs of the run, "launcher": the launcher's argv}. stdout: a JSON list of what each case became
(TrainConfig after llm-foundry's transforms, with the batch sizes it derived), or {"error": ...} for one it refused.

torchvision, mlflow and mcli (the MosaicML platform client) are stubbed: Composer and llm-foundry import them at
module level, and the config check never calls them (torchvision's wheel also needs CUDA torch libraries)."""

from __future__ import annotations

import importlib.abc
import importlib.machinery
import json
import os
import sys
import types
from typing import Any

STUBBED = ("torchvision", "mlflow", "mcli")


class _Stub(types.ModuleType):
    def __getattr__(self, name: str) -> Any:
        if name.startswith("__"):
            raise AttributeError(name)
        return type(name, (), {}) if name[:1].isupper() else _Stub(f"{self.__name__}.{name}")

    def __call__(self, *args: Any, **kwargs: Any) -> None:
        return None


class _StubFinder(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    def find_spec(self, fullname: str, path: Any, target: Any = None) -> importlib.machinery.ModuleSpec | None:
        if fullname.split(".")[0] in STUBBED:
            return importlib.machinery.ModuleSpec(fullname, self, is_package=True)
        return None

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> types.ModuleType:
        module = _Stub(spec.name)
        module.__path__ = []
        return module

    def exec_module(self, module: types.ModuleType) -> None:
        return None


def _read(case: dict[str, Any]) -> dict[str, Any]:
    from composer.cli.launcher import _get_parser
    from composer.core import Time
    from composer.utils import FSDPConfig
    from llmfoundry import registry
    from llmfoundry.command_utils.train import validate_config
    from llmfoundry.models.hf.hf_base import BaseHuggingFaceModel
    from llmfoundry.utils.config_utils import TRAIN_CONFIG_KEYS, TrainConfig, make_dataclass_and_log_config
    from omegaconf import OmegaConf

    os.environ["WORLD_SIZE"] = str(case["world_size"])  # what Composer's dist reads before it starts
    cfg = OmegaConf.merge(OmegaConf.create(case["yaml"]), OmegaConf.from_cli(case["overrides"]))
    _, train = make_dataclass_and_log_config(cfg, TrainConfig, TRAIN_CONFIG_KEYS, transforms="all")
    validate_config(train)
    out: dict[str, Any] = {k: getattr(train, k) for k in (
        "run_name", "max_seq_len", "precision", "global_train_batch_size", "device_train_batch_size",
        "device_train_microbatch_size", "device_train_grad_accum", "n_gpus", "save_folder", "save_interval",
        "autoresume", "model", "train_loader", "optimizer", "scheduler", "fsdp_config", "tokenizer")}
    out["max_duration"] = str(Time.from_timestring(str(train.max_duration)))
    Time.from_timestring(str(train.save_interval))
    Time.from_timestring(train.scheduler["t_warmup"])
    for reg, key in ((registry.models, train.model["name"]), (registry.optimizers, train.optimizer["name"]),
                     (registry.schedulers, train.scheduler["name"]),
                     (registry.dataloaders, train.train_loader["name"]),
                     *((registry.callbacks, c) for c in train.callbacks or {}),
                     *((registry.algorithms, a) for a in train.algorithms or {})):
        reg.get(key)  # raises for a name llm-foundry does not register
    if train.fsdp_config is not None:
        FSDPConfig(**train.fsdp_config)  # raises for a key Composer does not have
    peft = train.model.get("peft_config")
    if peft is not None:
        lora = BaseHuggingFaceModel.get_peft_config(None, dict(peft))  # type: ignore[arg-type]
        targets = lora.target_modules
        out["lora"] = {"r": lora.r, "alpha": lora.lora_alpha, "dropout": lora.lora_dropout,
                       "targets": targets if isinstance(targets, str) else sorted(targets),
                       "modules_to_save": lora.modules_to_save}
    launch = _get_parser().parse_args(case["launcher"])
    out["launcher"] = {k: getattr(launch, k) for k in (
        "nproc", "world_size", "base_rank", "node_rank", "master_addr", "master_port", "training_script",
        "training_script_args")}
    return out


def main() -> None:
    import transformers.utils.import_utils as hf_imports

    hf_imports.is_torchvision_available()  # cached before the stubs exist: transformers sees no torchvision
    sys.meta_path.insert(0, _StubFinder())
    import llmfoundry

    results: list[dict[str, Any]] = [{"version": llmfoundry.__version__}]
    for case in json.load(sys.stdin):
        try:
            results.append(_read(case))
        except Exception as err:  # a refusal is the answer for that case
            results.append({"error": f"{type(err).__name__}: {err}"})
    print("GPUPLAN_RESULT " + json.dumps(results, default=str))


if __name__ == "__main__":
    main()
