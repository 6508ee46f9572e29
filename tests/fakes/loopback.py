"""Serve an http.server handler on 127.0.0.1 in a thread, for the fakes."""

from __future__ import annotations

import socket
import ssl
import threading
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Protocol

Reply = tuple[int, dict[str, str], bytes | Iterable[bytes]]


class Fake(Protocol):
    """A fake host: one call per request, answering (status, headers, body); a body that
    is not bytes is a stream, sent chunked as it is made."""

    def handle(self, method: str, path: str, headers: dict[str, str], body: bytes) -> Reply: ...


class FakeHandler(BaseHTTPRequestHandler):
    """Hands each request to ``fake`` (set on a subclass, one per server)."""

    fake: Fake
    protocol_version = "HTTP/1.1"

    def _serve(self, method: str) -> None:
        if self.headers.get("transfer-encoding", "").lower() == "chunked":
            body = self._chunked()
        else:
            length = int(self.headers.get("content-length", "0") or 0)
            body = self.rfile.read(length) if length else b""
        headers = {k.lower(): v for k, v in self.headers.items()}
        status, out_headers, payload = self.fake.handle(method, self.path, headers, body)
        self.send_response(status)
        for key, value in out_headers.items():
            self.send_header(key, value)
        if not isinstance(payload, bytes):  # a stream: chunked, as it is made
            self.send_header("transfer-encoding", "chunked")
            self.end_headers()
            for piece in payload:
                self.wfile.write(b"%x\r\n%s\r\n" % (len(piece), piece))
            self.wfile.write(b"0\r\n\r\n")
            return
        self.send_header("content-length", str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)

    def _chunked(self) -> bytes:
        """A request body in chunked transfer encoding (git sends large ones so)."""
        parts = []
        while True:
            size = int(self.rfile.readline().split(b";")[0].strip(), 16)
            if size == 0:
                self.rfile.readline()
                return b"".join(parts)
            parts.append(self.rfile.read(size))
            self.rfile.readline()

    def do_GET(self) -> None:
        self._serve("GET")

    def do_POST(self) -> None:
        self._serve("POST")

    def do_PATCH(self) -> None:
        self._serve("PATCH")

    def do_PUT(self) -> None:
        self._serve("PUT")

    def do_DELETE(self) -> None:
        self._serve("DELETE")

    def log_message(self, format: str, *args: object) -> None:
        pass


@contextmanager
def serving_fake(fake: Fake, tls: ssl.SSLContext | None = None) -> Iterator[str]:
    """Serve ``fake`` on 127.0.0.1 (over TLS with ``tls``); yields its base URL."""
    with serving(type("Handler", (FakeHandler,), {"fake": fake}), tls) as base:
        yield base


@contextmanager
def serving(
    handler: type[BaseHTTPRequestHandler], tls: ssl.SSLContext | None = None
) -> Iterator[str]:
    """Yield ``http://127.0.0.1:<port>`` (``https://`` with ``tls``, a server context)
    while ``handler`` serves requests there."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    if tls is not None:
        server.socket = tls.wrap_socket(server.socket, server_side=True)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    scheme = "https" if tls is not None else "http"
    try:
        yield f"{scheme}://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=5)


def free_port() -> int:
    """A TCP port on 127.0.0.1 that nothing listens on now."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])
