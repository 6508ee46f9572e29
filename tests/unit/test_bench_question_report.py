"""The question benchmark's report: every language it ran, held out and in sample apart."""

import pytest

from bench.question_bench import report


def test_every_language_run_has_its_rows(capsys: pytest.CaptureFixture[str]) -> None:
    rows = [
        {"retriever": "fused", "language": lang, "held_out": held, "commit": c, "MRR": m, "R@10": r}
        for lang, held, c, m, r in [
            ("ruby", True, "a", 1.0, 1.0),
            ("ruby", True, "b", 0.0, 0.5),
            ("kotlin", False, "c", 0.5, 0.0),
        ]
    ]
    report(rows, "hash")
    lines = capsys.readouterr().out.splitlines()
    assert "| fused | held out | 2 | 0.500 | 0.750 |" in lines
    assert "| fused | held out ruby | 2 | 0.500 | 0.750 |" in lines
    assert "| fused | in sample kotlin | 1 | 0.500 | 0.000 |" in lines
    assert not [line for line in lines if "held out kotlin" in line or "python" in line]
