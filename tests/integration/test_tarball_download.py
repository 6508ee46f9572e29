"""The repository tarball is streamed to a temporary file under the byte cap, never held
in memory: a 400 MB tarball costs the bot a few MB, and one over the cap stops the
download with a clear error."""

from __future__ import annotations

import tempfile
import tracemalloc

import pytest

from app.github.client import RepoApi, TarballTooLarge
from app.runtime import Runtime
from tests.conftest import GITHUB_INSTALLATION, GITHUB_REPO
from tests.fakes.github_server import FakeGitHub

MIB = 1024 * 1024


def test_a_400_mb_tarball_goes_to_disk_not_memory(run: Runtime, github: FakeGitHub) -> None:
    github.tarball_stream_bytes = 400 * MIB
    api = RepoApi(run.github.installation(GITHUB_INSTALLATION), GITHUB_REPO)
    with tempfile.TemporaryFile() as spool:
        tracemalloc.start()
        try:
            written = api.download_tarball("main", spool, 1024 * MIB)
            _, peak = tracemalloc.get_traced_memory()
        finally:
            tracemalloc.stop()
        assert written > 400 * MIB and spool.tell() == written
    # the fake GitHub (in this process too) makes the data as it sends it
    assert peak < 32 * MIB


def test_a_tarball_over_the_cap_stops_the_download(run: Runtime, github: FakeGitHub) -> None:
    github.tarball_stream_bytes = 64 * MIB
    api = RepoApi(run.github.installation(GITHUB_INSTALLATION), GITHUB_REPO)
    with tempfile.TemporaryFile() as spool:
        with pytest.raises(TarballTooLarge, match="REVIEWBOT_ARCHIVE_MAX_BYTES"):
            api.download_tarball("main", spool, 8 * MIB)
        assert spool.tell() <= 8 * MIB
