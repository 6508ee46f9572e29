"""Request bodies checked against GitHub's OpenAPI description, as the fake GitHub does
for every body it accepts: githubkit's models are generated from that description
(``githubkit_schemas``), so a body they refuse, or one with a key the description does
not have, is a body GitHub would refuse (422)."""

from __future__ import annotations

import os
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


def manifest_problem(app_manifest: Any) -> str | None:
    """Why GitHub would refuse an App manifest, or None: its permissions must be ones
    the description's ``app-permissions`` has, its events webhook events."""
    if not isinstance(app_manifest, dict) or not app_manifest.get("name"):
        return "a manifest needs a name"
    if not str(app_manifest.get("hook_attributes", {}).get("url", "")).startswith("http"):
        return "hook_attributes.url must be an http(s) URL"
    if not str(app_manifest.get("redirect_url", "")).startswith("http"):
        return "redirect_url must be an http(s) URL"
    permissions = app_manifest.get("default_permissions", {})
    try:
        models.AppPermissions.model_validate(permissions)
    except ValidationError as exc:
        return f"default_permissions: {exc.errors()[0]['loc']} {exc.errors()[0]['msg']}"
    unknown = unknown_keys(models.AppPermissions, permissions)
    if unknown:
        return f"default_permissions: unknown {sorted(unknown)}"
    events = set(app_manifest.get("default_events", [])) - set(_event_names())
    return f"default_events: unknown {sorted(events)}" if events else None


def _event_names() -> tuple[str, ...]:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        from githubkit.versions.latest.webhooks import EventNameType
    return typing.get_args(EventNameType)


def conversion(
    app_id: int, app_manifest: dict[str, Any], base_url: str, pem: str
) -> dict[str, Any]:
    """The body GitHub answers ``POST /app-manifests/{code}/conversions`` with."""
    now = "2026-12-03T09:00:00Z"
    slug = str(app_manifest["name"]).lower().replace(" ", "-")
    owner = app_manifest["owner"]
    return {
        "id": app_id,
        "slug": slug,
        "node_id": f"A_kwDO{app_id:08d}",
        "client_id": f"Iv1.{app_id:016x}",
        "owner": {
            "login": owner,
            "id": 1,
            "node_id": "MDQ6VXNlcjE=",
            "avatar_url": "",
            "gravatar_id": "",
            "url": f"{base_url}/users/{owner}",
            "html_url": "",
            "followers_url": "",
            "following_url": "",
            "gists_url": "",
            "starred_url": "",
            "subscriptions_url": "",
            "organizations_url": "",
            "repos_url": "",
            "events_url": "",
            "received_events_url": "",
            "type": "User",
            "site_admin": False,
        },
        "name": app_manifest["name"],
        "description": None,
        "external_url": app_manifest["url"],
        "html_url": f"{base_url}/apps/{slug}",
        "created_at": now,
        "updated_at": now,
        "permissions": app_manifest["default_permissions"],
        "events": app_manifest["default_events"],
        "installations_count": 0,
        "client_secret": os.urandom(20).hex(),
        "webhook_secret": None,
        "pem": pem,
    }


def conversion_problem(answer: Any) -> str | None:
    """Why the description's conversion answer would not be ``answer``, or None."""
    try:
        models.AppManifestsCodeConversionsPostResponse201.model_validate(answer)
    except ValidationError as exc:
        return f"{exc.errors()[0]['loc']} {exc.errors()[0]['msg']}"
    return None
