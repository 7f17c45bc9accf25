"""gpuplan: which GPU, where, how many, how long and at what cost, for LLM work.

The Python API is the library the CLI and the HTTP API are skins over::

    import gpuplan
    p = gpuplan.plan("Qwen2.5-7B", "finetune", samples="20k", tokens_per_sample="1k")
    p                               # the ranked plans; a table in a notebook; p.to_pandas() with pandas
    e = gpuplan.estimate("Qwen2.5-7B", "RTX4090", task="finetune", method="qlora", samples="20k",
                         tokens_per_sample="1k")
    e.fits, e.needed_bytes

    cat = gpuplan.load_catalog()
    cat.gpu("4090")                 # Gpu(name='RTX4090', ...)
    cat.model("Llama-2-7B")         # ModelSpec(...)

Importing gpuplan reads no files: the catalog is loaded on first use. ``gpuplan.plan`` and ``gpuplan.estimate``
are the packages of the planner and the estimators, callable as the API's :func:`gpuplan.api.plan` and
:func:`gpuplan.api.estimate`.
"""

import gpuplan.estimate as estimate
import gpuplan.plan as plan
from gpuplan.catalog import Catalog, load_catalog
from gpuplan.errors import GpuplanError, InputError
from gpuplan.estimate.params import count_params
from gpuplan.types import Job

__version__ = "0.1.0"


def __getattr__(name: str) -> object:  # the API's result types, imported on first use
    if name in ("Estimate", "Plan"):
        from gpuplan import api

        return getattr(api, name)
    raise AttributeError(f"module 'gpuplan' has no attribute '{name}'")


__all__ = ["Catalog", "Estimate", "GpuplanError", "InputError", "Job", "Plan", "__version__", "count_params",
           "estimate", "load_catalog", "plan"]
