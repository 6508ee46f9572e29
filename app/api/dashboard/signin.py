"""Signing in to the dashboard with the admin token, and signing out.

The sign-in form carries a nonce that must match its own short-lived signed cookie (a
CSRF token before any session exists). Wrong tokens are counted per client: past
``MAX_FAILURES`` in ``FAILURE_WINDOW_SECONDS`` the form answers 429 without looking at
the token.
"""

from __future__ import annotations

import logging
from typing import Annotated

from fastapi import APIRouter, Form, Request
from fastapi.concurrency import run_in_threadpool
from fastapi.responses import Response
from sqlalchemy import Engine

from app.api.dashboard.auth import (
    FAILURE_WINDOW_SECONDS,
    LOGIN_COOKIE,
    LOGIN_FORM_SECONDS,
    MAX_FAILURES,
    SESSION_COOKIE,
    Keys,
    new_token,
)
from app.api.dashboard.guard import FormDep, OperatorDep, keys_of
from app.api.dashboard.web import redirect, render
from app.api.deps import EngineDep, SettingsDep
from app.db.queries.admin_sessions import (
    create_session,
    end_session,
    recent_failures,
    record_failure,
)
from app.logs import kv

log = logging.getLogger(__name__)
router = APIRouter(prefix="/admin")


@router.get("/login")
def login_form(request: Request, settings: SettingsDep) -> Response:
    return _form(request, keys_of(settings), None, 200)


@router.post("/login")
async def login(
    request: Request,
    settings: SettingsDep,
    engine: EngineDep,
    token: Annotated[str, Form(max_length=1024)] = "",
    csrf: Annotated[str, Form(max_length=256)] = "",
) -> Response:
    keys = keys_of(settings)
    nonce = keys.unsign(request.cookies.get(LOGIN_COOKIE), "login", LOGIN_FORM_SECONDS)
    if nonce is None or not keys.csrf_matches(nonce, csrf):
        return _form(request, keys, "The form expired. Enter the token again.", 400)
    client = request.client.host if request.client else "unknown"
    if await run_in_threadpool(_too_many, engine, client):
        log.warning(kv("admin.sign_in_limited", client=client))
        response = _form(request, keys, "Too many wrong tokens. Try again later.", 429)
        response.headers["Retry-After"] = str(int(FAILURE_WINDOW_SECONDS))
        return response
    if not keys.token_matches(token):
        await run_in_threadpool(_failed, engine, client)
        log.warning(kv("admin.sign_in_refused", client=client))
        return _form(request, keys, "That is not the admin token.", 401)
    session = new_token()
    await run_in_threadpool(_start, engine, session, settings.admin_session_hours)
    log.info(kv("admin.signed_in", client=client))
    response = redirect("/admin")
    response.set_cookie(
        SESSION_COOKIE,
        keys.sign(session, "session"),
        max_age=int(settings.admin_session_hours * 3600),
        path="/admin",
        secure=request.url.scheme == "https",
        httponly=True,
        samesite="strict",
    )
    response.delete_cookie(LOGIN_COOKIE, path="/admin")
    return response


@router.post("/logout")
def logout(operator: OperatorDep, form: FormDep, engine: EngineDep) -> Response:
    with engine.begin() as conn:
        end_session(conn, operator.session)
    response = redirect("/admin/login")
    response.delete_cookie(SESSION_COOKIE, path="/admin", httponly=True, samesite="strict")
    return response


def _form(request: Request, keys: Keys, error: str | None, status: int) -> Response:
    nonce = new_token()
    response = render(
        request, "login.html", {"error": error, "csrf": keys.csrf(nonce)}, status=status
    )
    response.set_cookie(
        LOGIN_COOKIE,
        keys.sign(nonce, "login"),
        max_age=LOGIN_FORM_SECONDS,
        path="/admin",
        secure=request.url.scheme == "https",
        httponly=True,
        samesite="strict",
    )
    return response


def _too_many(engine: Engine, client: str) -> bool:
    with engine.connect() as conn:
        return recent_failures(conn, client, FAILURE_WINDOW_SECONDS) >= MAX_FAILURES


def _failed(engine: Engine, client: str) -> None:
    with engine.begin() as conn:
        record_failure(conn, client, FAILURE_WINDOW_SECONDS)


def _start(engine: Engine, session: str, hours: float) -> None:
    with engine.begin() as conn:
        create_session(conn, session, hours)
