"""The procrastinate job queue's schema, from the installed procrastinate's own SQL.

procrastinate's ``apply_schema`` fails when run twice; shipping its SQL as a migration
makes ``reviewbot migrate`` idempotent. A procrastinate upgrade that changes the schema
needs a migration here running the matching file from ``procrastinate/sql/migrations``.

Revision ID: 0002
Revises: 0001
Create Date: 2026-11-30
"""

from collections.abc import Sequence
from importlib import resources

from alembic import op

revision: str = "0002"
down_revision: str | None = "0001"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    sql = resources.files("procrastinate.sql").joinpath("schema.sql").read_text(encoding="utf-8")
    # The raw driver connection: the SQL holds '%' and ':' that SQLAlchemy would read as
    # parameters, and several statements, which psycopg runs in one call without params.
    dbapi = op.get_bind().connection.dbapi_connection
    assert dbapi is not None
    dbapi.cursor().execute(sql)


def downgrade() -> None:
    op.execute(
        """
        DO $$
        DECLARE r record;
        BEGIN
            FOR r IN SELECT tablename FROM pg_tables
                     WHERE schemaname = current_schema() AND tablename LIKE 'procrastinate\\_%'
            LOOP EXECUTE format('DROP TABLE IF EXISTS %I CASCADE', r.tablename); END LOOP;
            FOR r IN SELECT p.oid::regprocedure AS sig FROM pg_proc p
                     JOIN pg_namespace n ON n.oid = p.pronamespace
                     WHERE n.nspname = current_schema() AND p.proname LIKE 'procrastinate\\_%'
            LOOP EXECUTE format('DROP FUNCTION IF EXISTS %s CASCADE', r.sig); END LOOP;
            FOR r IN SELECT t.typname FROM pg_type t
                     JOIN pg_namespace n ON n.oid = t.typnamespace
                     WHERE n.nspname = current_schema() AND t.typname LIKE 'procrastinate\\_%'
                       AND t.typtype IN ('e', 'c')
            LOOP EXECUTE format('DROP TYPE IF EXISTS %I CASCADE', r.typname); END LOOP;
        END $$;
        """
    )
