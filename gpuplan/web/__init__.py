"""``gpuplan web``: the HTTP API and the page (see docs/web.md).

Importing this package imports neither FastAPI nor uvicorn; :func:`serve` does, and says what to install
when they are missing (``pip install 'gpuplan[web]'``).
"""

from __future__ import annotations

from collections.abc import Sequence

from gpuplan.errors import GpuplanError


def serve(host: str = "127.0.0.1", port: int = 8000, catalog_dirs: Sequence[str] = ()) -> None:
    """Run the API and the page with uvicorn until interrupted. The catalog is loaded before the server
    starts, so a bad ``--catalog`` folder or row is reported at once rather than on the first request."""
    try:
        import uvicorn

        from gpuplan.web.app import create_app
    except ImportError as exc:
        raise GpuplanError(f"the web server needs FastAPI and uvicorn ({exc.name} is not installed).",
                           "pip install 'gpuplan[web]'.") from None
    from gpuplan.catalog import load_catalog

    load_catalog(tuple(catalog_dirs))
    uvicorn.run(create_app(tuple(catalog_dirs)), host=host, port=port, log_level="info")


__all__ = ["serve"]
