"""A pull request's review state in the CI mode: read back from the host.

A CI job's database is the cache of its index; its rows of reviews may be from another
run, or none. What the bot posted is on the pull request itself: each review carries
the head it reviewed (``flows/posted_reviews.marker``). Before a run, the PR's review
rows are rebuilt from those markers, so a rerun of the same head posts nothing and a
new head is reviewed from the last reviewed one, as the App does from its own rows.
"""

from __future__ import annotations

from app.db.queries.repositories import repository_id
from app.db.queries.reviews import ReviewStatus, claim_review, finish_review, forget_reviews
from app.flows.posted_reviews import already_posted, marked_heads
from app.forge.models import PullRequest
from app.forge.protocol import RepoHost
from app.runtime import Runtime


def restore_review_state(
    run: Runtime, api: RepoHost, repo: str, installation_id: int, pr: PullRequest
) -> list[str]:
    """Rebuild the PR's review rows from the markers of its reviews on the host; returns
    the heads found, oldest first. The current head's is left to the review itself,
    which finds it (``already_posted``) and sets the gate again: the run that posted it
    may have failed before it set the gate."""
    bodies = (review.body for review in api.reviews(pr.number))
    heads = [head for head in marked_heads(bodies) if head != pr.head_sha]
    pr_number, base = pr.number, pr.base_sha
    with run.engine.begin() as conn:
        repo_id = repository_id(conn, repo, installation_id=installation_id)
        forget_reviews(conn, repo_id, pr_number)
    for head in heads:  # one transaction each: the newest is the last updated
        found = already_posted(api, pr_number, head)
        review_id, fingerprints = found if found is not None else (None, [])
        with run.engine.begin() as conn:
            claim_review(conn, repo_id, pr_number, base, head)
            finish_review(
                conn, repo_id, pr_number, head, ReviewStatus.POSTED, review_id, fingerprints
            )
    return heads
