"""Signing the dashboard's cookies and CSRF tokens with a key derived from the admin
token (changing the token signs everyone out).

The session cookie carries a random token, signed and timestamped; the database keeps
only its hash (``app/db/queries/admin_sessions.py``), so signing out ends it for good.
A form's CSRF token is an HMAC of the session token: a page from another site can make
the browser send the cookie (it cannot, with ``SameSite=Strict``, but older browsers
exist) and still cannot produce the field.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
import time
from collections.abc import Callable

from itsdangerous import BadSignature, TimestampSigner
from pydantic import SecretStr

SESSION_COOKIE = "reviewbot_admin"
LOGIN_COOKIE = "reviewbot_login"  # the sign-in form's own CSRF nonce
LOGIN_FORM_SECONDS = 600
#: Wrong tokens allowed per client in the window before sign-in answers 429.
MAX_FAILURES = 5
FAILURE_WINDOW_SECONDS = 900.0


class Keys:
    """Signing and CSRF for one admin token."""

    def __init__(self, admin_token: SecretStr, clock: Callable[[], float] = time.time) -> None:
        token = admin_token.get_secret_value().encode()
        self._token = token
        self._key = hmac.new(token, b"reviewbot dashboard v1", hashlib.sha256).digest()
        self._clock = clock

    def token_matches(self, given: str) -> bool:
        """Constant-time comparison with the admin token."""
        return hmac.compare_digest(given.encode(), self._token)

    def sign(self, value: str, purpose: str) -> str:
        return self._signer(purpose).sign(value).decode()

    def unsign(self, signed: str | None, purpose: str, max_age: float) -> str | None:
        """The value of a cookie signed for ``purpose`` and younger than ``max_age``."""
        if not signed:
            return None
        try:
            value = self._signer(purpose).unsign(signed, max_age=int(max_age))
        except BadSignature:  # also SignatureExpired
            return None
        return value.decode()

    def _signer(self, purpose: str) -> TimestampSigner:
        signer = TimestampSigner(self._key, salt=purpose)
        signer.get_timestamp = lambda: int(self._clock())  # type: ignore[method-assign]
        return signer

    def csrf(self, session_value: str) -> str:
        return hmac.new(self._key, b"csrf:" + session_value.encode(), "sha256").hexdigest()

    def csrf_matches(self, session_value: str, given: str | None) -> bool:
        return bool(given) and hmac.compare_digest(self.csrf(session_value), str(given))


def new_token() -> str:
    return secrets.token_urlsafe(32)
