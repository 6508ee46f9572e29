"""Apply Alembic migrations programmatically, on an engine the caller owns."""

from __future__ import annotations

from pathlib import Path

import reviewbot_migrations
from alembic import command
from alembic.config import Config
from alembic.runtime.migration import MigrationContext
from alembic.script import ScriptDirectory
from sqlalchemy import Engine

from app.db.vector_index import INDEX_PREFIX

#: The repository's top-level ``migrations/``, installed as the ``reviewbot_migrations``
#: package (pyproject's ``package-dir``), so a wheel carries it too.
MIGRATIONS_DIR = Path(reviewbot_migrations.__file__).parent


def include_object(
    obj: object, name: str | None, type_: str, reflected: bool, compare_to: object
) -> bool:
    """Autogenerate filter: procrastinate's tables come from its own SQL, and the
    per-repository vector indexes from ``app.db.vector_index``, not from our models."""
    if name is None:
        return True
    if type_ == "index" and name.startswith(INDEX_PREFIX):
        return False
    return not (type_ == "table" and name.startswith("procrastinate_"))


def alembic_config() -> Config:
    """An Alembic config pointing at the packaged migrations (works from a wheel too)."""
    config = Config()
    config.set_main_option("script_location", str(MIGRATIONS_DIR))
    return config


def upgrade(engine: Engine, revision: str = "head") -> None:
    """Migrate up to ``revision``. Idempotent; serialised by an advisory lock."""
    _run(engine, command.upgrade, revision)


def downgrade(engine: Engine, revision: str) -> None:
    """Migrate down to ``revision`` (``"base"`` removes everything reviewbot created)."""
    _run(engine, command.downgrade, revision)


def current_revision(engine: Engine) -> str | None:
    """The revision the database is at, or None before the first migration."""
    with engine.connect() as conn:
        return MigrationContext.configure(conn).get_current_revision()


def head_revision() -> str | None:
    """The newest revision this code ships."""
    return ScriptDirectory.from_config(alembic_config()).get_current_head()


def known_revisions() -> set[str]:
    """Every schema revision this code can migrate from."""
    script = ScriptDirectory.from_config(alembic_config())
    return {revision.revision for revision in script.walk_revisions()}


def _run(engine: Engine, fn: object, revision: str) -> None:
    config = alembic_config()
    with engine.begin() as conn:
        config.attributes["connection"] = conn
        fn(config, revision)  # type: ignore[operator]
