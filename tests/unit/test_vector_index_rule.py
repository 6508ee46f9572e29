import math

import pytest

from app.db.vector_calibration import calibration_query
from app.db.vector_policy import (
    DEFAULT_POLICY,
    Calibration,
    VectorIndexPolicy,
    nearest_found,
    smallest_probes,
)
from app.db.vector_sql import vector_text

P = DEFAULT_POLICY
EXACT_MAX_ROWS = P.exact_max_rows
ideal_lists, probes_for, wanted_lists = P.ideal_lists, P.probes_for, P.wanted_lists


@pytest.mark.parametrize(
    ("rows", "lists"),
    [
        (0, 1),
        (99, 1),
        (100, 1),
        (2_500, 25),
        (80_000, 800),
        (100_000, 1000),
        (200_000, 1000),
        (1_000_000, 1000),
    ],
)
def test_ideal_lists_is_a_hundred_rows_a_list_up_to_a_maximum(rows: int, lists: int) -> None:
    assert ideal_lists(rows) == lists


@pytest.mark.parametrize("lists", [1, 4, 100, 1000, 2000])
def test_probes_scale_with_the_root_of_lists_and_never_exceed_them(lists: int) -> None:
    probes = probes_for(lists)
    assert 1 <= probes <= lists
    if lists >= 100:
        assert probes == round(P.probes_factor * math.sqrt(lists))


@pytest.mark.parametrize(
    ("lists", "calibrated", "serving"),
    [
        (1000, 42, 84),  # calibration under-shoots on real queries: a twelfth at least
        (1000, 120, 120),
        (1000, None, 84),  # before calibration: probes_for (63), raised to the floor
        (30, 1, 3),
        (30, 7, 7),
        (2, 5, 2),  # never more than the lists
    ],
)
def test_a_search_scans_its_calibrated_probes_and_never_under_a_twelfth_of_the_lists(
    lists: int, calibrated: int | None, serving: int
) -> None:
    assert P.serving_probes(lists, calibrated) == serving


def test_small_repositories_are_searched_exactly_and_large_ones_get_an_index() -> None:
    assert wanted_lists(None, 0) is None
    assert wanted_lists(None, EXACT_MAX_ROWS) is None
    assert wanted_lists(None, EXACT_MAX_ROWS + 1) == ideal_lists(EXACT_MAX_ROWS + 1)


def test_an_index_is_dropped_only_below_half_the_threshold() -> None:
    lists = ideal_lists(EXACT_MAX_ROWS + 1)
    assert wanted_lists(lists, EXACT_MAX_ROWS // 2) is not None  # no flapping near the line
    assert wanted_lists(lists, EXACT_MAX_ROWS // 2 - 1) is None


def test_rebuild_only_when_off_by_a_factor_of_two() -> None:
    assert wanted_lists(100, 15_000) == 100  # ideal 150
    assert wanted_lists(100, 20_000) == 200
    assert wanted_lists(100, 6_000) == 100  # ideal 60
    assert wanted_lists(100, 5_000) == 50  # shrunk by half


def test_build_memory_grows_with_lists_within_bounds() -> None:
    build_memory_mb = P.build_memory_mb
    assert build_memory_mb(1) == 128
    assert build_memory_mb(214) > 65  # the failure this guards against: 65 MB needed at 214 lists
    assert build_memory_mb(1000) >= 440
    assert build_memory_mb(2000) >= 1097  # what pgvector asked for at 2,000 lists
    assert build_memory_mb(100_000) == 4096


@pytest.mark.parametrize("needed", [1, 2, 5, 13, 20, 64, 65, 99, 100])
def test_calibration_finds_the_fewest_probes_that_reach_the_recall(needed: int) -> None:
    tried: list[int] = []

    def recall_at(probes: int) -> float:
        tried.append(probes)
        return 1.0 if probes >= needed else probes / (needed + 1)

    assert smallest_probes(100, recall_at, 0.99) == needed
    # doubling then bisecting: few tries, none much above what is needed
    assert len(tried) <= 2 * math.ceil(math.log2(needed)) + 2
    assert max(tried, default=1) < 2 * needed
    assert 100 not in tried  # every list is an exact scan: never worth trying


def test_calibration_falls_back_to_every_list_when_no_probes_reach_the_recall() -> None:
    tried: list[int] = []

    def recall_at(probes: int) -> float:
        tried.append(probes)
        return 0.5

    assert smallest_probes(100, recall_at, 0.99) == 100
    assert 100 not in tried
    assert smallest_probes(1, lambda probes: 0.0, 0.99) == 1


@pytest.mark.parametrize(("needed", "found"), [(20, 20), (33, 33), (34, 100), (50, 100), (90, 100)])
def test_calibration_stops_once_it_knows_more_than_the_limit_is_needed(
    needed: int, found: int
) -> None:
    tried: list[int] = []

    def recall_at(probes: int) -> float:
        tried.append(probes)
        return 1.0 if probes >= needed else 0.5

    assert smallest_probes(100, recall_at, 0.99, limit=33) == found
    assert max(tried) <= 33  # nothing above the limit is tried
    assert smallest_probes(100, recall_at, 0.99, limit=0) == 100  # any probe is too many


def test_an_index_is_kept_up_to_a_third_of_its_lists() -> None:
    assert P.decline_limit(121) == 40
    assert P.decline_limit(1000) == 333
    assert P.decline_limit(2) == 0  # any probe is more than a third of two


@pytest.mark.parametrize(
    ("probes", "index_ms", "exact_ms", "declined"),
    [
        (3, 2.0, 30.0, False),  # few lists, fast: kept
        (3, 2.0, 3.1, False),  # just over MIN_SPEEDUP times as fast: kept
        (3, 2.0, 2.9, True),  # a few lists, but they hold most rows: no faster than a scan
        (3, 40.0, 30.0, True),  # slower than a scan
        (334, 1.0, 30.0, True),  # fast, but over a third of 1,000 lists: declined on lists
        (333, 1.0, 30.0, False),
    ],
)
def test_an_index_is_declined_when_it_is_not_clearly_faster_than_a_scan(
    probes: int, index_ms: float, exact_ms: float, declined: bool
) -> None:
    assert P.min_speedup == 1.5
    found = Calibration(probes, index_ms / 1000, exact_ms / 1000)
    assert found.declines(1000) is declined


def test_a_row_as_near_as_the_farthest_exact_neighbour_counts_as_found() -> None:
    exact = [0.1, 0.2, 0.2]  # the exact 3 nearest; more rows may lie at 0.2
    assert nearest_found([0.1, 0.2, 0.2], exact) == 3  # a tie split otherwise
    assert nearest_found([0.1, 0.2, 0.3], exact) == 2
    assert nearest_found([0.1, 0.2, 0.2, 0.2], exact) == 3  # at most all of them
    assert nearest_found([0.1], []) == 0


def test_a_calibration_query_is_a_row_pulled_towards_another() -> None:
    pull = P.calibration_pull
    query = calibration_query([1.0, 0.0, 0.5], [0.0, 1.0, 0.5], pull)
    values = [float(x) for x in query.strip("[]").split(",")]
    assert values == pytest.approx([1.0, pull, 0.5 + 0.5 * pull])


def test_a_declined_index_waits_until_the_repository_has_doubled() -> None:
    assert wanted_lists(None, 5_000, declined_rows=3_000) is None
    assert wanted_lists(30, 5_000, declined_rows=3_000) is None  # the declined index goes
    assert wanted_lists(None, 5_999, declined_rows=3_000) is None
    assert wanted_lists(None, 6_000, declined_rows=3_000) == ideal_lists(6_000)


def test_a_query_vector_is_sent_as_pgvector_text_at_six_significant_digits() -> None:
    assert vector_text([0.5, -0.25, 1e-7, 3]) == "[0.5,-0.25,1e-07,3]"
    values = [((-1) ** i) * (i + 1) / 7_777 for i in range(1536)]
    text = vector_text(values)
    parsed = [float(x) for x in text.strip("[]").split(",")]
    assert len(parsed) == 1536
    # float16, which the query is cast to, keeps about 3.3 digits; 6 lose nothing of it
    assert all(abs(p - v) <= 5e-6 * abs(v) for p, v in zip(parsed, values, strict=True))


def test_a_policy_changes_the_rule_without_touching_the_defaults() -> None:
    small = VectorIndexPolicy(exact_max_rows=10, rows_per_list=5, decline_share=0.1)
    assert small.wanted_lists(None, 11) == 2 and P.wanted_lists(None, 11) is None
    assert small.decline_limit(100) == 10 and P.decline_limit(100) == 33
    assert Calibration(11, 0.001, 1.0).declines(100, small)
    assert not Calibration(11, 0.001, 1.0).declines(100)
    assert VectorIndexPolicy(build_memory_cap_mb=1).build_memory_mb(1000) == 1
