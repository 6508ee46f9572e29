"""Natural-language queries for each changed function: what it is and what changed.

Two views per function, in the spirit of HyDE: ``hyde`` is the summary the index would
hold for the new code (so it lands near summaries of related code), ``change`` says what
the diff adds and removes. The heuristic builds both from names, signature and the
identifiers on added and removed lines; ``describe_change_with_llm`` asks the cheap model
for the ``change`` view instead. The vector signal embeds both views as one query
(``retrieve.vector_texts``); the lexical signal searches the ``change`` view's words.
"""

from __future__ import annotations

import json
import logging
from dataclasses import dataclass
from importlib import resources
from string import Template

import openai

from app.db.chunk_types import ChunkType
from app.diff.changed import ChangedFunction
from app.diff.parse import FileDiff
from app.indexing.identifiers import split_identifier
from app.indexing.summarizer import heuristic_summary
from app.llm.redact import redact_secrets
from app.logs import kv
from app.retrieval.edited_names import IDENTIFIER

log = logging.getLogger(__name__)

DESCRIBE = Template(
    resources.files("app.retrieval").joinpath("prompts/describe_change.txt").read_text("utf-8")
)
_NOISE = frozenset(
    "self this return def function const let var true false none null nil new await async "
    "import from class public private static void int str string".split()
)


@dataclass(frozen=True)
class RetrievalQuery:
    function: ChangedFunction
    view: str  # "hyde" | "change"
    text: str


def diff_identifiers(function: ChangedFunction, diff: FileDiff) -> tuple[list[str], list[str]]:
    """Identifiers on the function's added lines that were not there before, and the reverse."""
    added_text = " ".join(
        ln.text
        for h in diff.hunks
        for ln in h.lines
        if ln.kind == "+" and ln.new_no in function.added_lines
    )
    removed_text = " ".join(
        ln.text
        for h in diff.hunks
        for ln in h.lines
        if ln.kind == "-" and ln.old_no in function.removed_lines
    )
    added = _identifiers(added_text)
    removed = _identifiers(removed_text)
    return [i for i in added if i not in removed], [i for i in removed if i not in added]


def _identifiers(text: str) -> list[str]:
    seen: dict[str, None] = {}
    for ident in IDENTIFIER.findall(text):
        if ident.lower() not in _NOISE:
            seen.setdefault(ident, None)
    return list(seen)


def heuristic_queries(function: ChangedFunction, diff: FileDiff) -> list[RetrievalQuery]:
    """The ``hyde`` and ``change`` views, without a model."""
    chunk = function.chunk
    added, removed = diff_identifiers(function, diff)
    verb = {"added": "Adds", "deleted": "Deletes", "modified": "Changes"}[function.status]
    kind = (
        "method"
        if chunk.chunk_type == ChunkType.METHOD
        else "function"
        if chunk.chunk_type in {ChunkType.FUNCTION, ChunkType.WINDOW}
        else chunk.chunk_type
    )
    parts = [f"{verb} {kind} {chunk.qualified_name or chunk.symbol_name} in {chunk.file_path}."]
    if added:
        parts.append("Now uses " + ", ".join(added[:15]) + ".")
    if removed:
        parts.append("No longer uses " + ", ".join(removed[:15]) + ".")
    if chunk.references:
        parts.append("Calls " + ", ".join(chunk.references[:15]) + ".")
    words = sorted({w for i in added + removed for w in split_identifier(i) if len(w) > 2})
    if words:
        parts.append("About " + " ".join(words[:20]) + ".")
    return [
        RetrievalQuery(function, "hyde", heuristic_summary(chunk)),
        RetrievalQuery(function, "change", " ".join(parts)),
    ]


def describe_change_with_llm(
    client: openai.OpenAI,
    model: str,
    function: ChangedFunction,
    diff: FileDiff,
    max_tokens: int = 300,
) -> str | None:
    """The cheap model's one-paragraph description of the change, or None if it fails."""
    hunk_text = "\n".join(
        f"{ln.kind}{ln.text}"
        for h in diff.hunks
        for ln in h.lines
        if (ln.new_no in function.added_lines or ln.old_no in function.removed_lines)
    )
    prompt = DESCRIBE.substitute(
        path=function.file_path,
        symbol=function.qualified_name or "",
        code=redact_secrets(function.chunk.raw_code),
        diff=redact_secrets(hunk_text),
    )
    try:
        response = client.chat.completions.create(
            model=model,
            temperature=0,
            messages=[{"role": "user", "content": prompt}],
            max_tokens=max_tokens,
            response_format={"type": "json_object"},
        )
    except (openai.APIConnectionError, openai.APIStatusError) as exc:
        log.warning(
            kv(
                "retrieval.describe_failed",
                function=function.qualified_name,
                error=type(exc).__name__,
            )
        )
        return None  # the heuristic description serves instead
    content = response.choices[0].message.content if response.choices else None
    try:
        data = json.loads(content or "")
    except json.JSONDecodeError:
        log.warning(kv("retrieval.describe_unreadable", function=function.qualified_name))
        return None
    text = data.get("description") if isinstance(data, dict) else None
    return " ".join(text.split())[:1000] if isinstance(text, str) and text.strip() else None
