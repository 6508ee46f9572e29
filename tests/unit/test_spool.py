"""The intake's spool on local disk: whole files only, oldest first, bounded, and a file
that cannot be read back is named, never guessed at."""

from __future__ import annotations

from pathlib import Path

import pytest

from app.forge.spool import ReceivedDelivery, Spool, SpoolCorrupt, SpoolError, SpoolFull
from app.task_specs import index_job, review_job


def delivery(name: str, jobs: int = 1) -> ReceivedDelivery:
    made = (review_job("acme/shop", 42, 7), index_job("acme/shop", 42, full=False))[:jobs]
    return ReceivedDelivery(name, "pull_request", "opened", "acme/shop", 42, made)


def test_a_spooled_delivery_reads_back_as_it_was(tmp_path: Path) -> None:
    spool = Spool(tmp_path / "spool", 1024**2)
    item = delivery("d-1", jobs=2)
    path = spool.put(item)
    assert path.parent == tmp_path / "spool" and path.stat().st_mode & 0o777 == 0o600
    assert spool.read(path) == item
    assert [job.args for job in spool.read(path).jobs] == [job.args for job in item.jobs]


def test_pending_is_oldest_first_and_skips_unfinished_writes(tmp_path: Path) -> None:
    spool = Spool(tmp_path, 1024**2)
    first, second = spool.put(delivery("b-first")), spool.put(delivery("a-second"))
    (tmp_path / ".a-third.json.tmp").write_text("{half")  # a write cut off by a crash
    assert spool.pending() == [first, second]
    spool.remove(first)
    spool.remove(first)  # another process took it already: nothing to do
    assert spool.pending() == [second]


def test_a_full_spool_refuses_and_keeps_what_it_holds(tmp_path: Path) -> None:
    spool = Spool(tmp_path, 4096)
    kept = []
    with pytest.raises(SpoolFull, match="REVIEWBOT_SPOOL_MAX_BYTES"):
        for n in range(100):
            kept.append(spool.put(delivery(f"d-{n}")))
    assert 0 < len(kept) < 100 and spool.pending() == kept
    spool.remove(kept[0])  # room again once one is recorded
    spool.put(delivery("after"))
    # a fresh Spool over the same folder counts what is there
    assert Spool(tmp_path, 4096)._used() == sum(p.stat().st_size for p in spool.pending())


def test_a_disk_that_refuses_is_a_spool_error(tmp_path: Path) -> None:
    (tmp_path / "spool").write_text("a file where the folder should be")
    with pytest.raises(SpoolError, match="cannot write to the webhook spool"):
        Spool(tmp_path / "spool", 1024**2).put(delivery("d-1"))


def test_a_corrupt_file_is_named_and_set_aside(tmp_path: Path) -> None:
    spool = Spool(tmp_path, 1024**2)
    path = spool.put(delivery("d-1"))
    path.write_text('{"delivery": "d-1"}')
    with pytest.raises(SpoolCorrupt, match=path.name):
        spool.read(path)
    moved = spool.set_aside(path)
    assert moved == tmp_path / "failed" / path.name and moved.is_file()
    assert spool.pending() == []
