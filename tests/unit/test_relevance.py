"""One calibrated score for every kind of context: the relevance model's features, its
probability, and ranking by probability per token."""

import json
import math
from importlib import resources

import numpy as np
import pytest

from app.retrieval.context_chunk import ContextChunk
from app.retrieval.evidence import Evidence
from app.retrieval.ranking import rank_context
from app.retrieval.relevance import (
    DIFF_RELEVANCE,
    FEATURES,
    MIN_TOKENS,
    RelevanceModel,
    Touched,
    features,
    load_model,
    path_words,
    scored,
)
from bench.fit_relevance import benchmark_weights, fit_logistic


def chunk(
    path: str = "httpx/_config.py",
    kind: str = "function",
    tokens: int = 100,
    secondary: bool = False,
    **evidence: float,
) -> ContextChunk:
    code = "x" * (4 * tokens)
    return ContextChunk(
        0, path, 1, 10, "f", "f", kind, "python", None, code,
        evidence=Evidence(**evidence), secondary=secondary,
    )  # fmt: skip


def named(values: tuple[float, ...]) -> dict[str, float]:
    return dict(zip(FEATURES, values, strict=True))


def test_path_words_leave_out_the_extension_and_the_folders_every_project_has() -> None:
    assert path_words("httpx/_client.py") == {"httpx", "client"}
    assert path_words("packages/client/src/links/wsLink.ts") == {"client", "links", "wslink"}
    assert path_words("src/lib/index.ts") == frozenset()


def test_features_say_where_the_chunk_lies_against_the_touched_files() -> None:
    touched = Touched.of(["httpx/_client.py", "docs/api.md"])
    near = named(features(chunk("httpx/_config.py"), touched))
    assert near["same_directory"] == 1.0
    assert near["path_words"] == pytest.approx(1 / 3)  # {httpx} of {httpx, client, config}
    far = named(features(chunk("tests/test_utils.py"), touched))
    assert far["same_directory"] == 0.0 and far["path_words"] == 0.0


def test_features_of_the_evidence_kind_and_size() -> None:
    got = named(
        features(
            chunk(kind="method", tokens=200, cochange=0.5, together=3, words=0.4), Touched.of([])
        )
    )
    assert got["cochange"] == 0.5 and got["together"] == pytest.approx(math.log(4))
    assert got["coupled_words"] == 0.4  # the words count again where history found it too
    assert got["method"] == 1.0 and got["function"] == got["window"] == 0.0
    assert got["size"] == pytest.approx(math.log(200))
    alone = named(features(chunk(words=0.4), Touched.of([])))
    assert alone["words"] == 0.4 and alone["coupled_words"] == 0.0


#: A hand-set model: the tests check the mechanics, not the current fit (a refit moves
#: every coefficient; ``app/retrieval/relevance_model.json`` holds it).
MODEL = RelevanceModel(
    intercept=-5.0,
    coefficients={"callee": 3.0, "vector": 1.0, "words": 1.5, "edited": 2.0, "replaced": 1.0,
                  "secondary": -5.0, "cochange": 0.7, "function": 1.0},
)  # fmt: skip


def test_the_probability_follows_the_coefficients() -> None:
    touched = Touched.of(["httpx/_client.py"])
    plain = MODEL.probability(chunk(words=0.3), touched)
    z = -5.0 + 1.5 * 0.3 + 1.0  # the intercept, the words, a function
    assert plain == pytest.approx(1 / (1 + math.exp(-z)))
    assert MODEL.probability(chunk(words=0.3, callee=1.0), touched) > 5 * plain
    assert MODEL.probability(chunk(words=0.3, secondary=True), touched) < plain / 50
    assert 0.0 < MODEL.probability(chunk(), Touched.of([])) < 0.05


def test_the_shipped_model_is_known_features_with_its_provenance() -> None:
    stored = json.loads(
        resources.files("app.retrieval").joinpath("relevance_model.json").read_text()
    )
    assert load_model(stored) == DIFF_RELEVANCE
    assert set(DIFF_RELEVANCE.coefficients) <= set(FEATURES)
    provenance = stored["provenance"]
    assert {"fitted_by", "commit", "cases_sha256", "embedder", "l2"} <= set(provenance)
    # what the product depends on, whatever the fit: a test or doc is less likely needed
    touched = Touched.of(["httpx/_client.py"])
    code = DIFF_RELEVANCE.probability(chunk(words=0.5), touched)
    assert DIFF_RELEVANCE.probability(chunk(words=0.5, secondary=True), touched) < code


def test_a_model_file_naming_an_unknown_feature_is_refused() -> None:
    with pytest.raises(ValueError, match="unknown features: \\['stars'\\]"):
        load_model({"model": {"intercept": 0.0, "coefficients": {"stars": 1.0}}})
    with pytest.raises(ValueError, match="'model' object"):
        load_model({"provenance": {}})


def test_ranked_by_probability_per_token_with_a_floor_for_tiny_chunks() -> None:
    model = RelevanceModel(intercept=0.0, coefficients={}, size_exponent=1.0)
    small, large = chunk(tokens=60), chunk(tokens=600)
    assert model.rank_score(0.5, small) == pytest.approx(10 * model.rank_score(0.5, large))
    tiny, floor = chunk(tokens=MIN_TOKENS // 3), chunk(tokens=MIN_TOKENS)
    assert model.rank_score(0.5, tiny) == model.rank_score(0.5, floor)
    flat = RelevanceModel(intercept=0.0, coefficients={}, size_exponent=0.0)
    assert flat.rank_score(0.5, small) == flat.rank_score(0.5, large) == 0.5


def test_the_forgotten_co_changed_function_outranks_a_long_lookalike() -> None:
    """What else must change: a short function history and the change's words point at
    comes before a long function that only looks alike, in another directory."""
    forgotten = chunk("httpx/_config.py", "function", 120, cochange=0.5, together=3, words=0.6)
    lookalike = chunk("httpx/transports/default.py", "class", 900, vector=0.9, lexical=0.8)
    ranked = rank_context(scored([lookalike, forgotten], ["httpx/_client.py"], MODEL), 3)
    assert [c.file_path for c in ranked] == ["httpx/_config.py", "httpx/transports/default.py"]
    assert all(0.0 < c.relevance < 1.0 for c in ranked)
    assert ranked[0].score == MODEL.rank_score(ranked[0].relevance, ranked[0])


def test_the_fit_recovers_the_model_that_made_the_labels() -> None:
    rng = np.random.default_rng(7)
    x = rng.normal(size=(40_000, 2))
    truth = np.array([1.5, -2.0])
    p = 1 / (1 + np.exp(-(-3.0 + x @ truth)))
    y = (rng.random(len(p)) < p).astype(float)
    intercept, coefficients = fit_logistic(x, y, l2=0.33)
    assert intercept == pytest.approx(-3.0, abs=0.15)
    assert coefficients == pytest.approx(truth, abs=0.15)
    # a penalty pulls the coefficients toward zero, never the intercept alone
    _, shrunk = fit_logistic(x, y, l2=20_000.0)
    assert np.all(np.abs(shrunk) < np.abs(coefficients))


def test_a_candidate_weighing_two_counts_as_if_it_were_there_twice() -> None:
    rng = np.random.default_rng(3)
    x = rng.normal(size=(500, 2))
    y = (rng.random(500) < 1 / (1 + np.exp(-x @ np.array([1.0, -1.0])))).astype(float)
    weights = np.where(np.arange(500) < 100, 2.0, 1.0)
    doubled = fit_logistic(np.vstack([x, x[:100]]), np.concatenate([y, y[:100]]), l2=0.33)
    weighted = fit_logistic(x, y, l2=0.33, weights=weights)
    assert weighted[0] == pytest.approx(doubled[0], abs=1e-6)
    assert weighted[1] == pytest.approx(doubled[1], abs=1e-6)
    assert not np.allclose(fit_logistic(x, y, l2=0.33)[1], doubled[1], atol=1e-3)


def test_each_benchmark_weighs_the_same_whatever_its_number_of_cases() -> None:
    cases = [{"benchmark": "structural"}] * 30 + [{"benchmark": "cochange"}] * 10
    weights = benchmark_weights(cases)
    assert sum(weights[:30]) == pytest.approx(sum(weights[30:])) == pytest.approx(20.0)
    assert sum(weights) == pytest.approx(len(cases))  # they average 1
