"""The settings file ``setup`` writes (``.env``: ``KEY=value`` lines, which ``serve`` and
compose's ``env_file`` both read): values set without losing the file's other lines,
never replacing credentials unless asked, readable by its owner only."""

from __future__ import annotations

import os
from collections.abc import Collection, Mapping
from pathlib import Path

from app.errors import ConfigError


def refuse_overwrite(env_file: Path, keys: Collection[str], force: bool) -> None:
    """``ConfigError`` when ``env_file`` already sets one of ``keys`` and ``force`` is not
    given (a key with an empty value, as ``.env.example`` has them, is unset)."""
    if not env_file.is_file() or force:
        return
    pairs = [line.split("=", 1) for line in env_file.read_text().splitlines() if "=" in line]
    found = [k.strip() for k, v in pairs if k.strip() in keys and v.strip()]
    if found:
        raise ConfigError(
            f"{env_file} already holds {', '.join(found)}; pass --force to replace them"
        )


def write_settings(
    env_file: Path, values: Mapping[str, str], replaced: Collection[str], force: bool
) -> None:
    """Set ``values`` in ``env_file``, dropping its lines of ``replaced`` (and of
    ``values``) and keeping the rest; ``ConfigError`` when ``replaced`` keys are set there
    already and ``force`` is not given."""
    refuse_overwrite(env_file, replaced, force)
    gone = {*replaced, *values}
    kept = [
        line
        for line in (env_file.read_text().splitlines() if env_file.is_file() else [])
        if line.split("=", 1)[0].strip() not in gone
    ]
    lines = kept + [f"{key}={value}" for key, value in values.items()]
    write_private(env_file, "\n".join(lines) + "\n")


def write_private(path: Path, content: str) -> None:
    """Write ``content`` to ``path``, which only its owner may read (0600), from the
    first byte: the file is made so, not opened up and closed down."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    os.fchmod(fd, 0o600)
    with os.fdopen(fd, "w") as handle:
        handle.write(content)
