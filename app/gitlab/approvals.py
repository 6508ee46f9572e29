"""The merge gate as an approval, beside the commit status: where one of a merge
request's approval rules names the bot's user among its approvers (a rule the team adds
to require the bot's approval: Premium's approval rules, and the option for merges no
pipeline gates), the bot approves the head it reviewed when the gate passes, and takes
its approval back when the gate fails or the review failed. A review with nothing to
decide (the gate off, a skipped change) leaves the approval as it is."""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

from app.gitlab.client import GitLabError
from app.logs import kv

log = logging.getLogger(__name__)

#: A GET of the project's API (a path under the project, query parameters): its JSON.
Get = Callable[..., Any]
#: A write to the project's API (method, path under the project, body): its JSON.
Send = Callable[[str, str, dict[str, Any]], Any]

#: What each conclusion of the gate does to the bot's approval (absent: nothing).
APPROVES = {"success": True, "failure": False, "cancelled": False}


class Approvals:
    """The bot's approval of one project's merge requests, through its API."""

    def __init__(self, get: Get, send: Send, me: Callable[[], str]) -> None:
        self._get, self._send, self._me = get, send, me

    def settle(self, number: int, head: str, conclusion: str) -> None:
        """Approve ``head`` of !``number`` or take the approval back, as ``conclusion``
        says (``APPROVES``), where a rule names the bot; else nothing."""
        approve = APPROVES.get(conclusion)
        if approve is None or not self._named(number):
            return
        mr = f"/merge_requests/{number}"
        approved = any(
            (a.get("user") or {}).get("username") == self._me()
            for a in self._get(f"{mr}/approvals").get("approved_by") or []
        )
        try:
            if approve and not approved:
                self._send("POST", f"{mr}/approve", {"sha": head})
            elif not approve and approved:
                self._send("POST", f"{mr}/unapprove", {})
        except GitLabError as exc:
            if exc.status not in (401, 403, 404, 409):
                raise  # the job is retried, and settles again
            # 409: a newer head, whose own review decides; 401/403: the bot may not
            # approve this MR (its own, "Prevent approval by author"); 404: gone already
            log.warning(kv("gitlab.approval_refused", mr=number, status=exc.status))

    def _named(self, number: int) -> bool:
        """Whether an approval rule of the merge request names the bot (none on an
        instance or tier without approval rules)."""
        try:
            state = self._get(f"/merge_requests/{number}/approval_state")
        except GitLabError as exc:
            if exc.status in (403, 404):
                return False
            raise
        return any(
            a.get("username") == self._me()
            for rule in state.get("rules") or []
            for a in rule.get("eligible_approvers") or []
        )
