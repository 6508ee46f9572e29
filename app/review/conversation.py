"""Answers in a PR's conversation: ``/ask <question>`` comments and replies to the bot's
own inline comments. The question is data, fenced like the diff; the answer's
``path:line`` citations become permalinks, and nothing the model wrote can ping anyone
or inject HTML. Pure."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from importlib import resources
from string import Template

from app.llm.redact import redact_secrets
from app.retrieval.context_chunk import ContextChunk
from app.review.context_blocks import render_context_block
from app.review.markdown import inert, link_citations
from app.review.prompt import ReviewPrompt, data_fence

SYSTEM = resources.files("app.review").joinpath("prompts/answer_system.txt").read_text("utf-8")
USER = Template(
    resources.files("app.review").joinpath("prompts/answer_user.txt").read_text("utf-8")
)
ASK = re.compile(r"\A/ask(?:\s+(.*))?\Z", re.S)
#: A question longer than this is cut (it is data, and it costs tokens).
MAX_QUESTION_CHARS = 4000
#: Comments that are commands, on any host, and the command each names.
COMMANDS = {"/review": "review", "/reindex": "reindex", "/describe": "describe", "/help": "help"}
#: A reply in the bot's thread that only lets it resolve the thread: not a question.
RESOLVE = "/resolve"


@dataclass(frozen=True)
class Question:
    """What was asked, by whom; for a reply, the commented code and the thread so far."""

    text: str
    asker: str
    code: str = ""
    thread: tuple[tuple[str, str], ...] = ()  # (author, body), oldest first


def parse_ask(body: str) -> str | None:
    """The question of an ``/ask <question>`` comment ('' for a bare ``/ask``, which is
    not answered); None for any other comment."""
    found = ASK.match(body.strip())
    if found is None:
        return None
    return (found.group(1) or "").strip()[:MAX_QUESTION_CHARS]


def answer_marker(question_id: int) -> str:
    """The hidden tag of the answer to one question: a retry finds it and posts nothing."""
    return f"<!-- reviewbot:answer={int(question_id)} -->"


def answer_prompt(
    question: Question,
    title: str,
    diff_text: str,
    context: Sequence[ContextChunk],
    language: str | None = None,
) -> ReviewPrompt:
    """The rules apart; the PR, diff, context, thread and question each fenced as data."""
    context_text = "\n\n".join(render_context_block(c) for c in context) or "(none found)"
    thread_text = "\n\n".join(f"{who}: {said}" for who, said in question.thread)
    parts = [
        redact_secrets(t)
        for t in (title.strip(), diff_text, context_text, thread_text, question.code, question.text)
    ]
    title, diff_text, context_text, thread_text, code, text = parts
    fence = data_fence(*parts)
    thread = ""
    if code:
        thread += f"\nThe code the thread is about:\n{fence} CODE\n{code}\n{fence}\n"
    if thread_text:
        thread += f"\nThe review thread so far:\n{fence} THREAD\n{thread_text}\n{fence}\n"
    user = USER.substitute(
        fence=fence,
        title=title or "(no title)",
        thread=thread,
        diff=diff_text or "(no changes)",
        context=context_text,
        language=f"Write the answer in {language}.\n" if language else "",
        asker=question.asker,
        question=text or "(empty)",
    )
    return ReviewPrompt(SYSTEM, user)


def answer_markdown(
    answer: str,
    context: Sequence[ContextChunk],
    paths: Iterable[str],
    permalink: Callable[[str, int, int], str],
    question_id: int,
    cost: str = "",
) -> str:
    """The reply: the model's answer made inert with its citations linked, the code it
    was given as sources, what the answer cost, and the answer's marker."""
    paths = {*paths, *(c.file_path for c in context)}
    text = link_citations(inert(answer.strip()) or "I could not find an answer.", paths, permalink)
    parts = [text]
    sources = [
        f"- [`{c.file_path}:{c.start_line}-{c.end_line}`]"
        f"({permalink(c.file_path, c.start_line, c.end_line)})"
        + (f" `{c.qualified_name}`" if c.qualified_name else "")
        for c in context
    ]
    if sources:
        parts.append(
            "<details><summary>Code searched</summary>\n\n" + "\n".join(sources) + "\n</details>"
        )
    if cost:
        parts.append(f"<sub>This answer: {cost}</sub>")
    parts.append(answer_marker(question_id))
    return "\n\n".join(parts)


def limited_message(limit: int, asker: str) -> str:
    """The polite answer once a PR has had its questions for the hour."""
    return (
        f"Thanks for the question, {inert('@' + asker)}. reviewbot answers at most {limit}"
        " question(s) an hour on one pull request, and this one has had them; please ask"
        " again later."
    )
