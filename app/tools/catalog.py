"""The tools reviewbot runs, declared once each (``TOOLS``): the files a tool checks, how it
is called, how its report is read, and which of a repository's configuration files it
may use. A configuration is used only where it cannot make the tool run code or read
outside the files under review; otherwise the tool runs with its defaults."""

from __future__ import annotations

import fnmatch
import posixpath
import re
import shutil
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from app.tools import parsers
from app.tools.findings import ToolFinding

#: How a tool's report is read: (output, the folder it ran in, the files' texts).
Parser = Callable[[bytes, str, parsers.Texts], list[ToolFinding]]


@dataclass(frozen=True)
class Tool:
    """One tool as the tools stage runs it."""

    name: str
    executable: str
    #: the files it checks: shell patterns on the path's base name (and not those of
    #: ``excludes``)
    patterns: tuple[str, ...]
    #: its arguments before the files (``config``: a repository configuration is used)
    arguments: Callable[[bool], list[str]]
    parse: Parser
    #: the repository's configuration files it may use, and a check that one cannot run
    #: code or reach outside (True: safe as it is)
    configs: tuple[str, ...] = ()
    config_safe: Callable[[str, str], bool] = lambda name, text: True
    #: exit codes of a run that worked (with or without findings)
    ok_codes: frozenset[int] = frozenset({0, 1})
    version_arguments: tuple[str, ...] = ("--version",)
    #: files it is given at most per run (the rest in further runs)
    batch: int = 200
    excludes: tuple[str, ...] = ()
    #: an optional extra: where it is not installed, nothing is said (and not a problem)
    optional: bool = False
    #: address space it needs at least (a runtime that reserves much of it up front)
    memory_bytes: int = 0

    def checks(self, path: str) -> bool:
        name = posixpath.basename(path)
        if any(fnmatch.fnmatchcase(name, p) for p in self.excludes):
            return False
        return any(fnmatch.fnmatchcase(name, p) for p in self.patterns)

    def locate(self) -> Path | None:
        """Its executable: beside this Python's (the wheels install there), else on PATH."""
        beside = Path(sys.executable).parent / self.executable
        if beside.is_file():
            return beside
        found = shutil.which(self.executable)
        return Path(found) if found else None


def _no_extend(name: str, text: str) -> bool:
    """ruff's ``extend`` reads another file, which may be outside the files under review."""
    return re.search(r"(?m)^\s*extend\s*=", text) is None


def _sources_not_followed(name: str, text: str) -> bool:
    """shellcheck's ``external-sources`` and ``source-path`` read other files."""
    return re.search(r"(?m)^\s*(external-sources|source-path)\s*=", text) is None


YAMLLINT_PRESETS = {"default", "relaxed"}
#: without the repository's own: its relaxed preset, long lines allowed (workflow files
#: are full of long commands, and a long line is no mistake)
YAMLLINT_DEFAULT = "{extends: relaxed, rules: {line-length: disable}}"
#: lock files and generated manifests: hashes and package names, not words
LOCK_FILES = ("*.lock", "*-lock.json", "*-lock.yaml", "go.sum", "*.min.js", "*.svg")


def _preset_only(name: str, text: str) -> bool:
    """yamllint's ``extends`` may name a file; only its own presets are followed."""
    found = re.findall(r"(?m)^\s*extends\s*:\s*['\"]?([^'\"\s#]+)", text)
    return all(value in YAMLLINT_PRESETS for value in found)


def _ruff(config: bool) -> list[str]:
    return ["check", "--output-format", "json", "--no-cache", "--exit-zero", "--force-exclude"]


def _codespell(config: bool) -> list[str]:
    return [] if config else ["--check-filenames"]


def _detect_secrets(config: bool) -> list[str]:
    # never a baseline (its plugins are files of code), nor verification (the network)
    return ["scan", "--no-verify", *(f"--disable-plugin={p}" for p in NOISY_DETECTORS)]


#: reviewbot's own rules (semgrep's registry needs the network): the repository's
#: semgrep configuration is never used, as its rules may name files outside the change
SEMGREP_RULES = Path(__file__).with_name("semgrep_rules.yml")

#: detect-secrets' detectors of random-looking strings and addresses: hashes, lock files
#: and test data set them off far more often than secrets (bench/RESULTS.md).
NOISY_DETECTORS = ("Base64HighEntropyString", "HexHighEntropyString", "IPPublicDetector")

TOOLS: tuple[Tool, ...] = (
    Tool(
        "ruff",
        "ruff",
        ("*.py", "*.pyi"),
        _ruff,
        parsers.ruff,
        configs=("pyproject.toml", "ruff.toml", ".ruff.toml"),
        config_safe=_no_extend,
        ok_codes=frozenset({0}),
    ),
    Tool(
        "shellcheck",
        "shellcheck",
        ("*.sh", "*.bash", "*.ksh", "*.bats"),
        # not following `source`: only the changed files are there, and a sourced path
        # could be any file of the machine
        lambda config: ["--format=json1", "--exclude=SC1090,SC1091"],
        parsers.shellcheck,
        configs=(".shellcheckrc",),
        config_safe=_sources_not_followed,
    ),
    Tool(
        "hadolint",
        "hadolint",
        ("Dockerfile", "Dockerfile.*", "*.Dockerfile", "Containerfile"),
        lambda config: ["--format=json", "--no-fail"],
        parsers.hadolint,
        configs=(".hadolint.yaml", ".hadolint.yml"),
        ok_codes=frozenset({0}),
    ),
    Tool(
        "yamllint",
        "yamllint",
        ("*.yml", "*.yaml"),
        lambda config: ["--format=parsable"] + ([] if config else ["-d", YAMLLINT_DEFAULT]),
        parsers.yamllint,
        configs=(".yamllint", ".yamllint.yaml", ".yamllint.yml"),
        config_safe=_preset_only,
        ok_codes=frozenset({0, 1, 2}),
    ),
    Tool(
        "detect-secrets",
        "detect-secrets",
        ("*",),
        _detect_secrets,
        parsers.detect_secrets,
        ok_codes=frozenset({0}),
        excludes=("go.sum", "*-lock.json", "*.lock"),
    ),
    Tool(
        "codespell",
        "codespell",
        ("*",),
        _codespell,
        parsers.codespell,
        configs=(".codespellrc",),
        ok_codes=frozenset({0, 65}),
        excludes=LOCK_FILES,
    ),
    Tool(
        "semgrep",
        "semgrep",
        ("*.py", "*.js", "*.jsx", "*.mjs", "*.cjs", "*.ts", "*.tsx", "*.go"),
        lambda config: [
            "scan",
            f"--config={SEMGREP_RULES}",
            "--json",
            "--metrics=off",
            "--disable-version-check",
            "--quiet",
            "--jobs=1",
            "--max-memory=1500",  # MB a file's analysis may use
        ],
        parsers.semgrep,
        version_arguments=("--version", "--disable-version-check"),  # else it asks the network
        optional=True,
        memory_bytes=4 << 30,  # OCaml's runtime reserves address space for its heap
    ),
)
TOOL_NAMES = tuple(t.name for t in TOOLS)


def tool(name: str) -> Tool:
    return next(t for t in TOOLS if t.name == name)


def applicable(tools: Sequence[Tool], paths: Sequence[str]) -> dict[str, list[str]]:
    """For each tool, the paths it checks (tools checking none left out)."""
    out = {t.name: [p for p in paths if t.checks(p)] for t in tools}
    return {name: found for name, found in out.items() if found}
