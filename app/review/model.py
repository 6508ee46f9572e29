"""Calling the review model: JSON-schema output where the endpoint supports it."""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Any

import openai

from app.errors import ReviewbotError
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


def ask_review_model(client: openai.OpenAI, model: str, prompt: ReviewPrompt) -> ModelAnswer:
    """Ask with a JSON schema; endpoints that refuse it get JSON mode, then plain text."""
    formats: list[tuple[str, dict[str, Any] | None]] = [
        ("json_schema", {"type": "json_schema", "json_schema": REVIEW_SCHEMA}),
        ("json_object", {"type": "json_object"}),
        ("text", None),
    ]
    create: Any = client.chat.completions.create  # the overloads do not type **extra
    for name, response_format in formats:
        extra = {"response_format": response_format} if response_format else {}
        try:
            response = create(model=model, messages=prompt.messages(), temperature=0, **extra)
        except openai.BadRequestError as exc:  # this endpoint does not take that format
            log.info(kv("review.format_refused", format=name, status=exc.status_code))
            continue
        except (openai.APIConnectionError, openai.APIStatusError) as exc:
            status = getattr(exc, "status_code", None)
            raise ReviewModelError(
                f"review model failed ({f'HTTP {status}' if status else type(exc).__name__})",
                status,
            ) from None
        content = response.choices[0].message.content if response.choices else ""
        usage = response.usage
        return ModelAnswer(
            parse_model_review(content or ""),
            usage.prompt_tokens if usage else 0,
            usage.completion_tokens if usage else 0,
            name,
        )
    raise ReviewModelError("review model refused every response format", 400)
