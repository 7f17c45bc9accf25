"""Weight formats (bits per weight and what they apply to), read from ``data/quant_formats.csv``."""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from functools import cache, lru_cache
from types import MappingProxyType

from gpuplan.catalog.csvload import Column, read_table
from gpuplan.catalog.store import BUNDLED_DIR
from gpuplan.errors import InputError

_COLUMNS = (
    Column("format", required=True), Column("bits_per_weight", "float", True, positive=True, max=64),
    Column("scope", "enum", True, ("linear", "all", "experts")),
    Column("compute", "enum", True, ("fp32", "bf16", "fp16", "fp8", "int8", "fp4")),
    Column("source", required=True), Column("as_of", "date", True), Column("notes"),
)
_ALIASES = {"awq": "awq-int4", "gptq": "gptq-int4", "nf4": "bnb-nf4-dq", "qlora": "bnb-nf4-dq", "int4": "int4-wo",
            "q4_k_m": "gguf-q4_k_m", "q5_k_m": "gguf-q5_k_m", "q6_k": "gguf-q6_k", "q8_0": "gguf-q8_0",
            "q4_0": "gguf-q4_0", "q4_1": "gguf-q4_1", "q5_0": "gguf-q5_0", "q5_1": "gguf-q5_1", "q4_k_s": "gguf-q4_k_s",
            "q5_k_s": "gguf-q5_k_s", "mxfp4_moe": "gguf-mxfp4_moe", "mxfp4-moe": "gguf-mxfp4_moe",
            "float16": "fp16", "bfloat16": "bf16", "float32": "fp32",
            "awq-int4": "awq-int4", "llm.int8": "bnb-int8", "int8-weight-only": "int8-wo",
            "int4-weight-only": "int4-wo"}


@dataclass(frozen=True, slots=True)
class WeightFormat:
    """One way of storing weights (a row of ``quant_formats.csv``)."""

    name: str
    bits_per_weight: float
    scope: str  # linear: only the linear layers are stored this way; all: every tensor (GGUF); experts: routed experts
    compute: str  # the dtype the matmuls run in
    source: str

    @property
    def bytes_per_weight(self) -> float:
        return self.bits_per_weight / 8

    @property
    def is_16bit(self) -> bool:
        return self.name in ("bf16", "fp16")


@cache
def weight_formats() -> Mapping[str, WeightFormat]:
    rows = read_table(BUNDLED_DIR / "quant_formats.csv", _COLUMNS, ["format"], "gpuplan/data/quant_formats.csv")
    return MappingProxyType({r.values["format"]: WeightFormat(r.values["format"], r.values["bits_per_weight"],
                                                              r.values["scope"], r.values["compute"],
                                                              r.values["source"]) for r in rows})


def weight_format(name: str, field: str = "--quant") -> WeightFormat:
    """The format ``name`` names (aliases, any case, ``_`` or ``-``); an unknown name raises InputError."""
    return _weight_format(name, field)


@lru_cache(maxsize=512)  # estimators ask thousands of times per plan; a failed lookup raises and is not cached
def _weight_format(name: str, field: str) -> WeightFormat:
    formats = weight_formats()
    key = name.strip().lower().replace("_", "-") if name.lower() not in _ALIASES else name.lower()
    key = _ALIASES.get(name.strip().lower(), key)
    if key in formats:
        return formats[key]
    if key.replace("-", "_") in formats:
        return formats[key.replace("-", "_")]
    for fmt in formats:  # gguf names keep their underscore (gguf-q4_k_m)
        if fmt.replace("_", "-") == key:
            return formats[fmt]
    typed = _typed_format(name, field)
    if typed is not None and typed in formats:
        return formats[typed]
    from gpuplan.errors import close_matches

    hint = close_matches(name, list(formats))
    did = f"; did you mean {', '.join(hint)}?" if hint else "."
    raise InputError(field, f"unknown weight format '{name}'{did}", f"use one of: {', '.join(formats)}.")


# A llama.cpp file type as users type it (Q3_K_M, IQ4_XS) or as it ends a GGUF file name
# (Meta-Llama-3.1-8B-Instruct-Q4_K_M.gguf, ...-Q8_0-00001-of-00002.gguf); F16/BF16/F32 files are 16/32-bit
_GGUF_TYPE = re.compile(r"(?:^|[-_. ])(i?q\d_[a-z0-9]+(?:_[a-z]{1,2})?|b?f16|f32)(?:-\d{5}-of-\d{5})?(?:\.gguf)?$")
# llama.cpp's MXFP4_MOE file type as a GGUF file name ends (ggml-org/gpt-oss-20b-GGUF gpt-oss-20b-mxfp4.gguf, LM
# Studio's gpt-oss-120b-MXFP4-00001-of-00002.gguf) or as a name carries it (Qwen3-30B-A3B-MXFP4_MOE); a bare "-mxfp4"
# without .gguf is not taken for it: the checkpoint's own format (mxfp4) and MLX's (mlx-mxfp4) carry the name too
_MXFP4_GGUF = re.compile(r"(?:^|[-_. ])mxfp4(?:(?:_moe)?(?:-\d{5}-of-\d{5})?\.gguf|_moe)$")
_MLX_BITS = re.compile(r"^mlx[-_ ]?q?(\d)[-_ ]?(?:bits?)?$")  # mlx-3bit, MLX 6-bit, mlx_q5
# Files whose publisher picks tensor types outside llama.cpp's file types: unsloth's dynamic quants (UD-Q4_K_XL,
# UD-IQ2_XXS) choose per model which tensors to keep at more bits; bartowski's Q4_K_L/Q6_K_L keep the token table
# and output in Q8_0. Neither has one bits per weight to read from a table.
_UNSLOTH_DYNAMIC = re.compile(r"(?:^|[-_. ])ud[-_]")
_LARGE_SUFFIX = re.compile(r"_x?l$")
# llama-quantize's own shorthands (tools/quantize/quantize.cpp QUANT_OPTIONS: "alias for Q4_K_M")
_K_ALIASES = {"q3_k": "q3_k_m", "q4_k": "q4_k_m", "q5_k": "q5_k_m"}


def _typed_format(name: str, field: str) -> str | None:
    """The ``quant_formats.csv`` name of a GGUF type or MLX bit width as users type it, else None; a GGUF whose
    publisher picked its own tensor types raises InputError naming the llama.cpp type it is built on."""
    text = name.strip().lower()
    mlx = _MLX_BITS.match(text)
    if mlx:
        return f"mlx-q{mlx.group(1)}"
    if _MXFP4_GGUF.search(text):
        return "gguf-mxfp4_moe"
    gguf = _GGUF_TYPE.search(text)
    if gguf is None:
        return None
    ggml = _K_ALIASES.get(gguf.group(1), gguf.group(1))
    typed = {"f16": "fp16", "bf16": "bf16", "f32": "fp32"}.get(ggml, f"gguf-{ggml}")
    if _UNSLOTH_DYNAMIC.search(text) or (typed not in weight_formats() and _LARGE_SUFFIX.search(ggml)):
        stem = _LARGE_SUFFIX.sub("", ggml)
        base = f"gguf-{_K_ALIASES.get(stem, stem)}"
        base = base if base in weight_formats() or not stem.startswith("q8") else "gguf-q8_0"  # UD-Q8_K_XL
        raise InputError(field, f"'{name}' is a GGUF whose publisher chose each tensor's type (unsloth UD-*, "
                                f"bartowski *_K_L): it has no fixed bits per weight.",
                         f"use the llama.cpp type it is built on, --quant {base}; the file is larger than that "
                         f"type's estimate.")
    return typed


KV_BYTES_PER_VALUE = {"bf16": 2.0, "fp16": 2.0, "fp8": 1.0, "fp32": 4.0, "int8": 1.0, "q8_0": 34 / 32,
                      "q4_0": 18 / 32}


def kv_bytes_per_value(kv_dtype: str, field: str = "--kv-dtype") -> float:
    try:
        return KV_BYTES_PER_VALUE[kv_dtype]
    except KeyError:
        raise InputError(field, f"unknown KV-cache dtype '{kv_dtype}'.",
                         f"use one of: {', '.join(KV_BYTES_PER_VALUE)}.") from None


# A checkpoint whose routed experts ship in MXFP4 (gpt-oss: data/quant_formats.csv ``mxfp4``) runs in llama.cpp as
# the GGUF of file type MXFP4_MOE, its experts left in MXFP4, not in a runner's library default: ggml-org/gpt-oss-20b-
# GGUF and gpt-oss-120b-GGUF; LM Studio's lmstudio-community gpt-oss-120b-MXFP4-00001-of-00002.gguf loads in llama.cpp
# as general.file_type 38, 146 Q8_0 and 108 MXFP4 tensors, 59.02 GiB (ggml-org/llama.cpp issue #15253); Ollama's
# gpt-oss:120b blob holds its ffn_down_exps in an MXFP4 type of Ollama's own numbering (issue #15597), sized here as
# the same file
GGUF_OF_NATIVE = MappingProxyType({"mxfp4": "gguf-mxfp4_moe"})


def native_format(native_dtype: str) -> str:
    """The weight format a model is served in when none is asked for: its checkpoint's (FP8 for DeepSeek-V3,
    AWQ/GPTQ for pre-quantized repositories), 16-bit otherwise (BF16 for BF16 and FP32 checkpoints)."""
    if native_dtype in ("bf16", "fp32"):
        return "bf16"
    return native_dtype if native_dtype in weight_formats() else "fp16"
