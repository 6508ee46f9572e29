"""The merge gate on GitLab: a commit status named ``reviewbot``, set where it gates the
merge (the MR's head pipeline, or the head on its branch), moved through GitLab's state
machine without asking it for a transition it refuses."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

#: A GET of the project's API (a path under the project, query parameters): its JSON.
Get = Callable[..., Any]
#: A write to the project's API (method, path under the project, body): its JSON.
Send = Callable[[str, str, dict[str, Any]], Any]

#: The check's conclusion as a commit status state (neutral: a review that has nothing
#: to block on; cancelled: one that failed, never green).
STATUS_STATES = {
    "success": "success",
    "neutral": "success",
    "failure": "failed",
    "cancelled": "canceled",
}
STATUS_NAME = "reviewbot"
MAX_DESCRIPTION = 255  # GitLab's limit on a commit status's description


@dataclass(frozen=True)
class StatusTarget:
    """Where the gate's commit status is set: the commit, and its pipeline's fields."""

    sha: str
    fields: dict[str, Any]


class CommitStatuses:
    """The gate's statuses of one project, through its API's ``get`` and ``send``."""

    def __init__(self, get: Get, send: Send) -> None:
        self._get, self._send = get, send
        self._set: dict[int, StatusTarget] = {}  # status id -> where it was set

    def start(self, number: int, head: str) -> int:
        """``running`` in the merge request's pipeline, unless it already is (an attempt
        that did not live to finish it): GitLab refuses a transition from a state to
        itself."""
        target = self._status_target(number, head)
        current = self._status(target.sha)
        if current is not None and current.get("status") == "running":
            status_id = int(current["id"])
        else:
            data = {"state": "running", "name": STATUS_NAME, "description": "Reviewing"}
            sent = self._send("POST", f"/statuses/{target.sha}", {**data, **target.fields})
            status_id = int(sent["id"])
        self._set[status_id] = target
        return status_id

    def finish(self, check_id: int, conclusion: str, title: str) -> None:
        target = self._set.pop(check_id)
        state = STATUS_STATES.get(conclusion, "failed")
        current = self._status(target.sha)
        if current is not None and current.get("status") == state:
            return  # already where it should be: set by an earlier attempt
        data = {"state": state, "name": STATUS_NAME, "description": title[:MAX_DESCRIPTION]}
        self._send("POST", f"/statuses/{target.sha}", {**data, **target.fields})

    def _status_target(self, number: int, head: str) -> StatusTarget:
        """Where the gate's status goes so that it gates the merge: the MR's head pipeline
        when it runs on ``head`` (a merge-request pipeline) or on the merge of ``head``
        (merged results, merge trains), else ``head`` on its branch (branch pipelines;
        a fork's branch is not in this project, so then no ref)."""
        mr = self._get(f"/merge_requests/{number}")
        fields: dict[str, Any] = {"target_url": mr["web_url"]} if mr.get("web_url") else {}
        pipeline = mr.get("head_pipeline") or {}
        sha = str(pipeline.get("sha") or "")
        if pipeline.get("id") and sha and (sha == head or head in self._parents(sha)):
            fields |= {"pipeline_id": int(pipeline["id"]), "ref": pipeline.get("ref")}
            return StatusTarget(sha, fields)
        if mr.get("source_project_id") in (None, mr.get("target_project_id")):
            fields["ref"] = mr.get("source_branch")
        return StatusTarget(head, {k: v for k, v in fields.items() if v is not None})

    def _parents(self, commit: str) -> list[str]:
        return [str(p) for p in self._get(f"/repository/commits/{commit}").get("parent_ids") or []]

    def _status(self, head: str) -> dict[str, Any] | None:
        """The newest commit status of the bot's name on ``head``, if any."""
        found = self._get(f"/repository/commits/{head}/statuses", name=STATUS_NAME)
        mine = [s for s in found if isinstance(s, dict) and s.get("name") == STATUS_NAME]
        return max(mine, key=lambda s: int(s.get("id") or 0), default=None)
