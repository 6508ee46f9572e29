"""Which tools this installation has, and their versions (for ``doctor`` and the
dashboard): each asked ``--version`` under the sandbox's limits."""

from __future__ import annotations

import functools
import re
import tempfile
from collections.abc import Sequence
from pathlib import Path

from app.tools.catalog import TOOLS, Tool
from app.tools.sandbox import Limits, run_limited

_VERSION = re.compile(r"\d+\.\d+(?:\.\d+)*")


def tool_versions(tools: Sequence[Tool] = TOOLS) -> dict[str, str | None]:
    """Each tool's version, or None where it is not installed or does not answer."""
    found: dict[str, str | None] = {}
    with tempfile.TemporaryDirectory(prefix="reviewbot-versions-") as scratch:
        for tool in tools:
            executable = tool.locate()
            if executable is None:
                found[tool.name] = None
                continue
            ran = run_limited(
                [str(executable), *tool.version_arguments],
                Path(scratch),
                Path(scratch),
                Limits(seconds=20),
            )
            said = _VERSION.search(ran.stdout.decode("utf-8", "replace"))
            found[tool.name] = said.group(0) if ran.returncode == 0 and said else None
    return found


@functools.cache
def installed_tools() -> dict[str, str | None]:
    """``tool_versions`` of this process's installation, asked once (the dashboard)."""
    return tool_versions()
