"""README says how long a module of app/ may be; this keeps it true."""

from pathlib import Path

APP = Path(__file__).resolve().parents[2] / "app"
LIMIT = 400
#: Over the limit today, to be split (issue 32); each may shrink, none may grow.
KNOWN_LONGER = {
    "cli.py": 513,
    "github/client.py": 436,
    "db/models.py": 461,
}


def test_no_module_is_over_the_limit_and_the_known_longer_ones_do_not_grow() -> None:
    over = {}
    for path in APP.rglob("*.py"):
        name = path.relative_to(APP).as_posix()
        lines = len(path.read_text(encoding="utf-8").splitlines())
        if lines > KNOWN_LONGER.get(name, LIMIT):
            over[name] = lines
    assert over == {}
    assert all((APP / name).exists() for name in KNOWN_LONGER)  # a split one leaves the list
