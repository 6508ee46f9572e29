"""The review prompt: instructions apart, and everything from the PR fenced as data."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from importlib import resources
from string import Template

from app.llm.fences import fence_for
from app.llm.redact import redact_secrets
from app.retrieval.context_chunk import ContextChunk
from app.review.context_blocks import render_context_block

SYSTEM = resources.files("app.review").joinpath("prompts/review_system.txt").read_text("utf-8")
USER = Template(
    resources.files("app.review").joinpath("prompts/review_user.txt").read_text("utf-8")
)


@dataclass(frozen=True)
class ReviewPrompt:
    system: str
    user: str

    repair: str | None = None  # a follow-up asking again for the format, after a miss

    def messages(self) -> list[dict[str, str]]:
        said = [{"role": "system", "content": self.system}, {"role": "user", "content": self.user}]
        return said + ([{"role": "user", "content": self.repair}] if self.repair else [])


#: Sent once when an answer has neither ``summary`` nor ``comments``.
REPAIR = (
    "Your answer did not follow the required format. Answer again with only a JSON object"
    ' with the keys "summary" (a string), "walkthrough" (a list of objects with "path",'
    ' "change" and "theme") and "comments" (a list of objects with "path", "line",'
    ' "start_line", "side", "severity", "title", "body" and "suggestion") and'
    ' "tool_findings" (a list of objects with "id", "verdict" and "why"), and nothing'
    " else."
)


def data_fence(*texts: str) -> str:
    """The fence around data in a prompt: four backticks at least, so the three of code
    blocks inside the data stay data."""
    return fence_for(*texts, shortest=4)


def build_prompt(
    title: str,
    body: str,
    diff_text: str,
    context: Sequence[ContextChunk],
    omitted: Sequence[str] = (),
    policy: str = "",
    tool_findings: str = "",
) -> ReviewPrompt:
    """The system instructions and the user message with PR text, diff, context and the
    repository's review policy (``.reviewbot.toml``) and the tools' findings on the
    changed lines (``tool_findings.render_tool_findings``), each fenced."""
    context_text = "\n\n".join(render_context_block(c) for c in context) or "(none found)"
    title, body = redact_secrets(title.strip()), redact_secrets(body.strip() or "(no description)")
    diff_text, context_text = redact_secrets(diff_text), redact_secrets(context_text)
    policy = redact_secrets(policy.strip())
    tool_findings = redact_secrets(tool_findings.strip())
    fence = data_fence(title, body, diff_text, context_text, policy, tool_findings)
    tools_block = (
        "\nFindings of linters and a secret scanner on the changed lines (id, place, tool"
        f" and rule, severity, message):\n{fence} DATA\n{tool_findings}\n{fence}\n"
        if tool_findings
        else ""
    )
    policy_block = (
        "\nThe repository's review policy (from .reviewbot.toml on its default branch):\n"
        f"{fence} POLICY\n{policy}\n{fence}\n"
        if policy
        else ""
    )
    left_out = ""
    if omitted:
        left_out = (
            "\nLeft out of the diff to fit the budget:\n"
            + "\n".join(f"- {o}" for o in omitted)
            + "\n"
        )
    user = USER.substitute(
        fence=fence,
        title=title,
        body=body,
        diff=diff_text,
        context=context_text,
        omitted=left_out,
        policy=policy_block,
        tools=tools_block,
    )
    return ReviewPrompt(SYSTEM, user)
