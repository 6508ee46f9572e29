"""Deliveries GitHub could not make while reviewbot was down, asked for again.

GitHub does not retry a failed webhook delivery by itself. At worker start-up and every
few minutes, the App's recent deliveries (``GET /app/hook/deliveries``) are compared with
``webhook_deliveries``: any that reviewbot never handled and did not refuse on purpose is
redelivered (``POST /app/hook/deliveries/{id}/attempts``). Delivery ids are recorded and
deduplicated on intake, so a redelivery is never processed twice.
"""

from __future__ import annotations

import datetime
import logging
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from sqlalchemy import Engine

from app.db.queries.deliveries import (
    handled_deliveries,
    mark_redelivery_requested,
)
from app.github.client import GitHubApp, GitHubError
from app.logs import kv

log = logging.getLogger(__name__)
#: Attempts (the first delivery included) after which a delivery is left alone.
MAX_ATTEMPTS = 4
#: A redelivery asked for this recently is in flight: the next pass does not ask again.
IN_FLIGHT_MINUTES = 10
MAX_PAGES = 50  # 5,000 deliveries: far more than a window of a few hours holds


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


def recent_deliveries(app: GitHubApp, since: datetime.datetime) -> list[Delivery]:
    """The App's delivery attempts since ``since``, newest first, following the cursor."""
    found: list[Delivery] = []
    cursor: str | None = None
    for _ in range(MAX_PAGES):
        params: dict[str, Any] = {"per_page": 100} | ({"cursor": cursor} if cursor else {})
        response = app.app_call("GET", "/app/hook/deliveries", params=params)
        page = [d for d in map(parse_delivery, response.json()) if d is not None]
        found += [d for d in page if d.delivered_at >= since]
        cursor = _next_cursor(response.headers.get("link", ""))
        if not page or cursor is None or min(d.delivered_at for d in page) < since:
            break
    return found


def _next_cursor(link: str) -> str | None:
    for part in link.split(","):
        if 'rel="next"' in part and "cursor=" in part:
            return part.split("cursor=", 1)[1].split("&", 1)[0].split(">", 1)[0]
    return None


def handled_guids(engine: Engine, guids: list[str]) -> set[str]:
    """Those of ``guids`` that were handled, or whose redelivery is in flight."""
    with engine.connect() as conn:
        return handled_deliveries(conn, guids, IN_FLIGHT_MINUTES)


def mark_requested(engine: Engine, delivery: Delivery) -> None:
    """Remember that a redelivery was asked for, so the next pass leaves it in flight.
    The intake treats such a row like one it never finished, and handles the delivery."""
    with engine.begin() as conn:
        mark_redelivery_requested(conn, delivery.guid, delivery.event or "unknown", delivery.action)


def recover_missed_deliveries(app: GitHubApp, engine: Engine, window_hours: float) -> int:
    """Ask GitHub to redeliver what reviewbot missed in the last ``window_hours``;
    returns how many were asked for. Raises ``GitHubError`` when GitHub cannot list them."""
    since = datetime.datetime.now(datetime.UTC) - datetime.timedelta(hours=window_hours)
    deliveries = recent_deliveries(app, since)
    handled = handled_guids(engine, sorted({d.guid for d in deliveries}))
    asked = 0
    for delivery in to_redeliver(deliveries, handled):
        try:
            app.app_call("POST", f"/app/hook/deliveries/{delivery.id}/attempts")
            mark_requested(engine, delivery)
            asked += 1
        except GitHubError as exc:
            log.warning(kv("webhook.redeliver_failed", delivery_id=delivery.guid, error=exc))
            continue
        log.info(kv("webhook.redelivery_requested", delivery_id=delivery.guid))
    return asked
