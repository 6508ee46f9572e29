"""README says no module of app/ is over 400 lines; this keeps it true."""

from pathlib import Path

APP = Path(__file__).resolve().parents[2] / "app"
LIMIT = 400


def test_no_module_is_over_the_limit() -> None:
    over = {}
    for path in APP.rglob("*.py"):
        lines = len(path.read_text(encoding="utf-8").splitlines())
        if lines > LIMIT:
            over[path.relative_to(APP).as_posix()] = lines
    assert over == {}
