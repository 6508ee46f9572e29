"""The README's model recipes, each against a double that speaks its server's dialect
(``tests/fakes/openai_server.py``), through the real ``openai`` client: the settings a
recipe gives, then one summary, one embedding and one review, and what went on the wire."""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import ExitStack
from typing import Any

import pytest

from app.config import Settings, load_settings
from app.indexing.embedder import EmbeddingUsage, select_embedder
from app.indexing.files import chunk_file
from app.indexing.summarizer import LLM, select_summarizer
from app.llm.client import make_openai_client
from app.review.model import ACCEPTED_FORMATS, ReviewModelError, ask_review_model
from app.review.prompt import ReviewPrompt
from tests.fakes.openai_server import (
    CHAT,
    EMBEDDINGS,
    FakeOpenAI,
    running_fake_openai,
    summaries_for,
)

SOURCE = b"def to_cents(amount):\n    return round(amount * 100)\n"
REVIEW = json.dumps({"summary": "Fine.", "comments": []})


def _answer(body: dict[str, Any]) -> str:
    prompt = body["messages"][-1]["content"]
    return summaries_for(prompt) if "### chunk" in prompt else REVIEW


@pytest.fixture
def fakes() -> Iterator[list[FakeOpenAI]]:
    """Three model servers, for recipes that give each role its own."""
    with ExitStack() as stack:
        made = [stack.enter_context(running_fake_openai()) for _ in range(3)]
        for fake in made:
            fake.chat_reply = _answer
        ACCEPTED_FORMATS.clear()  # what an endpoint took is learnt per process
        yield made


def _settings(monkeypatch: pytest.MonkeyPatch, **env: str) -> Settings:
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    return load_settings(llm_max_retries=0)


def _summarise_embed_review(settings: Settings) -> tuple[str, list[float], str]:
    """One summary, one embedding and one review, as the product makes them; (the
    summary, the vector, the response format the review model took)."""
    chunks = chunk_file("pkg/money.py", SOURCE).chunks
    summarizer = select_summarizer(settings)
    assert summarizer is not None
    [summary], _ = summarizer.summarize(chunks[:1])
    assert summary.summarizer == LLM, summary
    [vector] = select_embedder(settings).embed(["what to_cents does"], EmbeddingUsage())
    answer = ask_review_model(
        make_openai_client(settings, "review"),
        settings.review_model,
        ReviewPrompt("Review.", "The diff."),
    )
    assert answer.review.summary == "Fine."
    return summary.text, vector, answer.response_format


def test_azure_openai_deployments_api_version_and_api_key_header(
    fakes: list[FakeOpenAI], monkeypatch: pytest.MonkeyPatch
) -> None:
    azure = fakes[0]
    azure.azure_api_version, azure.api_key = "2024-10-21", "azure-key-0123456789"
    settings = _settings(
        monkeypatch,
        AZURE_OPENAI_ENDPOINT=azure.base_url.removesuffix("/v1"),
        AZURE_OPENAI_API_KEY="azure-key-0123456789",
        OPENAI_API_VERSION="2024-10-21",
        REVIEWBOT_REVIEW_MODEL="gpt-4o-prod",
        REVIEWBOT_SUMMARY_MODEL="gpt-4o-mini-cheap",
        REVIEWBOT_EMBEDDING_MODEL="te3-small",
        REVIEWBOT_EMBEDDING_DIMENSIONS="512",
    )
    _, vector, taken = _summarise_embed_review(settings)
    assert taken == "json_schema" and sum(1 for v in vector if v) > 0
    urls = [r.url for r in azure.requests]
    assert all(u.endswith("?api-version=2024-10-21") for u in urls)
    assert {u.split("?")[0] for u in urls} == {
        "/openai/deployments/gpt-4o-mini-cheap/chat/completions",
        "/openai/deployments/te3-small/embeddings",
        "/openai/deployments/gpt-4o-prod/chat/completions",
    }
    assert all(r.headers["api-key"] == "azure-key-0123456789" for r in azure.requests)
    assert azure.bodies(EMBEDDINGS)[0]["dimensions"] == 512

    wrong = _settings(monkeypatch, OPENAI_API_VERSION="2023-01-01")
    with pytest.raises(ReviewModelError, match="HTTP 404"):
        ask_review_model(make_openai_client(wrong, "review"), "gpt-4o-prod", ReviewPrompt("", ""))


def test_ollama_without_json_schema_and_without_dimensions(
    fakes: list[FakeOpenAI], monkeypatch: pytest.MonkeyPatch
) -> None:
    ollama = fakes[0]
    ollama.refuse_json_schema, ollama.refuse_dimensions = 400, 404
    settings = _settings(
        monkeypatch,
        OPENAI_BASE_URL=ollama.base_url,
        REVIEWBOT_SUMMARY_MODEL="qwen2.5-coder:7b",
        REVIEWBOT_REVIEW_MODEL="qwen2.5-coder:32b",
        REVIEWBOT_EMBEDDING_MODEL="nomic-embed-text",
        REVIEWBOT_EMBEDDING_DIMENSIONS="768",
    )
    _, vector, taken = _summarise_embed_review(settings)
    assert taken == "json_object_schema"  # json_schema refused, the next tier taken
    embeds = ollama.bodies(EMBEDDINGS, ok_only=False)
    assert [("dimensions" in b) for b in embeds] == [True, False]  # refused, asked without
    assert len([v for v in vector if v]) > 0
    # no key is needed: the client sends a placeholder, which Ollama ignores
    assert ollama.requests[0].headers["authorization"] == "Bearer no-key-configured"


def test_vllm_with_its_api_key_and_no_shortened_vectors(
    fakes: list[FakeOpenAI], monkeypatch: pytest.MonkeyPatch
) -> None:
    vllm = fakes[0]
    vllm.api_key, vllm.refuse_dimensions = "token-vllm-0123456789", 400
    settings = _settings(
        monkeypatch,
        OPENAI_BASE_URL=vllm.base_url,
        OPENAI_API_KEY="token-vllm-0123456789",
        REVIEWBOT_SUMMARY_MODEL="Qwen/Qwen2.5-Coder-7B-Instruct",
        REVIEWBOT_REVIEW_MODEL="Qwen/Qwen2.5-Coder-32B-Instruct",
        REVIEWBOT_EMBEDDING_MODEL="BAAI/bge-base-en-v1.5",
        REVIEWBOT_EMBEDDING_DIMENSIONS="512",
    )
    _, _, taken = _summarise_embed_review(settings)
    assert taken == "json_schema"
    assert {r.headers["authorization"] for r in vllm.requests} == {"Bearer token-vllm-0123456789"}
    assert [b.get("dimensions") for b in vllm.bodies(EMBEDDINGS, ok_only=False)] == [512, None]


def test_llama_cpp_server_token_vectors_and_no_json_schema(
    fakes: list[FakeOpenAI], monkeypatch: pytest.MonkeyPatch
) -> None:
    llama = fakes[0]
    llama.llama_like = True  # 500 on json_schema; one vector per token from /embeddings
    settings = _settings(
        monkeypatch,
        OPENAI_BASE_URL=llama.base_url,
        REVIEWBOT_SUMMARY_MODEL="local",
        REVIEWBOT_REVIEW_MODEL="local",
        REVIEWBOT_EMBEDDING_MODEL="local-embed",
    )
    _, vector, taken = _summarise_embed_review(settings)
    assert taken == "json_object_schema"
    assert len([v for v in vector if v]) > 0  # pooled from the token vectors


def test_litellm_proxy_in_front_of_bedrock_and_vertex(
    fakes: list[FakeOpenAI], monkeypatch: pytest.MonkeyPatch
) -> None:
    proxy = fakes[0]
    proxy.api_key = "sk-litellm-master-0123456789"
    settings = _settings(
        monkeypatch,
        OPENAI_BASE_URL=proxy.base_url,
        OPENAI_API_KEY="sk-litellm-master-0123456789",
        REVIEWBOT_SUMMARY_MODEL="vertex_ai/gemini-1.5-flash",
        REVIEWBOT_REVIEW_MODEL="bedrock/anthropic.claude-3-5-sonnet-20240620-v1:0",
        REVIEWBOT_EMBEDDING_MODEL="bedrock/amazon.titan-embed-text-v2:0",
    )
    _summarise_embed_review(settings)
    models = [b["model"] for b in proxy.bodies(CHAT)] + [
        b["model"] for b in proxy.bodies(EMBEDDINGS)
    ]
    assert set(models) == {
        "vertex_ai/gemini-1.5-flash",
        "bedrock/anthropic.claude-3-5-sonnet-20240620-v1:0",
        "bedrock/amazon.titan-embed-text-v2:0",
    }
    refused = _settings(monkeypatch, OPENAI_API_KEY="sk-wrong-0123456789")
    with pytest.raises(ReviewModelError, match="HTTP 401"):
        ask_review_model(
            make_openai_client(refused, "review"), refused.review_model, ReviewPrompt("", "")
        )


def test_a_cheap_model_for_summaries_a_strong_one_for_reviews_embeddings_elsewhere(
    fakes: list[FakeOpenAI], monkeypatch: pytest.MonkeyPatch
) -> None:
    hosted, local, embeddings = fakes
    hosted.api_key = "sk-hosted-0123456789"
    embeddings.api_key = "emb-key-0123456789"
    settings = _settings(
        monkeypatch,
        OPENAI_BASE_URL=hosted.base_url,
        OPENAI_API_KEY="sk-hosted-0123456789",
        REVIEWBOT_SUMMARY_BASE_URL=local.base_url,
        REVIEWBOT_SUMMARY_MODEL="qwen2.5-coder:1.5b",
        REVIEWBOT_EMBEDDING_BASE_URL=embeddings.base_url,
        REVIEWBOT_EMBEDDING_API_KEY="emb-key-0123456789",
        REVIEWBOT_REVIEW_MODEL="gpt-4o",
    )
    _summarise_embed_review(settings)
    assert [r.path for r in hosted.requests] == [CHAT]  # the review only
    assert hosted.bodies(CHAT)[0]["model"] == "gpt-4o"
    assert [r.path for r in local.requests] == [CHAT]  # the summary only
    assert local.bodies(CHAT)[0]["model"] == "qwen2.5-coder:1.5b"
    # the summary endpoint has no key of its own: OPENAI_API_KEY goes with it
    assert local.requests[0].headers["authorization"] == "Bearer sk-hosted-0123456789"
    assert [r.path for r in embeddings.requests] == [EMBEDDINGS]
    assert embeddings.requests[0].headers["authorization"] == "Bearer emb-key-0123456789"
