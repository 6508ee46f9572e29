"""Whether the App's credentials are whole and usable, checked at start-up: a key that
cannot sign, or an App GitHub does not know, is a configuration error, not a job failure."""

from __future__ import annotations

from app.config import Settings
from app.errors import ConfigError
from app.github.client import GitHubApp, GitHubError


def check_app_credentials(settings: Settings) -> None:
    """Refuse at start-up a half-configured App or a private key that cannot sign a JWT
    (``ConfigError``), instead of failing every job later. Nothing configured is fine:
    the CLI and a webhook-less ``serve`` need no App."""
    key = settings.github_private_key()
    if settings.github_app_id is None and key is None:
        return
    if settings.github_app_id is None or key is None:
        raise ConfigError("set both GITHUB_APP_ID and GITHUB_APP_PRIVATE_KEY(_PATH), or neither")
    import time

    import jwt

    now = int(time.time())
    try:
        jwt.encode(
            {"iat": now - 60, "exp": now + 60, "iss": str(settings.github_app_id)},
            key.get_secret_value(),
            algorithm="RS256",
        )
    except (ValueError, TypeError, jwt.PyJWTError):
        raise ConfigError(
            "GITHUB_APP_PRIVATE_KEY is not a usable RSA private key (PEM, as GitHub gives it)"
        ) from None


def verify_app_identity(app: GitHubApp) -> str | None:
    """Ask GitHub who the App is (``GET /app`` with its JWT). A refusal means a wrong App
    id or key: ``ConfigError``. An unreachable GitHub is not a configuration error; the
    reason is returned for a warning and jobs retry later."""
    try:
        app.app_call("GET", "/app")
    except GitHubError as exc:
        if exc.status in (401, 403, 404):
            raise ConfigError(
                f"GitHub refused the App's credentials (HTTP {exc.status}):"
                " check GITHUB_APP_ID and GITHUB_APP_PRIVATE_KEY"
            ) from None
        return str(exc)
    return None
