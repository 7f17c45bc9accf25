"""Files that are not what they claim: model configs with non-finite or zero sizes, absurd nesting or custom
code, and catalog folders holding FIFOs, devices, link loops, dangling links or overlong cells. Each ends in
an error naming the file (and the field), quickly: nothing hangs, nothing reads /dev/zero, nothing recurses
until Python gives up."""

from __future__ import annotations

import contextlib
import json
import os
import signal
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from gpuplan.catalog import BUNDLED_DIR, load_catalog
from gpuplan.catalog.hfconfig import read_config_file
from gpuplan.errors import CatalogError, InputError, ModelConfigError

LLAMA = {  # Llama-2-7B's shape
    "model_type": "llama", "hidden_size": 4096, "intermediate_size": 11008, "num_attention_heads": 32,
    "num_hidden_layers": 32, "num_key_value_heads": 32, "vocab_size": 32000, "max_position_embeddings": 4096,
}
MIXTRAL = {**LLAMA, "model_type": "mixtral", "num_local_experts": 8, "num_experts_per_tok": 2}


@contextlib.contextmanager
def within(seconds: int) -> Iterator[None]:
    """Fail (instead of hanging the test run) when the block takes longer than ``seconds``."""
    def expired(signum: int, frame: Any) -> None:
        raise TimeoutError(f"still running after {seconds} s")

    previous = signal.signal(signal.SIGALRM, expired)
    signal.alarm(seconds)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)


def _config(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "config.json"
    path.write_text(text, encoding="utf-8")
    return path


# ---------------------------------------------------------------- model configs


@pytest.mark.parametrize(("text", "words"), [
    (json.dumps(LLAMA).replace("4096,", "Infinity,", 1), "field hidden_size is inf, not a finite number"),
    (json.dumps(LLAMA).replace("4096,", "1e400,", 1), "field hidden_size is inf, not a finite number"),
    (json.dumps(LLAMA).replace("4096,", "NaN,", 1), "field hidden_size is nan, not a finite number"),
    (json.dumps({**LLAMA, "rope_scaling": {"factor": 1}}).replace('"factor": 1', '"factor": -Infinity'),
     "field rope_scaling.factor is -inf"),
    (json.dumps({**LLAMA, "num_attention_heads": 10**400}), "attention heads 401 digits long is outside"),
], ids=["infinity", "1e400", "nan", "nested-field", "huge-int"])
def test_non_finite_and_huge_numbers_name_the_field(tmp_path: Path, text: str, words: str) -> None:
    with pytest.raises(ModelConfigError) as info:
        read_config_file(_config(tmp_path, text))
    assert words in str(info.value) and info.value.fix


@pytest.mark.parametrize("text", ["[" * 100_000 + "]" * 100_000, '{"a": ' + "{" * 50 + "}" * 51,
                                  json.dumps({**LLAMA, "x": json.loads("[" * 33 + "]" * 33)})],
                         ids=["100k-arrays", "nested-objects", "inside-a-config"])
def test_deep_nesting_is_refused_before_the_parser_recurses(tmp_path: Path, text: str) -> None:
    with within(10), pytest.raises(ModelConfigError, match="nests more than 32 levels"):
        read_config_file(_config(tmp_path, text))


def test_brackets_inside_strings_are_not_nesting(tmp_path: Path) -> None:
    spec = read_config_file(_config(tmp_path, json.dumps({**LLAMA, "note": "[" * 100 + '\\"{' * 50})))
    assert spec.hidden == 4096


@pytest.mark.parametrize(("config", "words"), [
    ({**LLAMA, "intermediate_size": 0}, "FFN size 0 is outside [1, 2000000]"),
    ({**LLAMA, "head_dim": 0}, "field head_dim is 0"),  # the reader would silently use hidden / heads
    ({**LLAMA, "max_position_embeddings": 0}, "max positions 0 is outside"),
    ({**LLAMA, "vocab_size": -5}, "vocabulary -5 is outside"),
    ({**MIXTRAL, "intermediate_size": 0}, "FFN size 0"),
    ({**LLAMA, "model_type": "qwen2_moe", "num_experts": 8, "num_experts_per_tok": 2, "moe_intermediate_size": 0},
     "expert FFN size 0 is outside"),
], ids=["ffn-0", "head-dim-0", "positions-0", "vocab-negative", "mixtral-ffn-0", "moe-ffn-0"])
def test_zero_and_negative_sizes_are_refused(tmp_path: Path, config: dict[str, Any], words: str) -> None:
    with pytest.raises(ModelConfigError) as info:
        read_config_file(_config(tmp_path, json.dumps(config)))
    assert words in str(info.value)


def test_custom_code_of_an_unknown_type_is_refused_naming_auto_map(tmp_path: Path) -> None:
    config = {**LLAMA, "model_type": "fancy_llama", "auto_map": {"AutoModelForCausalLM": "modeling_fancy.Fancy"}}
    with pytest.raises(ModelConfigError) as info:
        read_config_file(_config(tmp_path, json.dumps(config)))
    assert "has auto_map" in str(info.value) and "'fancy_llama'" in str(info.value)
    assert "never runs that code" in str(info.value) and "llama" in info.value.fix


def test_custom_code_of_a_type_gpuplan_reads_is_sized_by_that_reader(tmp_path: Path) -> None:
    # ChatGLM, Qwen (v1), Baichuan and InternLM2 ship remote code; their readers follow that code's layout
    config = {**LLAMA, "auto_map": {"AutoModelForCausalLM": "modeling_llama.LlamaForCausalLM"}}
    assert read_config_file(_config(tmp_path, json.dumps(config))).hidden == 4096


def _special_file(path: Path, kind: str) -> None:
    """Make ``path`` a FIFO, a link to /dev/zero, a dangling link, a link to itself, or a folder."""
    if kind == "fifo":
        os.mkfifo(path)
    elif kind == "dev-zero":
        path.symlink_to("/dev/zero")
    elif kind == "dangling":
        path.symlink_to(path.parent / "moved-away")
    elif kind == "loop":
        path.symlink_to(path)
    else:
        path.mkdir()


@pytest.mark.parametrize("kind", ["fifo", "dev-zero", "dangling", "loop"])
def test_a_config_that_is_not_a_regular_file_is_refused_at_once(tmp_path: Path, kind: str) -> None:
    path = tmp_path / "config.json"
    _special_file(path, kind)
    with within(10), pytest.raises(ModelConfigError) as info:
        read_config_file(path)
    assert str(path) in str(info.value)
    assert {"fifo": "named pipe", "dev-zero": "a device", "dangling": "does not exist",
            "loop": "loops"}[kind] in str(info.value)


# ---------------------------------------------------------------- catalog folders


def _catalog_error(folder: Path) -> CatalogError:
    with within(10), pytest.raises(CatalogError) as info:
        load_catalog([folder])
    return info.value


@pytest.mark.parametrize(("kind", "words"), [
    ("fifo", "is a named pipe (FIFO), not a regular file."),
    ("dev-zero", "is a device, not a regular file."),
    ("dangling", "which does not exist."),
    ("loop", "is a symbolic link that loops"),
    ("folder", "is a folder, not a regular file."),
], ids=["fifo", "dev-zero", "dangling", "loop", "folder"])
def test_a_catalog_file_that_is_not_a_regular_file_is_named(tmp_path: Path, kind: str, words: str) -> None:
    path = tmp_path / "fx.csv"
    _special_file(path, kind)
    err = _catalog_error(tmp_path)
    assert str(err).startswith(f"{path}: ") and words in str(err), str(err)
    assert err.fix


def test_a_dangling_offer_file_is_an_error_not_prices_that_quietly_do_not_apply(tmp_path: Path) -> None:
    (tmp_path / "offers").mkdir()
    (tmp_path / "offers" / "mycloud.csv").symlink_to(tmp_path / "elsewhere.csv")
    assert "offers/mycloud.csv" in str(_catalog_error(tmp_path))


def test_a_file_over_the_size_limit_is_refused_without_reading_it(tmp_path: Path) -> None:
    path = tmp_path / "fx.csv"
    with path.open("wb") as f:
        f.truncate(17 * 1024 * 1024)  # sparse: 17 MiB of nothing
    assert "larger than 16 MiB" in str(_catalog_error(tmp_path))


def test_a_cell_over_the_csv_field_limit_is_an_error_at_its_line(tmp_path: Path) -> None:
    header = (BUNDLED_DIR / "fx.csv").read_text(encoding="utf-8").splitlines()[0]
    (tmp_path / "fx.csv").write_text(f'{header}\n2025-01-01,USD,CNY,7.2,"{"x" * 200_000}"\n', encoding="utf-8")
    err = _catalog_error(tmp_path)
    assert err.line == 2 and "cannot be read as CSV" in str(err) and "field larger than field limit" in str(err)


def test_a_catalog_folder_that_is_a_link_loop_names_the_option(tmp_path: Path) -> None:
    (tmp_path / "loop").symlink_to(tmp_path / "loop")
    with pytest.raises(InputError, match=r"--catalog: .* cannot be opened as a folder"):
        load_catalog([tmp_path / "loop"])


def test_the_catalog_lists_the_bundled_rows_a_user_folder_replaces(tmp_path: Path) -> None:
    lines = (BUNDLED_DIR / "fx.csv").read_text(encoding="utf-8").splitlines()
    (tmp_path / "fx.csv").write_text("\n".join([lines[0], lines[1]]) + "\n", encoding="utf-8")
    date, base, quote = lines[1].split(",")[:3]
    cat = load_catalog([tmp_path])
    assert cat.replaced == (f"fx.csv '{date}/{base}/{quote}' (by {tmp_path})",)
    assert load_catalog().replaced == ()
