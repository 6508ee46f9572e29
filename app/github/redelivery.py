"""Deliveries GitHub could not make while reviewbot was down, asked for again.

GitHub does not retry a failed webhook delivery by itself. At worker start-up and every
few minutes, the App's recent deliveries (``GET /app/hook/deliveries``) are compared with
``webhook_deliveries``: any that reviewbot never handled and did not refuse on purpose is
redelivered (``POST /app/hook/deliveries/{id}/attempts``). Delivery ids are recorded and
deduplicated on intake, so a redelivery is never processed twice.

Each pass reads the log (newest first) back to its watermark, the newest attempt the
last complete pass examined, however many pages that is (a burst of tens of thousands of
deliveries between passes included), and no further back than the window. A pass that
cannot read that far (``MAX_PAGES``, a safety bound) says so and leaves the watermark
where it was, so the next pass reads the same stretch again. An attempt whose
redelivery could not be asked for keeps the watermark below it.
"""

from __future__ import annotations

import datetime
import logging
import time
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from sqlalchemy import Engine

from app.db.queries.deliveries import (
    handled_deliveries,
    mark_redelivery_requested,
    redelivery_watermark,
    set_redelivery_watermark,
)
from app.github.client import GitHubApp, GitHubError
from app.logs import kv

log = logging.getLogger(__name__)
#: Attempts (the first delivery included) after which a delivery is left alone.
MAX_ATTEMPTS = 4
#: A redelivery asked for this recently is in flight: the next pass does not ask again.
IN_FLIGHT_MINUTES = 10
#: A bound on one pass, not a window: 1,000,000 attempts. Past it the pass says so.
MAX_PAGES = 10_000
#: The watermark's key: one GitHub App per deployment.
HOOK = "github-app"


@dataclass(frozen=True)
class Delivery:
    """One delivery attempt as GitHub lists it; ``guid`` is the ``X-GitHub-Delivery``."""

    id: int
    guid: str
    delivered_at: datetime.datetime
    status_code: int  # 0 when reviewbot could not be reached at all
    event: str = ""
    action: str | None = None


def parse_delivery(item: dict[str, Any]) -> Delivery | None:
    try:
        when = datetime.datetime.fromisoformat(str(item["delivered_at"]).replace("Z", "+00:00"))
        return Delivery(
            int(item["id"]),
            str(item["guid"]),
            when,
            int(item.get("status_code") or 0),
            str(item.get("event") or "")[:64],
            str(item["action"])[:64] if item.get("action") else None,
        )
    except (KeyError, TypeError, ValueError):
        return None


def to_redeliver(deliveries: Iterable[Delivery], handled: set[str]) -> list[Delivery]:
    """The newest attempt of each delivery to ask for again. Pure.

    Left alone: deliveries in ``handled`` (recorded as queued or ignored, or asked for
    again within ``IN_FLIGHT_MINUTES``), those reviewbot refused on purpose (its newest
    answer a 4xx: a bad signature, a malformed payload), and those already tried
    ``MAX_ATTEMPTS`` times.
    """
    attempts: dict[str, list[Delivery]] = defaultdict(list)
    for delivery in deliveries:
        attempts[delivery.guid].append(delivery)
    chosen = []
    for guid, tries in attempts.items():
        newest = max(tries, key=lambda d: (d.delivered_at, d.id))
        if guid in handled or 400 <= newest.status_code < 500 or len(tries) >= MAX_ATTEMPTS:
            continue
        chosen.append(newest)
    return sorted(chosen, key=lambda d: d.delivered_at)


@dataclass
class LogRead:
    """What one pass read of the delivery log: the attempts, and whether it reached the
    watermark (or the window's start), so that nothing between was left unread."""

    deliveries: list[Delivery]
    complete: bool
    pages: int


def recent_deliveries(
    app: GitHubApp,
    since: datetime.datetime,
    back_to: int | None = None,
    max_pages: int = MAX_PAGES,
) -> LogRead:
    """The App's delivery attempts newer than attempt ``back_to`` and since ``since``,
    newest first, following the cursor as far as that takes."""
    found: list[Delivery] = []
    cursor: str | None = None
    for pages in range(1, max_pages + 1):
        params: dict[str, Any] = {"per_page": 100} | ({"cursor": cursor} if cursor else {})
        response = app.app_call("GET", "/app/hook/deliveries", params=params)
        page = [d for d in map(parse_delivery, response.json()) if d is not None]
        found += [
            d for d in page if d.delivered_at >= since and (back_to is None or d.id > back_to)
        ]
        cursor = _next_cursor(response.headers.get("link", ""))
        reached = bool(page) and (
            min(d.delivered_at for d in page) < since
            or (back_to is not None and min(d.id for d in page) <= back_to)
        )
        if not page or cursor is None or reached:
            return LogRead(found, True, pages)
    return LogRead(found, False, max_pages)


def _next_cursor(link: str) -> str | None:
    for part in link.split(","):
        if 'rel="next"' in part and "cursor=" in part:
            return part.split("cursor=", 1)[1].split("&", 1)[0].split(">", 1)[0]
    return None


def handled_guids(
    engine: Engine, guids: list[str], in_flight: float = IN_FLIGHT_MINUTES
) -> set[str]:
    """Those of ``guids`` that were handled, or whose redelivery was asked for within
    ``in_flight`` minutes (0: handled only)."""
    with engine.connect() as conn:
        return handled_deliveries(conn, guids, in_flight)


def mark_requested(engine: Engine, delivery: Delivery, seconds_ago: float = 0.0) -> None:
    """Remember that a redelivery was asked for, so the next pass leaves it in flight.
    The intake treats such a row like one it never finished, and handles the delivery."""
    with engine.begin() as conn:
        mark_redelivery_requested(
            conn, delivery.guid, delivery.event or "unknown", delivery.action, seconds_ago
        )


def recover_missed_deliveries(
    app: GitHubApp, engine: Engine, window_hours: float, max_pages: int = MAX_PAGES
) -> int:
    """Ask GitHub to redeliver what reviewbot missed since the watermark (within the last
    ``window_hours``); returns how many were asked for. Raises ``GitHubError`` when
    GitHub cannot list them."""
    started = time.monotonic()
    since = datetime.datetime.now(datetime.UTC) - datetime.timedelta(hours=window_hours)
    with engine.connect() as conn:
        watermark = redelivery_watermark(conn, HOOK)
    read = recent_deliveries(app, since, back_to=watermark, max_pages=max_pages)
    guids = sorted({d.guid for d in read.deliveries})
    handled = handled_guids(engine, guids)
    asked = 0
    for delivery in to_redeliver(read.deliveries, handled):
        try:
            app.app_call("POST", f"/app/hook/deliveries/{delivery.id}/attempts")
            mark_requested(engine, delivery, time.monotonic() - started)
            asked += 1
        except GitHubError as exc:
            log.warning(kv("webhook.redeliver_failed", delivery_id=delivery.guid, error=exc))
            continue
        log.info(kv("webhook.redelivery_requested", delivery_id=delivery.guid))
    if not read.complete:
        log.warning(
            kv(
                "webhook.redelivery_incomplete",
                pages=read.pages,
                watermark=watermark,
                reason="the delivery log is longer than one pass reads; the next pass reads"
                " the same stretch again",
            )
        )
        return asked
    # Below the oldest delivery still open (asked for and in flight, or not asked for):
    # the next pass sees it again, and asks again once it is no longer in flight.
    still_open = to_redeliver(read.deliveries, handled_guids(engine, guids, in_flight=0))
    newest = max((d.id for d in read.deliveries), default=watermark)
    mark = min(d.id for d in still_open) - 1 if still_open else newest
    if mark is not None and mark != watermark:
        with engine.begin() as conn:
            set_redelivery_watermark(conn, HOOK, mark)
    return asked
