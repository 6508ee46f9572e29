"""Which repository a search may use: indexed, with the embedding model asked about."""

import pytest
from pgvector.sqlalchemy import Vector
from sqlalchemy import Engine, bindparam, text

from app.db.models import EMBEDDING_DIMS
from app.retrieval.vector_search import RepositoryNotIndexed, indexed_repository
from tests.chunk_rows import new_repository
from tests.statements import recorded_statements


def _repository(engine: Engine, name: str, models: list[str | None]) -> int:
    """A repository with one chunk per entry of ``models``: embedded by that model, or
    not embedded yet (None)."""
    insert = text(
        "INSERT INTO code_chunks (repository_id, source_file_id, file_path, start_line, end_line,"
        " chunk_type, raw_code, content_hash, embedding, embedding_model)"
        " VALUES (:r, :f, :path, 1, 1, 'function', 'pass', :hash, :embedding, :model)"
    ).bindparams(bindparam("embedding", type_=Vector(EMBEDDING_DIMS)))
    with engine.begin() as conn:
        repo, file = new_repository(conn, name)
        for i, model in enumerate(models):
            conn.execute(
                insert,
                {
                    "r": repo,
                    "f": file,
                    "path": f"f{i}.py",
                    "hash": str(i),
                    "embedding": None if model is None else [1.0] + [0.0] * (EMBEDDING_DIMS - 1),
                    "model": model,
                },
            )
        return repo


def _lookup(engine: Engine, name: str, model: str) -> int:
    with engine.begin() as conn:
        return indexed_repository(conn, name, model)


def test_a_repository_embedded_by_another_model_is_refused_and_the_error_names_it(
    engine: Engine,
) -> None:
    _repository(engine, "acme/old", ["model-b", "model-a", None])
    with pytest.raises(RepositoryNotIndexed) as refused:
        _lookup(engine, "acme/old", "model-c")
    assert "indexed with embedding model model-a, model-b, not model-c" in str(refused.value)
    assert "re-run reviewbot index" in str(refused.value)


@pytest.mark.parametrize(
    "models",
    [
        ["model-a", "model-a"],
        ["model-b", None, "model-a"],  # being re-embedded: some rows are the new model's
        [None, None],  # nothing embedded yet
        [],
    ],
)
def test_a_repository_with_rows_of_the_model_or_none_embedded_is_searchable(
    engine: Engine, models: list[str | None]
) -> None:
    repo = _repository(engine, "acme/app", models)
    assert _lookup(engine, "acme/app", "model-a") == repo


def test_an_unknown_repository_is_refused(engine: Engine) -> None:
    with pytest.raises(RepositoryNotIndexed, match="'acme/none' is not indexed"):
        _lookup(engine, "acme/none", "model-a")


def test_a_repository_with_rows_of_the_model_is_not_read_for_its_other_models(
    engine: Engine,
) -> None:
    """Every review asks: listing the models reads all of a repository's rows."""
    repo = _repository(engine, "acme/big", ["model-a"] * 3)
    seen = recorded_statements(engine)
    assert _lookup(engine, "acme/big", "model-a") == repo
    assert seen and not [s for s in seen if "DISTINCT embedding_model" in s]
