"""A GitHub Actions run read as the App's webhook: the event's name and payload (as
Actions gives them, ``GITHUB_EVENT_NAME`` and the file at ``GITHUB_EVENT_PATH``) give
the jobs the App's router gives for the same delivery."""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from app.ci.runner import NO_INSTALLATION, RUNNERS
from app.errors import ConfigError
from app.forge.intake import WebhookRejected
from app.github.events import EventContext, check_payload, router
from app.task_specs import Job

#: ``pull_request_target`` is ``pull_request`` run with the base's workflow and a token
#: that can write on a fork's pull request; the bot reads the fork's files through the
#: API alone, so it is routed as ``pull_request``.
EVENT_ALIASES = {"pull_request_target": "pull_request"}


@dataclass(frozen=True)
class ActionEvent:
    name: str
    payload: dict[str, Any]


def read_event(env: Mapping[str, str]) -> ActionEvent:
    """The event of the workflow run ``env`` describes; ``ConfigError`` outside Actions."""
    name, path = env.get("GITHUB_EVENT_NAME"), env.get("GITHUB_EVENT_PATH")
    if not name or not path:
        raise ConfigError(
            "GITHUB_EVENT_NAME and GITHUB_EVENT_PATH are not set: `reviewbot action` runs"
            " inside GitHub Actions; elsewhere use `reviewbot review --pr URL`"
        )
    try:
        payload = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise ConfigError(f"cannot read the event payload {path}: {exc}") from None
    if not isinstance(payload, dict):
        raise ConfigError(f"the event payload {path} is not a JSON object")
    return ActionEvent(name, payload)


def event_jobs(event: ActionEvent) -> list[Job]:
    """The jobs the App would run for this event, of those a CI run can run."""
    try:
        check_payload(event.payload)
    except WebhookRejected as exc:
        raise ConfigError(f"the {event.name} event's payload is not GitHub's: {exc}") from None
    name = EVENT_ALIASES.get(event.name, event.name)
    payload = {**event.payload, "installation": {"id": NO_INSTALLATION}}
    context = EventContext(name, payload.get("action"), payload)
    return [job for job in router.jobs_for(context) if job.task in RUNNERS]
