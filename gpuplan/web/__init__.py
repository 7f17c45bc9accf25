"""``gpuplan web``: the HTTP API and the page (see docs/web.md).

Importing this package imports neither FastAPI nor uvicorn; :func:`serve` does, and says what to install
when they are missing (``pip install 'gpuplan[web]'``).
"""

from __future__ import annotations

import ipaddress
import re
from collections.abc import Sequence

from gpuplan.errors import GpuplanError, InputError

MIN_TOKEN_CHARS = 16
# Host headers a loopback server answers (any port): a page on another site that resolves its own name to
# 127.0.0.1 (DNS rebinding) sends its own name, and is refused.
LOOPBACK_HOSTS = ("127.0.0.1", "localhost", "[::1]", "::1")


def is_loopback(host: str) -> bool:
    if host.lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def check_serve_options(host: str, token: str | None) -> str | None:
    """Refuse an empty host (it would listen on every interface) and a short token; the warning to print when
    the server is reachable beyond this machine (None on loopback)."""
    if not host.strip():
        raise InputError("--host", "an empty address listens on every interface.",
                         "use --host 127.0.0.1 (this machine only), or name the interface, e.g. 0.0.0.0 with --token.")
    if token is not None and not re.fullmatch(r"[A-Za-z0-9._~+/=-]*", token):
        raise InputError("--token", "the token has characters other than letters, digits and ._~+/=-.",
                         "use a token such as python -c 'import secrets; print(secrets.token_urlsafe())' prints.")
    if token is not None and len(token) < MIN_TOKEN_CHARS:
        raise InputError("--token", f"the token has {len(token)} characters; guessable.",
                         f"use {MIN_TOKEN_CHARS} or more, e.g. from: python -c 'import secrets; "
                         "print(secrets.token_urlsafe())'.")
    if is_loopback(host):
        return None
    if token is None:
        return (f"listening on {host}: anyone who can reach this address can use the server. Add --token (or set "
                "GPUPLAN_WEB_TOKEN) to require a secret, or use --host 127.0.0.1.")
    return f"listening on {host}: every request needs the token."


def serve(host: str = "127.0.0.1", port: int = 8000, catalog_dirs: Sequence[str] = (),
          token: str | None = None, workers: int = 1) -> None:
    """Run the API and the page with uvicorn until interrupted. The catalog is loaded before the server
    starts, so a bad ``--catalog`` folder or row is reported at once rather than on the first request. On
    loopback only loopback Host headers are answered; ``token`` (if given) is required on every request.
    ``workers`` > 1 runs that many processes (uvicorn's workers), each building the app from the
    environment this sets (:func:`gpuplan.web.app.app_from_env`)."""
    try:
        import uvicorn

        from gpuplan.web.app import create_app
    except ImportError as exc:
        raise GpuplanError(f"the web server needs FastAPI and uvicorn ({exc.name} is not installed).",
                           "pip install 'gpuplan[web]'.") from None
    from gpuplan.catalog import load_catalog

    check_serve_options(host, token)
    load_catalog(tuple(catalog_dirs))
    _check_bind(host, port)
    hosts = LOOPBACK_HOSTS if is_loopback(host) else None
    if workers > 1:
        import os

        from gpuplan.web.app import ENV_CATALOG, ENV_HOSTS, ENV_TOKEN

        os.environ[ENV_CATALOG] = os.pathsep.join(catalog_dirs)
        os.environ[ENV_HOSTS] = ",".join(hosts) if hosts else ""
        if token:
            os.environ[ENV_TOKEN] = token
        uvicorn.run("gpuplan.web.app:app_from_env", factory=True, host=host, port=port, workers=workers,
                    log_level="info")
        return
    uvicorn.run(create_app(tuple(catalog_dirs), allowed_hosts=hosts, token=token), host=host, port=port,
                log_level="info")


def _check_bind(host: str, port: int) -> None:
    """Bind once before uvicorn does, so that a port in use or an address not of this machine is an error
    naming the option (uvicorn would log it and exit 1, the status of "no plan fits")."""
    import socket

    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE)
        family, kind, proto, _, address = infos[0]
        with socket.socket(family, kind, proto) as sock:
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            sock.bind(address)
    except (OSError, OverflowError, UnicodeError) as exc:
        raise InputError("--host/--port", f"cannot listen on {host}:{port} ({exc}).",
                         "choose a free --port from 1 to 65535, and a --host that is an address of this "
                         "machine.") from None


__all__ = ["check_serve_options", "is_loopback", "serve"]
