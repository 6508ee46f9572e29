"""The dashboard put on the app: its routers, its stylesheet and its refusal pages. Its
own module, so that the routers import the page helpers (``web``) and nothing imports
back."""

from __future__ import annotations

from fastapi import FastAPI, Request
from fastapi.responses import Response
from fastapi.staticfiles import StaticFiles

from app.api.dashboard import actions, pages, signin
from app.api.dashboard.web import (
    HERE,
    DashboardDisabled,
    Refused,
    SignInRequired,
    redirect,
    render,
)


def install(app: FastAPI) -> None:
    """Add the dashboard's routes, its stylesheet and its refusal pages to ``app``."""
    app.include_router(signin.router)
    app.include_router(pages.router)
    app.include_router(actions.router)
    app.mount("/admin/static", StaticFiles(directory=HERE / "static"), name="admin-static")

    async def disabled(request: Request, exc: Exception) -> Response:
        return render(request, "disabled.html", {}, status=503)

    async def sign_in(request: Request, exc: Exception) -> Response:
        return redirect("/admin/login")

    async def refused(request: Request, exc: Exception) -> Response:
        return render(request, "refused.html", {}, status=403)

    app.add_exception_handler(DashboardDisabled, disabled)
    app.add_exception_handler(SignInRequired, sign_in)
    app.add_exception_handler(Refused, refused)
