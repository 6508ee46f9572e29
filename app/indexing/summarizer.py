"""Natural-language summaries of chunks: a cheap LLM, or a heuristic when there is none.

The LLM summarizer batches several chunks per request. Its calls are paced
(``app/llm/pacing.py``): they share the job's time budget, concurrency halves after a
timeout, and 408/409/429/5xx, timeouts and connection errors are retried one attempt at a
time with backoff (the openai client's own retries are off). A batch that fails for good, or
a chunk the model's answer leaves out, gets the heuristic summary instead, marked
``heuristic`` so a later run with a working LLM upgrades it. Code is scrubbed of
secret-looking strings before it is sent.
"""

from __future__ import annotations

import heapq
import json
import logging
import re
import threading
import time
from collections import Counter
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from importlib import resources
from string import Template

import openai
from openai.types.chat import ChatCompletion

from app.config import Settings
from app.db.chunk_types import ChunkType
from app.indexing.chunks import Chunk
from app.indexing.identifiers import split_identifier
from app.llm.client import (
    attempt_timeout,
    describe_model_failure,
    make_openai_client,
    retryable,
)
from app.llm.fences import fence_for
from app.llm.pacing import MIN_ATTEMPT_SECONDS, AdaptiveLimit, Deadline, backoff, retry_after
from app.llm.redact import redact_secrets
from app.logs import kv

log = logging.getLogger(__name__)

HEURISTIC = "heuristic"
LLM = "llm"
MAX_SUMMARY_CHARS = 1200
#: Statuses that condemn one request (too long, malformed), not the endpoint.
REQUEST_SPECIFIC = frozenset({400, 413, 422})
PROMPT = Template(
    resources.files("app.indexing").joinpath("prompts/summarize.txt").read_text(encoding="utf-8")
)


@dataclass(frozen=True)
class Summary:
    text: str
    summarizer: str  # "llm" | "heuristic"
    model: str  # the LLM's name, or "heuristic"


@dataclass
class SummaryUsage:
    """What the summarizer cost: requests, tokens, and how it ended."""

    calls: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    failed_batches: int = 0
    llm: int = 0
    heuristic: int = 0
    last_error: str | None = None
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False, compare=False)

    def add(self, other: SummaryUsage) -> None:
        with self._lock:
            for name in ("calls", "prompt_tokens", "completion_tokens", "failed_batches"):
                setattr(self, name, getattr(self, name) + getattr(other, name))
            self.last_error = other.last_error or self.last_error


_KIND_WORDS = {
    "function": "Function",
    "method": "Method",
    "class": "Type",
    "module": "Module-level code",
    "window": "Part of",
}


def heuristic_summary(chunk: Chunk) -> str:
    """A sentence or three from the chunk's name, signature, docstring and references."""
    kind = _KIND_WORDS.get(chunk.chunk_type, "Code")
    language = f" ({chunk.language})" if chunk.language else ""
    if chunk.chunk_type == ChunkType.MODULE:
        head = f"{kind} of {chunk.file_path}{language}."
    else:
        head = f"{kind} {chunk.qualified_name or chunk.symbol_name} in {chunk.file_path}{language}."
    parts = [head]
    if chunk.docstring:
        parts.append(_first_sentence(chunk.docstring))
    if chunk.signature and chunk.chunk_type != ChunkType.MODULE:
        parts.append(f"Signature: {chunk.signature}.")
    if chunk.references:
        parts.append("Uses " + ", ".join(chunk.references[:12]) + ".")
    words = _identifier_words(chunk)
    if words:
        parts.append("Mentions " + ", ".join(words) + ".")
    return " ".join(parts)[:MAX_SUMMARY_CHARS]


def _first_sentence(text: str) -> str:
    flat = " ".join(text.split())
    match = re.match(r"(.+?[.!?])(\s|$)", flat)
    sentence = match.group(1) if match else flat
    return sentence[:300] if sentence.endswith((".", "!", "?")) else sentence[:300] + "."


def _identifier_words(chunk: Chunk, limit: int = 12) -> list[str]:
    """The most frequent identifiers of the code, split into words, for lexical matching."""
    counts: Counter[str] = Counter()
    for ident, seen in Counter(_IDENTIFIER.findall(chunk.raw_code)).items():
        for word in split_identifier(ident):  # each distinct identifier split once
            if len(word) > 2 and word not in _STOPWORDS:
                counts[word] += seen
    return [w for w, _ in heapq.nsmallest(limit, counts.items(), key=lambda kv_: (-kv_[1], kv_[0]))]


_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]{2,}")


_STOPWORDS = frozenset(
    "the and for not none self this def return true false null nil var let const func "
    "function class import from int str string void public private static new end if else "
    "elif while with try except catch raise throw pass break continue async await".split()
)


class LLMSummarizer:
    """Summaries from an OpenAI-compatible chat model, ``batch_size`` chunks a request."""

    def __init__(
        self,
        client: openai.OpenAI,
        model: str,
        batch_size: int = 8,
        concurrency: int = 4,
        max_tokens: int = 1200,
        budget_seconds: float = 900.0,
    ) -> None:
        self.client, self.model = client, model
        self.batch_size, self.concurrency = batch_size, concurrency
        self.max_tokens = max_tokens  # generation is bounded: a server may not stop by itself
        self.budget_seconds = budget_seconds
        # one budget for the job's summary calls from the first, however many batches of
        # files it has
        self.deadline: Deadline | None = None
        self.attempts = client.max_retries + 1
        self.timeout = attempt_timeout(client)

    def summarize(self, chunks: Sequence[Chunk]) -> tuple[list[Summary], SummaryUsage]:
        """One summary per chunk, in order; never raises for model failures."""
        usage = SummaryUsage()
        batches = [
            list(range(i, min(i + self.batch_size, len(chunks))))
            for i in range(0, len(chunks), self.batch_size)
        ]
        results: list[Summary | None] = [None] * len(chunks)
        if self.deadline is None:
            self.deadline = Deadline(self.budget_seconds)
        pace = _Pace(self.deadline, AdaptiveLimit(self.concurrency))

        def run(batch: list[int]) -> None:
            texts = self._batch(chunks, batch, usage, pace)
            for index in batch:
                text = texts.get(index)
                results[index] = (
                    Summary(text, LLM, self.model)
                    if text
                    else Summary(heuristic_summary(chunks[index]), HEURISTIC, HEURISTIC)
                )

        with ThreadPoolExecutor(max_workers=self.concurrency) as pool:
            list(pool.map(run, batches))
        final = [r for r in results if r is not None]
        usage.llm = sum(1 for r in final if r.summarizer == LLM)
        usage.heuristic = len(final) - usage.llm
        return final, usage

    def _batch(
        self, chunks: Sequence[Chunk], batch: list[int], usage: SummaryUsage, pace: _Pace
    ) -> dict[int, str]:
        if pace.down.is_set():  # the endpoint failed for good: do not wait on it again
            return {}
        prompt = PROMPT.substitute(chunks="\n\n".join(_chunk_block(i, chunks[i]) for i in batch))
        mine = SummaryUsage()
        try:
            response = self._call(prompt, pace)
        except _Stopped:  # another batch found the endpoint down, or the budget is spent
            mine.failed_batches = 1
            if not pace.down.is_set():
                pace.down.set()
                mine.last_error = f"the job's model time budget ({self.budget_seconds:g} s) ran out"
                log.warning(kv("summarize.budget_spent", model=self.model, error=mine.last_error))
            usage.add(mine)
            return {}
        except (openai.APIConnectionError, openai.APIStatusError) as exc:
            mine.failed_batches = 1
            mine.last_error = describe_model_failure(self.client, exc, self.attempts)
            if _status(exc) not in REQUEST_SPECIFIC:  # the endpoint, not this request, is broken
                pace.down.set()
            log.warning(kv("summarize.failed", model=self.model, error=mine.last_error))
            usage.add(mine)
            return {}
        mine.calls = 1
        if response.usage is not None:
            mine.prompt_tokens = response.usage.prompt_tokens
            mine.completion_tokens = response.usage.completion_tokens
        usage.add(mine)
        content = response.choices[0].message.content if response.choices else None
        return {i: text for i, text in parse_summaries(content or "").items() if i in batch}

    def _call(self, prompt: str, pace: _Pace) -> ChatCompletion:
        """One request, retried here one attempt at a time through the adaptive limit."""
        for attempt in range(1, self.attempts + 1):
            asked = 0.0  # what a 429/503 asked us to wait (retry-after)
            if pace.down.is_set() or pace.deadline.expired():
                raise _Stopped
            with pace.limit.slot():
                timeout = min(self.timeout, pace.deadline.remaining())
                if timeout < MIN_ATTEMPT_SECONDS:  # the wait for a slot used up the budget
                    raise _Stopped
                try:
                    response = self.client.with_options(
                        max_retries=0, timeout=timeout
                    ).chat.completions.create(
                        model=self.model,
                        messages=[{"role": "user", "content": prompt}],
                        temperature=0,
                        max_tokens=self.max_tokens,
                        response_format={"type": "json_object"},
                    )
                except openai.APITimeoutError:
                    if pace.deadline.expired():  # cut short by the budget, not the endpoint
                        raise _Stopped from None
                    pace.limit.timed_out()
                    log.info(kv("summarize.backoff", model=self.model, limit=pace.limit.limit))
                    if attempt == self.attempts:
                        raise
                except openai.APIStatusError as exc:
                    if not retryable(exc.status_code) or attempt == self.attempts:
                        raise
                    asked = retry_after(exc.response.headers)
                except openai.APIConnectionError:
                    if pace.deadline.expired():
                        raise _Stopped from None
                    if attempt == self.attempts:
                        raise
                else:
                    pace.limit.succeeded()
                    return response
            time.sleep(min(max(asked, backoff(attempt, pace.deadline)), pace.deadline.remaining()))
        raise _Stopped  # not reached: the last attempt returns or raises


@dataclass
class _Pace:
    """What the batches of one ``summarize`` call share."""

    deadline: Deadline
    limit: AdaptiveLimit
    down: threading.Event = field(default_factory=threading.Event)


class _Stopped(Exception):
    """No further attempt: the job's time budget is spent, or the endpoint is down."""


def _chunk_block(index: int, chunk: Chunk) -> str:
    code = redact_secrets(chunk.raw_code)
    fence = fence_for(code)
    kind = f"{chunk.chunk_type}, {chunk.language or 'text'}"
    context = (
        f"\nenclosing signature: {chunk.signature}" if chunk.chunk_type == ChunkType.WINDOW else ""
    )
    return (
        f"### chunk {index}\npath: {chunk.file_path}\n"
        f"symbol: {chunk.qualified_name or chunk.symbol_name} ({kind}){context}\n"
        f"{fence}\n{code}\n{fence}"
    )


def parse_summaries(content: str) -> dict[int, str]:
    """``{chunk index: summary}`` from the model's answer; tolerant of prose around JSON."""
    start, end = content.find("{"), content.rfind("}")
    if start < 0 or end <= start:
        return {}
    try:
        data = json.loads(content[start : end + 1])
    except json.JSONDecodeError:
        return {}
    items = data.get("summaries") if isinstance(data, dict) else None
    found: dict[int, str] = {}
    for item in items if isinstance(items, list) else []:
        if not isinstance(item, dict):
            continue
        ident, text = str(item.get("id", "")).strip(), item.get("summary")
        if ident.isdigit() and isinstance(text, str) and text.strip():
            found[int(ident)] = " ".join(text.split())[:MAX_SUMMARY_CHARS]
    return found


def _status(exc: Exception) -> int:
    return exc.status_code if isinstance(exc, openai.APIStatusError) else 0


def select_summarizer(settings: Settings) -> LLMSummarizer | None:
    """The LLM summarizer when an endpoint is configured, else None (heuristic summaries)."""
    if not settings.model_configured("summary"):
        return None
    return LLMSummarizer(
        make_openai_client(settings, "summary"),
        settings.summary_model,
        batch_size=settings.summary_batch_size,
        concurrency=settings.summary_concurrency,
        max_tokens=settings.summary_max_tokens,
        budget_seconds=settings.llm_job_budget_seconds,
    )
