"""Who may see a page and post a form: the signed-in operator, as a dependency."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated

from fastapi import Depends, Request
from starlette.datastructures import FormData

from app.api.dashboard.auth import SESSION_COOKIE, Keys
from app.api.dashboard.web import DashboardDisabled, Refused, SignInRequired
from app.api.deps import EngineDep, SettingsDep
from app.config import Settings
from app.db.queries.admin_sessions import session_alive


@dataclass(frozen=True)
class Operator:
    """A signed-in session: its token (from the cookie) and the CSRF token of its forms."""

    keys: Keys
    session: str
    csrf: str


def keys_of(settings: Settings) -> Keys:
    if settings.admin_token is None:
        raise DashboardDisabled
    return Keys(settings.admin_token)


def signed_in(request: Request, settings: SettingsDep, engine: EngineDep) -> Operator:
    """The operator behind a valid, unexpired session cookie; else ``SignInRequired``."""
    keys = keys_of(settings)
    cookie = request.cookies.get(SESSION_COOKIE)
    token = keys.unsign(cookie, "session", settings.admin_session_hours * 3600)
    if token is None:
        raise SignInRequired
    with engine.connect() as conn:
        if not session_alive(conn, token):
            raise SignInRequired
    return Operator(keys, token, keys.csrf(token))


OperatorDep = Annotated[Operator, Depends(signed_in)]


async def checked_form(request: Request, operator: OperatorDep) -> FormData:
    """The posted form, once its CSRF token is the session's; else ``Refused`` (403)."""
    form = await request.form()
    given = form.get("csrf")
    if not operator.keys.csrf_matches(operator.session, given if isinstance(given, str) else None):
        raise Refused
    return form


FormDep = Annotated[FormData, Depends(checked_form)]
