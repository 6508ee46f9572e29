"""The ``[tools]`` table of ``.reviewbot.toml``: which tools run, on which paths, which of
their findings a review keeps::

    [tools]
    enabled = true                  # false: no tool runs
    disable = ["codespell"]         # tools not to run (ruff, shellcheck, hadolint,
                                    # yamllint, detect-secrets, codespell)
    skip = ["vendor/**"]            # paths no tool checks (gitignore patterns)
    diff_context = 0                # 0: findings on added lines only; N: within N lines
    min_severity = "nit"            # nit < minor < major < critical
"""

from __future__ import annotations

from dataclasses import dataclass, field

import pathspec

from app.errors import ConfigError
from app.indexing.source_tree import config_table
from app.tools.catalog import TOOL_NAMES
from app.tools.findings import SEVERITIES

KEYS = frozenset({"enabled", "disable", "skip", "diff_context", "min_severity"})
MAX_DIFF_CONTEXT = 20


@dataclass(frozen=True)
class ToolsPolicy:
    enabled: bool = True
    disable: tuple[str, ...] = ()
    skip: tuple[str, ...] = ()
    diff_context: int = 0
    min_severity: str = "nit"
    _skip_spec: pathspec.PathSpec | None = field(default=None, compare=False, repr=False)

    def runs(self, tool: str) -> bool:
        return self.enabled and tool not in self.disable

    def skipped(self, path: str) -> bool:
        return self._skip_spec is not None and self._skip_spec.match_file(path)


def parse_tools_config(text: str, source: str) -> ToolsPolicy:
    """The ``[tools]`` table; ``ConfigError`` names the key and the problem."""
    table = config_table(text, source, "tools", KEYS)
    enabled = table.get("enabled", True)
    if not isinstance(enabled, bool):
        raise ConfigError(f"{source}: tools.enabled must be true or false")
    disable = _strings(table, "disable", source)
    unknown = sorted(set(disable) - set(TOOL_NAMES))
    if unknown:
        raise ConfigError(
            f"{source}: tools.disable names unknown tools {', '.join(unknown)}"
            f" (known: {', '.join(TOOL_NAMES)})"
        )
    skip = _strings(table, "skip", source)
    context = table.get("diff_context", 0)
    if isinstance(context, bool) or not isinstance(context, int):
        raise ConfigError(f"{source}: tools.diff_context must be an integer")
    if not 0 <= context <= MAX_DIFF_CONTEXT:
        raise ConfigError(f"{source}: tools.diff_context must be from 0 to {MAX_DIFF_CONTEXT}")
    severity = table.get("min_severity", "nit")
    if severity not in SEVERITIES:
        raise ConfigError(
            f"{source}: tools.min_severity must be one of {', '.join(reversed(SEVERITIES))}"
        )
    return ToolsPolicy(
        enabled,
        disable,
        skip,
        context,
        str(severity),
        pathspec.GitIgnoreSpec.from_lines(skip) if skip else None,
    )


def _strings(table: dict[str, object], key: str, source: str) -> tuple[str, ...]:
    value = table.get(key, [])
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise ConfigError(f"{source}: tools.{key} must be a list of strings")
    return tuple(value)
