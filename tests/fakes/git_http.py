"""git's smart HTTP protocol for the fakes: the real ``git http-backend`` over a test
repository, as a code host serves it at ``/<path>.git``."""

from __future__ import annotations

import base64
import os
import subprocess
from pathlib import Path


def basic_credentials(headers: dict[str, str]) -> tuple[str, str]:
    """(user, password) of an HTTP Basic ``authorization`` header; empty when there is none."""
    auth = headers.get("authorization", "")
    try:
        user, _, token = base64.b64decode(auth.removeprefix("Basic ")).decode().partition(":")
    except ValueError:
        return "", ""
    return user, token


def git_backend(
    root: Path, rest: str, method: str, query: str, headers: dict[str, str], body: bytes
) -> tuple[int, dict[str, str], bytes]:
    """Answer one smart-HTTP request for the repository at ``root`` (``rest``: the path
    after ``.git``)."""
    env = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "GIT_PROJECT_ROOT": str(root),
        "GIT_HTTP_EXPORT_ALL": "1",
        "PATH_INFO": "/.git" + rest,
        "REQUEST_METHOD": method,
        "QUERY_STRING": query,
        "CONTENT_TYPE": headers.get("content-type", ""),
        "CONTENT_LENGTH": str(len(body)),
        "GIT_PROTOCOL": headers.get("git-protocol", ""),
        "HTTP_CONTENT_ENCODING": headers.get("content-encoding", ""),
        "REMOTE_ADDR": "127.0.0.1",
    }
    done = subprocess.run(
        ["git", "http-backend"], input=body, capture_output=True, env=env, check=False
    )
    head, _, payload = done.stdout.partition(b"\r\n\r\n")
    status, out = 200, {}
    for line in head.decode("latin-1").split("\r\n"):
        name, _, value = line.partition(":")
        if name.lower() == "status":
            status = int(value.split()[0])
        elif name:
            out[name.lower()] = value.strip()
    return status, out, payload
