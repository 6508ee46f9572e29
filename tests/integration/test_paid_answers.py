"""Model answers already paid for, reused by a retried job: the same request gets the
kept answer (and costs no tokens), another request does not, and a database that cannot
keep or read them costs a model call, never the job."""

from __future__ import annotations

import openai
from sqlalchemy import Engine, text

from app.db.model_answers import PaidAnswer, PaidAnswers
from app.review.model import ask_review_model, ask_text_model
from app.review.prompt import ReviewPrompt
from tests.fakes.openai_server import CHAT, FakeOpenAI

REVIEW = '{"summary": "Fine.", "comments": []}'


def _client(fake: FakeOpenAI) -> openai.OpenAI:
    return openai.OpenAI(base_url=fake.base_url, api_key="sk-test-0123456789", max_retries=0)


def test_the_same_request_is_answered_once_and_reused(
    engine: Engine, fake_openai: FakeOpenAI
) -> None:
    fake_openai.chat_reply = lambda body: REVIEW
    paid = PaidAnswers(engine, "job:1")
    prompt = ReviewPrompt("system", "review this diff")
    first = ask_review_model(_client(fake_openai), "gpt-4o", prompt, 512, paid=paid)
    again = ask_review_model(_client(fake_openai), "gpt-4o", prompt, 512, paid=paid)
    assert fake_openai.calls(CHAT) == 1
    assert again.review.summary == first.review.summary == "Fine."
    assert first.prompt_tokens > 0 and (again.prompt_tokens, again.completion_tokens) == (0, 0)
    other = ReviewPrompt("system", "review another diff")
    ask_review_model(_client(fake_openai), "gpt-4o", other, 512, paid=paid)
    ask_text_model(_client(fake_openai), "gpt-4o", prompt, 512, paid=paid)  # another format
    assert fake_openai.calls(CHAT) == 3
    # another job (a new /describe, a new push) asks afresh, even for the same request
    ask_review_model(_client(fake_openai), "gpt-4o", prompt, 512, paid=PaidAnswers(engine, "job:2"))
    assert fake_openai.calls(CHAT) == 4
    assert PaidAnswers.of_job(engine, None) is None  # outside a job nothing retries


def test_a_database_that_fails_costs_a_call_not_the_job(
    engine: Engine, fake_openai: FakeOpenAI
) -> None:
    fake_openai.chat_reply = lambda body: "an answer"
    with engine.begin() as conn:
        conn.execute(text("DROP TABLE model_answers"))
    paid = PaidAnswers(engine, "job:1")
    prompt = ReviewPrompt("system", "a question")
    assert ask_text_model(_client(fake_openai), "m", prompt, 64, paid=paid).text == "an answer"
    assert ask_text_model(_client(fake_openai), "m", prompt, 64, paid=paid).text == "an answer"
    assert fake_openai.calls(CHAT) == 2


def test_answers_are_kept_two_days(engine: Engine) -> None:
    paid = PaidAnswers(engine, "job:1")
    paid.keep("k1", PaidAnswer("old", 10, 2))
    assert paid.find("k1") == PaidAnswer("old", 10, 2)
    with engine.begin() as conn:
        conn.execute(text("UPDATE model_answers SET created_at = now() - interval '3 days'"))
    assert paid.find("k1") is None
    paid.keep("k2", PaidAnswer("new", 1, 1))  # pruned as a new one is kept
    with engine.connect() as conn:
        kept = conn.execute(text("SELECT count(*) FROM model_answers")).scalar_one()
    assert kept == 1 and paid.find("k2") == PaidAnswer("new", 1, 1)
