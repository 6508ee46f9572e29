"""The durable job queue (procrastinate, in the same PostgreSQL) and its tasks."""
