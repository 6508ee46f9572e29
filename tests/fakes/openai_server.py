"""A small OpenAI-compatible HTTP server for tests, on 127.0.0.1.

It speaks ``POST /v1/chat/completions`` and ``POST /v1/embeddings`` well enough for the
real ``openai`` client, answers deterministically, records every request, and can be
told to fail: ``fail_next(path, [429, 500])`` answers the next requests to ``path``
with those statuses (with ``retry-after-ms`` so retries are quick); ``down = True``
answers 503 to everything. ``llama_like``, ``one_at_a_time`` and ``generation_seconds``
make it behave like llama.cpp's server on one slot.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import math
import re
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler
from typing import Any
from urllib.parse import parse_qs, urlparse

from tests.fakes.loopback import serving

CHAT = "/v1/chat/completions"
EMBEDDINGS = "/v1/embeddings"


@dataclass
class Recorded:
    path: str  # CHAT or EMBEDDINGS, whatever the dialect's own path
    body: dict[str, Any]
    headers: dict[str, str]
    status: int
    url: str = ""  # the request's own path and query


@dataclass
class FakeOpenAI:
    embedding_dims: int = 256
    down: bool = False
    requests: list[Recorded] = field(default_factory=list)
    chat_reply: Callable[[dict[str, Any]], str] | None = None
    # llama.cpp-server-like behaviours: HTTP 500 for a json_schema response_format, and
    # one vector per token (no pooling) from /embeddings.
    llama_like: bool = False
    # like a single-slot llama.cpp server: one request at a time, each chat answer taking
    # this long, finished even when the client has given up on it
    one_at_a_time: bool = False
    generation_seconds: float = 0.0
    embedding_seconds: float = 0.0
    context_window: int = 0  # > 0: longer requests are refused (prompt + max_tokens)
    # dialects: Azure OpenAI (/openai/deployments/{deployment}/...?api-version=, the key in
    # an `api-key` header), a required key (a LiteLLM proxy's master key, as a bearer
    # token), and statuses for a `dimensions` (vLLM, Ollama) or a `json_schema` response
    # format (older Ollama) the server does not take
    azure_api_version: str | None = None
    api_key: str | None = None
    refuse_dimensions: int = 0
    refuse_json_schema: int = 0
    in_flight: int = 0
    peak_in_flight: int = 0  # the most requests the server held at once (waiting included)
    _slot: threading.Lock = field(default_factory=threading.Lock)
    _failures: dict[str, list[int]] = field(default_factory=dict)
    _lock: threading.Lock = field(default_factory=threading.Lock)
    base_url: str = ""

    def fail_next(self, path: str, statuses: list[int]) -> None:
        with self._lock:
            self._failures.setdefault(path, []).extend(statuses)

    def calls(self, path: str, ok_only: bool = True) -> int:
        return sum(1 for r in self.requests if r.path == path and (r.status == 200 or not ok_only))

    def bodies(self, path: str, ok_only: bool = True) -> list[dict[str, Any]]:
        return [
            r.body for r in self.requests if r.path == path and (r.status == 200 or not ok_only)
        ]

    def reset(self) -> None:
        with self._lock:
            self.requests.clear()
            self._failures.clear()
        self.down = False

    def dialect(
        self, raw_path: str, body: dict[str, Any], headers: dict[str, str]
    ) -> tuple[str, tuple[int, dict[str, Any]] | None]:
        """The request's route (CHAT or EMBEDDINGS) in this server's dialect, and the
        refusal it gets, if any (a wrong key, path or API version), as that server words it."""
        url = urlparse(raw_path)
        if self.azure_api_version is None:
            given = headers.get("authorization", "").removeprefix("Bearer ")
            if self.api_key is not None and given != self.api_key:
                said = "Authentication Error, Invalid proxy server token passed."
                return url.path, (401, {"error": {"message": said, "type": "auth_error"}})
            return url.path, None
        found = re.fullmatch(
            r"/openai/deployments/([\w.-]+)/(chat/completions|embeddings)", url.path
        )
        if found is None:
            return url.path, (404, {"error": {"code": "404", "message": "Resource not found"}})
        if parse_qs(url.query).get("api-version") != [self.azure_api_version]:
            said = "Unsupported api-version. Please use a supported version."
            return url.path, (404, {"error": {"code": "404", "message": said}})
        if self.api_key is not None and headers.get("api-key") != self.api_key:
            said = "Access denied due to invalid subscription key or wrong API endpoint."
            return url.path, (401, {"error": {"code": "401", "message": said}})
        body["model"] = found.group(1)  # the deployment answers, whatever the body says
        return (CHAT if found.group(2) == "chat/completions" else EMBEDDINGS), None

    # -- answers -------------------------------------------------------------------------

    def answer(self, path: str, body: dict[str, Any]) -> tuple[int, dict[str, Any]]:
        with self._lock:
            queued = self._failures.get(path)
            if self.down:
                return 503, {"error": {"message": "service unavailable", "type": "server_error"}}
            if queued:
                status = queued.pop(0)
                return status, {"error": {"message": f"scripted {status}", "type": "test"}}
        if path == CHAT:
            requested = sum(len(m["content"]) // 4 for m in body["messages"])
            requested += body.get("max_tokens") or 0
            if self.context_window and requested > self.context_window:
                return 400, _too_long(self.context_window, requested)
            wanted = (body.get("response_format") or {}).get("type")
            if self.refuse_json_schema and wanted == "json_schema":
                said = "json: unsupported response_format type json_schema"
                return self.refuse_json_schema, {"error": {"message": said, "type": "api_error"}}
            if self.llama_like and wanted == "json_schema":
                said = "Input should be 'text' or 'json_object' (response_format.type)"
                return 500, {"error": {"code": 500, "message": said, "type": "server_error"}}
            return 200, self._chat(body)
        if path == EMBEDDINGS:
            if self.refuse_dimensions and body.get("dimensions"):
                said = (
                    f'Model "{body.get("model")}" does not support matryoshka representation,'
                    " changing output dimensions will lead to poor results."
                )
                return self.refuse_dimensions, {"error": {"message": said, "type": "BadRequest"}}
            return 200, self._embeddings(body)
        return 404, {"error": {"message": f"no route {path}"}}

    def _chat(self, body: dict[str, Any]) -> dict[str, Any]:
        prompt = body["messages"][-1]["content"]
        content = self.chat_reply(body) if self.chat_reply else summaries_for(prompt)
        tokens = len(prompt) // 4
        return {
            "id": "chatcmpl-test",
            "object": "chat.completion",
            "created": 0,
            "model": body.get("model", "test"),
            "choices": [
                {
                    "index": 0,
                    "message": {"role": "assistant", "content": content},
                    "finish_reason": "stop",
                }
            ],
            "usage": {
                "prompt_tokens": tokens,
                "completion_tokens": len(content) // 4,
                "total_tokens": tokens + len(content) // 4,
            },
        }

    def _embeddings(self, body: dict[str, Any]) -> dict[str, Any]:
        inputs = body["input"] if isinstance(body["input"], list) else [body["input"]]
        dims = body.get("dimensions") or self.embedding_dims  # OpenAI shortens on request
        data = [
            {"object": "embedding", "index": i, "embedding": self._vector(t, dims)}
            for i, t in enumerate(inputs)
        ]
        tokens = sum(len(t) // 4 for t in inputs)
        return {
            "object": "list",
            "data": data,
            "model": body.get("model", "test"),
            "usage": {"prompt_tokens": tokens, "total_tokens": tokens},
        }

    def _vector(self, text: str, dims: int) -> list[float] | list[list[float]]:
        if not self.llama_like:
            return word_vector(text, dims)
        words = text.split() or [""]  # one vector per "token"
        return [word_vector(w, dims) for w in words]


def summaries_for(prompt: str) -> str:
    """The summarizer's answer: one sentence naming each chunk's symbol."""
    items = []
    for ident, symbol in re.findall(r"### chunk (\d+)\npath: .*\nsymbol: (\S+)", prompt):
        items.append({"id": ident, "summary": f"Summary of {symbol}: it does what {symbol} says."})
    return json.dumps({"summaries": items})


def word_vector(text: str, dims: int) -> list[float]:
    """Bag of lower-cased words, hashed: similar wording, similar vectors."""
    vector = [0.0] * dims
    for word in re.findall(r"[a-z0-9]+", text.lower()):
        vector[int(hashlib.md5(word.encode()).hexdigest(), 16) % dims] += 1.0
    norm = math.sqrt(sum(v * v for v in vector)) or 1.0
    return [v / norm for v in vector]


class _Handler(BaseHTTPRequestHandler):
    fake: FakeOpenAI

    def do_POST(self) -> None:
        length = int(self.headers.get("content-length", "0"))
        raw = self.rfile.read(length)
        try:
            body = json.loads(raw or b"{}")
        except json.JSONDecodeError:
            body = {}
        fake = self.fake
        path, refused = fake.dialect(
            self.path, body, {k.lower(): v for k, v in self.headers.items()}
        )
        if refused is not None:
            headers = {k.lower(): v for k, v in self.headers.items()}
            fake.requests.append(Recorded(path, body, headers, refused[0], self.path))
            self._send(refused[0], json.dumps(refused[1]).encode())
            return
        with fake._lock:
            fake.in_flight += 1
            fake.peak_in_flight = max(fake.peak_in_flight, fake.in_flight)
        try:
            with fake._slot if fake.one_at_a_time else contextlib.nullcontext():
                if path == CHAT and fake.generation_seconds:
                    time.sleep(fake.generation_seconds)  # a disconnect does not stop it
                if path == EMBEDDINGS and fake.embedding_seconds:
                    time.sleep(fake.embedding_seconds)
                status, payload = fake.answer(path, body)
        finally:
            with fake._lock:
                fake.in_flight -= 1
        self.fake.requests.append(
            Recorded(path, body, {k.lower(): v for k, v in self.headers.items()}, status, self.path)
        )
        data = json.dumps(payload).encode()
        with contextlib.suppress(BrokenPipeError, ConnectionResetError):  # the client gave up
            self._send(status, data)

    def _send(self, status: int, data: bytes) -> None:
        self.send_response(status)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(data)))
        if status != 200:
            self.send_header("retry-after-ms", "5")
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, format: str, *args: object) -> None:
        pass


@contextmanager
def running_fake_openai(embedding_dims: int = 256) -> Iterator[FakeOpenAI]:
    fake = FakeOpenAI(embedding_dims=embedding_dims)
    handler = type("Handler", (_Handler,), {"fake": fake})
    with serving(handler) as base:
        fake.base_url = base + "/v1"
        yield fake


def _too_long(window: int, requested: int) -> dict[str, Any]:
    """llama-cpp-python's (and OpenAI's) answer to a request longer than the context."""
    said = (
        f"This model's maximum context length is {window} tokens. However, you requested"
        f" {requested} tokens. Please reduce the length of the messages or completion."
    )
    return {
        "error": {
            "message": said,
            "type": "invalid_request_error",
            "param": "messages",
            "code": "context_length_exceeded",
        }
    }
