"""What every HTTP request passes before the API sees it, as one ASGI middleware (no FastAPI needed here):

1. the Host header, when the server listens on loopback: only ``127.0.0.1``, ``localhost`` and ``[::1]``, so a
   web page whose own name resolves to 127.0.0.1 (DNS rebinding) cannot use the API from a visitor's browser;
2. the token, when one is set (``gpuplan web --token``): ``Authorization: Bearer TOKEN`` or the cookie that
   opening ``/?token=TOKEN`` once sets;
3. the body: at most :data:`MAX_BODY_BYTES`, else 413 before any of it is parsed;

and it adds security headers to every response (no sniffing, no framing, no referrer, a content security
policy that allows only this server's own scripts, styles and data). Refusals have the API's error shape.
"""

from __future__ import annotations

import hmac
import json
from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any
from urllib.parse import parse_qs

MAX_BODY_BYTES = 1024 * 1024
COOKIE = "gpuplan_token"
SECURITY_HEADERS = (
    (b"x-content-type-options", b"nosniff"),
    (b"x-frame-options", b"DENY"),
    (b"referrer-policy", b"no-referrer"),
    (b"content-security-policy", b"default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
                                 b"connect-src 'self'; object-src 'none'; base-uri 'none'; form-action 'self'; "
                                 b"frame-ancestors 'none'"),
    (b"cross-origin-opener-policy", b"same-origin"),
)

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
App = Callable[[Scope, Receive, Send], Awaitable[None]]


class Guard:
    """The middleware; ``allowed_hosts`` None accepts any Host (a server bound beyond loopback is reached by
    names it cannot know), ``token`` None requires none."""

    def __init__(self, app: App, allowed_hosts: tuple[str, ...] | None = None, token: str | None = None,
                 max_body_bytes: int = MAX_BODY_BYTES) -> None:
        self.app, self.token, self.max_body_bytes = app, token, max_body_bytes
        self.allowed_hosts = None if allowed_hosts is None else {h.lower() for h in allowed_hosts}

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        send = _with_headers(send)
        headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope.get("headers", ())}
        refusal = self._refusal(headers)
        if refusal is not None:
            await _error(send, *refusal)
            return
        if self.token is not None and not await self._token_ok(scope, headers, send):
            return
        body = await _read_body(receive, headers, self.max_body_bytes)
        if body is None:
            await _error(send, 413, f"the request body is larger than {self.max_body_bytes // 1024} KiB.", None,
                         "send a smaller request: a plan or an estimate is a few hundred bytes of JSON.")
            return
        await self.app(scope, _replay(body, receive), send)

    def _refusal(self, headers: dict[str, str]) -> tuple[int, str, str | None, str] | None:
        if self.allowed_hosts is None:
            return None
        host = _host_name(headers.get("host", ""))
        if host in self.allowed_hosts:
            return None
        shown = headers.get("host", "")[:100]
        return (400, f"this server answers requests for 127.0.0.1 or localhost, not for Host '{shown}'.", "host",
                "open http://127.0.0.1:PORT/ (a page from another site cannot use this server).")

    async def _token_ok(self, scope: Scope, headers: dict[str, str], send: Send) -> bool:
        """True when the request carries the token; else this answers it (401, or the redirect that sets the
        cookie after ``/?token=TOKEN``) and returns False."""
        assert self.token is not None
        token = self.token.encode()
        given = _bearer(headers.get("authorization", "")) or _cookie(headers.get("cookie", ""), COOKIE)
        if given is not None and hmac.compare_digest(given.encode(), token):
            return True
        query = parse_qs(scope.get("query_string", b"").decode("latin-1")).get("token", [""])[0]
        if scope.get("path") == "/" and query and hmac.compare_digest(query.encode(), token):
            cookie = f"{COOKIE}={self.token}; HttpOnly; SameSite=Strict; Path=/".encode("latin-1")
            await send({"type": "http.response.start", "status": 303,
                        "headers": [(b"location", b"/"), (b"set-cookie", cookie), (b"content-length", b"0")]})
            await send({"type": "http.response.body", "body": b""})
            return False
        await _error(send, 401, "this server needs its token.", "token",
                     "send 'Authorization: Bearer TOKEN', or open /?token=TOKEN once in the browser.")
        return False


def _host_name(host: str) -> str:
    """``localhost:8000`` → ``localhost``; ``[::1]:8000`` → ``[::1]``."""
    host = host.strip().lower()
    if host.startswith("["):
        return host[: host.find("]") + 1] if "]" in host else host
    return host.rsplit(":", 1)[0] if host.count(":") == 1 else host


def _bearer(value: str) -> str | None:
    scheme, _, credentials = value.partition(" ")
    return credentials.strip() if scheme.lower() == "bearer" and credentials.strip() else None


def _cookie(header: str, name: str) -> str | None:
    for part in header.split(";"):
        key, _, value = part.strip().partition("=")
        if key == name:
            return value
    return None


async def _read_body(receive: Receive, headers: dict[str, str], limit: int) -> bytes | None:
    """The whole body, or None once it is over ``limit`` (by Content-Length, before reading, or by counting)."""
    declared = headers.get("content-length", "")
    if declared.isdigit() and int(declared) > limit:
        return None
    chunks: list[bytes] = []
    size, more = 0, True
    while more:
        message = await receive()
        if message["type"] != "http.request":
            break  # the client left; the app sees an empty body and the disconnect
        chunk = message.get("body", b"")
        size += len(chunk)
        if size > limit:
            return None
        chunks.append(chunk)
        more = message.get("more_body", False)
    return b"".join(chunks)


def _replay(body: bytes, receive: Receive) -> Receive:
    sent = False

    async def replayed() -> Message:
        nonlocal sent
        if sent:
            return await receive()
        sent = True
        return {"type": "http.request", "body": body, "more_body": False}

    return replayed


def _with_headers(send: Send) -> Send:
    async def sending(message: Message) -> None:
        if message["type"] == "http.response.start":
            names = {k.lower() for k, _ in message.get("headers", ())}
            message["headers"] = [*message.get("headers", ()), *(h for h in SECURITY_HEADERS if h[0] not in names)]
        await send(message)

    return sending


async def _error(send: Send, status: int, message: str, field: str | None, fix: str) -> None:
    from gpuplan.i18n import zh_sentence

    body = json.dumps({"error": message, "field": field, "fix": fix, "error_zh": zh_sentence(message),
                       "fix_zh": zh_sentence(fix)}).encode()
    await send({"type": "http.response.start", "status": status, "headers": [
        (b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]})
    await send({"type": "http.response.body", "body": body})


__all__ = ["MAX_BODY_BYTES", "SECURITY_HEADERS", "Guard"]
