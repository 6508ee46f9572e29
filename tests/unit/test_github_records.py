"""GitHub's JSON as the code host's records: documented payloads in, typed fields out."""

from app.forge.models import InlineComment
from app.github import records
from tests.webhooks import payload


def test_a_review_comment_from_a_documented_payload() -> None:
    data = payload("pull_request_review_comment.created")["comment"]
    comment = records.review_comment(data)
    assert (comment.id, comment.path, comment.review_id) == (284312630, "README.md", 237895671)
    assert comment.author.login == "Codertocat" and not comment.author.bot
    assert comment.posted_commit == "ec26c3e57ca3a959ca5aad62de7213c562f8c821"
    assert comment.in_reply_to is None and comment.body == data["body"]
    assert comment.diff_hunk == data["diff_hunk"]


def test_where_a_comment_was_posted_outlives_where_it_stands_now() -> None:
    # after a push moved the code away GitHub sets line to null, keeping original_line
    comment = records.review_comment(
        {
            "id": 5,
            "body": "b",
            "user": {"login": "reviewbot[bot]", "type": "Bot"},
            "line": None,
            "original_line": 14,
            "original_start_line": 12,
            "commit_id": "new",
            "original_commit_id": "old",
            "in_reply_to_id": 3,
        }
    )
    assert (comment.posted_start_line, comment.posted_line, comment.posted_commit) == (
        12,
        14,
        "old",
    )
    assert comment.author.bot and comment.in_reply_to == 3
    one_line = records.review_comment({"id": 6, "line": 9, "commit_id": "c"})
    assert (one_line.posted_start_line, one_line.posted_line, one_line.body) == (9, 9, "")


def test_a_bot_is_known_by_its_account_type_or_its_suffix() -> None:
    assert records.author({"user": {"login": "dependabot[bot]", "type": "User"}}).bot
    assert records.author({"user": {"login": "ci", "type": "Bot"}}).bot
    assert not records.author({"user": {"login": "octocat", "type": "User"}}).bot
    assert records.author({}).login == ""  # a deleted account ("ghost") may have no user


def test_a_comparison_and_a_pull_request() -> None:
    compared = records.comparison(
        {
            "status": "ahead",
            "files": [
                {"filename": "new.py", "status": "renamed", "previous_filename": "old.py"},
                {"filename": "a.py", "status": "added"},
            ],
        }
    )
    assert compared.status == "ahead"
    assert [(f.path, f.status, f.previous_path) for f in compared.files] == [
        ("new.py", "renamed", "old.py"),
        ("a.py", "added", None),
    ]
    pr = records.pull_request(2, payload("pull_request.opened")["pull_request"])
    assert (pr.number, pr.state, pr.draft, pr.author) == (2, "open", False, "Codertocat")
    assert len(pr.head_sha) == 40 and pr.base_ref == "master"


def test_an_inline_comment_is_posted_in_githubs_shape() -> None:
    one = records.inline_comment(InlineComment("a.py", 9, "RIGHT", "body"))
    assert one == {"path": "a.py", "line": 9, "side": "RIGHT", "body": "body"}
    ranged = records.inline_comment(InlineComment("a.py", 9, "RIGHT", "body", start_line=7))
    assert (ranged["start_line"], ranged["start_side"]) == (7, "RIGHT")


def test_a_comparison_of_300_files_may_have_been_cut() -> None:
    def listed(n: int) -> dict[str, object]:
        return {"status": "ahead", "files": [{"filename": f"f{i}.py"} for i in range(n)]}

    assert records.comparison(listed(299)).complete
    assert not records.comparison(listed(300)).complete  # GitHub lists at most 300
