"""The cheap model's description of a change, against the fake OpenAI server: used when
it answers, and when it fails the heuristic serves and the failure is logged."""

from __future__ import annotations

import json
import logging
from typing import Any

import pytest

from app.config import Settings
from app.diff.changed import changed_functions
from app.diff.parse import parse_diff
from app.llm.client import make_openai_client
from app.retrieval.natural_queries import describe_change_with_llm
from tests.fakes.openai_server import CHAT, FakeOpenAI
from tests.support.billing import DIFF, NEW, OLD


def _describe(settings: Settings) -> str | None:
    diffs = parse_diff(DIFF)
    [function] = changed_functions(diffs, lambda path, side: NEW if side == "new" else OLD)
    client = make_openai_client(settings.model_copy(update={"llm_max_retries": 0}), "summary")
    return describe_change_with_llm(client, "gpt-4o-mini", function, diffs[0])


def test_the_models_description_is_used(llm_settings: Settings, fake_openai: FakeOpenAI) -> None:
    def reply(body: dict[str, Any]) -> str:
        return json.dumps({"description": "Charges  through the new\npayments client."})

    fake_openai.chat_reply = reply
    assert _describe(llm_settings) == "Charges through the new payments client."


def test_a_failing_model_is_logged_and_leaves_the_heuristic(
    llm_settings: Settings, fake_openai: FakeOpenAI, caplog: pytest.LogCaptureFixture
) -> None:
    fake_openai.fail_next(CHAT, [500])
    with caplog.at_level(logging.WARNING):
        assert _describe(llm_settings) is None
    assert "action=retrieval.describe_failed function=charge" in caplog.text
    assert "InternalServerError" in caplog.text


def test_an_unreadable_answer_is_logged(
    llm_settings: Settings, fake_openai: FakeOpenAI, caplog: pytest.LogCaptureFixture
) -> None:
    fake_openai.chat_reply = lambda body: "not json at all"
    with caplog.at_level(logging.WARNING):
        assert _describe(llm_settings) is None
    assert "action=retrieval.describe_unreadable function=charge" in caplog.text
