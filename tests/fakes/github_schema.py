"""Request bodies checked against GitHub's OpenAPI description, as the fake GitHub does
for every body it accepts: githubkit's models are generated from that description
(``githubkit_schemas``), so a body they refuse, or one with a key the description does
not have, is a body GitHub would refuse (422)."""

from __future__ import annotations

import typing
import warnings
from typing import Any

from pydantic import BaseModel, ValidationError

with warnings.catch_warnings():
    warnings.simplefilter("ignore", DeprecationWarning)
    from githubkit_schemas.latest import models

#: (method, path pattern as the fake routes it) -> the body's model(s) in the description
BODIES: dict[tuple[str, str], tuple[str, ...]] = {
    ("POST", "reviews"): ("ReposOwnerRepoPullsPullNumberReviewsPostBody",),
    ("PATCH", "pull"): ("ReposOwnerRepoPullsPullNumberPatchBody",),
    ("POST", "issue_comment"): ("ReposOwnerRepoIssuesIssueNumberCommentsPostBody",),
    ("PATCH", "issue_comment"): ("ReposOwnerRepoIssuesCommentsCommentIdPatchBody",),
    ("POST", "reply"): ("ReposOwnerRepoPullsPullNumberCommentsCommentIdRepliesPostBody",),
    ("POST", "reaction"): ("ReposOwnerRepoIssuesCommentsCommentIdReactionsPostBody",),
    ("POST", "labels"): (
        "ReposOwnerRepoIssuesIssueNumberLabelsPostBodyOneof0",
        "ReposOwnerRepoIssuesIssueNumberLabelsPostBodyOneof2",
    ),
    ("POST", "check_run"): (
        "ReposOwnerRepoCheckRunsPostBodyOneof0",
        "ReposOwnerRepoCheckRunsPostBodyOneof1",
    ),
    ("PATCH", "check_run"): (
        "ReposOwnerRepoCheckRunsCheckRunIdPatchBodyAnyof0",
        "ReposOwnerRepoCheckRunsCheckRunIdPatchBodyAnyof1",
    ),
}


def body_problem(kind: tuple[str, str], data: Any) -> str | None:
    """Why GitHub would refuse ``data`` as the body of ``kind``, or None."""
    problems = []
    for name in BODIES[kind]:
        model = getattr(models, name)
        try:
            model.model_validate(data)
        except ValidationError as exc:
            problems.append(f"{name}: {exc.errors()[0]['loc']} {exc.errors()[0]['msg']}")
            continue
        unknown = unknown_keys(model, data)
        if not unknown:
            return None
        problems.append(f"{name}: unknown keys {sorted(unknown)}")
    return "; ".join(problems)


def unknown_keys(model: type[BaseModel], data: Any, where: str = "") -> set[str]:
    """Keys of ``data`` (and of the objects inside it) that ``model`` does not declare."""
    if not isinstance(data, dict):
        return set()
    fields = {(f.alias or name): f for name, f in model.model_fields.items()}
    unknown = {f"{where}{key}" for key in data if key not in fields}
    for key, value in data.items():
        field = fields.get(key)
        if field is None:
            continue
        for nested in _models_in(field.annotation):
            items = value if isinstance(value, list) else [value]
            for item in items:
                unknown |= unknown_keys(nested, item, f"{where}{key}.")
    return unknown


def _models_in(annotation: Any) -> list[type[BaseModel]]:
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return [annotation]
    return [m for arg in typing.get_args(annotation) for m in _models_in(arg)]
