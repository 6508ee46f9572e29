"""The worker's heartbeat file, as ``reviewbot healthcheck`` reads it."""

import os
from pathlib import Path

from app.jobs.heartbeat import heartbeat_age, touch_heartbeat


def test_age_of_a_touched_file_and_of_none(tmp_path: Path) -> None:
    beat = tmp_path / "beat"
    assert heartbeat_age(beat) is None
    touch_heartbeat(beat)
    assert heartbeat_age(beat) is not None
    os.utime(beat, (1_000.0, 1_000.0))
    assert heartbeat_age(beat, now=1_030.0) == 30.0
    touch_heartbeat(beat)  # a new beat makes it fresh again
    age = heartbeat_age(beat)
    assert age is not None and age < 5


def test_a_file_that_cannot_be_written_costs_the_worker_nothing(tmp_path: Path) -> None:
    touch_heartbeat(tmp_path / "missing-folder" / "beat")  # no exception
    assert heartbeat_age(tmp_path / "missing-folder" / "beat") is None
