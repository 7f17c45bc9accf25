"""HTTP for the price adapters: timeouts, retries with backoff on 429 and 5xx, and errors that name the provider.

Adapters get a :class:`Fetcher`; tests hand it an ``httpx.Client`` on a ``MockTransport`` serving recorded
responses, so no test touches the network.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

import httpx

from gpuplan.errors import GpuplanError

TIMEOUT = httpx.Timeout(30.0, connect=10.0)
RETRIES = 3  # after the first try
BACKOFF_S = 1.0  # doubled each retry; a Retry-After header (seconds, at most MAX_WAIT_S) wins
MAX_WAIT_S = 30.0
USER_AGENT = "gpuplan-refresh (+https://github.com/gpuplan)"


class ProviderError(GpuplanError, OSError):
    """One provider could not be refreshed; the others go on and its stored rows stay as they were. An
    ``OSError``: the exchange with a remote service failed (the network, an HTTP status, an answer that cannot be
    read), as a failed ``urlopen`` is one."""

    def __init__(self, provider: str, message: str, fix: str = "") -> None:
        super().__init__(f"{provider}: {message}", fix)
        self.provider = provider
        self.detail = message


class MissingKeyError(ProviderError, LookupError):
    """The provider's price API needs a key and the environment variable that holds it is not set (also a
    ``LookupError``, as ``os.environ[name]`` raises one for it)."""


@dataclass
class Fetcher:
    """GETs and POSTs for one provider, retried on 429/5xx and transport errors with exponential backoff."""

    provider: str
    client: httpx.Client
    sleep: Callable[[float], None] = time.sleep
    requests: int = field(default=0)

    def json(self, method: str, url: str, accept: tuple[int, ...] = (), **kwargs: Any) -> Any:
        """The decoded JSON answer; a status in ``accept`` (e.g. 400 for "no such SKU") is returned, not raised."""
        response = self._send(method, url, accept=accept, **kwargs)
        try:
            return response.json()
        except (json.JSONDecodeError, UnicodeDecodeError):
            raise self.malformed(url, f"the answer is not JSON (starts {response.text[:60]!r})") from None

    def text(self, url: str, **kwargs: Any) -> str:
        return self._send("GET", url, **kwargs).text

    @contextmanager
    def lines(self, url: str) -> Iterator[Iterator[str]]:
        """The body of a large text answer, line by line, without holding it in memory (AWS's offer files)."""
        for attempt in range(RETRIES + 1):
            self.requests += 1
            try:
                with self.client.stream("GET", url, headers={"User-Agent": USER_AGENT}) as response:
                    if self._retry(response, attempt, url):
                        continue
                    yield self._guarded(response.iter_lines(), url)
                    return
            except (httpx.TimeoutException, httpx.TransportError) as exc:
                if attempt == RETRIES:
                    raise self._transport(exc, url, attempt) from None
                self.sleep(BACKOFF_S * 2 ** attempt)

    def _guarded(self, lines: Iterator[str], url: str) -> Iterator[str]:
        try:
            yield from lines
        except (httpx.TimeoutException, httpx.TransportError) as exc:
            raise ProviderError(self.provider, f"the answer from {url} broke off ({type(exc).__name__}: {exc}).",
                                "retry later; the previous prices stay in use.") from None

    def _transport(self, exc: Exception, url: str, attempt: int) -> ProviderError:
        if isinstance(exc, httpx.TimeoutException):
            return ProviderError(self.provider, f"{url} did not answer in time ({attempt + 1} tries).",
                                 "check the connection and retry later.")
        return ProviderError(self.provider, f"cannot reach {url} ({type(exc).__name__}: {exc}).",
                             "check the connection (and any proxy) and retry.")

    def malformed(self, url: str, problem: str) -> ProviderError:
        return ProviderError(self.provider, f"the response from {url} is not what the provider documents: "
                             f"{problem}.", "retry later; if it persists, the provider changed its API "
                             "(please report it). The previous prices stay in use.")

    def _send(self, method: str, url: str, headers: Mapping[str, str] | None = None, accept: tuple[int, ...] = (),
              **kwargs: Any) -> httpx.Response:
        for attempt in range(RETRIES + 1):
            self.requests += 1
            try:
                response = self.client.request(method, url, headers={"User-Agent": USER_AGENT, **(headers or {})},
                                               **kwargs)
            except (httpx.TimeoutException, httpx.TransportError) as exc:
                if attempt == RETRIES:
                    raise self._transport(exc, url, attempt) from None
                self.sleep(BACKOFF_S * 2 ** attempt)
                continue
            if response.status_code in accept or not self._retry(response, attempt, url):
                return response
        raise AssertionError("unreachable")

    def _retry(self, response: httpx.Response, attempt: int, url: str) -> bool:
        """True to try again (after sleeping); raises when the answer is a final failure."""
        status = response.status_code
        if status < 400:
            return False
        if (status == 429 or status >= 500) and attempt < RETRIES:
            self.sleep(_wait_s(response, attempt))
            return True
        if status == 429:
            raise ProviderError(self.provider, f"rate limited by {url} (HTTP 429, {attempt + 1} tries).",
                                "wait a few minutes and refresh this provider again.")
        if status in (401, 403):
            raise ProviderError(self.provider, f"{url} refused the request (HTTP {status}).",
                                "check the API key in the environment variable named in 'gpuplan refresh --help'.")
        raise ProviderError(self.provider, f"{url} answered HTTP {status} ({_snippet(response)}).",
                            "retry later; the previous prices stay in use.")


def _wait_s(response: httpx.Response, attempt: int) -> float:
    header = response.headers.get("Retry-After", "")
    if header.strip().isdigit():
        return min(float(header), MAX_WAIT_S)
    return BACKOFF_S * 2 ** attempt


def _snippet(response: httpx.Response) -> str:
    try:
        text = response.read().decode("utf-8", "replace")
    except httpx.HTTPError:
        return "no body"
    return " ".join(text.split())[:120] or "empty body"


def need(value: Any, kind: type | tuple[type, ...], what: str, fetcher: Fetcher, url: str) -> Any:
    """``value`` if it has the documented type, else the provider's 'not what it documents' error."""
    if isinstance(value, bool) and kind in (int, float, (int, float)):
        raise fetcher.malformed(url, f"{what} is {value!r}, not a number")
    if not isinstance(value, kind):
        raise fetcher.malformed(url, f"{what} is {type(value).__name__} {str(value)[:40]!r}")
    return value
