"""``POST /webhooks/github``: verify, record the delivery, enqueue jobs, answer fast."""

from __future__ import annotations

import contextlib
import json
import logging
from typing import Any

from fastapi import APIRouter, Request
from fastapi.concurrency import run_in_threadpool
from fastapi.responses import JSONResponse
from procrastinate import App
from procrastinate.exceptions import AlreadyEnqueued, ConnectorException
from sqlalchemy import Engine
from sqlalchemy.exc import DBAPIError

from app.api.deps import EngineDep, SettingsDep
from app.db.queries.deliveries import finish_delivery, record_delivery
from app.github.events import (
    MAX_WEBHOOK_BYTES,
    EventContext,
    WebhookRejected,
    check_headers,
    check_payload,
    check_signature,
)
from app.github.events import (
    router as event_router,
)
from app.logs import kv
from app.task_specs import Job

log = logging.getLogger(__name__)
router = APIRouter()
DISABLED = "webhooks are disabled: set GITHUB_WEBHOOK_SECRET to the App's webhook secret"


@router.post("/webhooks/github")
async def github_webhook(
    request: Request, settings: SettingsDep, engine: EngineDep
) -> JSONResponse:
    if settings.github_webhook_secret is None:
        return JSONResponse({"detail": DISABLED}, status_code=503)
    delivery = request.headers.get("x-github-delivery", "")
    event = request.headers.get("x-github-event", "")
    try:
        body = await _read_body(request)
        check_signature(
            settings.github_webhook_secret.get_secret_value(),
            body,
            request.headers.get("x-hub-signature-256"),
        )
        check_headers(event, delivery)
        payload = _parse(body)
        check_payload(payload)
    except WebhookRejected as exc:
        log.warning(
            kv(
                "webhook.rejected",
                delivery_id=delivery[:64] or "-",
                status=exc.status,
                reason=str(exc),
            )
        )
        return JSONResponse({"detail": str(exc)}, status_code=exc.status)
    context = EventContext(event, payload.get("action"), payload)
    jobs = event_router.jobs_for(context)
    queue: App = request.app.state.queue
    try:
        status = await _accept(engine, queue, delivery, context, jobs)
    except (DBAPIError, ConnectorException) as exc:
        # Not recorded (or recorded as 'received'): GitHub logs the failure, and the
        # redelivery pass asks for it again once the database is back.
        log.error(kv("webhook.unavailable", delivery_id=delivery, error=type(exc).__name__))
        return JSONResponse({"detail": "database unavailable; redeliver later"}, status_code=503)
    log.info(
        kv(
            "webhook.accepted",
            delivery_id=delivery,
            event=event,
            event_action=context.action or "-",
            repo=context.repo or "-",
            outcome=status,
        )
    )
    return JSONResponse(
        {"status": status, "jobs": len(jobs)}, status_code=202 if status == "queued" else 200
    )


async def _read_body(request: Request) -> bytes:
    declared = request.headers.get("content-length")
    if declared and declared.isdigit() and int(declared) > MAX_WEBHOOK_BYTES:
        raise WebhookRejected(413, "payload larger than GitHub's 25 MB limit")
    chunks: list[bytes] = []
    size = 0
    async for chunk in request.stream():
        size += len(chunk)
        if size > MAX_WEBHOOK_BYTES:
            raise WebhookRejected(413, "payload larger than GitHub's 25 MB limit")
        chunks.append(chunk)
    return b"".join(chunks)


def _parse(body: bytes) -> dict[str, Any]:
    try:
        payload = json.loads(body)
    except (json.JSONDecodeError, UnicodeDecodeError):
        raise WebhookRejected(400, "payload is not valid JSON") from None
    except RecursionError:
        raise WebhookRejected(400, "payload is nested too deeply") from None
    if not isinstance(payload, dict):
        raise WebhookRejected(400, "payload is not a JSON object")
    return payload


def _record(engine: Engine, delivery: str, context: EventContext) -> bool:
    """Record the delivery; False when an earlier copy of it was already handled."""
    with engine.begin() as conn:
        return record_delivery(
            conn, delivery, context.event, context.action, context.repo, context.installation_id
        )


def _mark(engine: Engine, delivery: str, status: str) -> None:
    with engine.begin() as conn:
        finish_delivery(conn, delivery, status)


async def _accept(
    engine: Engine, queue: App, delivery: str, context: EventContext, jobs: list[Job]
) -> str:
    """Record the delivery once; enqueue its jobs unless an earlier copy already did."""
    if not await run_in_threadpool(_record, engine, delivery, context):
        return "duplicate"
    for job in jobs:
        task = queue.configure_task(job.task, queueing_lock=job.queueing_lock, lock=job.lock)
        with contextlib.suppress(AlreadyEnqueued):  # the same work is already waiting: coalesced
            await task.defer_async(**job.args)
    status = "queued" if jobs else "ignored"
    await run_in_threadpool(_mark, engine, delivery, status)
    return status
