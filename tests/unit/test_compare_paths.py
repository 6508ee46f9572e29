"""What a comparison's file list means for an index moved forwards or back."""

from __future__ import annotations

from app.flows.index import changed_paths
from app.github.records import comparison

FILES_JSON = [
    {"filename": "a.py", "status": "added"},
    {"filename": "b.py", "status": "modified"},
    {"filename": "c.py", "status": "removed"},
    {"filename": "new.py", "status": "renamed", "previous_filename": "old.py"},
    {"filename": "copy.py", "status": "copied"},
    {"filename": "mode.sh", "status": "changed"},
]
FILES = comparison({"status": "ahead", "files": FILES_JSON}).files


def test_forwards_fetches_what_exists_at_the_head_and_deletes_the_rest() -> None:
    assert changed_paths(FILES) == (
        ["a.py", "b.py", "new.py", "copy.py", "mode.sh"],
        ["c.py", "old.py"],
    )


def test_back_fetches_what_exists_at_the_base_and_deletes_the_rest() -> None:
    assert changed_paths(FILES, undo=True) == (
        ["b.py", "c.py", "old.py", "mode.sh"],
        ["a.py", "new.py", "copy.py"],
    )
