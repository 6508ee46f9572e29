"""Who the bot answers and reviews on GitLab, against the fake GitLab: a Guest or Planner
spends no tokens on `/ask` (Reporter is the least role that may ask), and merge
requests opened by GitLab's token bots and service accounts are not reviewed unless
asked."""

from __future__ import annotations

from sqlalchemy import Engine

from app.config import Settings
from app.flows.conversation import answer_question
from app.flows.review import review_pull_request
from app.gitlab.records import repo_key
from app.runtime import Runtime
from tests.conftest import GITLAB_PROJECT, GITLAB_PROJECT_ID
from tests.fakes.gitlab_server import FakeGitLab
from tests.fakes.openai_server import CHAT, FakeOpenAI
from tests.shop_repo import answering_model, answers_posted


def test_a_guest_or_planner_may_not_ask_and_a_reporter_may(
    gitlab_settings: Settings, engine: Engine, gitlab: FakeGitLab, fake_openai: FakeOpenAI
) -> None:
    fake_openai.chat_reply = answering_model
    run = Runtime(gitlab_settings, engine)
    repo = repo_key(gitlab.base_url, GITLAB_PROJECT)
    gitlab.members |= {"guest": 10, "planner": 15, "reporter": 20}
    said = {}
    for user in ("guest", "planner"):
        note = gitlab.add_note(7, "/ask what does checkout_total return?", user)
        said[user] = answer_question(run, repo, GITLAB_PROJECT_ID, 7, "what?", user, note["id"])
    assert fake_openai.bodies(CHAT) == []  # no model call paid for either
    note = gitlab.add_note(7, "/ask what does checkout_total return?", "reporter")
    said["reporter"] = answer_question(
        run, repo, GITLAB_PROJECT_ID, 7, "what?", "reporter", note["id"]
    )
    assert said == {"guest": "refused", "planner": "refused", "reporter": "answered"}
    assert len(answers_posted(gitlab.summaries(7))) == 1


def test_merge_requests_of_token_bots_and_service_accounts_are_not_reviewed(
    gitlab_settings: Settings, engine: Engine, gitlab: FakeGitLab
) -> None:
    run = Runtime(gitlab_settings, engine)
    repo = repo_key(gitlab.base_url, GITLAB_PROJECT)
    for bot in ("project_15_bot_0f3a9c", "group_7_bot_1b2c", "service_account_group_7_a1b2"):
        gitlab.mrs[7].author = bot
        assert review_pull_request(run, repo, GITLAB_PROJECT_ID, 7) == "filtered"
    assert gitlab.summaries(7) == []
    gitlab.mrs[7].author = "alice"
    assert review_pull_request(run, repo, GITLAB_PROJECT_ID, 7) == "posted"
