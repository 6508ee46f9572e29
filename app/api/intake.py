"""Recording a verified delivery: in the database when it answers in time, else in the
spool, which a drainer empties into the database once it is back.

The rule (README, "Webhook intake"): while reviewbot can check a delivery, the host gets
a 2xx. The database is asked within a bounded time (a pooled connection within
``POOL_WAIT_SECONDS``, each statement within ``STATEMENT_TIMEOUT``, a lock within
``LOCK_TIMEOUT``: a migration holding the deliveries table, a pool busy under load); when
it cannot answer, the delivery is spooled and acknowledged. Only a full spool or a
failing disk is a 503.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time

import psycopg
from procrastinate import App
from procrastinate.exceptions import AlreadyEnqueued, ConnectorException
from psycopg_pool import PoolTimeout

from app.db.queries.deliveries import finish_delivery, record_delivery
from app.forge.spool import ReceivedDelivery, Spool, SpoolCorrupt
from app.logs import kv

log = logging.getLogger(__name__)

#: How long a delivery waits for a pooled database connection before it is spooled.
POOL_WAIT_SECONDS = 2.0
#: Bounds on the intake's own statements, so that an acknowledgement stays well inside a
#: host's timeout (GitHub's is 10 s) however the database is held up.
LOCK_TIMEOUT = "2s"
STATEMENT_TIMEOUT = "4s"
#: The drainer's pause between rounds when nothing woke it, and after a failed round.
DRAIN_IDLE_SECONDS = 5.0
DRAIN_RETRY_SECONDS = 2.0
#: After the database failed to take a delivery, how long deliveries are spooled at once.
DIRECT_SPOOL_SECONDS = 5.0


def unavailable(exc: BaseException) -> bool:
    """True for the database being away or held up (retry later), False for a bug."""
    if isinstance(exc, ConnectorException):
        cause = exc.__cause__
        return cause is None or unavailable(cause)
    return isinstance(exc, PoolTimeout | psycopg.OperationalError | psycopg.InterfaceError)


async def record(queue: App, item: ReceivedDelivery) -> str:
    """Record the delivery, queue its jobs and mark it done in one transaction, on a
    connection of the queue's pool: one commit per delivery, and never a delivery
    recorded without its jobs or jobs without their delivery. A copy of a delivery
    already handled queues nothing ("duplicate"). Raises what the database raised."""
    pool = queue.connector.pool  # type: ignore[attr-defined]
    async with pool.connection(timeout=POOL_WAIT_SECONDS) as conn, conn.transaction():
        await conn.execute(
            "SELECT set_config('lock_timeout', %(l)s, true),"
            " set_config('statement_timeout', %(s)s, true)",
            {"l": LOCK_TIMEOUT, "s": STATEMENT_TIMEOUT},
        )
        fresh = await record_delivery(
            conn, item.delivery, item.event, item.action, item.repo, item.installation_id
        )
        if not fresh:
            return "duplicate"
        for job in item.jobs:
            task = queue.configure_task(
                job.task, queueing_lock=job.queueing_lock, lock=job.lock, connection=conn
            )
            # the same work already waiting is coalesced; its savepoint keeps the rest
            with contextlib.suppress(AlreadyEnqueued):
                async with conn.transaction():
                    await task.defer_async(**job.args)
        status = "queued" if item.jobs else "ignored"
        await finish_delivery(conn, item.delivery, status)
    return status


class Intake:
    """Takes verified deliveries: into the database while it answers in time, else into
    the spool, and drains the spool back into the database.

    After the database failed to take a delivery, deliveries go straight to the spool for
    ``DIRECT_SPOOL_SECONDS`` (or until the drainer records one: the database is back),
    instead of each waiting out the same timeout: during an outage or a long lock, an
    acknowledgement costs a file write, not seconds. Any number of processes may drain
    one spool folder: a delivery's id is recorded once, whoever gets there first."""

    def __init__(self, queue: App, spool: Spool) -> None:
        self.queue = queue
        self.spool = spool
        self._wake = asyncio.Event()
        self._spool_until = 0.0

    async def take(self, item: ReceivedDelivery) -> str:
        """Record or spool ``item``; its outcome ("queued", "ignored", "duplicate",
        "spooled"). ``SpoolError`` when neither the database nor the spool took it."""
        if time.monotonic() >= self._spool_until:
            try:
                return await record(self.queue, item)
            except (psycopg.Error, PoolTimeout, ConnectorException) as exc:
                # a bug (not an outage) is spooled too, and set aside by the drainer
                # with its traceback: kept on disk rather than refused to the host
                self._spool_until = time.monotonic() + DIRECT_SPOOL_SECONDS
                log.warning(
                    kv("webhook.database_unavailable", delivery_id=item.delivery,
                       error=type(exc).__name__)
                )  # fmt: skip
        await asyncio.to_thread(self.spool.put, item)
        self._wake.set()
        return "spooled"

    async def drain(self) -> None:
        """Drain until cancelled: when woken (a delivery was spooled), and every
        ``DRAIN_IDLE_SECONDS``."""
        while True:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._wake.wait(), DRAIN_IDLE_SECONDS)
            self._wake.clear()
            try:
                drained = await self.drain_once()
            except Exception as exc:  # the drainer must outlive any one bad round
                log.error(kv("spool.drain_failed", error=type(exc).__name__), exc_info=exc)
                drained = False
            if not drained:
                await asyncio.sleep(DRAIN_RETRY_SECONDS)

    async def drain_once(self) -> bool:
        """Record every spooled delivery; False when the database is still away (the
        rest wait for the next round)."""
        paths = await asyncio.to_thread(self.spool.pending)
        for path in paths:
            try:
                item = await asyncio.to_thread(self.spool.read, path)
            except FileNotFoundError:
                continue  # another process recorded it
            except SpoolCorrupt as exc:
                kept = await asyncio.to_thread(self.spool.set_aside, path)
                log.error(kv("spool.corrupt", file=kept, error=exc))
                continue
            try:
                status = await record(self.queue, item)
            except Exception as exc:
                if unavailable(exc):
                    log.warning(kv("spool.waiting", pending=len(paths), error=type(exc).__name__))
                    return False
                kept = await asyncio.to_thread(self.spool.set_aside, path)
                log.error(
                    kv("spool.unrecordable", delivery_id=item.delivery, file=kept), exc_info=exc
                )
                continue
            self._spool_until = 0.0  # the database took one: live again
            await asyncio.to_thread(self.spool.remove, path)
            log.info(kv("spool.recorded", delivery_id=item.delivery, outcome=status))
        return True
