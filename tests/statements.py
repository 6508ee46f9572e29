"""What SQL a test's code sent."""

from __future__ import annotations

from sqlalchemy import Engine, event


def recorded_statements(engine: Engine) -> list[str]:
    """Every statement ``engine`` runs from now on (the list grows as they run; the
    engines of the tests' fixtures end with their test)."""
    seen: list[str] = []
    event.listen(engine, "before_cursor_execute", lambda *a: seen.append(a[2]))
    return seen
