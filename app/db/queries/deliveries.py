"""The ``webhook_deliveries`` table: each delivery GitHub sent, and what became of it
(``received``, then ``queued`` or ``ignored``; ``redelivery_requested`` when reviewbot
asked GitHub to send it again)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from psycopg import AsyncConnection
from psycopg.rows import tuple_row
from sqlalchemy import Connection, text

REQUESTED = "redelivery_requested"
#: Outcomes after which a delivery needs nothing more.
HANDLED = ("queued", "ignored")


RECORD = (
    "INSERT INTO webhook_deliveries (delivery_id, event, action, repository_full_name,"
    " installation_id) VALUES (%(d)s, %(e)s, %(a)s, %(r)s, %(i)s) ON CONFLICT (delivery_id)"
    " DO UPDATE SET event = excluded.event, action = excluded.action,"
    " repository_full_name = excluded.repository_full_name,"
    " installation_id = excluded.installation_id"
    " RETURNING status, (xmax = 0) AS fresh"
)
FINISH = (
    "UPDATE webhook_deliveries SET status = %(s)s, processed_at = now() WHERE delivery_id = %(d)s"
)


async def record_delivery(
    conn: AsyncConnection[Any],
    delivery: str,
    event: str,
    action: str | None,
    repo: str | None,
    installation_id: int | None,
) -> bool:
    """Record the delivery; False when an earlier copy of it was already handled. On the
    intake's own connection (psycopg, async), in the transaction that queues its jobs."""
    params = {"d": delivery, "e": event, "a": action, "r": repo, "i": installation_id}
    async with conn.cursor(row_factory=tuple_row) as cursor:
        await cursor.execute(RECORD, params)
        row = await cursor.fetchone()
    assert row is not None  # INSERT ... RETURNING always gives the row
    status, fresh = row
    # 'received' (recorded by an older version that queued apart) or
    # 'redelivery_requested' (asked for again after a failure): handle it.
    return bool(fresh) or status not in HANDLED


async def finish_delivery(conn: AsyncConnection[Any], delivery: str, status: str) -> None:
    await conn.execute(FINISH, {"s": status, "d": delivery})


def handled_deliveries(
    conn: Connection, guids: Sequence[str], in_flight_minutes: float
) -> set[str]:
    """Those of ``guids`` that were handled, or whose redelivery was asked for in the
    last ``in_flight_minutes``."""
    return set(
        conn.execute(
            text(
                "SELECT delivery_id FROM webhook_deliveries WHERE delivery_id = ANY(:g)"
                " AND (status = ANY(:s) OR (status = :r"
                " AND processed_at > now() - make_interval(mins => :m)))"
            ),
            {"g": list(guids), "s": list(HANDLED), "r": REQUESTED, "m": in_flight_minutes},
        ).scalars()
    )


def mark_redelivery_requested(
    conn: Connection, delivery: str, event: str, action: str | None, seconds_ago: float = 0.0
) -> None:
    """Remember that a redelivery was asked for (unless the delivery was handled since),
    as of ``seconds_ago``: the pass's start, so that "asked within the last N minutes" is
    measured between passes, not from wherever in a long pass the ask fell."""
    conn.execute(
        text(
            "INSERT INTO webhook_deliveries (delivery_id, event, action, status, processed_at)"
            " VALUES (:d, :e, :a, :r, now() - make_interval(secs => :ago))"
            " ON CONFLICT (delivery_id) DO UPDATE"
            " SET status = :r, processed_at = now() - make_interval(secs => :ago)"
            " WHERE webhook_deliveries.status <> ALL(:s)"
        ),
        {
            "d": delivery,
            "e": event,
            "a": action,
            "r": REQUESTED,
            "s": list(HANDLED),
            "ago": seconds_ago,
        },
    )


def redelivery_watermark(conn: Connection, hook: str) -> int | None:
    """The newest delivery attempt id the redelivery pass has fully read back to."""
    found = conn.execute(
        text("SELECT attempt_id FROM redelivery_watermarks WHERE hook = :h"), {"h": hook}
    ).scalar()
    return int(found) if found is not None else None


def set_redelivery_watermark(conn: Connection, hook: str, attempt_id: int) -> None:
    conn.execute(
        text(
            "INSERT INTO redelivery_watermarks (hook, attempt_id) VALUES (:h, :i)"
            " ON CONFLICT (hook) DO UPDATE SET attempt_id = :i, updated_at = now()"
        ),
        {"h": hook, "i": attempt_id},
    )


def delivery_counts(conn: Connection) -> list[tuple[str, str, int]]:
    """(event, status, deliveries) for every pair seen."""
    rows = conn.execute(
        text("SELECT event, status, count(*) FROM webhook_deliveries GROUP BY 1, 2")
    )
    return [(str(e), str(s), int(n)) for e, s, n in rows]
