"""Build the FastAPI app. No I/O here: the caller opens the database and passes the engine."""

from __future__ import annotations

from fastapi import FastAPI
from sqlalchemy import Engine

from app import __version__
from app.api import health
from app.config import Settings


def create_app(settings: Settings, engine: Engine) -> FastAPI:
    """The reviewbot HTTP API over an already-checked, migrated database."""
    app = FastAPI(title="reviewbot", version=__version__, docs_url=None, redoc_url=None)
    app.state.settings = settings
    app.state.engine = engine
    app.include_router(health.router)
    return app
