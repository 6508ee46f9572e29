"""Dashboard sign-ins (``admin_sessions``) and wrong tokens (``admin_sign_in_failures``).

A session row holds the SHA-256 of its token, never the token: the cookie is the only
copy. Failures are kept per client for the rate limit and pruned as they age out.
"""

from __future__ import annotations

import hashlib

from sqlalchemy import Connection, text


def token_hash(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


def create_session(conn: Connection, token: str, hours: float) -> None:
    conn.execute(
        text(
            "INSERT INTO admin_sessions (token_hash, expires_at)"
            " VALUES (:h, now() + make_interval(secs => :s))"
        ),
        {"h": token_hash(token), "s": hours * 3600},
    )
    conn.execute(text("DELETE FROM admin_sessions WHERE expires_at < now()"))


def session_alive(conn: Connection, token: str) -> bool:
    return bool(
        conn.execute(
            text("SELECT 1 FROM admin_sessions WHERE token_hash = :h AND expires_at > now()"),
            {"h": token_hash(token)},
        ).scalar()
    )


def end_session(conn: Connection, token: str) -> None:
    conn.execute(text("DELETE FROM admin_sessions WHERE token_hash = :h"), {"h": token_hash(token)})


def recent_failures(conn: Connection, client: str, window_seconds: float) -> int:
    """Wrong tokens from ``client`` in the last ``window_seconds``."""
    return int(
        conn.execute(
            text(
                "SELECT count(*) FROM admin_sign_in_failures WHERE client = :c"
                " AND failed_at > now() - make_interval(secs => :w)"
            ),
            {"c": client, "w": window_seconds},
        ).scalar_one()
    )


def record_failure(conn: Connection, client: str, window_seconds: float) -> None:
    conn.execute(text("INSERT INTO admin_sign_in_failures (client) VALUES (:c)"), {"c": client})
    conn.execute(
        text(
            "DELETE FROM admin_sign_in_failures WHERE failed_at < now() - make_interval(secs => :w)"
        ),
        {"w": window_seconds},
    )
