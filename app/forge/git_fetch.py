"""A repository's history from its code host over git's smart HTTP protocol: a bare,
shallow clone kept under the data directory, fetched with a token (GitHub's installation
token, a GitLab access token), for the co-change signal (``app/indexing/history.py``
mines it).

The token travels in an ``http.extraHeader`` given through git's environment
(``GIT_CONFIG_*``), never in the URL or the command line, so it shows up in no process
list, error or log. Only the default branch is fetched, back to ``days`` days (and to
the newest commit already mined, so an incremental mine finds it), with no tags.
"""

from __future__ import annotations

import base64
from datetime import UTC, datetime, timedelta
from pathlib import Path

from pydantic import SecretStr

from app.git import GitError, LocalRepo, run_git

FETCH_TIMEOUT_SECONDS = 600.0


def fetch_branch(
    git_url: str,
    repo: str,
    branch: str,
    token: SecretStr,
    clone: Path,
    *,
    days: float,
    back_to: datetime | None = None,
    user: str = "x-access-token",
    ca_file: Path | None = None,
) -> tuple[LocalRepo, str]:
    """Fetch ``branch`` of ``repo`` into the bare clone at ``clone`` (made if missing)
    with commits of the last ``days`` days, or since ``back_to`` if that is older.
    Returns the clone and the branch's head commit. ``GitError`` on failure, naming
    the repository and git's last words, never the token. ``user`` is the HTTP Basic
    user name the host wants with a token (GitHub's ``x-access-token``, GitLab's
    ``oauth2``). ``ca_file``: the CAs git verifies TLS with (``app/tls.py``)."""
    if not (clone / "HEAD").is_file():
        clone.mkdir(parents=True, exist_ok=True)
        run_git(clone, "init", "--quiet", "--bare")
    since = datetime.now(UTC) - timedelta(days=days)
    if back_to is not None and back_to < since:
        since = back_to - timedelta(days=1)
    url = f"{git_url.rstrip('/')}/{repo}.git"
    credentials = base64.b64encode(f"{user}:{token.get_secret_value()}".encode())
    env = {
        "GIT_TERMINAL_PROMPT": "0",
        "GIT_CONFIG_COUNT": "1",
        "GIT_CONFIG_KEY_0": "http.extraHeader",
        "GIT_CONFIG_VALUE_0": f"Authorization: Basic {credentials.decode()}",
    }
    if ca_file is not None:
        env["GIT_SSL_CAINFO"] = str(ca_file)
    try:
        run_git(
            clone,
            "fetch",
            "--quiet",
            "--no-tags",
            "--force",
            f"--shallow-since={since.strftime('%Y-%m-%d %H:%M:%S %z')}",
            url,
            f"+refs/heads/{branch}:refs/heads/{branch}",
            timeout=FETCH_TIMEOUT_SECONDS,
            env=env,
        )
    except GitError as exc:
        message = str(exc).replace(token.get_secret_value(), "[hidden]")
        raise GitError(f"fetching the history of {repo}: {message}") from None
    local = LocalRepo(clone)
    return local, local.resolve(f"refs/heads/{branch}")
