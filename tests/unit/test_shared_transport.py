"""GitHub requests share one connection pool: a client githubkit closes after its request
must not close it under requests of other threads."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from http.server import BaseHTTPRequestHandler

import httpx

from app.github.client import SharedTransport
from tests.fakes.loopback import serving


class _Ok(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def do_GET(self) -> None:
        self.send_response(200)
        self.send_header("content-length", "2")
        self.end_headers()
        self.wfile.write(b"ok")

    def log_message(self, format: str, *args: object) -> None:
        pass


def test_closed_clients_leave_the_shared_pool_open_for_every_thread() -> None:
    transport = SharedTransport()

    def one(url: str) -> str:
        with httpx.Client(transport=transport, timeout=10) as client:  # as githubkit does
            return client.get(url).text

    with serving(_Ok) as base, ThreadPoolExecutor(8) as pool:
        answers = list(pool.map(one, [base] * 200))
    assert answers == ["ok"] * 200
