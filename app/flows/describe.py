"""Write a pull request's description (``/describe``, or ``describe`` in
``.reviewbot.toml`` on every push) and apply labels the repository already has."""

from __future__ import annotations

import logging

from app.db.model_answers import PaidAnswers
from app.diff.parse import parse_diff
from app.flows.budget import over_budget, spend
from app.flows.review_config import repository_review_config
from app.forge.protocol import ForgeError
from app.llm.client import make_openai_client
from app.llm.pacing import Deadline
from app.llm.tokens import token_counter
from app.logs import kv
from app.review.describe import (
    Description,
    describe_prompt,
    merged_body,
    parse_description,
    section,
)
from app.review.diff_text import fit_diff, render_diff
from app.review.model import ask_text_model
from app.review.triggers import PullFacts, skip_reason
from app.review.walkthrough import walkthrough
from app.runtime import Runtime

log = logging.getLogger(__name__)


def describe_pull_request(
    run: Runtime,
    repo: str,
    installation_id: int,
    pr_number: int,
    asked: bool = False,
    job_id: int | None = None,
) -> str:
    """Describe the PR as its repository's ``describe`` says (``asked``: by ``/describe``,
    which appends when the setting is off); returns what happened. A retry of job
    ``job_id`` reuses the description its earlier attempt paid for."""
    api = run.host.repository(installation_id, repo)
    config = repository_review_config(api, pr_number)
    mode = config.describe or run.settings.review_describe
    if mode == "off" and not asked:  # the common case: settled before the PR is read
        return "off"
    mode = "append" if mode == "off" else mode
    pr = api.pull(pr_number)
    if pr.state != "open":
        return "closed"
    facts = PullFacts(pr.author, pr.labels, pr.base_ref, pr.head_ref, pr.title)
    if not asked and skip_reason(facts, config, run.settings) is not None:
        return "filtered"
    if over_budget(run, api, repo, installation_id, pr_number, config):
        return "over budget"
    diffs = parse_diff(api.pull_diff(pr_number))
    counter = token_counter()
    fitted = fit_diff(diffs, counter.usable(run.settings.diff_token_budget), counter.count)
    labelling = config.labels if config.labels is not None else run.settings.review_labels
    labels = api.labels() if labelling else []
    description = Description("", "", "")
    if run.settings.model_configured("review"):
        prompt = describe_prompt(
            pr.title, pr.body, render_diff(fitted.files), fitted.omitted, labels, config.language
        )
        deadline = Deadline(run.settings.llm_job_budget_seconds)
        answer = ask_text_model(
            make_openai_client(run.settings, "review"),
            run.settings.review_model,
            prompt,
            run.settings.review_max_tokens,
            deadline,
            PaidAnswers.of_job(run.engine, job_id),
        )
        model = run.settings.review_model
        spend(
            run,
            repo,
            pr_number,
            "describe",
            model,
            1,
            answer.prompt_tokens,
            answer.completion_tokens,
        )
        parsed = parse_description(answer.text, labels)
        if parsed is None:
            log.warning(kv("describe.unreadable", repo=repo, pr=pr_number))
        description = parsed or description
    rows = walkthrough(diffs, [], description.walkthrough)
    body = merged_body(pr.body, section(description, rows), mode)
    if body != pr.body:
        api.update_description(pr_number, body)
    wanted = [name for name in description.labels if name not in pr.labels]
    if labelling and wanted:
        try:
            api.add_labels(pr_number, wanted)
        except ForgeError as exc:
            if exc.status != 422:  # a label deleted meanwhile: the description stands
                raise
            log.warning(kv("describe.labels_refused", repo=repo, pr=pr_number, labels=wanted))
    log.info(kv("describe.done", repo=repo, pr=pr_number, mode=mode, labels=len(wanted)))
    return "described"
