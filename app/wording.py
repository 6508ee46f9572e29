"""Words for counts in what people read (the CLI, a review's summary): "1 comment",
"2 comments", never "1 comments" or "comment(s)"."""

from __future__ import annotations


def counted(count: int, noun: str, plural: str | None = None) -> str:
    """``count`` and ``noun``, the noun in the plural (``plural``, else ``noun + "s"``)
    unless ``count`` is exactly one: ``counted(1, "file")`` is "1 file"."""
    return f"{count:,} {noun if count == 1 else plural or noun + 's'}"
