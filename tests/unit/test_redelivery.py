"""Which missed deliveries are asked for again: a pure decision over GitHub's delivery log."""

from __future__ import annotations

import datetime

from app.github.redelivery import MAX_ATTEMPTS, Delivery, _next_cursor, parse_delivery, to_redeliver

T0 = datetime.datetime(2026, 12, 1, 12, 0, tzinfo=datetime.UTC)


def attempt(id_: int, guid: str, status: int, minutes: int = 0) -> Delivery:
    return Delivery(id_, guid, T0 + datetime.timedelta(minutes=minutes), status)


def test_unanswered_and_failed_deliveries_are_redelivered_newest_attempt_first() -> None:
    log = [
        attempt(1, "down", 0),
        attempt(2, "five-hundred", 502, 1),
        attempt(3, "five-hundred", 503, 2),
        attempt(4, "ok", 202, 3),
    ]
    chosen = to_redeliver(log, handled={"ok"})
    assert [(d.guid, d.id) for d in chosen] == [("down", 1), ("five-hundred", 3)]


def test_handled_refused_and_exhausted_deliveries_are_left_alone() -> None:
    log = [
        attempt(1, "handled-after-a-502", 502),
        attempt(2, "bad-signature", 401),
        attempt(3, "malformed", 400),
        *[attempt(10 + i, "hopeless", 0, i) for i in range(MAX_ATTEMPTS)],
    ]
    assert to_redeliver(log, handled={"handled-after-a-502"}) == []


def test_accepted_but_never_recorded_is_redelivered() -> None:
    # GitHub saw a 202, yet the database has no record (restored from an older backup).
    assert [d.guid for d in to_redeliver([attempt(1, "lost", 202)], handled=set())] == ["lost"]


def test_delivery_log_entries_parse_and_bad_ones_are_skipped() -> None:
    good = {"id": 7, "guid": "g", "delivered_at": "2026-12-01T12:00:00Z", "status_code": 502}
    assert parse_delivery(good) == Delivery(7, "g", T0, 502)
    assert parse_delivery({"id": "x", "guid": "g", "delivered_at": "soon"}) is None
    assert parse_delivery({"guid": "g"}) is None


def test_next_cursor_comes_from_the_link_header() -> None:
    link = (
        '<https://api.github.com/app/hook/deliveries?per_page=100&cursor=v1_12345>; rel="next",'
        ' <https://api.github.com/app/hook/deliveries?per_page=100>; rel="first"'
    )
    assert _next_cursor(link) == "v1_12345"
    assert _next_cursor("") is None
