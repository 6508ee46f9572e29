"""The signal registry holds together what a signal touches: its evidence fields, the
names settings accept, the relevance model's inputs, and what a reviewer reads."""

from dataclasses import fields
from typing import get_args

import pytest

from app.config import RETRIEVAL_SIGNALS, RetrievalSignal
from app.retrieval.evidence import SIGNALS, Evidence, cleared, merge_evidence, signal
from app.retrieval.relevance import FEATURES

#: Evidence that is not a signal's finding: set for every candidate once all are found.
NOT_A_SIGNAL = {"found_for", "edited", "replaced"}


def test_settings_accept_exactly_the_registered_signals() -> None:
    names = [s.name for s in SIGNALS]
    assert len(set(names)) == len(names)
    assert set(get_args(RetrievalSignal)) == set(names) == set(RETRIEVAL_SIGNALS)


def test_every_evidence_field_belongs_to_one_signal_or_none() -> None:
    owned = [name for s in SIGNALS for name in s.fields]
    assert len(owned) == len(set(owned))  # no field is two signals'
    assert set(owned) | NOT_A_SIGNAL == {f.name for f in fields(Evidence)}
    assert not set(owned) & NOT_A_SIGNAL


def test_the_relevance_model_is_told_every_signals_scores() -> None:
    numeric = {name for s in SIGNALS for name in s.fields if name != "sibling_kind"}
    assert numeric <= set(FEATURES)


@pytest.mark.parametrize("registered", SIGNALS, ids=lambda s: s.name)
def test_a_signals_own_finding_names_it_alone(registered) -> None:  # type: ignore[no-untyped-def]
    evidence = Evidence(**{registered.fields[0]: 0.7})
    assert evidence.signals == (registered.name,)
    assert evidence.specific is registered.relates
    assert registered.reasons(evidence)  # the reviewer is told why
    assert not Evidence().signals and not Evidence().reasons()
    everything = Evidence(**{s.fields[0]: 0.5 for s in SIGNALS})
    assert cleared(everything, [registered.name]).signals == (registered.name,)
    assert registered.name not in cleared(everything, []).signals


def test_merged_keeps_the_best_of_each_and_counts_the_functions() -> None:
    a = Evidence(callee=0.8, sibling=0.2, sibling_kind="pair", together=3, edited=0.1)
    b = Evidence(caller=0.6, sibling=0.9, sibling_kind="overrides", together=1, edited=0.4)
    both = merge_evidence([{7: a}, {7: b}, {8: b}])
    assert both[7] == Evidence(
        callee=0.8,
        caller=0.6,
        sibling=0.9,
        sibling_kind="overrides",
        together=3,
        edited=0.4,
        found_for=2,
    )
    assert both[8] == b


def test_scaled_scales_scores_not_counts_or_kinds() -> None:
    e = Evidence(callee=1.0, cochange=0.5, together=4, sibling=0.2, sibling_kind="pair")
    half = e.scaled(0.5)
    assert (half.callee, half.cochange, half.sibling) == (0.5, 0.25, 0.1)
    assert (half.together, half.sibling_kind) == (4, "pair")
    assert e.scaled(1.0) is e


def test_reasons_strongest_relation_first() -> None:
    e = Evidence(lexical=0.2, cochange=0.3, together=2, callee=0.9, replaced=0.6, edited=0.5)
    assert e.reasons() == [
        "called by the change",
        "uses names the change replaced",
        "changed together 2 times",
        "shares names",
        "uses the changed lines' names",
    ]
    assert signal("history").reasons(Evidence(cochange=0.1, together=1)) == [
        "changed together once"
    ]


def test_the_readme_lists_exactly_the_registered_signals() -> None:
    """README's retrieval section has one bullet a signal (``- **name**``), and says how
    many there are: a signal added or removed in the registry must be told there."""
    import re
    from pathlib import Path

    readme = (Path(__file__).parents[2] / "README.md").read_text()
    section = readme.split("### Retrieval and review", 1)[1].split("\n### ", 1)[0]
    listed = re.findall(r"^- \*\*([a-z]+)\*\*", section, flags=re.M)
    assert sorted(listed) == sorted(s.name for s in SIGNALS)
    numbers = {7: "Seven", 6: "Six", 8: "Eight"}
    assert f"{numbers[len(SIGNALS)]} signals search the index" in section
