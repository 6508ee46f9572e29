"""Driving the real app as GitLab does: its documented webhook payloads, adjusted to the
fake GitLab's project and MR, sent with its headers to ``/webhooks/gitlab``."""

from __future__ import annotations

import json
import uuid
from typing import Any

import httpx

from tests.conftest import GITLAB_PROJECT, GITLAB_PROJECT_ID, GITLAB_SECRET
from tests.webhooks import gitlab_headers, payload

MR_HOOK, NOTE_HOOK, PUSH_HOOK = "Merge Request Hook", "Note Hook", "Push Hook"
PROJECT = {"project.id": GITLAB_PROJECT_ID, "project.path_with_namespace": GITLAB_PROJECT}


def mr_event(action: str, head: str, iid: int = 7, **changes: Any) -> dict[str, Any]:
    """GitLab's merge request event: ``open``, ``update`` (new commits: ``oldrev``),
    ``close``, ``merge``."""
    return payload(
        "gitlab/merge-request-event",
        **PROJECT,
        **{
            "object_attributes.iid": iid,
            "object_attributes.action": action,
            "object_attributes.state": "merged" if action == "merge" else "opened",
            "object_attributes.last_commit.id": head,
            "changes": {},
            **changes,
        },
    )


def note_event(
    body: str, note_id: int, user: str = "alice", iid: int = 7, **changes: Any
) -> dict[str, Any]:
    """GitLab's comment-on-a-merge-request event."""
    return payload(
        "gitlab/comment-merge-request-event",
        **PROJECT,
        **{
            "object_attributes.id": note_id,
            "object_attributes.note": body,
            "object_attributes.action": "create",
            "merge_request.iid": iid,
            "user.username": user,
            **changes,
        },
    )


def push_event(ref: str, after: str) -> dict[str, Any]:
    return payload(
        "gitlab/push-event",
        ref=ref,
        after=after,
        **PROJECT,
        **{"project.default_branch": "main"},
    )


def send_gitlab(
    base: str,
    event: str,
    body: dict[str, Any] | bytes,
    delivery: str | None = None,
    secret: str = GITLAB_SECRET,
) -> httpx.Response:
    raw = body if isinstance(body, bytes) else json.dumps(body).encode()
    return httpx.post(
        f"{base}/webhooks/gitlab",
        content=raw,
        timeout=30,
        headers=gitlab_headers(secret, event, delivery or str(uuid.uuid4())),
    )
