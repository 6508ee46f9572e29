from alembic.autogenerate import compare_metadata
from alembic.runtime.migration import MigrationContext
from sqlalchemy import Engine, inspect, text
from sqlalchemy.engine import URL

from app.db import migrate
from app.db.engine import DatabaseTarget, make_engine
from app.db.migrate import include_object
from app.db.models import Base
from app.db.vector_index import INDEX_NAME

OUR_TABLES = {
    "repositories",
    "source_files",
    "code_chunks",
    "summary_cache",
    "embedding_cache",
    "webhook_deliveries",
    "reviews",
}


def _tables(engine: Engine) -> set[str]:
    return set(inspect(engine).get_table_names())


def test_upgrade_is_idempotent_and_creates_everything(empty_database_url: URL) -> None:
    engine = make_engine(DatabaseTarget(empty_database_url, False))
    migrate.upgrade(engine)
    migrate.upgrade(engine)
    assert migrate.current_revision(engine) == migrate.head_revision()
    tables = _tables(engine)
    assert tables >= OUR_TABLES
    assert {"procrastinate_jobs", "procrastinate_events", "procrastinate_workers"} <= tables
    engine.dispose()


def test_downgrade_to_base_then_upgrade_again(empty_database_url: URL) -> None:
    engine = make_engine(DatabaseTarget(empty_database_url, False))
    migrate.upgrade(engine)
    migrate.downgrade(engine, "base")
    assert migrate.current_revision(engine) is None
    assert _tables(engine) == {"alembic_version"}
    with engine.connect() as conn:
        leftovers = conn.execute(
            text("SELECT count(*) FROM pg_proc WHERE proname LIKE 'procrastinate%'")
        ).scalar_one()
    assert leftovers == 0
    migrate.upgrade(engine)
    assert _tables(engine) >= OUR_TABLES | {"procrastinate_jobs"}
    engine.dispose()


def test_models_and_migrations_do_not_drift(engine: Engine) -> None:
    with engine.connect() as conn:
        context = MigrationContext.configure(
            conn, opts={"compare_type": True, "include_object": include_object}
        )
        assert compare_metadata(context, Base.metadata) == []


def test_embedding_index_is_ivfflat_cosine(engine: Engine) -> None:
    query = text("SELECT indexdef FROM pg_indexes WHERE indexname = :name")
    with engine.connect() as conn:
        indexdef = conn.execute(query, {"name": INDEX_NAME}).scalar_one()
    assert "USING ivfflat" in indexdef
    assert "vector_cosine_ops" in indexdef
