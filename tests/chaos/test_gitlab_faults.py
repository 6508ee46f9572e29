"""The database restarting under a GitLab deployment: a delivery while it is away is
spooled and acknowledged (GitLab counts no failure toward disabling the hook), reviewed
once the database is back, and the same delivery sent again changes nothing."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from app.config import Settings
from tests.fakes.gitlab_server import FakeGitLab
from tests.support.app import serving, wait_for
from tests.support.gitlab import MR_HOOK, mr_event, send_gitlab
from tests.support.outage import Outage, ready

pytestmark = pytest.mark.chaos


def test_a_gitlab_review_goes_through_after_a_database_restart(
    gitlab_settings: Settings, gitlab: FakeGitLab, tmp_path: Path
) -> None:
    outage = Outage(tmp_path / "outage-pg")
    try:
        with serving(gitlab_settings, outage.engine, worker=True) as base:
            wait_for(lambda: ready(base), seconds=30)
            outage.down()
            event = mr_event("open", gitlab.mrs[7].head)
            while_down = send_gitlab(base, MR_HOOK, event, delivery="gl-down")
            assert while_down.status_code == 202 and while_down.json()["status"] == "spooled"
            time.sleep(5)
            outage.up()
            wait_for(lambda: len(gitlab.summaries(7)) == 1, seconds=90)
            wait_for(lambda: ready(base), seconds=30)
            again = send_gitlab(base, MR_HOOK, event, delivery="gl-down")
            assert again.status_code == 200 and again.json()["status"] == "duplicate"
            assert list((gitlab_settings.data_dir / "spool").glob("*.json")) == []
    finally:
        outage.close()
    assert len(gitlab.diff_threads(7)) == 1
