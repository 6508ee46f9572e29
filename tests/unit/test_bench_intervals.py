"""bench/intervals.py: paired bootstrap intervals of a retriever's difference from a
baseline or a bar, over the benchmark's per-case rows."""

import json
from pathlib import Path

import pytest

from bench.intervals import (
    bootstrap,
    by_repository,
    cluster_bootstrap,
    main,
    paired,
    read_rows,
    scores_by_case,
)


def _rows(
    retriever: str, scores: list[float], language: str = "java", repo: str = "acme/shop"
) -> list[dict]:
    return [
        {
            "repo": repo,
            "commit": f"c{n}",
            "language": language,
            "held_out": True,
            "retriever": retriever,
            "MRR": score,
        }
        for n, score in enumerate(scores)
    ]


def test_a_constant_difference_has_no_spread() -> None:
    interval = bootstrap([0.1] * 15)
    assert (interval.mean, interval.low, interval.high) == pytest.approx((0.1, 0.1, 0.1))
    assert interval.at_least_zero == 1.0


def test_the_interval_holds_the_mean_and_narrows_with_more_cases() -> None:
    few = bootstrap([1.0, -1.0] * 8)
    many = bootstrap([1.0, -1.0] * 400)
    assert few.mean == many.mean == 0.0
    assert few.low < 0 < few.high
    assert many.high - many.low < (few.high - few.low) / 4
    assert 0.3 < few.at_least_zero < 0.7
    # seeded: the same values, the same interval
    assert bootstrap([1.0, -1.0] * 8) == few


def test_cases_are_paired_and_those_the_baseline_lacks_left_out() -> None:
    rows = _rows("reviewbot", [1.0, 0.5, 0.0]) + _rows("BM25", [0.5, 0.5])
    a = scores_by_case(rows, "reviewbot", "MRR", lambda r: True)
    b = scores_by_case(rows, "BM25", "MRR", lambda r: True)
    assert list(paired(a, b).values()) == [0.5, 0.0]
    assert list(paired(a, 0.8).values()) == pytest.approx([0.2, -0.3, -0.8])


def test_no_case_is_an_error_not_a_figure() -> None:
    with pytest.raises(ValueError, match="no cases"):
        bootstrap([])


def test_the_command_reads_both_file_shapes_and_filters_languages(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    listed = tmp_path / "st.json"
    listed.write_text(json.dumps(_rows("reviewbot", [1.0, 1.0]) + _rows("BM25", [0.0, 0.5])))
    wrapped = tmp_path / "cc.json"
    rust = _rows("reviewbot", [0.0], "rust") + _rows("BM25", [1.0], "rust")
    wrapped.write_text(json.dumps({"rows": rust, "timings": {}}))
    assert len(read_rows([listed, wrapped])) == 6
    main([str(listed), str(wrapped), "--metric", "MRR", "--b", "BM25", "--language", "java"])
    out = capsys.readouterr().out
    assert out.startswith("reviewbot - BM25, MRR: +0.750 [+0.500, +1.000], 2 cases")
    main([str(wrapped), "--metric", "MRR", "--bar", "0.5", "--held-out"])
    assert "reviewbot - 0.5, MRR: -0.500 [-0.500, -0.500], 1 case," in capsys.readouterr().out


def test_the_command_says_why_it_has_no_figure(tmp_path: Path) -> None:
    listed = tmp_path / "st.json"
    listed.write_text(json.dumps(_rows("reviewbot", [1.0]) + _rows("BM25", [0.0])))
    with pytest.raises(SystemExit, match="no case has both retrievers"):
        main([str(listed), "--metric", "MRR", "--b", "BM25 functions"])
    with pytest.raises(SystemExit, match="no 'R@4000'"):
        main([str(listed), "--metric", "R@4000", "--b", "BM25"])


def test_whole_repositories_are_resampled_and_their_spread_counts() -> None:
    # two repositories, each consistent within itself and unlike the other: over cases
    # the 30 draws look like a tight figure; over repositories, it could be either one
    groups = [[0.2] * 15, [-0.1] * 15]
    over_cases = bootstrap([v for g in groups for v in g])
    over_repositories = cluster_bootstrap(groups)
    assert over_cases.mean == pytest.approx(over_repositories.mean) == pytest.approx(0.05)
    assert over_repositories.low == pytest.approx(-0.1)
    assert over_repositories.high == pytest.approx(0.2)
    assert over_repositories.high - over_repositories.low > 2 * (over_cases.high - over_cases.low)
    assert (over_repositories.cases, over_repositories.repositories) == (30, 2)
    assert "30 cases in 2 repositories" in str(over_repositories)
    # one value a group is the bootstrap over cases, draw for draw (only labelled apart)
    singles = cluster_bootstrap([[v] for v in [0.3, -0.2, 0.1]])
    plain = bootstrap([0.3, -0.2, 0.1])
    assert (singles.low, singles.high, singles.at_least_zero) == (
        plain.low,
        plain.high,
        plain.at_least_zero,
    )
    assert (singles.repositories, plain.repositories) == (3, None)


def test_repositories_are_grouped_by_name_and_weighted_by_their_cases() -> None:
    a = {("b/two", "c1"): 1.0, ("a/one", "c2"): 0.0, ("a/one", "c1"): 0.5}
    assert by_repository(paired(a, 0.5)) == [[0.0, -0.5], [0.5]]
    # the mean is over cases, not over repositories' means
    assert cluster_bootstrap([[1.0, 1.0, 1.0], [0.0]]).mean == pytest.approx(0.75)


def test_the_command_resamples_repositories_when_asked(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    rows = (
        _rows("reviewbot", [1.0, 1.0], repo="acme/shop")
        + _rows("BM25", [0.0, 0.0], repo="acme/shop")
        + _rows("reviewbot", [0.0, 0.0], repo="acme/cart")
        + _rows("BM25", [0.5, 0.5], repo="acme/cart")
    )
    path = tmp_path / "st.json"
    path.write_text(json.dumps(rows))
    main([str(path), "--metric", "MRR", "--b", "BM25", "--by-repository"])
    assert "+0.250 [-0.500, +1.000], 4 cases in 2 repositories" in capsys.readouterr().out
