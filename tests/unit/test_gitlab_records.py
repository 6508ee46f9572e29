"""GitLab's JSON as the workflows' records, and a review's comments as GitLab's
positions and suggestions."""

from __future__ import annotations

from app.diff.parse import FileStatus, parse_diff
from app.forge.models import InlineComment
from app.gitlab import positions, records

REFS = {"base_sha": "b" * 40, "start_sha": "s" * 40, "head_sha": "e" * 40}


def test_a_merge_request_reads_as_a_pull_request() -> None:
    pr = records.merge_request(
        {
            "iid": 7,
            "title": "Coupons",
            "description": None,
            "state": "opened",
            "draft": True,
            "sha": "e" * 40,
            "diff_refs": REFS,
            "author": {"username": "alice"},
            "labels": ["api", "ui"],
            "target_branch": "main",
            "source_branch": "coupons",
        }
    )
    assert (pr.number, pr.head_sha, pr.base_sha, pr.state) == (7, "e" * 40, "b" * 40, "open")
    assert (pr.draft, pr.body, pr.author, pr.labels) == (True, "", "alice", ("api", "ui"))
    assert (pr.base_ref, pr.head_ref) == ("main", "coupons")
    assert records.merge_request({"iid": 1, "state": "merged"}).state == "closed"


def test_per_file_diffs_become_one_unified_diff_the_parser_reads() -> None:
    entries = [
        {"old_path": "a.py", "new_path": "a.py", "diff": "@@ -1 +1,2 @@\n x\n+y\n"},
        {"old_path": "n.py", "new_path": "n.py", "new_file": True, "diff": "@@ -0,0 +1 @@\n+z\n"},
        {"old_path": "o.py", "new_path": "p.py", "renamed_file": True, "diff": ""},
        {"old_path": "img.png", "new_path": "img.png", "diff": ""},  # binary: no diff
        {
            "old_path": "gone.py",
            "new_path": "gone.py",
            "deleted_file": True,
            "diff": "@@ -1 +0,0 @@\n-q\n",
        },
    ]
    files = parse_diff(records.diffs_to_text(entries))
    assert [(f.path, f.status) for f in files] == [
        ("a.py", FileStatus.MODIFIED),
        ("n.py", FileStatus.ADDED),
        ("p.py", FileStatus.RENAMED),
        ("img.png", FileStatus.MODIFIED),
        ("gone.py", FileStatus.DELETED),
    ]
    assert files[0].added_lines == {2} and files[3].binary and files[2].old_path == "o.py"


def test_discussions_read_as_threads_with_replies_and_their_review() -> None:
    tag = records.review_tag("e" * 40)
    discussion = {
        "id": "d1",
        "notes": [
            {
                "id": 11,
                "type": "DiffNote",
                "body": f"**major: x**\n\n{tag}",
                "author": {"username": "reviewbot"},
                "position": {"new_path": "a.py", "new_line": 5, "head_sha": "e" * 40},
                "resolved": True,
            },
            {"id": 12, "type": "DiffNote", "body": "why?", "author": {"username": "alice"}},
            {"id": 13, "type": None, "body": "added a commit", "system": True, "author": {}},
        ],
    }
    first, reply = records.thread_comments(discussion, "reviewbot", {"e" * 40: 99})
    assert (first.id, first.path, first.line, first.review_id, first.author.bot) == (
        11,
        "a.py",
        5,
        99,
        True,
    )
    assert (reply.in_reply_to, reply.author.login, reply.author.bot) == (11, "alice", False)
    assert records.thread(discussion) == records.ReviewThread("d1", 11, True)
    assert records.thread({"id": "d2", "notes": [{"id": 1, "type": None}]}) is None


def test_a_multi_line_suggestion_gets_gitlabs_range_and_the_review_tag() -> None:
    comment = InlineComment("a.py", 9, "RIGHT", "fix\n\n```suggestion\nx\ny\n```", 7)
    body = records.inline_body(comment, "c" * 40)
    assert "```suggestion:-2+0\nx\ny\n```" in body
    assert records.tagged_head(body) == "c" * 40
    one = records.inline_body(InlineComment("a.py", 9, "RIGHT", "```suggestion\nx\n```"), "c" * 40)
    assert "```suggestion\nx" in one
    # GitLab applies at most 100 lines above: a longer one is shown as code, not applied
    long = InlineComment("a.py", 150, "RIGHT", "```suggestion\nx\n```", 20)
    assert "```\nx\n```" in records.inline_body(long, "c" * 40)
    assert "suggestion" not in records.inline_body(long, "c" * 40).split("<!--")[0]


def test_positions_name_the_lines_as_gitlab_wants_them() -> None:
    added = positions.position("a.py", "a.py", REFS, None, 5)
    assert "old_line" not in added and added["new_line"] == 5 and added["head_sha"] == "e" * 40
    context = positions.position("b.py", "old.py", REFS, 3, 4)
    assert (context["old_line"], context["new_line"], context["old_path"]) == (3, 4, "old.py")


def test_roles_bots_and_repository_keys() -> None:
    assert [records.permission(n) for n in (50, 40, 30, 20, 15, 10, 0)] == [
        "admin",
        "maintain",
        "write",
        "triage",  # Reporter: may /ask
        "none",  # Planner
        "none",  # Guest
        "none",
    ]
    assert records.author({"username": "project_15_bot_0f3a"}, "me").bot
    assert records.author({"username": "me"}, "me").bot
    assert not records.author({"username": "alice"}, "me").bot
    assert records.reaction({"name": "thumbsdown", "user": {"username": "a"}}, "me").content == "-1"
    key = records.repo_key("https://git.example.com/gitlab/", "group/sub/app")
    assert key == "git.example.com/gitlab/group/sub/app"
    assert records.project_path("https://git.example.com/gitlab", key) == "group/sub/app"


def test_each_project_gets_the_token_of_its_nearest_group_or_its_own() -> None:
    from pydantic import SecretStr

    group, project, default = SecretStr("g"), SecretStr("p"), SecretStr("d")
    tokens = {"acme": group, "acme/web/": project}
    assert records.token_for("acme/web", tokens, default) is project
    assert records.token_for("acme/web/ui", tokens, default) is project
    assert records.token_for("acme/shop", tokens, default) is group
    assert records.token_for("acmecorp/shop", tokens, default) is default  # not a prefix path
    assert records.token_for("other/x", tokens, None) is None
