"""What the model wrote cannot notify people or inject HTML into a review."""

from __future__ import annotations

from app.github.urls import permalinks, web_url
from app.review.markdown import inert


def test_html_and_mentions_are_made_inert_outside_code() -> None:
    said = 'Ask @octocat. <img src=x onerror="alert(1)"> and </details> done.'
    assert inert(said) == (
        'Ask @\u200boctocat. &lt;img src=x onerror="alert(1)"> and &lt;/details> done.'
    )


def test_code_emails_and_comparisons_are_left_alone() -> None:
    said = "Use `list<T>` and `@property`; mail a@b.com if x < 3.\n```\n<b>@team</b>\n```"
    assert inert(said) == said


def test_permalinks_point_at_lines_of_a_commit_on_the_web() -> None:
    assert web_url("https://api.github.com") == "https://github.com"
    assert web_url("https://ghe.example.com/api/v3/") == "https://ghe.example.com"
    link = permalinks("https://api.github.com", "acme/shop", "abc123")
    assert link("shop/my file.py", 3, 9) == (
        "https://github.com/acme/shop/blob/abc123/shop/my%20file.py#L3-L9"
    )
