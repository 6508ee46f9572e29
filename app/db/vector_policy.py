"""The rule for repositories' ivfflat indexes, as one value passed to what applies it
(``app/db/vector_index.py``, ``app/db/vector_calibration.py``). Pure.

Every repository's chunks live in one ``code_chunks`` table and vector search is always
filtered to one repository, so the rule is per repository:

* Up to ``exact_max_rows`` embedded chunks a repository has no vector index: an exact
  scan of its rows is fast and has recall 1. Above that it gets its own partial index
  (``WHERE repository_id = N``), dropped again below half the threshold so a repository
  near the line does not flap.
* ``lists`` = rows / ``rows_per_list``, at most ``max_lists``; an index is rebuilt only
  when the ideal ``lists`` moved by ``rebuild_factor``.
* ``probes`` is calibrated on the repository's own vectors: the fewest that find
  ``calibration_recall`` of the exact nearest neighbours of queries made from its rows.
  Until then ``probes_factor`` x sqrt(lists). A search never scans fewer than
  ``min_probes_share`` of the lists.
* An index that needs more than ``decline_share`` of its lists, or is not ``min_speedup``
  times as fast as an exact scan, does no better than a scan: it is dropped, and the
  repository searched exactly until it doubles. A large build is first tried on a sample
  of ``trial_rows``.

The measurements behind each default are in bench/RESULTS.md ("Vector search at a
million chunks" and after).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass


@dataclass(frozen=True)
class VectorIndexPolicy:
    exact_max_rows: int = 2_000
    rows_per_list: int = 100
    max_lists: int = 1_000
    probes_factor: float = 2.0
    #: a search scans at least this share of the lists, however few calibration found:
    #: the calibration's 16 queries under-shoot on real ones (bench/RESULTS.md, "Vector
    #: search on 250,000 real embeddings")
    min_probes_share: float = 1 / 12
    rebuild_factor: int = 2
    calibration_recall: float = 0.99
    calibration_samples: int = 16
    #: how far a calibration query is pulled from its row towards another row
    calibration_pull: float = 0.8
    decline_share: float = 1 / 3
    min_speedup: float = 1.5
    trial_rows: int = 10_000
    #: the most ``maintenance_work_mem`` a build is given
    build_memory_cap_mb: int = 4096

    def ideal_lists(self, rows: int) -> int:
        """The ``lists`` an index over ``rows`` rows gets."""
        return max(1, min(self.max_lists, rows // self.rows_per_list))

    def probes_for(self, lists: int) -> int:
        """How many lists a query scans before the index is calibrated, within 1 .. lists."""
        return min(lists, max(1, round(self.probes_factor * math.sqrt(lists))))

    def serving_probes(self, lists: int, calibrated: int | None) -> int:
        """The probes a search of an index of ``lists`` lists uses: its calibrated ones
        (before calibration ``probes_for``), at least ``min_probes_share`` of the lists."""
        floor = math.ceil(lists * self.min_probes_share)
        return min(lists, max(calibrated or self.probes_for(lists), floor))

    def wanted_lists(self, current: int | None, rows: int, declined_rows: int = 0) -> int | None:
        """The lists a repository's index should have now: ``current`` (None: no index)
        kept unless ``rows`` crossed the threshold or moved the ideal by
        ``rebuild_factor``. None while ``rows`` is under ``rebuild_factor`` x
        ``declined_rows`` (an index tried there did no better than a scan)."""
        if declined_rows and rows < self.rebuild_factor * declined_rows:
            return None
        if current is None:
            return self.ideal_lists(rows) if rows > self.exact_max_rows else None
        if rows < self.exact_max_rows // 2:
            return None
        ideal = self.ideal_lists(rows)
        if ideal >= current * self.rebuild_factor or ideal * self.rebuild_factor <= current:
            return ideal
        return current

    def decline_limit(self, lists: int) -> int:
        """The most probes an index of ``lists`` lists may need and be kept."""
        return math.floor(self.decline_share * lists)

    def build_memory_mb(self, lists: int, dims: int = 1536) -> int:
        """``maintenance_work_mem`` an ivfflat build with ``lists`` lists needs, with
        headroom: pgvector's k-means holds 50 sample vectors a list and a float per sample
        and list, so memory grows with the square of ``lists``."""
        samples = lists * 50
        needed = samples * (dims * 4 + lists * 4) + lists * lists * 4
        return min(self.build_memory_cap_mb, max(128, math.ceil(needed * 1.2 / 2**20)))


DEFAULT_POLICY = VectorIndexPolicy()


@dataclass(frozen=True)
class Calibration:
    """What calibrating an index found: the probes it needs, and the median seconds a
    query took through the index at those probes and by an exact scan."""

    probes: int
    index_s: float
    exact_s: float

    def declines(self, lists: int, policy: VectorIndexPolicy = DEFAULT_POLICY) -> bool:
        """Whether the index is no better than a scan: it needs more than the policy's
        ``decline_limit`` of its ``lists``, or is not ``min_speedup`` times as fast."""
        if lists > 1 and self.probes > policy.decline_limit(lists):
            return True
        return self.index_s * policy.min_speedup > self.exact_s

    def comment(self) -> str:
        """The index's comment, which ``index_settings`` reads back."""
        return (
            f"probes={self.probes} index_ms={self.index_s * 1000:.2f}"
            f" exact_ms={self.exact_s * 1000:.2f}"
        )


def smallest_probes(
    lists: int, recall_at: Callable[[int], float], target: float, limit: int | None = None
) -> int:
    """The fewest probes, up to ``lists``, whose ``recall_at`` reaches ``target`` (recall
    grows with probes); every list when none does. With ``limit``, every list as soon as
    more than ``limit`` are known to be needed (the index will be declined: how many more
    does not matter, and those are the costly tries).

    Doubling from 1, then bisecting: the answer is usually a few lists of thousands, and
    each try costs the probes it scans, so large tries are left until they are needed.
    Every list finds what an exact scan finds, so it is never tried."""
    if limit is not None and limit < 1:
        return lists
    low, high = 1, 1
    while high < lists:
        if limit is not None and high > limit:  # try the limit before anything above it
            if recall_at(limit) < target:
                return lists
            high = limit
            break
        if recall_at(high) >= target:
            break
        low, high = high + 1, min(lists, high * 2)
    while low < high:
        middle = (low + high) // 2
        if recall_at(middle) >= target:
            high = middle
        else:
            low = middle + 1
    return low


def nearest_found(found: Sequence[float], exact: Sequence[float]) -> int:
    """How many of the exact nearest neighbours (their distances, ``exact``) a search
    found (``found``): a row found at most as far as the farthest exact one counts, since
    rows at the same distance are the same answer (duplicated code embeds identically;
    counted by id, a tie split differently by the index and the scan was a miss)."""
    if not exact:
        return 0
    bound = max(exact) + 1e-9
    return min(len(exact), sum(1 for d in found if d <= bound))
