"""Which database to use, the engine for it, and what the server offers.

``resolve_database_url`` picks ``DATABASE_URL`` or starts the embedded server;
``connect_checked`` proves the server answers and pgvector can be used, turning driver
errors into one-line ``DatabaseError`` messages that name the host and never the password.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass

from sqlalchemy import Connection, Engine, create_engine, text
from sqlalchemy.engine import URL, make_url
from sqlalchemy.exc import ArgumentError, DBAPIError, OperationalError

from app.config import Settings
from app.db.embedded import start_embedded_server
from app.errors import ConfigError, DatabaseError, DatabaseUnavailable, ExtensionMissing

DRIVER = "postgresql+psycopg"


@dataclass(frozen=True)
class DatabaseTarget:
    """A database to connect to, and whether reviewbot runs it itself."""

    url: URL
    embedded: bool

    @property
    def display(self) -> str:
        """Where the database is, for people: host (or socket), port, name; no password."""
        host = self.url.host or self.url.query.get("host") or "localhost"
        port = f":{self.url.port}" if self.url.port else ""
        kind = "embedded " if self.embedded else ""
        return f"{kind}postgresql://{self.url.username or ''}@{host}{port}/{self.url.database}"


@dataclass(frozen=True)
class ServerInfo:
    """What ``reviewbot db`` and ``/healthz`` report."""

    server_version: str
    pgvector_version: str | None


def parse_database_url(raw: str) -> URL:
    """Parse ``DATABASE_URL`` (``postgres://``, ``postgresql://``, any driver) for psycopg 3."""
    try:
        url = make_url(raw.strip())
        url.port  # noqa: B018 (a port that is not a number raises here, not at connect)
    except (ArgumentError, ValueError):
        raise ConfigError("DATABASE_URL is not a valid database URL") from None
    if url.get_backend_name() not in {"postgres", "postgresql"}:
        raise ConfigError(f"DATABASE_URL must point at PostgreSQL, not {url.get_backend_name()!r}")
    return url.set(drivername=DRIVER)


def resolve_database_url(settings: Settings) -> DatabaseTarget:
    """``DATABASE_URL`` when set, else the embedded server under ``settings.data_dir``."""
    if settings.database_url is not None:
        return DatabaseTarget(parse_database_url(settings.database_url.get_secret_value()), False)
    return DatabaseTarget(start_embedded_server(settings.data_dir), True)


def make_engine(target: DatabaseTarget, **kwargs: object) -> Engine:
    """An engine with short connect timeouts and liveness checks; no I/O yet."""
    connect_args = {"connect_timeout": 10, "application_name": "reviewbot"}
    return create_engine(
        target.url,
        pool_pre_ping=True,
        connect_args=connect_args,
        **kwargs,
    )


def first_line(exc: DBAPIError) -> str:
    """The driver's message, first line only (the rest is SQL and hints)."""
    text_ = str(exc.orig).strip() if exc.orig else ""
    return text_.splitlines()[0] if text_ else type(exc).__name__


def describe_connect_error(target: DatabaseTarget, exc: DBAPIError) -> str:
    """A one-line reason from a driver error, with any password scrubbed out."""
    reason = first_line(exc)
    password = target.url.password
    if password:
        reason = reason.replace(str(password), "***")
    return f"cannot connect to PostgreSQL at {target.display}: {reason}"


def connect_checked(engine: Engine, target: DatabaseTarget) -> ServerInfo:
    """Connect, make sure the extensions are installed, and report the server's versions.

    Raises ``DatabaseUnavailable`` or ``ExtensionMissing`` with one-line messages.
    """
    try:
        with engine.begin() as conn:
            ensure_extensions(conn)
            return read_server_info(conn)
    except OperationalError as exc:
        raise DatabaseUnavailable(describe_connect_error(target, exc)) from None


#: The extensions reviewbot needs, and what to tell an administrator when one is missing.
EXTENSIONS = {
    "vector": ("pgvector", "install pgvector on the server"),
    # a GIN index over (repository_id, search_tsv): full-text search within one repository
    "btree_gin": ("btree_gin", "install the server's contrib modules"),
}


def ensure_extensions(conn: Connection) -> None:
    """``CREATE EXTENSION IF NOT EXISTS`` each of ``EXTENSIONS``, or a clear
    ``ExtensionMissing``."""
    installed = set(conn.execute(text("SELECT extname FROM pg_extension")).scalars())
    if not installed.issuperset(EXTENSIONS):
        # two processes starting at once would both create one: one of them waits
        conn.execute(text("SELECT pg_advisory_xact_lock(hashtext('reviewbot:extensions'))"))
        installed = set(conn.execute(text("SELECT extname FROM pg_extension")).scalars())
    for name, (label, remedy) in EXTENSIONS.items():
        if name in installed:
            continue
        try:
            with conn.begin_nested():
                conn.execute(text(f"CREATE EXTENSION IF NOT EXISTS {name}"))
        except DBAPIError as exc:
            raise ExtensionMissing(
                f"{label} is not available in this database ({first_line(exc)}); {remedy}"
                f" or let a superuser run CREATE EXTENSION {name}"
            ) from None


def read_server_info(conn: Connection) -> ServerInfo:
    """The PostgreSQL and pgvector versions seen through ``conn``."""
    version = conn.execute(text("SHOW server_version")).scalar_one()
    vector = conn.execute(
        text("SELECT extversion FROM pg_extension WHERE extname = 'vector'")
    ).scalar_one_or_none()
    return ServerInfo(server_version=str(version), pgvector_version=vector)


@dataclass(frozen=True)
class OpenDatabase:
    """A resolved, reachable database with pgvector, and the engine to use it."""

    target: DatabaseTarget
    engine: Engine
    info: ServerInfo


@contextmanager
def open_database(settings: Settings, *, migrate: bool = True) -> Iterator[OpenDatabase]:
    """Resolve, connect, check pgvector and (by default) migrate to head; dispose on exit.

    Raises ``ConfigError``, ``DataDirError`` or ``DatabaseError`` with one-line messages.
    """
    from app.db import migrate as migrations

    target = resolve_database_url(settings)
    engine = make_engine(target)
    try:
        info = connect_checked(engine, target)
        if migrate:
            try:
                migrations.upgrade(engine)
            except OperationalError as exc:
                raise DatabaseUnavailable(describe_connect_error(target, exc)) from None
            except DBAPIError as exc:
                raise DatabaseError(
                    f"migrating {target.display} failed: {first_line(exc)}"
                ) from None
        yield OpenDatabase(target=target, engine=engine, info=info)
    finally:
        engine.dispose()
