import pytest

from app.db.vector_index import ideal_lists, needs_rebuild, probes_for


@pytest.mark.parametrize(
    ("rows", "lists"),
    [
        (0, 1),
        (999, 1),
        (1_000, 1),
        (2_500, 2),
        (250_000, 250),
        (1_000_000, 1000),
        (4_000_000, 2000),
    ],
)
def test_ideal_lists_follows_pgvector_advice(rows: int, lists: int) -> None:
    assert ideal_lists(rows) == lists


@pytest.mark.parametrize(("lists", "probes"), [(1, 1), (4, 2), (100, 10), (1000, 32)])
def test_probes_is_sqrt_of_lists(lists: int, probes: int) -> None:
    assert probes_for(lists) == probes


def test_rebuild_only_when_off_by_a_factor_of_two() -> None:
    assert not needs_rebuild(current_lists=1, rows=1_500)  # ideal 1
    assert needs_rebuild(current_lists=1, rows=2_000)  # ideal 2
    assert not needs_rebuild(current_lists=10, rows=15_000)  # ideal 15
    assert needs_rebuild(current_lists=10, rows=20_000)  # ideal 20
    assert needs_rebuild(current_lists=10, rows=5_000)  # ideal 5: shrunk by half
    assert not needs_rebuild(current_lists=10, rows=6_000)


def test_build_memory_grows_with_lists() -> None:
    from app.db.vector_index import build_memory_mb

    assert build_memory_mb(1) == 128
    assert build_memory_mb(214) > 65  # the failure this guards against: 65 MB needed at 214 lists
    assert build_memory_mb(1000) >= 440
    assert build_memory_mb(100_000) == 4096
