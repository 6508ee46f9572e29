"""The real app (uvicorn on 127.0.0.1, procrastinate workers) against a fake GitLab and a
fake model, driven by GitLab's documented webhook payloads: the same workflows as on
GitHub, through the GitLab side of the code-host boundary."""

from __future__ import annotations

import time
from typing import Any

from sqlalchemy import Engine, text
from sqlalchemy.engine import URL

from app.config import Settings
from tests.fakes.gitlab_server import FakeGitLab, MergeRequest
from tests.fakes.openai_server import CHAT, FakeOpenAI
from tests.shop_repo import CHECKOUT_V2, answering_model, answers_posted, review_reply
from tests.support.app import jobs_left, serving, wait_for
from tests.support.gitlab import (
    MR_HOOK,
    NOTE_HOOK,
    PUSH_HOOK,
    mr_event,
    note_event,
    push_event,
    send_gitlab,
)
from tests.support.models import COUPON_DESCRIPTION, finding, model
from tests.support.workers import kill_a_worker_mid_review

FINDING = "Fraction passed where a percent is expected"


def test_merge_request_opened_gets_one_review_with_inline_discussions(
    gitlab_settings: Settings, engine: Engine, gitlab: FakeGitLab
) -> None:
    head = gitlab.mrs[7].head
    with serving(gitlab_settings, engine, worker=True) as base:
        started = time.monotonic()
        first = send_gitlab(base, MR_HOOK, mr_event("open", head), delivery="gl-1")
        assert first.status_code == 202 and time.monotonic() - started < 2
        wait_for(lambda: len(gitlab.summaries(7)) == 1)
        wait_for(lambda: jobs_left(engine) == 0)
        again = send_gitlab(base, MR_HOOK, mr_event("open", head), delivery="gl-1")
        assert again.status_code == 200 and again.json()["status"] == "duplicate"
        # a title edit is an update without new commits: nothing to review
        edited = send_gitlab(base, MR_HOOK, mr_event("update", head))
        assert edited.status_code == 200 and edited.json()["status"] == "ignored"
    [thread] = gitlab.diff_threads(7)
    [note] = thread["notes"]
    position = note["position"]
    assert (position["new_path"], position["new_line"]) == ("shop/checkout.py", 7)
    assert "old_line" not in position  # an added line: new_line alone, as GitLab wants
    assert "```suggestion\n" in note["body"]  # one line: GitLab's plain suggestion
    [summary] = gitlab.summaries(7)
    assert "Applies coupon discounts" in summary["body"]
    assert "Not in the diff" in summary["body"]  # the comment off the diff, in the summary
    with engine.connect() as conn:
        row = conn.execute(text("SELECT status, host_review_id FROM reviews")).one()
    assert tuple(row) == ("posted", summary["id"])


def test_new_commits_are_reviewed_alone_and_nothing_is_repeated(
    gitlab_settings: Settings, engine: Engine, gitlab: FakeGitLab
) -> None:
    old_head = gitlab.mrs[7].head
    with serving(gitlab_settings, engine, worker=True) as base:
        send_gitlab(base, MR_HOOK, mr_event("open", old_head))
        wait_for(lambda: len(gitlab.summaries(7)) == 1)
        gitlab.repo.write("shop/notes.py", "def note(text):\n    return text.strip()\n")
        new_head = gitlab.repo.commit("Add notes")
        gitlab.mrs[7].head = new_head
        pushed = mr_event("update", new_head, **{"object_attributes.oldrev": old_head})
        assert send_gitlab(base, MR_HOOK, pushed).status_code == 202
        wait_for(lambda: len(gitlab.summaries(7)) == 2)
        wait_for(lambda: jobs_left(engine) == 0)
    assert len(gitlab.diff_threads(7)) == 1  # the earlier finding is not posted again
    compared = [p for m, p in gitlab.requests if p.endswith("/repository/compare")]
    assert compared  # the second review read the new commits' diff alone
    with engine.connect() as conn:
        heads = conn.execute(text("SELECT head_sha FROM reviews ORDER BY id")).scalars().all()
    assert heads == [old_head, new_head]


def test_ask_is_answered_and_a_reply_in_the_bots_discussion_is_answered_there(
    gitlab_settings: Settings, engine: Engine, gitlab: FakeGitLab, fake_openai: FakeOpenAI
) -> None:
    fake_openai.chat_reply = answering_model
    head = gitlab.mrs[7].head
    with serving(gitlab_settings, engine, worker=True) as base:
        send_gitlab(base, MR_HOOK, mr_event("open", head))
        wait_for(lambda: len(gitlab.summaries(7)) == 1)
        asked = gitlab.add_note(7, "/ask what does checkout_total return?", "alice")
        sent = send_gitlab(base, NOTE_HOOK, note_event(asked["body"], asked["id"]))
        assert sent.status_code == 202
        wait_for(lambda: len(answers_posted(gitlab.summaries(7))) == 1)

        [thread] = gitlab.diff_threads(7)
        said = gitlab.add_note(7, "Why is a fraction wrong here?", "alice", thread["id"])
        reply = note_event(
            said["body"],
            said["id"],
            **{
                "object_attributes.type": "DiffNote",
                "object_attributes.discussion_id": thread["id"],
            },
        )
        assert send_gitlab(base, NOTE_HOOK, reply).status_code == 202
        wait_for(lambda: len(gitlab.diff_threads(7)[0]["notes"]) == 3)
        wait_for(lambda: jobs_left(engine) == 0)
        # the bot's own reply comes back as a note event: it is not answered
        [ours, _, answer] = gitlab.diff_threads(7)[0]["notes"]
        echo = note_event(
            answer["body"],
            answer["id"],
            user=gitlab.bot_username,
            **{
                "object_attributes.type": "DiffNote",
                "object_attributes.discussion_id": thread["id"],
            },
        )
        send_gitlab(base, NOTE_HOOK, echo)
        wait_for(lambda: jobs_left(engine) == 0)
    assert f"reviewbot:answer={said['id']}" in answer["body"]
    assert len(gitlab.diff_threads(7)[0]["notes"]) == 3
    assert any(a["name"] == "eyes" for a in gitlab.awards[asked["id"]])  # acknowledged
    assert FINDING in ours["body"]


def test_a_thumbs_down_stops_the_finding_on_the_next_merge_request(
    gitlab_settings: Settings, engine: Engine, gitlab: FakeGitLab
) -> None:
    head = gitlab.mrs[7].head
    gitlab.mrs[8] = MergeRequest(8, gitlab.mrs[7].base, head, title="Same change again")
    with serving(gitlab_settings, engine, worker=True) as base:
        send_gitlab(base, MR_HOOK, mr_event("open", head))
        wait_for(lambda: len(gitlab.summaries(7)) == 1)
        [thread] = gitlab.diff_threads(7)
        gitlab.award(thread["notes"][0]["id"], "thumbsdown", "alice")
        gitlab.award(thread["notes"][0]["id"], "thumbsup", gitlab.bot_username)  # not counted
        gitlab.mrs[7].state = "merged"
        assert send_gitlab(base, MR_HOOK, mr_event("merge", head)).status_code == 202
        wait_for(lambda: jobs_left(engine) == 0)
        send_gitlab(base, MR_HOOK, mr_event("open", head, iid=8))
        wait_for(lambda: len(gitlab.summaries(8)) == 1)
    with engine.connect() as conn:
        verdicts = conn.execute(text("SELECT verdict FROM review_feedback")).scalars().all()
    assert verdicts == ["rejected"]
    assert gitlab.diff_threads(8) == []  # the rejected finding is not raised again


def index_runs(engine: Engine) -> list[dict[str, Any]]:
    with engine.connect() as conn:
        return list(conn.execute(text("SELECT stats FROM index_runs ORDER BY id")).scalars())


def test_a_push_to_the_default_branch_reindexes_only_the_changed_files(
    gitlab_settings: Settings, engine: Engine, gitlab: FakeGitLab
) -> None:
    with serving(gitlab_settings, engine, worker=True) as base:
        head = gitlab.repo.git("rev-parse", "HEAD").decode().strip()
        assert send_gitlab(base, PUSH_HOOK, push_event("refs/heads/main", head)).status_code == 202
        wait_for(lambda: len(index_runs(engine)) == 1)
        first = index_runs(engine)[0]
        assert first["files"]["changed"] == first["files"]["seen"] > 5

        pricing = gitlab.repo.root.joinpath("shop/pricing.py").read_text()
        gitlab.repo.write(
            "shop/pricing.py",
            pricing + "\n\ndef round_price(value: float) -> float:\n    return round(value, 2)\n",
        )
        new_head = gitlab.repo.commit("Add rounding")
        other = send_gitlab(base, PUSH_HOOK, push_event("refs/heads/coupons", new_head))
        assert other.json()["status"] == "ignored"  # not the default branch
        assert (
            send_gitlab(base, PUSH_HOOK, push_event("refs/heads/main", new_head)).status_code == 202
        )
        wait_for(lambda: len(index_runs(engine)) == 2)
        wait_for(lambda: jobs_left(engine) == 0)
    second = index_runs(engine)[1]
    assert second["files"]["changed"] == 1  # only pricing.py is re-chunked
    assert (second["chunks"]["added"], second["chunks"]["deleted"]) == (1, 0)
    assert any(p.endswith("/repository/merge_base") for _, p in gitlab.requests)
    assert any(p.endswith(".git/git-upload-pack") for _, p in gitlab.requests)  # history
    with engine.connect() as conn:
        name = conn.execute(text("SELECT full_name FROM repositories")).scalar_one()
    assert name.endswith("/acme/shop") and name.count("/") == 2


def test_a_502_on_posting_still_gives_exactly_one_review(
    gitlab_settings: Settings, engine: Engine, gitlab: FakeGitLab
) -> None:
    # the discussion is made but its answer is lost; then the summary's answer is lost
    gitlab.fail_next("POST", "/merge_requests/7/discussions", [502], apply=True)
    gitlab.fail_next("POST", "/merge_requests/7/notes", [502], apply=True)
    with serving(gitlab_settings, engine, worker=True) as base:
        send_gitlab(base, MR_HOOK, mr_event("open", gitlab.mrs[7].head))
        wait_for(lambda: jobs_left(engine) == 0 and len(gitlab.summaries(7)) == 1, seconds=90)
        time.sleep(1)
    assert len(gitlab.summaries(7)) == 1
    assert len(gitlab.diff_threads(7)) == 1
    with engine.connect() as conn:
        assert conn.execute(text("SELECT status FROM reviews")).scalar_one() == "posted"


def test_refused_positions_leave_no_half_review(
    gitlab_settings: Settings, engine: Engine, gitlab: FakeGitLab, fake_openai: FakeOpenAI
) -> None:
    """GitLab refuses the second discussion (400): the first is withdrawn, and the review
    is posted once with both findings in its summary note."""

    def two_findings(body: dict[str, Any]) -> str:
        import json

        reply = review_reply(body)
        if "### chunk" in body["messages"][-1]["content"]:
            return reply
        data = json.loads(reply)
        second = dict(data["comments"][0], line=6, title="Second finding", suggestion=None)
        data["comments"].append(second)
        return json.dumps(data)

    fake_openai.chat_reply = two_findings
    gitlab.refuse_discussions_after = 1
    with serving(gitlab_settings, engine, worker=True) as base:
        send_gitlab(base, MR_HOOK, mr_event("open", gitlab.mrs[7].head))
        wait_for(lambda: jobs_left(engine) == 0 and len(gitlab.summaries(7)) == 1)
    assert gitlab.diff_threads(7) == []
    [summary] = gitlab.summaries(7)
    assert FINDING in summary["body"] and "Second finding" in summary["body"]
    assert "DELETE" in {m for m, _ in gitlab.requests}


def test_worker_killed_mid_review_then_review_posted_once(
    gitlab_settings: Settings,
    engine: Engine,
    database_url: URL,
    gitlab: FakeGitLab,
    fake_openai: FakeOpenAI,
) -> None:
    kill_a_worker_mid_review(
        gitlab_settings,
        engine,
        database_url,
        fake_openai,
        lambda base: send_gitlab(base, MR_HOOK, mr_event("open", gitlab.mrs[7].head)).status_code,
        lambda: len(gitlab.summaries(7)) == 1,
        GITLAB_URL=gitlab_settings.gitlab_url,
        GITLAB_TOKEN=gitlab_settings.gitlab_token.get_secret_value(),  # type: ignore[union-attr]
        REVIEWBOT_REVIEW_GATE="major",
    )
    assert len(gitlab.summaries(7)) == 1
    assert len(gitlab.diff_threads(7)) == 1
    assert fake_openai.calls(CHAT) >= 2
    # the killed worker left the gate running; the one that took over finished it (a
    # major finding is open), never asking GitLab for running again, which it refuses
    assert [s["status"] for s in gitlab.status_records] == ["failed"]


def test_the_merge_gate_is_a_commit_status(
    gitlab_settings: Settings, engine: Engine, gitlab: FakeGitLab
) -> None:
    settings = gitlab_settings.model_copy(update={"review_gate": "major"})
    head = gitlab.mrs[7].head
    with serving(settings, engine, worker=True) as base:
        send_gitlab(base, MR_HOOK, mr_event("open", head))
        wait_for(lambda: len(gitlab.summaries(7)) == 1)
        wait_for(lambda: jobs_left(engine) == 0)
    assert [(s["sha"], s["name"], s["status"]) for s in gitlab.statuses] == [
        (head, "reviewbot", "running"),
        (head, "reviewbot", "failed"),  # a major finding is open
    ]
    assert len(gitlab.statuses[-1]["description"]) <= 255


def test_review_command_needs_developer_access(
    gitlab_settings: Settings, engine: Engine, gitlab: FakeGitLab
) -> None:
    with serving(gitlab_settings, engine, worker=True) as base:
        reporter = gitlab.add_note(7, "/review", "bob")  # access level 20: may read only
        send_gitlab(base, NOTE_HOOK, note_event("/review", reporter["id"], user="bob"))
        wait_for(lambda: jobs_left(engine) == 0)
        assert gitlab.summaries(7) == []
        developer = gitlab.add_note(7, "/review", "alice")  # 30: may write
        send_gitlab(base, NOTE_HOOK, note_event("/review", developer["id"], user="alice"))
        wait_for(lambda: len(gitlab.summaries(7)) == 1)
        wait_for(lambda: jobs_left(engine) == 0)
    assert [a["name"] for a in gitlab.awards[developer["id"]]] == ["eyes"]
    assert reporter["id"] not in gitlab.awards


def test_a_fixed_finding_resolves_its_discussion_and_a_discussed_one_stays_open(
    gitlab_settings: Settings, engine: Engine, gitlab: FakeGitLab, fake_openai: FakeOpenAI
) -> None:
    fake_openai.chat_reply = model([finding(7, "major"), finding(8, "minor")])
    with serving(gitlab_settings, engine, worker=True) as base:
        old_head = gitlab.mrs[7].head
        send_gitlab(base, MR_HOOK, mr_event("open", old_head))
        wait_for(lambda: len(gitlab.diff_threads(7)) == 2)
        on_7, on_8 = gitlab.diff_threads(7)
        gitlab.add_note(7, "I think this is on purpose.", "alice", on_8["id"])
        fixed = CHECKOUT_V2.replace(
            "total = apply_discount(total, coupon.fraction)",
            "total = apply_discount(total, coupon.fraction * 100)",
        ).replace("return format_price(total)", "return format_price(round(total, 2))")
        gitlab.repo.write("shop/checkout.py", fixed)
        gitlab.mrs[7].head = gitlab.repo.commit("Percent, and round")
        fake_openai.chat_reply = model([])
        pushed = mr_event("update", gitlab.mrs[7].head, **{"object_attributes.oldrev": old_head})
        send_gitlab(base, MR_HOOK, pushed)
        wait_for(lambda: jobs_left(engine) == 0 and len(gitlab.summaries(7)) == 2)
    threads = {t["id"]: t["notes"] for t in gitlab.diff_threads(7)}
    assert threads[on_7["id"]][0]["resolved"] is True
    assert threads[on_7["id"]][-1]["body"].startswith(f"Fixed in {gitlab.mrs[7].head[:12]}.")
    assert threads[on_8["id"]][0]["resolved"] is False  # a person replied: left to people


FIX = (
    "    if coupon is not None:\n"
    "        total = apply_discount(total, coupon.fraction * 100)\n"
    "    return format_price(total)"
)


def test_describe_and_labels_follow_the_default_branchs_settings(
    gitlab_settings: Settings, engine: Engine, gitlab: FakeGitLab, fake_openai: FakeOpenAI
) -> None:
    gitlab.labels = ["bug", "feature"]
    toml = '[review]\ndescribe = "append"\nlabels = true\nauto_review = false\n'
    gitlab.repo.write(".reviewbot.toml", toml).commit("Configure reviewbot")  # on main
    fake_openai.chat_reply = model([finding(7)], COUPON_DESCRIPTION)
    with serving(gitlab_settings, engine, worker=True) as base:
        send_gitlab(base, MR_HOOK, mr_event("open", gitlab.mrs[7].head))
        wait_for(lambda: "reviewbot:describe:end" in gitlab.mrs[7].description)
        wait_for(lambda: jobs_left(engine) == 0)
    mr = gitlab.mrs[7]
    assert mr.description.startswith("Uses the discount helper from pricing.")  # kept
    assert "Checkout applies a coupon's discount." in mr.description
    assert mr.labels == ["feature"]  # only labels the project has
    assert gitlab.summaries(7) == []  # auto_review = false on the default branch


def test_a_three_line_suggestion_uses_gitlabs_range(
    gitlab_settings: Settings, engine: Engine, gitlab: FakeGitLab, fake_openai: FakeOpenAI
) -> None:
    fake_openai.chat_reply = model([finding(8, start_line=6, suggestion=FIX)])
    with serving(gitlab_settings, engine, worker=True) as base:
        send_gitlab(base, MR_HOOK, mr_event("open", gitlab.mrs[7].head))
        wait_for(lambda: len(gitlab.summaries(7)) == 1)
    [thread] = gitlab.diff_threads(7)
    [note] = thread["notes"]
    # on the range's last line, reaching two lines above it
    assert note["position"]["new_line"] == 8
    assert f"```suggestion:-2+0\n{FIX}\n```" in note["body"]
