"""Token counting: tiktoken when its encoding data is present, else a safe estimate.

tiktoken downloads its encoding files on first use, which fails offline; then counts
are estimated at one token per 3 characters, which over-counts typical English and code
for cl100k/o200k (about 3.5-4.5 characters a token), so budgets are never exceeded.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable
from dataclasses import dataclass

ESTIMATE_CHARS_PER_TOKEN = 3.0


@dataclass(frozen=True)
class TokenCounter:
    """``count(text)`` and the name of the method behind it, for reports."""

    name: str
    count: Callable[[str], int]


def estimate_tokens(text: str) -> int:
    return math.ceil(len(text) / ESTIMATE_CHARS_PER_TOKEN)


@functools.cache
def token_counter(encoding: str = "o200k_base") -> TokenCounter:
    """tiktoken's ``encoding`` when it can be loaded without a download, else the estimate."""
    try:
        import tiktoken

        enc = tiktoken.get_encoding(encoding)
    except Exception:  # tiktoken raises network, IO and value errors when data is missing
        return TokenCounter("estimate(chars/3)", estimate_tokens)
    return TokenCounter(
        f"tiktoken:{encoding}", lambda text: len(enc.encode(text, disallowed_special=()))
    )
