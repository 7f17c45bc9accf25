"""gpuplan: which GPU, where, how many, how long and at what cost, for LLM work.

The Python API is the library the CLI and the HTTP API are skins over::

    from gpuplan import load_catalog
    cat = load_catalog()
    cat.gpu("4090")                 # Gpu(name='RTX4090', ...)
    cat.model("Llama-2-7B")         # ModelSpec(...)

Importing gpuplan reads no files: the catalog is loaded on first use.
"""

from gpuplan.catalog import Catalog, load_catalog
from gpuplan.errors import GpuplanError, InputError
from gpuplan.estimate.params import count_params

__version__ = "0.1.0"

__all__ = ["Catalog", "GpuplanError", "InputError", "__version__", "count_params", "load_catalog"]
