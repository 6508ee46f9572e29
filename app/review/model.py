"""Calling the review model: JSON-schema output where the endpoint supports it."""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Any

import openai

from app.errors import ReviewbotError
from app.llm.client import describe_model_failure
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
        "required": ["summary", "comments"],
        "properties": {
            "summary": {"type": "string"},
            "comments": {
                "type": "array",
                "items": {
                    "type": "object",
                    "additionalProperties": False,
                    "required": ["path", "line", "side", "severity", "title", "body", "suggestion"],
                    "properties": {
                        "path": {"type": "string"},
                        "line": {"type": "integer"},
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


#: The formats to ask for, best first; plain text with tolerant parsing is the last tier.
FORMATS: tuple[tuple[str, dict[str, Any] | None], ...] = (
    ("json_schema", {"type": "json_schema", "json_schema": REVIEW_SCHEMA}),
    ("json_object", {"type": "json_object"}),
    ("text", None),
)
#: What each (endpoint, model) was found to accept, for the life of the process.
_ACCEPTED: dict[tuple[str, str], str] = {}


def refuses_format(exc: openai.APIStatusError) -> bool:
    """True when an error of any status says the request's ``response_format`` is not
    supported (OpenAI answers 400; llama.cpp-style servers answer 500)."""
    said = f"{exc.message} {exc.body}".lower()
    return exc.status_code == 400 or "response_format" in said or "json_schema" in said


def ask_review_model(
    client: openai.OpenAI, model: str, prompt: ReviewPrompt, max_tokens: int = 4096
) -> ModelAnswer:
    """Ask with the best response format the endpoint takes, at most ``max_tokens``.

    The first call to an endpoint and model probes without retries, from JSON schema down
    to plain text, and the format that works is remembered; later calls go straight to
    it (with the client's retries), and probe again only if it is refused.
    """
    key = (str(client.base_url), model)
    known = _ACCEPTED.get(key)
    if known is not None:
        try:
            return _answer(client.chat.completions.create, model, prompt, max_tokens, known)
        except openai.APIStatusError as exc:
            if not refuses_format(exc):
                raise _model_error(client, exc) from None
            _ACCEPTED.pop(key, None)
        except openai.APIConnectionError as exc:
            raise _model_error(client, exc) from None
    probe = client.with_options(max_retries=0).chat.completions.create
    for name, _ in FORMATS:
        try:
            try:
                answer = _answer(probe, model, prompt, max_tokens, name)
            except openai.APIStatusError as exc:
                if refuses_format(exc):
                    log.info(kv("review.format_refused", format=name, status=exc.status_code))
                    continue
                answer = _answer(client.chat.completions.create, model, prompt, max_tokens, name)
            except openai.APIConnectionError:
                answer = _answer(client.chat.completions.create, model, prompt, max_tokens, name)
        except (openai.APIConnectionError, openai.APIStatusError) as exc:
            raise _model_error(client, exc) from None
        _ACCEPTED[key] = name
        return answer
    raise ReviewModelError("review model refused every response format", 400)


def _answer(
    create: Any, model: str, prompt: ReviewPrompt, max_tokens: int, name: str
) -> ModelAnswer:
    response_format = dict(FORMATS)[name]
    extra = {"response_format": response_format} if response_format else {}
    response = create(
        model=model, messages=prompt.messages(), temperature=0, max_tokens=max_tokens, **extra
    )
    content = response.choices[0].message.content if response.choices else ""
    usage = response.usage
    return ModelAnswer(
        parse_model_review(content or ""),
        usage.prompt_tokens if usage else 0,
        usage.completion_tokens if usage else 0,
        name,
    )


def _model_error(client: openai.OpenAI, exc: Exception) -> ReviewModelError:
    status = exc.status_code if isinstance(exc, openai.APIStatusError) else None
    return ReviewModelError(f"review model failed: {describe_model_failure(client, exc)}", status)
