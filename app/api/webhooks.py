"""``POST /webhooks/github``: verify, record the delivery (or spool it, ``intake.py``),
enqueue jobs, answer fast.

The reading, recording and enqueueing are the same for every host (``/webhooks/gitlab``
uses them); only the checks and the event router are the host's."""

from __future__ import annotations

import json
import logging
from typing import Any, Protocol

from fastapi import APIRouter, Request
from fastapi.responses import JSONResponse

from app.api.deps import SettingsDep
from app.api.intake import Intake
from app.forge.intake import MAX_WEBHOOK_BYTES, WebhookRejected
from app.forge.spool import ReceivedDelivery, SpoolError
from app.github.events import (
    EventContext,
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
async def github_webhook(request: Request, settings: SettingsDep) -> JSONResponse:
    if settings.github_webhook_secret is None:
        return JSONResponse({"detail": DISABLED}, status_code=503)
    delivery = request.headers.get("x-github-delivery", "")
    event = request.headers.get("x-github-event", "")
    try:
        body = await read_body(request)
        check_signature(
            settings.github_webhook_secret.get_secret_value(),
            body,
            request.headers.get("x-hub-signature-256"),
        )
        check_headers(event, delivery)
        payload = parse_json(body)
        check_payload(payload)
    except WebhookRejected as exc:
        return rejected(delivery, exc)
    context = EventContext(event, payload.get("action"), payload)
    return await accept(request, delivery, context, event_router.jobs_for(context))


class Delivered(Protocol):
    """What is recorded of a delivery, whichever host sent it."""

    @property
    def event(self) -> str: ...
    @property
    def action(self) -> str | None: ...
    @property
    def repo(self) -> str | None: ...
    @property
    def installation_id(self) -> int | None: ...


def rejected(delivery: str, exc: WebhookRejected) -> JSONResponse:
    log.warning(
        kv(
            "webhook.rejected",
            delivery_id=delivery[:64] or "-",
            status=exc.status,
            reason=str(exc),
        )
    )
    return JSONResponse({"detail": str(exc)}, status_code=exc.status)


async def accept(
    request: Request, delivery: str, context: Delivered, jobs: list[Job]
) -> JSONResponse:
    """Record the delivery once and enqueue its jobs (``intake.py``); 202 when queued or
    spooled, 200 when there was nothing to do or it came before, 503 only when the spool
    cannot keep it either."""
    item = ReceivedDelivery(
        delivery, context.event, context.action, context.repo, context.installation_id,
        tuple(jobs),
    )  # fmt: skip
    intake: Intake = request.app.state.intake
    try:
        status = await intake.take(item)
    except SpoolError as exc:
        log.error(kv("webhook.unavailable", delivery_id=delivery, spool=exc))
        return JSONResponse({"detail": f"{exc}; redeliver later"}, status_code=503)
    log.log(
        logging.WARNING if status == "spooled" else logging.INFO,
        kv(
            "webhook.accepted",
            delivery_id=delivery,
            event=context.event,
            event_action=context.action or "-",
            repo=context.repo or "-",
            outcome=status,
        ),
    )
    return JSONResponse(
        {"status": status, "jobs": len(jobs)},
        status_code=202 if status in ("queued", "spooled") else 200,
    )


async def read_body(request: Request) -> bytes:
    declared = request.headers.get("content-length")
    if declared and declared.isdigit() and int(declared) > MAX_WEBHOOK_BYTES:
        raise WebhookRejected(413, "payload larger than the 25 MB limit")
    chunks: list[bytes] = []
    size = 0
    async for chunk in request.stream():
        size += len(chunk)
        if size > MAX_WEBHOOK_BYTES:
            raise WebhookRejected(413, "payload larger than the 25 MB limit")
        chunks.append(chunk)
    return b"".join(chunks)


def parse_json(body: bytes) -> dict[str, Any]:
    try:
        payload = json.loads(body)
    except (json.JSONDecodeError, UnicodeDecodeError):
        raise WebhookRejected(400, "payload is not valid JSON") from None
    except RecursionError:
        raise WebhookRejected(400, "payload is nested too deeply") from None
    if not isinstance(payload, dict):
        raise WebhookRejected(400, "payload is not a JSON object")
    return payload
