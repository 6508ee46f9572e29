"""reviewbot's Alembic migrations, installed as the ``reviewbot_migrations`` package."""
