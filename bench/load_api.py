"""Load benchmark of the HTTP API against 127.0.0.1: starts ``gpuplan web`` on a free port, sends each endpoint's
request from several client threads (keep-alive connections) until a time or a request budget is spent, and
prints requests per second with p50 and p99 latency per endpoint.

    python bench/load_api.py                          # 8 clients, at most 10 s or 3,000 requests per endpoint
    python bench/load_api.py --seconds 30 --clients 16 --max-requests 20000
    python bench/load_api.py --workers 2              # two server processes

Bounded: every endpoint stops at ``--seconds`` or ``--max-requests``, whichever comes first, and the server is
stopped at the end. "plan (same request)" repeats one request (the server's cache answers it); "plan (new
requests)" changes the request count every time, so each one is planned. A benchmark, not a test: it
measures and prints, and fails only if the server does not start or answers with 5xx.
"""

from __future__ import annotations

import argparse
import http.client
import itertools
import json
import os
import socket
import statistics
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
LESSON = {"model": "ChatGLM2-6B", "task": "finetune", "method": "lora", "samples": "10k",
          "tokens_per_sample": 1088, "market": "cn"}

Request = tuple[str, str, bytes | None]  # method, path, JSON body


@dataclass
class Result:
    latencies_s: list[float] = field(default_factory=list)
    statuses: dict[int, int] = field(default_factory=dict)
    wall_s: float = 0.0


def endpoints() -> list[tuple[str, Callable[[int], Request]]]:
    """(label, request number → request) for each measured endpoint."""
    def body(data: dict[str, object]) -> bytes:
        return json.dumps(data).encode()

    estimate = body({"model": "Llama-3.1-8B", "gpu": "H100", "task": "infer"})
    plan = body(LESSON)
    return [
        ("GET /api/gpus", lambda i: ("GET", "/api/gpus", None)),
        ("GET /api/offers?gpu=H100", lambda i: ("GET", "/api/offers?gpu=H100", None)),
        ("POST /api/estimate", lambda i: ("POST", "/api/estimate", estimate)),
        ("POST /api/plan (same request)", lambda i: ("POST", "/api/plan", plan)),
        ("POST /api/plan (new requests)",
         lambda i: ("POST", "/api/plan", body({**LESSON, "samples": 10_000 + i}))),
    ]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def start_server(port: int, workers: int = 1) -> subprocess.Popen[bytes]:
    env = {**os.environ, "GPUPLAN_OFFLINE": "1", "HF_HUB_OFFLINE": "1"}
    server = subprocess.Popen([sys.executable, "-m", "gpuplan", "web", "--port", str(port), "--workers",
                               str(workers)], cwd=REPO, env=env,
                              stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        try:
            conn = http.client.HTTPConnection("127.0.0.1", port, timeout=5)
            conn.request("GET", "/api/meta")
            if conn.getresponse().status == 200:
                return server
        except OSError:
            if server.poll() is not None:
                raise SystemExit(f"the server did not start: {server.stderr.read().decode()[-2000:]}") from None
            time.sleep(0.2)
    server.kill()
    raise SystemExit("the server did not answer within 60 s")


def load(port: int, make: Callable[[int], Request], clients: int, seconds: float, max_requests: int) -> Result:
    result = Result()
    numbers = itertools.count()
    lock = threading.Lock()
    stop_at = time.monotonic() + seconds

    def client() -> None:
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
        while time.monotonic() < stop_at:
            with lock:
                i = next(numbers)
            if i >= max_requests:
                return
            method, path, body = make(i)
            headers = {"content-type": "application/json"} if body else {}
            started = time.perf_counter()
            conn.request(method, path, body=body, headers=headers)
            response = conn.getresponse()
            response.read()
            elapsed = time.perf_counter() - started
            with lock:
                result.latencies_s.append(elapsed)
                result.statuses[response.status] = result.statuses.get(response.status, 0) + 1

    threads = [threading.Thread(target=client) for _ in range(clients)]
    began = time.perf_counter()
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    result.wall_s = time.perf_counter() - began
    return result


def percentile(values: list[float], q: float) -> float:
    return statistics.quantiles(values, n=100, method="inclusive")[q - 1] if len(values) > 1 else values[0]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seconds", type=float, default=10.0, help="longest run per endpoint (default 10)")
    ap.add_argument("--max-requests", type=int, default=3000, help="most requests per endpoint (default 3000)")
    ap.add_argument("--clients", type=int, default=8, help="concurrent keep-alive clients (default 8)")
    ap.add_argument("--workers", type=int, default=1, help="server processes, gpuplan web --workers (default 1)")
    args = ap.parse_args(argv)
    if not (0 < args.seconds <= 600 and 0 < args.max_requests <= 1_000_000 and 0 < args.clients <= 256
            and 1 <= args.workers <= 64):
        ap.error("--seconds 0-600, --max-requests 1-1,000,000, --clients 1-256 and --workers 1-64")
    port = free_port()
    server = start_server(port, args.workers)
    failed = False
    try:
        print(f"gpuplan web --workers {args.workers} on 127.0.0.1:{port}; {args.clients} clients, at most "
              f"{args.seconds:g} s or {args.max_requests} requests per endpoint; {os.cpu_count()} CPUs\n")
        print(f"{'endpoint':<32} {'requests':>8} {'req/s':>8} {'p50 ms':>8} {'p99 ms':>8}  statuses")
        for label, make in endpoints():
            r = load(port, make, args.clients, args.seconds, args.max_requests)
            n = len(r.latencies_s)
            statuses = ", ".join(f"{s}: {c}" for s, c in sorted(r.statuses.items()))
            print(f"{label:<32} {n:>8} {n / r.wall_s:>8.1f} {1000 * percentile(r.latencies_s, 50):>8.1f} "
                  f"{1000 * percentile(r.latencies_s, 99):>8.1f}  {statuses}", flush=True)
            failed |= any(s >= 500 for s in r.statuses)
    finally:
        server.terminate()
        try:
            server.wait(timeout=10)
        except subprocess.TimeoutExpired:
            server.kill()
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
