"""The dashboard's pure parts: spend per day, the SVG chart, how values read, which job
arguments are hidden, cookie signing and CSRF tokens."""

from __future__ import annotations

import re
from datetime import UTC, date, datetime, timedelta

import pytest
from pydantic import SecretStr

from app.api.dashboard.auth import Keys
from app.api.dashboard.chart import Bar, bar_chart
from app.api.dashboard.present import HIDDEN, ago, dollars, duration, visible_args
from app.api.dashboard.spend import spend_by_day
from app.db.queries.usage import DailyUsage
from app.llm.prices import DEFAULT_PRICES, estimated_cost

TODAY = date(2026, 12, 2)


def test_cost_is_per_million_tokens_and_unknown_models_have_none() -> None:
    assert estimated_cost("gpt-4o", 1_000_000, 100_000, DEFAULT_PRICES) == pytest.approx(3.5)
    assert estimated_cost("text-embedding-3-small", 5_000_000, 0, DEFAULT_PRICES) == 0.1
    assert estimated_cost("some-local-model", 10, 10, DEFAULT_PRICES) is None


def test_spend_fills_every_day_and_keeps_unpriced_tokens_apart() -> None:
    usage = [
        DailyUsage(TODAY, "gpt-4o", 2, 400_000, 50_000),
        DailyUsage(TODAY, "mystery", 1, 7_000, 1_000),
        DailyUsage(TODAY - timedelta(days=3), "gpt-4o-mini", 5, 1_000_000, 0),
        DailyUsage(TODAY - timedelta(days=20), "gpt-4o", 9, 9_000_000, 0),  # off the window
    ]
    days = spend_by_day(usage, DEFAULT_PRICES, TODAY, days=14)
    assert [d.day for d in days] == [TODAY - timedelta(days=n) for n in range(13, -1, -1)]
    today, three_ago = days[-1], days[-4]
    assert (today.calls, today.tokens, today.unpriced_tokens) == (3, 458_000, 8_000)
    assert today.cost == pytest.approx(1.5)
    assert three_ago.cost == pytest.approx(0.15)
    assert sum(d.calls for d in days) == 8


def test_chart_scales_bars_to_the_largest_and_escapes_text() -> None:
    svg = str(bar_chart([Bar("01", 1.0, "a"), Bar("02", 4.0, "<b>&"), Bar("03", 0, "z")], "c<"))
    heights = [float(h) for h in re.findall(r'class="bar"[^>]* height="([\d.]+)"', svg)]
    assert heights[1] == max(heights) and heights[0] == pytest.approx(heights[1] / 4)
    assert heights[2] == 0
    assert "<b>&" not in svg and "&lt;b&gt;&amp;" in svg and "c&lt;" in svg
    flat = str(bar_chart([Bar("01", 0, "")], "nothing"))
    assert 'height="0.0"' in flat  # no division by zero


def test_values_read_as_people_write_them() -> None:
    assert [duration(x) for x in (None, 0.25, 42, 600, 10_800)] == [
        "—",
        "250 ms",
        "42.0 s",
        "10 min",
        "3.0 h",
    ]
    now = datetime(2026, 12, 2, 12, 0, tzinfo=UTC)
    assert ago(None) == "never"
    assert ago(now - timedelta(seconds=5), now) == "just now"
    assert ago(now - timedelta(hours=3), now) == "3 h ago"
    assert ago(now - timedelta(days=2), now) == "2 d ago"
    assert [dollars(x) for x in (None, 0, 0.004, 1234.5)] == [
        "unknown",
        "$0.00",
        "<$0.01",
        "$1,234.50",
    ]


def test_arguments_that_look_secret_are_hidden() -> None:
    args = {"repo": "a/b", "installation_id": 7, "api_token": "x", "webhook_secret": "y", "Key": 1}
    assert visible_args(args) == {
        "repo": "a/b",
        "installation_id": 7,
        "api_token": HIDDEN,
        "webhook_secret": HIDDEN,
        "Key": HIDDEN,
    }


def test_cookies_are_bound_to_purpose_age_and_admin_token() -> None:
    now = [1_800_000_000.0]
    keys = Keys(SecretStr("token-one"), clock=lambda: now[0])
    signed = keys.sign("session-value", "session")
    assert keys.unsign(signed, "session", 60) == "session-value"
    assert keys.unsign(signed, "login", 60) is None  # another purpose
    assert Keys(SecretStr("token-two")).unsign(signed, "session", 60) is None
    assert keys.unsign(signed[:-2] + "xx", "session", 60) is None
    assert keys.unsign(None, "session", 60) is None and keys.unsign("", "session", 60) is None
    old = keys.sign("v", "session")
    now[0] += 60
    assert keys.unsign(old, "session", 60) == "v"  # exactly max_age old: still valid
    now[0] += 1
    assert keys.unsign(old, "session", 60) is None  # expired


def test_csrf_tokens_belong_to_one_session() -> None:
    keys = Keys(SecretStr("token-one"))
    token = keys.csrf("session-a")
    assert keys.csrf_matches("session-a", token)
    assert not keys.csrf_matches("session-b", token)
    assert not keys.csrf_matches("session-a", None) and not keys.csrf_matches("session-a", "")
    assert "token-one" not in token and "session-a" not in token
    assert keys.token_matches("token-one") and not keys.token_matches("token-on")
