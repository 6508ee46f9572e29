"""Creating the GitHub App in one click: GitHub's App *manifest* flow.

A form posts the manifest (name, webhook URL, the permissions and events reviewbot
needs, where to come back) to GitHub's "new App" page for a user or an organisation;
GitHub creates the App and sends the browser back with a one-time code, which
``POST /app-manifests/{code}/conversions`` exchanges for the App's id, private key,
webhook secret and OAuth client. Nothing here is sent anywhere but GitHub.
"""

from __future__ import annotations

import html
import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx

from app import env_file as env_settings
from app.errors import ConfigError
from app.github.client import TIMEOUT, GitHubError
from app.github.urls import web_url

#: What reviewbot needs (README, "Set up the GitHub App").
PERMISSIONS = {
    "pull_requests": "write",
    "contents": "read",
    "metadata": "read",
    "issues": "write",
    "checks": "write",
}
EVENTS = ["pull_request", "push", "issue_comment", "pull_request_review_comment"]
#: The settings a credentials file holds; an existing one is not overwritten silently.
CREDENTIAL_KEYS = (
    "GITHUB_APP_ID",
    "GITHUB_APP_PRIVATE_KEY",
    "GITHUB_APP_PRIVATE_KEY_PATH",
    "GITHUB_WEBHOOK_SECRET",
    "GITHUB_CLIENT_ID",
    "GITHUB_CLIENT_SECRET",
    "GITHUB_API_URL",
)


@dataclass(frozen=True)
class NewApp:
    id: int
    slug: str
    pem: str
    webhook_secret: str
    client_id: str
    client_secret: str
    html_url: str


def manifest(name: str, public_url: str, redirect_url: str) -> dict[str, Any]:
    """The App's manifest: reviewbot's permissions and events, its webhook at
    ``public_url``/webhooks/github, and ``redirect_url`` to come back to."""
    base = public_url.rstrip("/")
    return {
        "name": name,
        "url": base,
        "hook_attributes": {"url": f"{base}/webhooks/github", "active": True},
        "redirect_url": redirect_url,
        "public": False,
        "default_permissions": PERMISSIONS,
        "default_events": EVENTS,
    }


def new_app_url(api_url: str, organization: str | None, state: str) -> str:
    """GitHub's page that takes a manifest, for a user's or an organisation's App."""
    if organization is not None and not re.fullmatch(
        r"[A-Za-z0-9](?:[A-Za-z0-9-]{0,38})", organization
    ):
        raise ConfigError(f"{organization!r} is not a GitHub organisation name")
    owner = f"/organizations/{organization}" if organization else ""
    return f"{web_url(api_url)}{owner}/settings/apps/new?state={state}"


def form_page(action: str, app_manifest: dict[str, Any]) -> str:
    """The local page: one button that posts the manifest to GitHub (no script)."""
    value = html.escape(json.dumps(app_manifest), quote=True)
    permissions = "".join(
        f"<li>{html.escape(k)}: {html.escape(v)}</li>" for k, v in PERMISSIONS.items()
    )
    return (
        "<!doctype html><html><head><meta charset=utf-8><title>reviewbot setup</title></head>"
        "<body><h1>Create the reviewbot GitHub App</h1>"
        f"<p>Permissions:</p><ul>{permissions}</ul>"
        f"<p>Events: {html.escape(', '.join(EVENTS))}</p>"
        f'<form action="{html.escape(action, quote=True)}" method="post">'
        f'<input type="hidden" name="manifest" value="{value}">'
        '<button type="submit">Create the GitHub App</button></form></body></html>'
    )


#: How long GitHub keeps a manifest's one-time code (GitHub's docs: one hour).
CODE_LIFETIME = "one hour"


def convert(api_url: str, code: str, transport: httpx.BaseTransport | None = None) -> NewApp:
    """Exchange the one-time ``code`` for the new App's credentials. A failure says
    where it went and how to retry with the same code (the App exists on GitHub by then)."""
    if not re.fullmatch(r"[A-Za-z0-9_-]{1,100}", code):
        raise ConfigError("GitHub sent back no usable code")
    url = f"{api_url.rstrip('/')}/app-manifests/{code}/conversions"
    retry = (
        f"the App exists on GitHub: within {CODE_LIFETIME}, run `reviewbot setup --code {code}`"
        f" (with the same --github-url and --env-file) to fetch its credentials again"
    )
    try:
        with httpx.Client(timeout=TIMEOUT, transport=transport) as client:
            answer = client.post(url, headers={"Accept": "application/vnd.github+json"})
    except httpx.HTTPError as exc:
        raise SetupExchangeError(
            f"cannot reach GitHub at {api_url} ({type(exc).__name__}: {exc}); {retry}"
        ) from None
    if answer.status_code == 404:
        raise SetupExchangeError(
            f"GitHub at {api_url} does not know this code (HTTP 404): it was used already or"
            f" is older than {CODE_LIFETIME}. Delete the App on GitHub (Settings -> Developer"
            " settings -> GitHub Apps) and run `reviewbot setup` again",
            404,
        )
    if answer.status_code != 201:
        raise SetupExchangeError(
            f"GitHub at {api_url} refused the code exchange with HTTP {answer.status_code};"
            f" {retry}",
            answer.status_code,
        )
    try:
        data = answer.json()
        return NewApp(
            id=int(data["id"]),
            slug=str(data.get("slug") or ""),
            pem=str(data["pem"]),
            webhook_secret=str(data.get("webhook_secret") or ""),
            client_id=str(data.get("client_id") or ""),
            client_secret=str(data.get("client_secret") or ""),
            html_url=str(data.get("html_url") or ""),
        )
    except (ValueError, KeyError, TypeError, AttributeError):
        raise GitHubError("GitHub's app-manifest conversion answer has no App in it") from None


class SetupExchangeError(GitHubError):
    """The one-time code could not be exchanged for the App's credentials."""


def refuse_overwrite(env_file: Path, force: bool) -> None:
    """``ConfigError`` when ``env_file`` already sets App credentials and ``force`` is
    not given: checked before the App is created, and again before writing."""
    env_settings.refuse_overwrite(env_file, CREDENTIAL_KEYS, force)


def write_credentials(env_file: Path, app: NewApp, api_url: str, force: bool) -> None:
    """The App's settings into ``env_file`` (other lines kept), readable by its owner
    only. The key is written on one line with literal ``\\n`` (``GITHUB_APP_PRIVATE_KEY``):
    one file that ``reviewbot serve`` and compose's ``env_file`` read alike, and no key
    file for a container to be unable to read. ``ConfigError`` when credentials are there
    already and ``force`` is not given."""
    values = {
        "GITHUB_APP_ID": str(app.id),
        "GITHUB_APP_PRIVATE_KEY": app.pem.strip().replace("\r\n", "\n").replace("\n", "\\n"),
        "GITHUB_WEBHOOK_SECRET": app.webhook_secret,
        "GITHUB_CLIENT_ID": app.client_id,
        "GITHUB_CLIENT_SECRET": app.client_secret,
        "GITHUB_API_URL": api_url,
    }
    env_settings.write_settings(env_file, values, CREDENTIAL_KEYS, force)
