"""``reviewbot setup``: create the GitHub App through the manifest flow.

A one-page server on this machine (or on the host ``serve`` will run on) shows a button
that posts reviewbot's manifest to GitHub; GitHub creates the App and sends the browser
back to ``/callback`` with a one-time code, which is exchanged for the App's credentials
and written, readable by their owner only, to the credentials file. The page and the
callback are served until the callback has come (or the time runs out); the ``state``
round-trip refuses a callback this run did not start.
"""

from __future__ import annotations

import html
import secrets
import threading
from collections.abc import Callable
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import parse_qs, urlparse

import httpx

from app.errors import ReviewbotError
from app.github.manifest import (
    NewApp,
    convert,
    form_page,
    manifest,
    new_app_url,
    refuse_overwrite,
    write_credentials,
)


@dataclass(frozen=True)
class SetupRequest:
    api_url: str  # https://api.github.com, or GitHub Enterprise's https://host/api/v3
    public_url: str  # where GitHub will reach `reviewbot serve` (webhooks)
    env_file: Path
    name: str = "reviewbot"
    organization: str | None = None  # None: the App belongs to the signed-in user
    force: bool = False


@dataclass(frozen=True)
class SetupResult:
    app: NewApp
    env_file: Path


def exchange(
    request: SetupRequest, code: str, transport: httpx.BaseTransport | None = None
) -> SetupResult:
    """Turn GitHub's one-time ``code`` into the App's credentials in ``request.env_file``:
    what the callback does, and what ``reviewbot setup --code`` retries after a failure."""
    app = convert(request.api_url, code, transport)
    write_credentials(request.env_file, app, request.api_url, request.force)
    return SetupResult(app, request.env_file)


class SetupTimeout(ReviewbotError):
    """Nobody came back from GitHub in time."""


def run_setup(
    request: SetupRequest,
    host: str,
    port: int,
    on_ready: Callable[[str], None],
    page_url: str | None = None,
    timeout_seconds: float = 900.0,
    transport: httpx.BaseTransport | None = None,
) -> SetupResult:
    """Serve the form on ``host``:``port`` (0: any free port), call ``on_ready`` with the
    page's address, and return once GitHub's callback has been turned into a credentials
    file. ``page_url`` is the address a browser reaches this server at, when not
    ``http://host:port`` (a server behind a proxy)."""
    refuse_overwrite(request.env_file, request.force)
    state = secrets.token_urlsafe(24)
    outcome: dict[str, SetupResult | ReviewbotError] = {}
    done = threading.Event()
    server = ThreadingHTTPServer((host, port), _Handler)
    base = (page_url or f"http://{_browsable(host)}:{server.server_address[1]}").rstrip("/")
    server.flow = _Flow(request, state, base, outcome, done, transport)  # type: ignore[attr-defined]
    thread = threading.Thread(target=server.serve_forever, name="setup-page", daemon=True)
    thread.start()
    try:
        on_ready(base + "/")
        if not done.wait(timeout_seconds):
            raise SetupTimeout(
                f"no answer from GitHub within {timeout_seconds:.0f} s; run setup again"
            )
    finally:
        server.shutdown()
        server.server_close()
    result = outcome["result"]
    if isinstance(result, ReviewbotError):
        raise result
    return result


def _browsable(host: str) -> str:
    """A host a browser on this machine can open (not the wildcard address)."""
    return "127.0.0.1" if host in ("", "0.0.0.0", "::") else host


@dataclass
class _Flow:
    request: SetupRequest
    state: str
    base: str
    outcome: dict[str, SetupResult | ReviewbotError]
    done: threading.Event
    transport: httpx.BaseTransport | None

    def form(self) -> str:
        app_manifest = manifest(self.request.name, self.request.public_url, self.base + "/callback")
        action = new_app_url(self.request.api_url, self.request.organization, self.state)
        return form_page(action, app_manifest)

    def callback(self, query: dict[str, list[str]]) -> tuple[int, str]:
        """Exchange GitHub's code; the page to show and its status."""
        if query.get("state", [""])[0] != self.state:
            return 400, "This answer is not for this setup run (its state differs)."
        if self.done.is_set():
            return 409, "This setup run has finished already."
        try:
            result = exchange(self.request, query.get("code", [""])[0], self.transport)
        except ReviewbotError as exc:
            self.outcome["result"] = exc
            self.done.set()
            return 502, f"Setting up failed: {html.escape(str(exc))}"
        self.outcome["result"] = result
        self.done.set()
        app = result.app
        install = f"{app.html_url}/installations/new" if app.html_url else ""
        link = f' <a href="{html.escape(install, quote=True)}">Install it</a>' if install else ""
        return 200, (
            f"The GitHub App {html.escape(app.slug or str(app.id))} was created and its "
            f"credentials written to {html.escape(str(self.request.env_file))}.{link} "
            "on the repositories it should review."
        )


class _Handler(BaseHTTPRequestHandler):
    server: ThreadingHTTPServer

    def do_GET(self) -> None:
        flow: _Flow = self.server.flow  # type: ignore[attr-defined]
        url = urlparse(self.path)
        if url.path == "/":
            self._send(200, flow.form())
        elif url.path == "/callback":
            status, text = flow.callback(parse_qs(url.query))
            self._send(status, f"<!doctype html><html><body><p>{text}</p></body></html>")
        else:
            self._send(404, "<!doctype html><p>Not found</p>")

    def _send(self, status: int, page: str) -> None:
        body = page.encode()
        self.send_response(status)
        self.send_header("content-type", "text/html; charset=utf-8")
        self.send_header("content-length", str(len(body)))
        self.send_header("cache-control", "no-store")
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: object) -> None:
        """The callback's query holds the one-time code: nothing is logged."""
