"""Rendering the dashboard's pages: templates, the security headers every page carries,
and the two ways a request is turned away (no admin token set, or not signed in)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from fastapi import Request
from fastapi.responses import HTMLResponse, RedirectResponse
from fastapi.templating import Jinja2Templates
from jinja2 import Environment, FileSystemLoader, StrictUndefined

from app.api.dashboard.present import FILTERS
from app.errors import ReviewbotError

HERE = Path(__file__).parent
TEMPLATES = Jinja2Templates(
    env=Environment(
        loader=FileSystemLoader(HERE / "templates"), autoescape=True, undefined=StrictUndefined
    )
)
TEMPLATES.env.filters.update(FILTERS)

#: No script may run, nothing loads from elsewhere, and no other site may frame a page.
HEADERS = {
    "Content-Security-Policy": (
        "default-src 'none'; style-src 'self'; img-src 'self' data:; form-action 'self';"
        " frame-ancestors 'none'; base-uri 'none'"
    ),
    "X-Content-Type-Options": "nosniff",
    "X-Frame-Options": "DENY",
    "Referrer-Policy": "same-origin",
    "Cache-Control": "no-store",
}
PAGE_SIZE = 50


class DashboardDisabled(ReviewbotError):
    """No admin token is configured."""


class SignInRequired(ReviewbotError):
    """No valid session cookie came with the request."""


class Refused(ReviewbotError):
    """A state-changing form without a valid CSRF token."""


def render(
    request: Request, template: str, context: dict[str, Any], status: int = 200
) -> HTMLResponse:
    response = TEMPLATES.TemplateResponse(request, template, context, status_code=status)
    response.headers.update(HEADERS)
    return response


def redirect(url: str) -> RedirectResponse:
    """303 See Other: after a form posts, the browser loads ``url`` with GET."""
    response = RedirectResponse(url, status_code=303)
    response.headers.update(HEADERS)
    return response
