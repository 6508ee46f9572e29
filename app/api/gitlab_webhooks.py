"""``POST /webhooks/gitlab``: GitLab's deliveries, checked by their secret token (which
also says which instance sent them, ``app/gitlab/instances.py``), then recorded and
enqueued exactly as GitHub's are."""

from __future__ import annotations

from fastapi import APIRouter, Request
from fastapi.responses import JSONResponse

from app.api.webhooks import accept, parse_json, read_body, rejected
from app.config import Settings
from app.forge.intake import WebhookRejected
from app.gitlab.events import (
    check_event,
    check_key,
    check_kind,
    check_payload,
    delivery_key,
    event_of,
    jobs_for,
)
from app.gitlab.instances import by_payload, by_secret

router = APIRouter()
DISABLED = (
    "GitLab webhooks are disabled: set GITLAB_WEBHOOK_SECRET (or an instance's"
    " webhook_secret in GITLAB_INSTANCES) to the webhook's secret token"
)


@router.post("/webhooks/gitlab")
async def gitlab_webhook(request: Request) -> JSONResponse:
    # each instance with a webhook secret, as its own Settings (``create_app``)
    views: list[Settings] = request.app.state.gitlab_instances
    if not views:
        # absent, not unavailable: GitLab disables a hook that keeps failing with 5xx
        return JSONResponse({"detail": DISABLED}, status_code=404)
    headers = {k.lower(): v for k, v in request.headers.items()}
    delivery = headers.get("idempotency-key") or headers.get("x-gitlab-event-uuid", "")
    try:
        body = await read_body(request)
        matching = by_secret(views, headers.get("x-gitlab-token"))
        delivery = delivery_key(headers)
        check_event(headers.get("x-gitlab-event", ""))
        payload = parse_json(body)
        check_payload(payload)
        check_kind(headers.get("x-gitlab-event", ""), payload)
        instance = by_payload(matching, payload)
        event = event_of(payload, instance.gitlab_url)
        check_key(event)
    except WebhookRejected as exc:
        return rejected(delivery, exc)
    return await accept(request, delivery, event, jobs_for(event))
