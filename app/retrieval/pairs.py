"""The other half of a pair, by name: ``encode_x`` and ``decode_x``, ``MarshalJSON`` and
``UnmarshalJSON``, ``to_dict`` and ``from_dict``, ``__enter__`` and ``__exit__``,
``read`` and Python's asynchronous twin ``aread``, ``Client`` and ``AsyncClient``. Code
that writes something usually has a counterpart that reads it, and a change to one half
that the other half does not follow is a bug a reviewer should see. Pure."""

from __future__ import annotations

import re

_PAIRS = (
    ("encode", "decode"),
    ("serialize", "deserialize"),
    ("marshal", "unmarshal"),
    ("encrypt", "decrypt"),
    ("compress", "decompress"),
    ("pack", "unpack"),
    ("wrap", "unwrap"),
    ("escape", "unescape"),
    ("quote", "unquote"),
    ("load", "dump"),
    ("loads", "dumps"),
    ("read", "write"),
    ("reader", "writer"),
    ("get", "set"),
    ("getitem", "setitem"),
    ("getattr", "setattr"),
    ("getstate", "setstate"),
    ("getter", "setter"),
    ("open", "close"),
    ("opened", "closed"),
    ("start", "stop"),
    ("enter", "exit"),
    ("aenter", "aexit"),
    ("push", "pop"),
    ("add", "remove"),
    ("insert", "delete"),
    ("acquire", "release"),
    ("lock", "unlock"),
    ("connect", "disconnect"),
    ("subscribe", "unsubscribe"),
    ("register", "unregister"),
    ("attach", "detach"),
    ("mount", "unmount"),
    ("send", "receive"),
    ("send", "recv"),
    ("to", "from"),
    ("request", "response"),
    ("before", "after"),
    ("show", "hide"),
    ("enable", "disable"),
    ("begin", "end"),
    ("import", "export"),
    ("input", "output"),
    ("upload", "download"),
    ("setup", "teardown"),
    ("increment", "decrement"),
    ("inc", "dec"),
    ("incoming", "outgoing"),
    ("sync", "async"),
)
COUNTERPARTS: dict[str, tuple[str, ...]] = {}
for _a, _b in _PAIRS:
    COUNTERPARTS[_a] = (*COUNTERPARTS.get(_a, ()), _b)
    COUNTERPARTS[_b] = (*COUNTERPARTS.get(_b, ()), _a)

_TOKEN = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|\d+|[^A-Za-z0-9]+")


def counterpart_names(name: str, language: str | None = None) -> list[str]:
    """Names of the other half of ``name``: each word with a counterpart swapped for it
    (in the same case), and the asynchronous twin (Python's ``aread`` for ``read``,
    ``fooAsync`` and ``foo``, ``AsyncClient`` and ``Client``)."""
    tokens = _TOKEN.findall(name)
    found: list[str] = []
    for i, token in enumerate(tokens):
        for other in COUNTERPARTS.get(token.lower(), ()):
            found.append("".join([*tokens[:i], _same_case(other, token), *tokens[i + 1 :]]))
    found += _async_twins(name, language)
    return [n for n in dict.fromkeys(found) if n and n != name]


def _same_case(word: str, like: str) -> str:
    if like.isupper() and len(like) > 1:
        return word.upper()
    if like[:1].isupper():
        return word[:1].upper() + word[1:]
    return word


def _async_twins(name: str, language: str | None) -> list[str]:
    if name.startswith("__") or not name[:1].isalpha():
        return []
    affixes: list[str]
    if name[:1].isupper():  # Client / AsyncClient, Send / SendAsync
        affixes = ["Async"]
        suffixes = ["Async"]
    elif "_" in name or name.islower():  # send / async_send / send_async
        affixes = ["async_"]
        suffixes = ["_async"]
    else:  # sendRequest / sendRequestAsync
        affixes = []
        suffixes = ["Async"]
    twins = []
    for prefix in affixes:
        twins.append(name.removeprefix(prefix) if name.startswith(prefix) else prefix + name)
    for suffix in suffixes:
        twins.append(name.removesuffix(suffix) if name.endswith(suffix) else name + suffix)
    if language == "python" and (name.islower() or "_" in name):
        # Python's convention (httpx, anyio): read / aread, iter_bytes / aiter_bytes
        twins.append(name[1:] if name.startswith("a") and len(name) > 3 else "a" + name)
    return twins
