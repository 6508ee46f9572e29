"""GitHub's and GitLab's documented webhook payloads, and the headers each sends."""

from __future__ import annotations

import copy
import hashlib
import hmac
import json
from pathlib import Path
from typing import Any

DATA = Path(__file__).parent / "data" / "webhooks"


def payload(name: str, **changes: Any) -> dict[str, Any]:
    """A copy of ``data/webhooks/<name>.json``; ``changes`` set dotted paths, e.g.
    ``**{"pull_request.number": 3}``."""
    data = copy.deepcopy(json.loads((DATA / f"{name}.json").read_text()))
    for dotted, value in changes.items():
        target = data
        *parents, last = dotted.split(".")
        for key in parents:
            target = target[key]
        target[last] = value
    return data


def signed(secret: str, body: bytes) -> str:
    return "sha256=" + hmac.new(secret.encode(), body, hashlib.sha256).hexdigest()


def headers(secret: str, body: bytes, event: str, delivery: str) -> dict[str, str]:
    return {
        "X-GitHub-Event": event,
        "X-GitHub-Delivery": delivery,
        "X-Hub-Signature-256": signed(secret, body),
        "Content-Type": "application/json",
    }


def gitlab_headers(secret: str, event: str, delivery: str) -> dict[str, str]:
    """The headers GitLab sends with a webhook (``event``: ``Merge Request Hook``, ...)."""
    return {
        "X-Gitlab-Event": event,
        "X-Gitlab-Token": secret,
        "X-Gitlab-Event-UUID": delivery,
        "Content-Type": "application/json",
    }
