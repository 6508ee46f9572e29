"""PostgreSQL: the embedded server, engines, models and migrations."""
