"""Chunking files in worker processes while the indexing run writes, for large runs.

A first index spends about as long chunking (tree-sitter parses, links) as writing
(bench/RESULTS.md), and both hold the interpreter: a thread gains nothing. Here the
files of a run past its first ``inline_files`` go to a pool of ``workers`` processes,
at most ``window`` at a time, and come back in the order they went: the run's batches,
and so its rows, are the same as when it chunks them itself. The processes are spawned,
not forked, so they share none of the caller's threads, locks or database connections.
"""

from __future__ import annotations

import itertools
import multiprocessing
import os
from collections import deque
from collections.abc import Generator, Iterable
from concurrent.futures import Future, ProcessPoolExecutor
from dataclasses import dataclass
from typing import TypeVar

from app.indexing.files import FileChunks, chunk_file
from app.indexing.windows import ChunkLimits

K = TypeVar("K")


@dataclass(frozen=True)
class ChunkJob:
    """One file to chunk, as ``chunk_file`` takes it."""

    path: str
    data: bytes
    limits: ChunkLimits
    max_bytes: int

    def run(self) -> FileChunks:
        return chunk_file(self.path, self.data, self.limits, self.max_bytes)


@dataclass(frozen=True)
class Parallelism:
    """How a run chunks: ``workers`` processes (0: in the run's own process), used once
    it has more than ``inline_files`` files to chunk (starting processes costs about a
    second), with at most ``window`` files in flight (their bytes are held meanwhile):
    more than a batch (200 files), so the workers go on while the run writes one."""

    workers: int = 0
    inline_files: int = 500
    window: int = 256

    @classmethod
    def for_this_machine(cls) -> Parallelism:
        """A worker for each core left when the run's own process and PostgreSQL's have
        one each. On two cores that is none: a worker there made a first index no faster
        (bench/RESULTS.md), as the three took turns."""
        return cls(workers=max(0, (os.cpu_count() or 1) - 2))


def chunk_in_order(
    jobs: Iterable[tuple[K, ChunkJob]], parallelism: Parallelism
) -> Generator[tuple[K, FileChunks], None, None]:
    """Each job's key with its file's chunks, in the jobs' order."""
    remaining = iter(jobs)
    for key, job in itertools.islice(remaining, parallelism.inline_files):
        yield key, job.run()
    if parallelism.workers < 1:
        for key, job in remaining:
            yield key, job.run()
        return
    first = next(remaining, None)
    if first is None:
        return
    context = multiprocessing.get_context("spawn")
    with ProcessPoolExecutor(parallelism.workers, mp_context=context) as pool:
        pending: deque[tuple[K, Future[FileChunks]]] = deque()
        for key, job in itertools.chain([first], remaining):
            pending.append((key, pool.submit(_chunk, job)))
            if len(pending) >= parallelism.window:
                done_key, done = pending.popleft()
                yield done_key, done.result()
        while pending:
            done_key, done = pending.popleft()
            yield done_key, done.result()


def _chunk(job: ChunkJob) -> FileChunks:
    """In a worker process."""
    return job.run()
