"""GGUF weight bytes against the file sizes calibration rows state (a diagnostic, not a report).

    python bench/gguf_sizes.py

A llama.cpp row may state its GGUF's size: llama-bench's model size ("file 4.58 GiB": the sum of the tensors'
bytes, in GiB), mac-llm-bench's file size ("file 4.36 GB as recorded": os.path.getsize / 2^30, so GiB although
it says GB, header and metadata included) or the size in the precision column ("GGUF, 39.59 GiB"). Each distinct
(model, format, file, size) is compared with :func:`gguf_weights_bytes`, then the signed errors are summarized per
model family. Files whose publisher picks its own tensor types (calib ``_OWN_TENSOR_TYPES``) are listed but left
out of the summary: the recipe is not theirs.
"""

from __future__ import annotations

import csv
import re
import statistics
import sys
from collections import defaultdict
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from calib import _OWN_TENSOR_TYPES, CALIBRATION, _precision, _preset_for  # noqa: E402

from gpuplan.catalog import load_catalog  # noqa: E402
from gpuplan.estimate.memory import gguf_weights_bytes  # noqa: E402
from gpuplan.estimate.quant import weight_format  # noqa: E402
from gpuplan.units import GiB  # noqa: E402

# each a size in GiB: llama-bench's model size, mac-llm-bench's recorded file size, a size in the precision column
_STATED = (re.compile(r"\bfile (\d+(?:\.\d+)?) GiB"), re.compile(r"\bfile (\d+(?:\.\d+)?) GB as recorded"),
           re.compile(r"GGUF, (\d+(?:\.\d+)?) GiB"))


def stated_gib(row: dict[str, str]) -> float | None:
    """The GGUF size a row states, in GiB, else None."""
    for pattern in _STATED:
        found = pattern.search(row["precision"]) or pattern.search(row["notes"])
        if found:
            return float(found.group(1))
    return None


def stated_files() -> dict[tuple[str, str, str, float], list[str]]:
    """(preset, format, model label, stated GiB) -> ids of the rows that state it."""
    cat = load_catalog()
    files: dict[tuple[str, str, str, float], list[str]] = defaultdict(list)
    for path in sorted(CALIBRATION.glob("*.csv")):
        with path.open(encoding="utf-8") as f:
            for row in csv.DictReader(f):
                prec = _precision(row["precision"]) if "gguf" in row["precision"].lower() else None
                size, preset = stated_gib(row), _preset_for(cat, row["model"])
                if prec and size and preset:
                    files[(preset, prec[0], row["model"], size)].append(row["id"])
    return files


def family(preset: str) -> str:
    """The preset's name before its size: 'Qwen3-30B-A3B' -> 'Qwen3', 'Gemma-3-12B' -> 'Gemma-3'."""
    found = re.match(r"(.+?)-\d+(?:\.\d+)?B\b", preset)
    return found.group(1) if found else preset


def main() -> int:
    cat = load_catalog()
    errors: dict[str, list[float]] = defaultdict(list)
    for (preset, fmt, label, size), ids in sorted(stated_files().items()):
        est = gguf_weights_bytes(cat.model(preset), weight_format(fmt)) / GiB
        own = label.lower().startswith(_OWN_TENSOR_TYPES)
        err = est / size - 1
        print(f"{preset:24s} {fmt:12s} {label[:42]:42s} stated {size:7.2f} est {est:7.3f} GiB {100 * err:+6.1f}%"
              f"{'  own types' if own else ''}  ({len(ids)} rows, {ids[0]})")
        if not own:
            errors[family(preset)].append(err)
    print(f"\n{'family':20s} files  median  worst (signed, predicted / stated - 1)")
    for name, errs in sorted(errors.items()):
        worst = max(errs, key=abs)
        print(f"{name:20s} {len(errs):5d} {100 * statistics.median(errs):+6.1f}% {100 * worst:+6.1f}%")
    every = [e for errs in errors.values() for e in errs]
    print(f"{'all':20s} {len(every):5d} {100 * statistics.median(every):+6.1f}% "
          f"{100 * max(every, key=abs):+6.1f}%  median |error| {100 * statistics.median(map(abs, every)):.1f}%")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
