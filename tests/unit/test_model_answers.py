"""What model endpoints answer, checked: embedding shapes, and failures said plainly."""

from __future__ import annotations

import httpx
import openai
import pytest

from app.indexing.embedder import EmbeddingError, flat_vector
from app.llm.client import describe_model_failure


def test_flat_vectors_pass_and_token_vectors_are_mean_pooled() -> None:
    assert flat_vector([1, 2.5, -1]) == ([1.0, 2.5, -1.0], False)
    assert flat_vector([[1.0, 3.0], [3.0, 5.0]]) == ([2.0, 4.0], True)


@pytest.mark.parametrize(
    "raw",
    [[], [[]], [[1.0, 2.0], [1.0]], [[[1.0]]], "AAAA", None, [True, False], [[1.0], "x"]],
)
def test_other_shapes_are_a_clear_error(raw: object) -> None:
    with pytest.raises(EmbeddingError, match="neither one vector nor token vectors"):
        flat_vector(raw)


def test_failures_say_what_happened() -> None:
    client = openai.OpenAI(api_key="k", base_url="http://127.0.0.1:9/v1", timeout=60, max_retries=2)
    request = httpx.Request("POST", "http://127.0.0.1:9/v1/chat/completions")
    slow = openai.APITimeoutError(request=request)
    assert describe_model_failure(client, slow) == (
        "the model endpoint did not answer within 60 s (3 attempts)"
    )
    down = openai.APIConnectionError(request=request)
    assert describe_model_failure(client, down) == (
        "cannot connect to the model endpoint (3 attempts)"
    )
    refused = openai.InternalServerError(
        "boom", response=httpx.Response(500, request=request), body=None
    )
    assert describe_model_failure(client, refused) == "the model endpoint answered HTTP 500"
    client.close()
