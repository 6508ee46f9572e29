import pytest

from app.db.engine import DatabaseTarget, parse_database_url
from app.errors import ConfigError


@pytest.mark.parametrize(
    "raw",
    ["postgres://u:p@h:5433/d", "postgresql://u:p@h:5433/d", "postgresql+asyncpg://u:p@h:5433/d"],
)
def test_any_postgres_url_becomes_psycopg3(raw: str) -> None:
    url = parse_database_url(raw)
    assert url.drivername == "postgresql+psycopg"
    assert (url.host, url.port, url.database) == ("h", 5433, "d")


def test_other_databases_are_refused() -> None:
    with pytest.raises(ConfigError, match="must point at PostgreSQL"):
        parse_database_url("sqlite:///x.db")


def test_garbage_is_refused_without_echoing_it() -> None:
    with pytest.raises(ConfigError) as info:
        parse_database_url("hunter2 is not a url")
    assert "hunter2" not in str(info.value)


def test_display_names_host_never_password() -> None:
    target = DatabaseTarget(
        parse_database_url("postgresql://bob:hunter2@db.internal:6543/rb"), False
    )
    assert target.display == "postgresql://bob@db.internal:6543/rb"
