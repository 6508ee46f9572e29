"""``reviewbot doctor``'s checks of the GitHub App: GitHub knows it and it is installed,
and GitHub's recent webhook deliveries reached reviewbot."""

from __future__ import annotations

from collections.abc import Callable

from app.checks import Check
from app.config import Settings
from app.github.client import GitHubApp, GitHubError
from app.github.credentials import check_app_credentials
from app.wording import counted

#: Deliveries looked at, newest first.
RECENT_DELIVERIES = 30


def github_checks(settings: Settings) -> list[Callable[[], Check]]:
    """The checks ``run_checks`` runs for GitHub, in order."""
    return [lambda: github_app(settings), lambda: webhooks(settings)]


def github_app(settings: Settings) -> Check:
    if not settings.github_app_configured:
        return Check(
            "GitHub App",
            False,
            "not configured",
            "run `reviewbot setup`, or set GITHUB_APP_ID and GITHUB_APP_PRIVATE_KEY; for GitLab"
            " only, leave GitHub's settings empty and set GITLAB_TOKEN",
        )
    check_app_credentials(settings)
    app = GitHubApp(settings)
    try:
        me = app.app_call("GET", "/app").json()
        installations = app.app_call("GET", "/app/installations", params={"per_page": 100})
    except GitHubError as exc:
        fix = "check GITHUB_APP_ID and the key" if exc.status in (401, 403, 404) else ""
        return Check("GitHub App", False, str(exc), fix or "check GITHUB_API_URL and the network")
    count = len(installations.json())
    detail = (
        f"{me.get('slug') or me.get('name')} (id {me.get('id')}), {counted(count, 'installation')}"
    )
    if not count:
        return Check("GitHub App", False, detail, "install the App on a repository")
    return Check("GitHub App", True, detail)


def webhooks(settings: Settings) -> Check:
    if settings.github_webhook_secret is None:
        return Check("webhooks", False, "GITHUB_WEBHOOK_SECRET is not set", "set it")
    if not settings.github_app_configured:
        return Check("webhooks", False, "no App to ask", "configure the App first")
    app = GitHubApp(settings)
    try:
        listed = app.app_call(
            "GET", "/app/hook/deliveries", params={"per_page": RECENT_DELIVERIES}
        ).json()
    except GitHubError as exc:
        return Check("webhooks", False, str(exc), "check the App's webhook settings")
    if not listed:
        return Check(
            "webhooks",
            False,
            "GitHub has delivered nothing yet",
            "open a pull request, or check the App's webhook URL",
        )
    failed = [d for d in listed if not 200 <= int(d.get("status_code") or 0) < 300]
    codes = sorted({str(d.get("status_code")) for d in failed})
    detail = f"{len(listed) - len(failed)} of the last {len(listed)} deliveries answered 2xx"
    if failed:
        return Check(
            "webhooks",
            False,
            f"{detail}; others answered {', '.join(codes)}",
            "0 means GitHub could not reach the webhook URL; 401: GITHUB_WEBHOOK_SECRET differs"
            " from the App's; 503: the database was down",
        )
    return Check("webhooks", True, detail)
