"""Catalog: load and validate the bundled data files and users' own; look things up with did-you-mean."""

from gpuplan.catalog.store import BUNDLED_DIR, ENV_VAR, Catalog, load_catalog, normalize

__all__ = ["BUNDLED_DIR", "ENV_VAR", "Catalog", "load_catalog", "normalize"]
