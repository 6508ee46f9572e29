"""The index a CI job keeps in its cache: a data folder (the embedded database, the
history clone) restored before a run and saved after it.

A restored folder is checked before it is used. Its stamp says which repository it
indexes and at which schema: another repository's is refused (a cache key that does
not name the repository is a mistake to fix, not to paper over); a schema this code
does not know (a newer reviewbot's), a stamp that cannot be read, or a database folder
without a stamp, is removed and rebuilt. A database that will not start is rebuilt too
(``open_cached_database``). The commit it indexed needs no check: the index brings
itself to the pull request's base from whatever commit it holds, re-reading only what
changed, or everything when that commit is not an ancestor (a force push).
"""

from __future__ import annotations

import json
import logging
import shutil
from collections.abc import Collection, Iterator
from contextlib import ExitStack, contextmanager
from pathlib import Path

from app.config import Settings
from app.db.embedded import PGDATA_DIRNAME, forget_failed_server
from app.db.engine import OpenDatabase, open_database
from app.db.wal import cap_wal, checkpoint
from app.errors import ConfigError, DatabaseError
from app.logs import kv

log = logging.getLogger(__name__)
STAMP = "reviewbot-cache.json"
FORMAT = 1


def check_cache(folder: Path, repo: str, schemas: Collection[str]) -> str | None:
    """Check a restored cache ``folder`` for ``repo``; returns why its database was
    removed (to be rebuilt), or None when it can be used as it is (or holds nothing).
    ``ConfigError`` when it belongs to another repository. ``schemas``: the schema
    revisions this code can migrate from."""
    database = folder / PGDATA_DIRNAME
    stamp = folder / STAMP
    if not stamp.exists():
        return _reset(folder, "it has no stamp") if database.exists() else None
    try:
        data = json.loads(stamp.read_text(encoding="utf-8"))
        owner, schema = str(data["repository"]), str(data["schema"])
        if data.get("format") != FORMAT:
            raise ValueError("another format")
    except (OSError, ValueError, KeyError, TypeError):
        return _reset(folder, "its stamp cannot be read")
    if owner != repo:
        raise ConfigError(
            f"the index cache in {folder} was made for {owner}, not {repo}: key the CI cache"
            " by repository (README, Run in CI) or delete the folder"
        )
    if schema not in schemas:
        return _reset(folder, f"its schema {schema} is not one this reviewbot knows")
    return None


def write_stamp(folder: Path, repo: str, schema: str) -> None:
    """Say which repository and schema the cache ``folder`` holds."""
    data = {"format": FORMAT, "repository": repo, "schema": schema}
    (folder / STAMP).write_text(json.dumps(data), encoding="utf-8")


@contextmanager
def open_cached_database(settings: Settings) -> Iterator[OpenDatabase]:
    """The embedded database in the cache folder; rebuilt once when it will not start
    or migrate (a corrupt or truncated restore). Its log is kept small, and checkpointed
    when the run ends well, before the CI saves the folder."""
    with ExitStack() as stack:
        try:
            opened = stack.enter_context(open_database(settings))
        except DatabaseError as exc:
            forget_failed_server(settings.data_dir)
            _reset(settings.data_dir, f"its database failed: {exc}")
            opened = stack.enter_context(open_database(settings))
        cap_wal(opened.engine)  # what the CI saves is the index, not recycled log
        yield opened
        checkpoint(opened.engine)


def _reset(folder: Path, why: str) -> str:
    shutil.rmtree(folder / PGDATA_DIRNAME, ignore_errors=True)
    (folder / STAMP).unlink(missing_ok=True)
    log.warning(kv("ci.cache_rebuilt", folder=folder, why=why))
    return f"the index cache in {folder} was rebuilt: {why}"
