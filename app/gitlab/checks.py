"""``reviewbot doctor``'s checks of GitLab: the token works, has the scope that may write
to merge requests, the instance is new enough, and the webhook secret is set."""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from functools import partial
from typing import Any
from urllib.parse import quote

from pydantic import SecretStr

from app.checks import Check
from app.config import Settings
from app.errors import ConfigError
from app.gitlab.client import GitLabClient, GitLabError
from app.gitlab.instances import instance_settings
from app.gitlab.records import instance_name, token_for
from app.tls import ssl_context

#: The token scope reviewbot needs: reading repositories and writing MR notes, statuses.
SCOPE = "api"
#: The oldest GitLab reviewbot supports: merge requests' ``/diffs`` API came in 15.7.
MIN_VERSION = (15, 7)
DEVELOPER = 30
ROLES = {0: "none", 5: "Minimal access", 10: "Guest", 15: "Planner", 20: "Reporter"}
#: The webhook's triggers the bot needs, by the hook's field.
HOOK_EVENTS = {
    "merge_requests_events": "merge request events",
    "note_events": "comments",
    "push_events": "push events",
}


def gitlab_wanted(settings: Settings) -> bool:
    """GitLab is checked when any of its settings is given."""
    given = settings.gitlab_token or settings.gitlab_tokens or settings.gitlab_webhook_secret
    return bool(given or settings.gitlab_instances)


def gitlab_checks(
    settings: Settings, projects: Callable[[Settings], Sequence[str]] = lambda _: ()
) -> list[Callable[[], Check]]:
    """The checks ``run_checks`` runs for GitLab: those of each instance
    (``instance_checks``), named by the instance where there are several."""
    try:
        views = instance_settings(settings)
    except ConfigError as exc:
        failed = Check("GitLab", False, str(exc), "fix GITLAB_INSTANCES")
        return [lambda: failed]
    checks = []
    for view in views:
        label = f"GitLab {instance_name(view.gitlab_url)}" if len(views) > 1 else "GitLab"
        checks += instance_checks(view, projects(view), label)
    return checks


def instance_checks(
    settings: Settings, projects: Sequence[str], label: str = "GitLab"
) -> list[Callable[[], Check]]:
    """One instance's checks, in order: each token, the webhook secret, then each project
    (``projects``, and the paths of ``GITLAB_TOKENS`` that are projects): the token's role
    there and the project's webhook."""
    tokens: list[tuple[str, SecretStr | None]] = [
        (f"{label} ({path})", token) for path, token in settings.gitlab_tokens.items()
    ]
    if settings.gitlab_token is not None or not tokens:
        tokens.insert(0, (label, settings.gitlab_token))
    checks: list[Callable[[], Check]] = [
        partial(gitlab_token, settings, token, name) for name, token in tokens
    ]
    paths = list(dict.fromkeys([*projects, *settings.gitlab_tokens]))
    return [
        *checks,
        lambda: gitlab_webhooks(settings, f"{label} webhooks"),
        *(partial(gitlab_project, settings, path, f"{label} project") for path in paths),
    ]


def gitlab_token(settings: Settings, token: SecretStr | None, name: str = "GitLab") -> Check:
    if token is None:
        return Check(
            name,
            False,
            "GITLAB_TOKEN is not set",
            f"make a project, group or personal access token with the {SCOPE} scope",
        )
    try:
        verify = ssl_context(settings)
    except ConfigError as exc:
        return Check(name, False, str(exc), "point REVIEWBOT_CA_BUNDLE at the CA's PEM file")
    client = GitLabClient(settings.gitlab_url, token, retries=0, verify=verify)
    try:
        user = client.call("GET", "/user").json()
        version = str(client.call("GET", "/version").json().get("version", "?"))
        scopes = token_scopes(client)
    except GitLabError as exc:
        fix = (
            f"the token is wrong, expired or lacks the {SCOPE} scope"
            if exc.status in (401, 403)
            else "check GITLAB_URL and the network"
        )
        return Check(name, False, str(exc), fix)
    detail = f"{settings.gitlab_url} (GitLab {version}) as @{user.get('username')}"
    if scopes is not None and SCOPE not in scopes:
        listed = ", ".join(scopes) or "none"
        return Check(
            name,
            False,
            f"{detail}: the token's scopes are {listed}, so it cannot write notes or statuses",
            f"make a token with the {SCOPE} scope",
        )
    if version_tuple(version) < MIN_VERSION:
        least = ".".join(map(str, MIN_VERSION))
        return Check(
            name,
            False,
            f"{detail}: older than GitLab {least}, the least reviewbot supports"
            " (merge requests' /diffs API)",
            f"upgrade GitLab to {least} or newer",
        )
    return Check(name, True, detail)


def token_scopes(client: GitLabClient) -> list[str] | None:
    """The token's scopes (``/personal_access_tokens/self``, which answers for personal,
    project and group tokens); None where the instance cannot say (older than 15.5)."""
    try:
        data = client.call("GET", "/personal_access_tokens/self").json()
    except GitLabError as exc:
        if exc.status == 404:
            return None
        raise
    return [str(scope) for scope in data.get("scopes") or []]


def version_tuple(version: str) -> tuple[int, int]:
    """``17.6.0-ee`` -> (17, 6); an unreadable version reads as new enough."""
    found = re.match(r"(\d+)\.(\d+)", version)
    return (int(found[1]), int(found[2])) if found else (999, 0)


def gitlab_webhooks(settings: Settings, name: str = "GitLab webhooks") -> Check:
    if settings.gitlab_webhook_secret is None:
        return Check(
            name,
            False,
            "GITLAB_WEBHOOK_SECRET is not set",
            "set it to the webhook's secret token (Settings > Webhooks)",
        )
    return Check(name, True, "secret token set; POST /webhooks/gitlab")


def gitlab_project(settings: Settings, path: str, label: str = "GitLab project") -> Check:
    """The token's role on project ``path`` (Developer at least: notes, statuses) and its
    webhook to reviewbot (there, with the events the bot needs, not disabled by GitLab
    after failed deliveries). A group path (of ``GITLAB_TOKENS``) is not a project."""
    name = f"{label} {path}"
    token = token_for(path, settings.gitlab_tokens, settings.gitlab_token)
    if token is None:
        return Check(name, False, "no token for it", "set GITLAB_TOKEN or GITLAB_TOKENS")
    client = GitLabClient(settings.gitlab_url, token, retries=0, verify=ssl_context(settings))
    try:
        project = client.call("GET", f"/projects/{quote(path, safe='')}").json()
        access = project.get("permissions") or {}
        level = max(
            int((access.get(kind) or {}).get("access_level") or 0)
            for kind in ("project_access", "group_access")
        )
        if level < DEVELOPER:
            role = ROLES.get(level, f"access level {level}")
            return Check(
                name,
                False,
                f"the token's role is {role}: it cannot comment or set statuses",
                "give the token's user the Developer role (or higher) on the project",
            )
        return _webhook(client, name, project)
    except GitLabError as exc:
        if exc.status == 404:
            return Check(name, True, "not a project the token sees (a group's path?): skipped")
        return Check(name, False, str(exc), "check the token and the project's path")


def _webhook(client: GitLabClient, name: str, project: dict[str, Any]) -> Check:
    try:
        hooks = client.call("GET", f"/projects/{project['id']}/hooks").json()
    except GitLabError as exc:
        if exc.status == 403:  # listing hooks needs Maintainer
            return Check(name, True, "role ok; its webhooks need Maintainer to read: not checked")
        raise
    ours = [h for h in hooks if str(h.get("url", "")).rstrip("/").endswith("/webhooks/gitlab")]
    if not ours:
        return Check(
            name,
            False,
            "no webhook to reviewbot (a URL ending /webhooks/gitlab)",
            "add one (README, Set up on GitLab), or on the project's group",
        )
    hook = ours[0]
    missing = [label for key, label in HOOK_EVENTS.items() if not hook.get(key)]
    if hook.get("alert_status") in {"disabled", "temporarily_disabled"}:
        return Check(
            name,
            False,
            f"GitLab has {hook['alert_status'].replace('_', ' ')} the webhook after failed"
            " deliveries",
            "fix what failed (reviewbot doctor, the hook's Recent events), then re-enable it",
        )
    if missing:
        return Check(
            name,
            False,
            f"the webhook does not send {', '.join(missing)}",
            "tick those triggers in the project's webhook settings",
        )
    failed = recent_failures(client, int(project["id"]), int(hook["id"]))
    if failed:
        return Check(
            name,
            False,
            f"its last {len(failed)} deliveries failed ({', '.join(failed)})",
            "see the hook's Recent events; is serve reachable at that URL with that secret?",
        )
    return Check(name, True, f"role ok; webhook {hook.get('url')} sends what the bot needs")


def recent_failures(client: GitLabClient, project_id: int, hook_id: int) -> list[str]:
    """The answers to the hook's newest deliveries while they failed, newest first (its
    events of the last 7 days, GitLab 17.x); none when the newest went through or the
    instance cannot list them."""
    try:
        events = client.call("GET", f"/projects/{project_id}/hooks/{hook_id}/events").json()
    except GitLabError as exc:
        if exc.status in (403, 404):
            return []
        raise
    failed = []
    for event in events:  # newest first
        answer = str(event.get("response_status") or "no answer")
        if answer.startswith("2"):
            break
        failed.append(answer)
    return failed
