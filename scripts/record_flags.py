"""Record the options a released engine or trainer accepts, as data the export tests check every export against.

gpuplan's exports (``--export vllm|sglang|k8s|skypilot``) must use only flags and config keys the pinned
version accepts. Installing these tools needs CUDA builds far too heavy for the test machine, so this script
builds each tool's *own* argument parser from its released source once, at data-build time, and writes every
option it accepts (with its choices) to ``gpuplan/data/flags/<tool>.json``:

- vllm 0.33.0 (PyPI wheel): ``vllm serve``'s parser (``make_arg_parser``). ``--quantization`` and
  ``--kv-cache-dtype`` are free strings in argparse, checked against ``QUANTIZATION_METHODS`` and
  ``KV_CACHE_DTYPES`` when the engine config is built; those lists are recorded as their choices.
- sglang 0.5.23 (PyPI wheel): ``python -m sglang.launch_server``'s parser (``ServerArgs.add_cli_args``).
- llamafactory 0.9.5 (PyPI wheel): the keys of ``llamafactory-cli train CONFIG.yaml`` (the ``HfArgumentParser``
  over ``_TRAIN_ARGS``; a YAML key is an option's ``dest``).
- Megatron-LM at a commit (GitHub source): ``pretrain_gpt.py``'s parser (``add_megatron_arguments``).
- trl 1.16.0 and torchtitan 0.3.0 (PyPI, installed by the test extra): ``trl sft``'s ``TrlParser`` (YAML keys are
  option dests) and ``torchtitan.train``'s tyro parser over ``llama3_8b``'s ``Trainer.Config`` (its flags, and the
  activation-checkpointing choices). The tests parse every export with these tools themselves.
- litgpt 0.5.13 (PyPI, installed without its declared dependencies from tests/requirements-export-nodeps.txt):
  ``litgpt finetune_full``'s jsonargparse parser (the one ``litgpt`` builds from ``PARSER_DATA``; YAML keys are
  option dests such as ``train.micro_batch_size``), ``--precision`` choices from Lightning Fabric's
  ``_PRECISION_INPUT_STR``, and LitGPT's model configs with the Hugging Face repository of each
  (``litgpt.config.configs``: ``litgpt download`` converts only those architectures); ``finetune_lora``'s options
  as ``lora_options``, ``finetune_adapter``'s and ``finetune_adapter_v2``'s as ``adapter_options`` and
  ``adapter_v2_options``.
- ms-swift 4.6.0 (PyPI, installed without its declared dependencies from tests/requirements-export-nodeps.txt):
  ``swift sft``'s ``HfArgumentParser`` over ``SftArguments`` (``swift.utils.parse_args``; a YAML key is an option's
  dest, as ``swift.cli.main.parse_yaml_args`` turns each key into ``--key``), ``tuner_type`` choices from
  ``get_supported_tuners``.
- axolotl 0.19.0 (PyPI, installed without its declared dependencies from tests/requirements-export-nodeps.txt):
  the fields of its pydantic config schema, ``AxolotlInputConfig`` (axolotl/utils/schemas/config.py), which
  ``axolotl train CONFIG.yaml`` validates the file against (the schema ignores unknown keys, so the record is what
  tells an unknown key from a known one; the tests validate every export with ``validate_config``).
- torchtune 0.6.1 (PyPI, installed without its declared dependencies from tests/requirements-export-nodeps.txt, with
  torchao 0.13.0, the last whose ``torchao.dtypes.nf4tensor`` torchtune 0.6.1 imports): the four fine-tuning recipes
  of ``tune ls`` (``torchtune._recipe_registry``) with the config keys each reads (``cfg.KEY`` and
  ``cfg.get("KEY")`` in the recipe's source: the recipe ignores any other key, so the record is what tells an unknown
  key from a known one), the model families of its shipped configs that load Hugging Face checkpoints (the
  tokenizer builder, the tokenizer files in the downloaded repository, the checkpointer's ``model_type``), and each
  family module's builders with their parameters.
- unsloth 2026.10.9 (PyPI, installed without its declared dependencies from tests/requirements-export-nodeps.txt;
  it cannot be imported without an NVIDIA GPU): the parameters of ``FastLanguageModel.from_pretrained``
  (unsloth/models/loader.py) as ``options`` and of ``FastLlamaModel.get_peft_model`` (unsloth/models/llama.py, which
  ``FastLanguageModel.get_peft_model`` hands its arguments to) as ``peft_options``, read from the source with ``ast``.
- DeepSpeed-Chat (deepspeedai/DeepSpeedExamples at a commit; its ``dschat`` package is not on PyPI): the
  ``add_argument`` calls of ``training/step1_supervised_finetuning/main.py``'s ``parse_args``, read with ``ast``
  (each option's name, whether it takes a value, its type name, ``nargs`` and choices), so that the tests can rebuild
  the parser; the script adds DeepSpeed's own ``--deepspeed`` options with ``deepspeed.add_config_arguments``.

To regenerate (no GPU needed)::

    pip download --no-deps -d wheels vllm==0.33.0 sglang==0.5.23 llamafactory==0.9.5
    for w in wheels/*.whl; do unzip -q -o "$w" -d src; done    # plus Megatron-LM's tree, git archive'd into src
    # the parsers import pure-Python packages the project does not need: install the ones an import names as
    # missing with `pip install --no-deps --target deps NAME` (msgspec, pybase64, cbor2, openai, dill, ...)
    PYTHONPATH=src:deps python scripts/record_flags.py vllm wheels/vllm-0.33.0-cp38-abi3-manylinux_2_28_x86_64.whl
    PYTHONPATH=src:deps python scripts/record_flags.py sglang wheels/sglang-0.5.23-cp311-cp311-manylinux_2_34_x86_64.whl
    PYTHONPATH=src:deps DISABLE_VERSION_CHECK=1 \\
        python scripts/record_flags.py llamafactory wheels/llamafactory-0.9.5-py3-none-any.whl
    PYTHONPATH=src:deps python scripts/record_flags.py megatron NVIDIA/Megatron-LM@<commit>
    python scripts/record_flags.py trl pypi:trl==1.16.0               # pip install -e ".[test]" installs both
    python scripts/record_flags.py torchtitan pypi:torchtitan==0.3.0
    python scripts/record_flags.py litgpt pypi:litgpt==0.5.13
    HF_HUB_OFFLINE=1 python scripts/record_flags.py swift pypi:ms-swift==4.6.0
    python scripts/record_flags.py axolotl pypi:axolotl==0.19.0
    git -C DeepSpeedExamples show <commit>:applications/DeepSpeed-Chat/training/step1_supervised_finetuning/main.py \
        > main.py && python scripts/record_flags.py deepspeed_chat main.py@<commit>
    PYTHONPATH=.venv/torchao-for-torchtune python scripts/record_flags.py torchtune pypi:torchtune==0.6.1
    python scripts/record_flags.py unsloth pypi:unsloth==2026.10.9
"""

from __future__ import annotations

import argparse
import datetime as dt
import hashlib
import json
import sys
from pathlib import Path
from typing import Any

OUT = Path(__file__).resolve().parent.parent / "gpuplan" / "data" / "flags"


def _vllm() -> tuple[argparse.ArgumentParser, dict[str, list[str]]]:
    import vllm.platforms as platforms
    from vllm.platforms.cpu import CpuPlatform

    platforms._current_platform = CpuPlatform()  # no GPU here; any platform builds the same parser
    from vllm.config.cache import KV_CACHE_DTYPES
    from vllm.entrypoints.common.cli_args import make_arg_parser
    from vllm.model_executor.layers.quantization import QUANTIZATION_METHODS
    from vllm.utils.argparse_utils import FlexibleArgumentParser

    return make_arg_parser(FlexibleArgumentParser()), {"--quantization": list(QUANTIZATION_METHODS),
                                                       "--kv-cache-dtype": list(KV_CACHE_DTYPES)}


def _sglang() -> tuple[argparse.ArgumentParser, dict[str, list[str]]]:
    from sglang.srt.server_args import ServerArgs

    parser = argparse.ArgumentParser()
    ServerArgs.add_cli_args(parser)
    return parser, {}


def _llamafactory() -> tuple[argparse.ArgumentParser, dict[str, list[str]]]:
    from llamafactory.hparams.parser import _TRAIN_ARGS
    from transformers import HfArgumentParser

    return HfArgumentParser(_TRAIN_ARGS), {}


def _megatron() -> tuple[argparse.ArgumentParser, dict[str, list[str]]]:
    import typing

    import typing_extensions

    if not hasattr(typing, "override"):  # Megatron-LM imports typing.override (Python 3.12)
        typing.override = typing_extensions.override  # type: ignore[attr-defined]
    from megatron.training.arguments import add_megatron_arguments

    return add_megatron_arguments(argparse.ArgumentParser(allow_abbrev=False)), {}


def _trl() -> tuple[argparse.ArgumentParser, dict[str, list[str]]]:
    from trl.scripts.sft import make_parser

    return make_parser(), {}


def _torchtitan() -> tuple[argparse.ArgumentParser, dict[str, list[str]]]:
    import tyro
    from torchtitan.config.manager import ConfigManager, custom_registry

    manager = ConfigManager()  # registers its tyro rules
    loaded, _ = manager._load_config(["--module", "llama3", "--config", "llama3_8b"])
    parser = tyro.extras.get_parser(type(loaded), default=loaded, registry=custom_registry)
    subcommands = [a for a in parser._actions if type(a).__name__ == "_SubParsersAction"]  # tyro's own argparse
    # activation checkpointing is a positional choice (activation-checkpoint:selective|full|memory-budget|none)
    return parser, {name: [] for a in subcommands for name in a.choices}


def _litgpt() -> tuple[argparse.ArgumentParser, dict[str, list[str]]]:
    import typing

    import litgpt.__main__ as litgpt_cli
    from jsonargparse import CLI, capture_parser
    from lightning.fabric.connector import _PRECISION_INPUT_STR

    parser = capture_parser(lambda: CLI(litgpt_cli.PARSER_DATA, args=["finetune_full", "--help"]))
    subcommands = parser._subcommands_action._name_parser_map  # type: ignore[attr-defined]
    return subcommands["finetune_full"], {"--precision": list(typing.get_args(_PRECISION_INPUT_STR))}


def _litgpt_sub(name: str) -> argparse.ArgumentParser:
    """A ``litgpt`` fine-tuning subcommand's parser: ``finetune_lora`` (LoRA and QLoRA: the rank, alpha, targets and
    ``--quantize``), ``finetune_adapter`` or ``finetune_adapter_v2`` (LLaMA-Adapter: ``--quantize``)."""
    import litgpt.__main__ as litgpt_cli
    from jsonargparse import CLI, capture_parser

    parser = capture_parser(lambda: CLI(litgpt_cli.PARSER_DATA, args=[name, "--help"]))
    return parser._subcommands_action._name_parser_map[name]  # type: ignore[attr-defined, no-any-return]


def _swift() -> tuple[argparse.ArgumentParser, dict[str, list[str]]]:
    from swift.arguments import SftArguments
    from swift.arguments.base_args.base_args import get_supported_tuners
    from swift.utils.utils import _patch_get_type_hints
    from transformers import HfArgumentParser

    with _patch_get_type_hints():  # as swift.utils.parse_args builds it
        parser = HfArgumentParser([SftArguments])
    return parser, {"--tuner_type": sorted(get_supported_tuners())}


def _axolotl() -> tuple[argparse.ArgumentParser, dict[str, list[str]]]:
    """The schema's fields as a parser of ``--field`` options (dest: the YAML key), for ``_options``."""
    from axolotl.utils.schemas.config import AxolotlInputConfig

    parser = argparse.ArgumentParser(add_help=False)
    for name in AxolotlInputConfig.model_fields:
        parser.add_argument(f"--{name}", dest=name)
    return parser, {}


_TORCHTUNE_RECIPES = ("full_finetune_single_device", "full_finetune_distributed", "lora_finetune_single_device",
                      "lora_finetune_distributed")


def _keys_read(source: str) -> list[str]:
    """The config keys a recipe reads: ``cfg.KEY`` and ``cfg.get("KEY", ...)``."""
    import ast

    keys = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == "cfg":
            keys.add(node.attr)
        if (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "get"
                and isinstance(node.func.value, ast.Name) and node.func.value.id == "cfg" and node.args
                and isinstance(node.args[0], ast.Constant)):
            keys.add(node.args[0].value)
    return sorted(keys - {"get"})


def _torchtune_family(cfg: Any) -> dict[str, Any] | None:
    """What a shipped config says about its model family, or None where it does not load a Hugging Face
    checkpoint with a text tokenizer."""
    ckpt = cfg.get("checkpointer") or {}
    tokenizer = cfg.tokenizer
    if ckpt.get("_component_") != "torchtune.training.FullModelHFCheckpointer" or not str(
            tokenizer._component_).endswith("_tokenizer"):
        return None
    repo = str(ckpt.checkpoint_dir).rstrip("/") + "/"
    files = {k: str(v)[len(repo):] for k, v in tokenizer.items()
             if isinstance(v, str) and k != "_component_" and str(v).startswith(repo)}
    return {"tokenizer": str(tokenizer._component_), "tokenizer_files": files, "model_type": str(ckpt.model_type)}


def _torchtune() -> dict[str, Any]:
    """The recipes (the keys each reads), the model families of the shipped configs, and their builders."""
    import importlib
    import inspect

    import torchtune
    from omegaconf import OmegaConf
    from torchtune._recipe_registry import get_all_recipes

    root = Path(torchtune.__file__).resolve().parent.parent / "recipes"
    recipes, families = {}, {}
    for recipe in get_all_recipes():
        if recipe.name not in _TORCHTUNE_RECIPES:
            continue
        recipes[recipe.name] = {"distributed": recipe.supports_distributed,
                                "keys": _keys_read((root / recipe.file_path).read_text(encoding="utf-8"))}
        for config in recipe.configs:
            cfg = OmegaConf.load(root / "configs" / config.file_path)
            family = _torchtune_family(cfg)
            module = str(cfg.model._component_).rsplit(".", 1)[0]
            if family and module not in families:
                families[module] = {**family, "config": config.name}
    for module, family in families.items():
        mod = importlib.import_module(module)
        family["builders"] = {name: sorted(inspect.signature(getattr(mod, name)).parameters)
                              for name in sorted(mod.__all__) if callable(getattr(mod, name))
                              and not inspect.isclass(getattr(mod, name))
                              and not name.endswith(("_tokenizer", "_transform"))}
    return {"recipes": dict(sorted(recipes.items())), "families": dict(sorted(families.items()))}


def _unsloth_parameters(module: str, cls: str, method: str) -> list[str]:
    """The named parameters of ``cls.method`` in the installed ``unsloth`` package's ``module``, read with ``ast``
    (importing unsloth needs an NVIDIA GPU)."""
    import ast
    import importlib.util

    spec = importlib.util.find_spec("unsloth")  # the top package is located, not imported
    assert spec and spec.submodule_search_locations
    path = Path(next(iter(spec.submodule_search_locations)), *module.split(".")).with_suffix(".py")
    tree = ast.parse(path.read_text(encoding="utf-8"))
    body = next(n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == cls).body
    fn = next(n for n in body if isinstance(n, ast.FunctionDef) and n.name == method)
    return sorted(a.arg for a in (*fn.args.posonlyargs, *fn.args.args, *fn.args.kwonlyargs))


def _deepspeed_chat_options(script: Path) -> dict[str, Any]:
    """The options of the script's ``add_argument`` calls: literal keywords only, as DeepSpeed-Chat writes them."""
    import ast

    options: dict[str, Any] = {}
    for node in ast.walk(ast.parse(script.read_text(encoding="utf-8"))):
        if not (isinstance(node, ast.Call) and getattr(node.func, "attr", "") == "add_argument"):
            continue
        kw = {k.arg: k.value for k in node.keywords}
        typ, action, choices = kw.get("type"), kw.get("action"), kw.get("choices")
        options[ast.literal_eval(node.args[0])] = {
            "takes_value": not (isinstance(action, ast.Constant) and action.value == "store_true"),
            "choices": [ast.literal_eval(c) for c in choices.elts] if isinstance(choices, ast.List) else None,
            "type": typ.id if isinstance(typ, ast.Name) else None,
            "nargs": ast.literal_eval(kw["nargs"]) if "nargs" in kw else None}
    return dict(sorted(options.items()))


def _unsloth_options(names: list[str]) -> dict[str, Any]:
    return {name: {"takes_value": True, "choices": None} for name in names}


def _litgpt_models() -> dict[str, str]:
    """LitGPT's model config names, each with the Hugging Face repository it converts."""
    from litgpt.config import configs

    return dict(sorted((c["name"], f"{c['hf_config']['org']}/{c['hf_config']['name']}") for c in configs))


def _options(parser: argparse.ArgumentParser, extra_choices: dict[str, list[str]], by_dest: bool) -> dict[str, Any]:
    options: dict[str, Any] = {}
    for action in parser._actions:
        names = [action.dest] if by_dest else [f for f in action.option_strings if f.startswith("--")]
        for name in names:
            flag = action.option_strings[0] if action.option_strings else name
            choices = extra_choices.get(flag, action.choices)
            options[name] = {"takes_value": action.nargs != 0,
                             "choices": sorted(str(c) for c in choices) if choices else None}
    options.pop("help", None)
    options.pop("--help", None)
    return dict(sorted(options.items()))


def main() -> None:
    tool, origin = sys.argv[1], sys.argv[2]
    if tool == "torchtune":
        _write({"tool": tool, "version": origin.split("==")[1], "source": f"PyPI {origin[5:]} (installed)",
                "recorded": dt.date.today().isoformat(),
                "how": "the recipes' own source and shipped configs, read by scripts/record_flags.py",
                **_torchtune()})
        return
    if tool == "unsloth":
        _write({"tool": tool, "version": origin.split("==")[1], "source": f"PyPI {origin[5:]} (installed)",
                "recorded": dt.date.today().isoformat(),
                "how": "the parameters of FastLanguageModel.from_pretrained (options) and "
                       "FastLlamaModel.get_peft_model (peft_options), read from the source with ast by "
                       "scripts/record_flags.py",
                "keys": "keyword arguments",
                "options": _unsloth_options(_unsloth_parameters("models.loader", "FastLanguageModel",
                                                                "from_pretrained")),
                "peft_options": _unsloth_options(_unsloth_parameters("models.llama", "FastLlamaModel",
                                                                     "get_peft_model"))})
        return
    if tool == "deepspeed_chat":  # origin: PATH@COMMIT, main.py as of that commit
        path, commit = origin.rsplit("@", 1)
        _write({"tool": tool, "version": commit,
                "source": f"GitHub deepspeedai/DeepSpeedExamples@{commit} applications/DeepSpeed-Chat/training/"
                          "step1_supervised_finetuning/main.py",
                "recorded": dt.date.today().isoformat(),
                "how": "the add_argument calls of the script's parse_args, read with ast by scripts/record_flags.py "
                       "(the script adds DeepSpeed's own --deepspeed/--deepspeed_config with "
                       "deepspeed.add_config_arguments)",
                "keys": "command-line flags", "options": _deepspeed_chat_options(Path(path))})
        return
    parser, extra = {"vllm": _vllm, "sglang": _sglang, "llamafactory": _llamafactory, "megatron": _megatron,
                     "trl": _trl, "torchtitan": _torchtitan, "litgpt": _litgpt, "swift": _swift,
                     "axolotl": _axolotl}[tool]()
    by_dest = tool in ("llamafactory", "trl", "litgpt", "swift", "axolotl")
    if origin.endswith(".whl"):
        wheel = Path(origin)
        where = {"version": wheel.name.split("-")[1], "source": f"PyPI wheel {wheel.name}",
                 "sha256": hashlib.sha256(wheel.read_bytes()).hexdigest()}
    elif origin.startswith("pypi:"):  # the installed release: pypi:NAME==VERSION
        where = {"version": origin.split("==")[1], "source": f"PyPI {origin[5:]} (installed)"}
    else:
        where = {"version": origin.split("@")[1], "source": f"GitHub {origin}"}
    record = {"tool": tool, **where, "recorded": dt.date.today().isoformat(),
              "how": ("the fields of the tool's pydantic config schema (AxolotlInputConfig)" if tool == "axolotl" else
                      "the tool's own argument parser") + ", built from that source by scripts/record_flags.py",
              "keys": "yaml-config keys (option dest)" if by_dest else "command-line flags",
              "options": {**_options(parser, extra, by_dest), **{name: {"takes_value": False, "choices": None}
                                                                  for name in extra if not name.startswith("-")}}}
    if tool == "litgpt":
        record["lora_options"] = _options(_litgpt_sub("finetune_lora"), extra, by_dest)
        record["adapter_options"] = _options(_litgpt_sub("finetune_adapter"), extra, by_dest)
        record["adapter_v2_options"] = _options(_litgpt_sub("finetune_adapter_v2"), extra, by_dest)
        record["models"] = _litgpt_models()
    _write(record)


def _write(record: dict[str, Any]) -> None:
    OUT.mkdir(parents=True, exist_ok=True)
    (OUT / f"{record['tool']}.json").write_text(json.dumps(record, indent=1) + "\n", encoding="utf-8")
    print(f"{record['tool']} {record['version']}: {len(record.get('options', record.get('recipes', {})))} options")


if __name__ == "__main__":
    main()
