"""Calling the review model: JSON-schema output where the endpoint supports it."""

from __future__ import annotations

import hashlib
import json
import logging
from dataclasses import dataclass
from typing import Any

import openai

from app.db.model_answers import PaidAnswer, PaidAnswers
from app.errors import ReviewbotError
from app.llm.client import (
    context_exceeded,
    describe_model_failure,
    retryable,
    within_deadline,
)
from app.llm.pacing import MIN_ATTEMPT_SECONDS, Deadline
from app.logs import kv
from app.review.comments import ModelReview, parse_model_review
from app.review.prompt import ReviewPrompt

log = logging.getLogger(__name__)

REVIEW_SCHEMA: dict[str, Any] = {
    "name": "review",
    "strict": True,
    "schema": {
        "type": "object",
        "additionalProperties": False,
        "required": ["summary", "walkthrough", "comments", "tool_findings"],
        "properties": {
            "summary": {"type": "string"},
            "walkthrough": {
                "type": "array",
                "items": {
                    "type": "object",
                    "additionalProperties": False,
                    "required": ["path", "change", "theme"],
                    "properties": {
                        "path": {"type": "string"},
                        "change": {"type": "string"},
                        "theme": {"type": "string"},
                    },
                },
            },
            "tool_findings": {
                "type": "array",
                "items": {
                    "type": "object",
                    "additionalProperties": False,
                    "required": ["id", "verdict", "why"],
                    "properties": {
                        "id": {"type": "string"},
                        "verdict": {"type": "string", "enum": ["confirm", "dismiss"]},
                        "why": {"type": "string"},
                    },
                },
            },
            "comments": {
                "type": "array",
                "items": {
                    "type": "object",
                    "additionalProperties": False,
                    "required": [
                        "path",
                        "line",
                        "start_line",
                        "side",
                        "severity",
                        "title",
                        "body",
                        "suggestion",
                    ],
                    "properties": {
                        "path": {"type": "string"},
                        "line": {"type": "integer"},
                        "start_line": {"type": ["integer", "null"]},
                        "side": {"type": "string", "enum": ["RIGHT"]},
                        "severity": {
                            "type": "string",
                            "enum": ["critical", "major", "minor", "nit"],
                        },
                        "title": {"type": "string"},
                        "body": {"type": "string"},
                        "suggestion": {"type": ["string", "null"]},
                    },
                },
            },
        },
    },
}


class ReviewFormatError(ReviewbotError):
    """The model did not follow the review format, even when asked again."""


class ReviewModelError(ReviewbotError):
    """The review model could not be reached."""

    def __init__(self, message: str, status: int | None = None) -> None:
        super().__init__(message)
        self.status = status  # the HTTP status the endpoint answered; None: no answer


@dataclass(frozen=True)
class ModelAnswer:
    review: ModelReview
    prompt_tokens: int
    completion_tokens: int
    response_format: str


#: What makes a review request longer: the diff, the context and the answer.
PROMPT_SETTINGS = (
    "REVIEWBOT_DIFF_TOKEN_BUDGET",
    "REVIEWBOT_CONTEXT_TOKEN_BUDGET",
    "REVIEWBOT_REVIEW_MAX_TOKENS",
)
#: The formats to ask for, best first; plain text with tolerant parsing is the last tier.
FORMATS: tuple[tuple[str, dict[str, Any] | None], ...] = (
    ("json_schema", {"type": "json_schema", "json_schema": REVIEW_SCHEMA}),
    # llama-cpp-python's extension: JSON mode held to a schema by a grammar, so even a
    # small model answers in the review's shape; servers that refuse the key fall through
    ("json_object_schema", {"type": "json_object", "schema": REVIEW_SCHEMA["schema"]}),
    ("json_object", {"type": "json_object"}),
    ("text", None),
)
#: What each (endpoint, model) was found to accept, for the life of the process.
ACCEPTED_FORMATS: dict[tuple[str, str], str] = {}


def refuses_format(exc: openai.APIStatusError) -> bool:
    """True when an error of any status says the request's ``response_format`` is not
    supported (OpenAI answers 400; llama.cpp-style servers answer 500)."""
    said = f"{exc.message} {exc.body}".lower()
    if context_exceeded(exc):  # a 400 about the prompt's length, not its format
        return False
    return exc.status_code == 400 or "response_format" in said or "json_schema" in said


def ask_review_model(
    client: openai.OpenAI,
    model: str,
    prompt: ReviewPrompt,
    max_tokens: int = 4096,
    deadline: Deadline | None = None,
    paid: PaidAnswers | None = None,
) -> ModelAnswer:
    """Ask with the best response format the endpoint takes, at most ``max_tokens``.

    The first call to an endpoint and model probes without retries, from JSON schema down
    to plain text, and the format that works is remembered; later calls go straight to
    it (with the client's retries), and probe again only if it is refused. With a
    ``deadline``, every attempt ends by it (timeouts cut, retries dropped). With
    ``paid``, an answer already paid for the same request is reused (its tokens count 0).
    """
    key = (str(client.base_url), model)
    known = ACCEPTED_FORMATS.get(key)
    if known is not None:
        retrying = _bounded(client, deadline)
        try:
            return _answer(retrying, model, prompt, max_tokens, known, paid)
        except openai.APIStatusError as exc:
            if not refuses_format(exc):
                raise _model_error(retrying, exc) from None
            ACCEPTED_FORMATS.pop(key, None)
        except openai.APIConnectionError as exc:
            raise _model_error(retrying, exc) from None
    for name, _ in FORMATS:
        probe = _bounded(client, deadline, retries=False)
        try:
            answer = _answer(probe, model, prompt, max_tokens, name, paid)
        except (openai.APIStatusError, openai.APIConnectionError) as exc:
            if isinstance(exc, openai.APIStatusError) and refuses_format(exc):
                log.info(kv("review.format_refused", format=name, status=exc.status_code))
                continue
            if isinstance(exc, openai.APIStatusError) and not retryable(exc.status_code):
                raise _model_error(probe, exc) from None  # asking again cannot help
            if deadline is not None and deadline.remaining() < MIN_ATTEMPT_SECONDS:
                raise _model_error(probe, exc) from None  # no time left to ask again
            answer = _retried(client, deadline, model, prompt, max_tokens, name, paid)
        ACCEPTED_FORMATS[key] = name
        return answer
    raise ReviewModelError("review model refused every response format", 400)


def _retried(
    client: openai.OpenAI,
    deadline: Deadline | None,
    model: str,
    prompt: ReviewPrompt,
    max_tokens: int,
    name: str,
    paid: PaidAnswers | None,
) -> ModelAnswer:
    """A probe that failed for a reason other than the format, asked again with retries."""
    retrying = _bounded(client, deadline)
    try:
        return _answer(retrying, model, prompt, max_tokens, name, paid)
    except (openai.APIConnectionError, openai.APIStatusError) as exc:
        raise _model_error(retrying, exc) from None


def _bounded(
    client: openai.OpenAI, deadline: Deadline | None, retries: bool = True
) -> openai.OpenAI:
    """The client for one call: without retries for a probe, and within the deadline."""
    client = client.with_options(max_retries=client.max_retries if retries else 0)
    if deadline is None:
        return client
    bounded = within_deadline(client, deadline)
    if bounded is None:
        raise ReviewModelError(
            f"the review's time budget ({deadline.seconds:g} s) ran out before the model answered"
        )
    return bounded


def _answer(
    client: openai.OpenAI,
    model: str,
    prompt: ReviewPrompt,
    max_tokens: int,
    name: str,
    paid: PaidAnswers | None = None,
) -> ModelAnswer:
    response_format = dict(FORMATS)[name]
    extra = {"response_format": response_format} if response_format else {}
    answer = _paid_or_asked(client, model, prompt, max_tokens, extra, paid)
    return ModelAnswer(
        parse_model_review(answer.content), answer.prompt_tokens, answer.completion_tokens, name
    )


def request_sha(model: str, prompt: ReviewPrompt, max_tokens: int, extra: dict[str, Any]) -> str:
    """What identifies a request to the model: the same hash, the same answer to reuse."""
    asked = {"model": model, "messages": prompt.messages(), "max_tokens": max_tokens, **extra}
    return hashlib.sha256(json.dumps(asked, sort_keys=True).encode()).hexdigest()


def _paid_or_asked(
    client: openai.OpenAI,
    model: str,
    prompt: ReviewPrompt,
    max_tokens: int,
    extra: dict[str, Any],
    paid: PaidAnswers | None,
) -> PaidAnswer:
    """The answer already paid for this very request (its tokens 0: not paid again), or
    the model's, kept for a retry."""
    key = request_sha(model, prompt, max_tokens, extra) if paid is not None else ""
    if paid is not None:
        found = paid.find(key)
        if found is not None:
            log.info(kv("model.answer_reused", model=model, request=key[:12]))
            return PaidAnswer(found.content, 0, 0)
    create: Any = client.chat.completions.create  # the messages are plain dicts
    response = create(
        model=model, messages=prompt.messages(), temperature=0, max_tokens=max_tokens, **extra
    )
    usage = response.usage
    answer = PaidAnswer(
        (response.choices[0].message.content if response.choices else "") or "",
        usage.prompt_tokens if usage else 0,
        usage.completion_tokens if usage else 0,
    )
    if paid is not None:
        paid.keep(key, answer)
    return answer


def _model_error(client: openai.OpenAI, exc: Exception) -> ReviewModelError:
    status = exc.status_code if isinstance(exc, openai.APIStatusError) else None
    said = f"review model failed: {describe_model_failure(client, exc)}"
    if isinstance(exc, openai.APIStatusError) and context_exceeded(exc):
        said += f" ({', '.join(PROMPT_SETTINGS)})"
    return ReviewModelError(said, status)


@dataclass(frozen=True)
class TextAnswer:
    text: str
    prompt_tokens: int
    completion_tokens: int


def ask_text_model(
    client: openai.OpenAI,
    model: str,
    prompt: ReviewPrompt,
    max_tokens: int,
    deadline: Deadline | None = None,
    paid: PaidAnswers | None = None,
) -> TextAnswer:
    """A plain-text answer (a reply in a PR's conversation, a description), within
    ``deadline``; with ``paid``, one already paid for the same request is reused."""
    bounded = _bounded(client, deadline)
    try:
        answer = _paid_or_asked(bounded, model, prompt, max_tokens, {}, paid)
    except (openai.APIConnectionError, openai.APIStatusError) as exc:
        raise _model_error(bounded, exc) from None
    return TextAnswer(answer.content, answer.prompt_tokens, answer.completion_tokens)
