"""The GitLab instances a deployment serves: ``GITLAB_URL``'s and those of
``GITLAB_INSTANCES``, each as the ``Settings`` of that instance alone (its URL, tokens
and webhook secret in the ``gitlab_*`` fields), so every GitLab module works on one
instance; and which instance a webhook delivery comes from."""

from __future__ import annotations

import hmac
from collections.abc import Sequence
from typing import Any

from app.config import Settings
from app.errors import ConfigError
from app.forge.intake import WebhookRejected
from app.gitlab.records import instance_name


def instance_settings(settings: Settings) -> list[Settings]:
    """One ``Settings`` per instance: ``GITLAB_URL``'s first (unless ``GITLAB_INSTANCES``
    is given and ``GITLAB_URL`` has neither token nor secret), then each of
    ``GITLAB_INSTANCES``. ``ConfigError`` when two name the same instance."""
    own = settings.model_copy(update={"gitlab_instances": []})
    views = []
    if not settings.gitlab_instances or _configured(own):
        views.append(own)
    for entry in settings.gitlab_instances:
        views.append(
            own.model_copy(
                update={
                    "gitlab_url": entry.url,
                    "gitlab_token": entry.token,
                    "gitlab_tokens": dict(entry.tokens),
                    "gitlab_webhook_secret": entry.webhook_secret,
                }
            )
        )
    names = [instance_name(v.gitlab_url) for v in views]
    twice = sorted({n for n in names if names.count(n) > 1})
    if twice:
        raise ConfigError(
            f"GitLab instance {', '.join(twice)} is configured twice (GITLAB_URL and"
            " GITLAB_INSTANCES, or twice in GITLAB_INSTANCES): give each instance once"
        )
    return views


def _configured(view: Settings) -> bool:
    return bool(view.gitlab_token or view.gitlab_tokens or view.gitlab_webhook_secret)


def by_secret(views: Sequence[Settings], token: str | None) -> list[Settings]:
    """The instances whose webhook secret ``token`` (``X-Gitlab-Token``) is; 401 when
    none is (checked before the body is read as JSON)."""
    if not token:
        raise WebhookRejected(401, "missing X-Gitlab-Token")
    matching = [
        v
        for v in views
        if v.gitlab_webhook_secret is not None
        and hmac.compare_digest(v.gitlab_webhook_secret.get_secret_value().encode(), token.encode())
    ]
    if not matching:
        raise WebhookRejected(401, "X-Gitlab-Token does not match the webhook's secret token")
    return matching


def by_payload(matching: Sequence[Settings], payload: dict[str, Any]) -> Settings:
    """The instance a delivery comes from, of those its secret matched: the only one, or
    the one whose URL the payload's project lies under; 400 when the payload cannot tell
    them apart."""
    if len(matching) == 1:
        return matching[0]
    project = payload.get("project")
    web_url = str(project.get("web_url") or "") if isinstance(project, dict) else ""
    under = [v for v in matching if web_url.startswith(v.gitlab_url + "/")]
    if len(under) != 1:
        raise WebhookRejected(
            400,
            "the webhook's secret token is shared by several GitLab instances and the"
            " project's web_url names none of them: give each instance its own secret",
        )
    return under[0]
