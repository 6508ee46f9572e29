"""Alembic environment: runs on the connection that app.db.migrate hands over.

Used from the alembic CLI, it resolves the database like the app does.
"""

from __future__ import annotations

from alembic import context
from sqlalchemy import Connection, text

from app.db.migrate import include_object
from app.db.models import Base

#: One migrator at a time per database: ``serve`` and ``worker`` both migrate at start-up.
MIGRATION_LOCK_KEY = 0x7265766965776274  # "reviewbt"

target_metadata = Base.metadata


def run_on(connection: Connection) -> None:
    context.configure(
        connection=connection,
        target_metadata=target_metadata,
        include_object=include_object,
        compare_type=True,
    )
    connection.execute(text("SELECT pg_advisory_xact_lock(:k)"), {"k": MIGRATION_LOCK_KEY})
    with context.begin_transaction():
        context.run_migrations()


def main() -> None:
    connection = context.config.attributes.get("connection")
    if connection is not None:
        run_on(connection)
        return
    from app.config import load_settings
    from app.db.engine import make_engine, resolve_database_url

    engine = make_engine(resolve_database_url(load_settings()))
    with engine.begin() as conn:
        run_on(conn)


main()
