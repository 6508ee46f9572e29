"""When a PR closes, read what people made of the bot's inline comments (reactions, and
whether each thread was resolved) and record it for the repository's next reviews."""

from __future__ import annotations

import logging

from app.db.queries.repositories import repository_id
from app.db.queries.review_feedback import FeedbackRow, record_feedback
from app.flows.findings import count_thumbs, posted_findings
from app.forge.models import ReviewComment
from app.forge.protocol import RepoHost
from app.logs import kv
from app.review.feedback import finding_of, title_key, title_of, verdict
from app.runtime import Runtime

log = logging.getLogger(__name__)


def collect_feedback(run: Runtime, repo: str, installation_id: int, pr_number: int) -> int:
    """Record feedback on each of the bot's comments on the PR; returns how many."""
    api = run.host.repository(installation_id, repo)
    ours = posted_findings(api, pr_number)
    if not ours:
        return 0
    rows = [_row(api, pr_number, f.comment, bool(f.thread and f.thread.resolved)) for f in ours]
    with run.engine.begin() as conn:
        record_feedback(conn, repository_id(conn, repo, installation_id=installation_id), rows)
    verdicts = [r.verdict for r in rows]
    log.info(
        kv(
            "feedback.recorded",
            repo=repo,
            pr=pr_number,
            accepted=verdicts.count("accepted"),
            rejected=verdicts.count("rejected"),
        )
    )
    return len(rows)


def _row(api: RepoHost, pr_number: int, comment: ReviewComment, resolved: bool) -> FeedbackRow:
    body = comment.body
    up, down = count_thumbs(api.review_comment_reactions(pr_number, comment.id))
    return FeedbackRow(
        pr_number=pr_number,
        comment_id=comment.id,
        fingerprint=finding_of(body) or "",
        title_key=title_key(title_of(body)),
        path=comment.path,
        thumbs_up=up,
        thumbs_down=down,
        resolved=resolved,
        verdict=verdict(up, down, resolved),
    )
