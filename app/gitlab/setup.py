"""``reviewbot setup gitlab``: the webhook GitLab sends to reviewbot, made on a project or
group through the API with a fresh secret, and the settings ``serve`` needs written to
the settings file (readable by its owner only)."""

from __future__ import annotations

import secrets
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import quote

from pydantic import SecretStr

from app.env_file import refuse_overwrite, write_settings
from app.errors import ConfigError
from app.gitlab.client import GitLabClient, GitLabError

#: The triggers the bot needs (merge requests, comments, pushes), TLS verified.
HOOK_FIELDS = {
    "merge_requests_events": True,
    "note_events": True,
    "push_events": True,
    "enable_ssl_verification": True,
}
#: Settings a second run replaces only with ``force``.
SECRET_KEYS = ("GITLAB_WEBHOOK_SECRET",)


@dataclass(frozen=True)
class GitLabSetup:
    gitlab_url: str
    path: str  # the project's (or with ``group``, the group's) full path
    public_url: str  # where GitLab reaches ``reviewbot serve``
    env_file: Path
    group: bool = False
    force: bool = False


@dataclass(frozen=True)
class MadeHook:
    hook_id: int
    url: str
    replaced: bool  # an existing hook to the same URL was given the new secret


def setup_gitlab(setup: GitLabSetup, client: GitLabClient) -> MadeHook:
    """Make (or with ``force``, renew) the webhook and write ``GITLAB_URL`` and
    ``GITLAB_WEBHOOK_SECRET``. ``ConfigError`` naming the fix when the settings file
    holds a secret already, a hook to the same URL exists, or GitLab refuses."""
    refuse_overwrite(setup.env_file, SECRET_KEYS, setup.force)
    owner = f"/{'groups' if setup.group else 'projects'}/{quote(setup.path, safe='')}"
    url = setup.public_url.rstrip("/") + "/webhooks/gitlab"
    secret = secrets.token_urlsafe(32)
    try:
        existing = [h for h in client.paginate(owner + "/hooks") if h.get("url") == url]
        if existing and not setup.force:
            raise ConfigError(
                f"{setup.path} has a webhook to {url} already (id {existing[0]['id']});"
                " pass --force to give it a new secret"
            )
        data: dict[str, Any] = {"url": url, "token": secret, **HOOK_FIELDS}
        if existing:
            hook = client.call("PUT", f"{owner}/hooks/{existing[0]['id']}", json=data).json()
        else:
            hook = client.call("POST", owner + "/hooks", json=data).json()
    except GitLabError as exc:
        raise _refused(exc, setup) from None
    values = {"GITLAB_URL": setup.gitlab_url, "GITLAB_WEBHOOK_SECRET": secret}
    write_settings(setup.env_file, values, SECRET_KEYS, force=True)
    return MadeHook(int(hook["id"]), url, bool(existing))


def _refused(exc: GitLabError, setup: GitLabSetup) -> ConfigError:
    kind = "group" if setup.group else "project"
    if exc.status == 403:
        return ConfigError(
            f"GitLab refused to manage the webhooks of {setup.path} (403): use a token of a"
            f" Maintainer (Owner, for a group) with the api scope; group webhooks need Premium"
        )
    if exc.status == 404:
        return ConfigError(f"no {kind} {setup.path} that the token can see (404): check --{kind}")
    if exc.status == 401:
        return ConfigError(
            "GitLab refused GITLAB_TOKEN (401): set a valid token with the api scope"
        )
    return ConfigError(str(exc))


def token_or_refuse(token: SecretStr | None) -> SecretStr:
    if token is None:
        raise ConfigError(
            "set GITLAB_TOKEN to a token that may manage the project's webhooks (Maintainer)"
        )
    return token
