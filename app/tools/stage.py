"""The tools stage of a review: each enabled tool on the pull request's changed files at
the head, written from the host's blobs into a scratch folder of its own (nothing of the
repository runs: no build, no install, no hook), its findings kept where the change
touched. A tool that is missing, fails or runs out of time is reported, and the review
goes on."""

from __future__ import annotations

import logging
import posixpath
import tempfile
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field, replace
from pathlib import Path

from app.diff.parse import FileDiff, FileStatus
from app.errors import ReviewbotError
from app.logs import kv
from app.tools.catalog import TOOLS, Tool
from app.tools.findings import ToolFinding, at_least, deduplicated, on_changed_lines
from app.tools.parsers import ToolReportError
from app.tools.policy import ToolsPolicy
from app.tools.sandbox import Limits, Ran, run_limited

log = logging.getLogger(__name__)

#: A changed file larger than this is not given to any tool.
MAX_FILE_BYTES = 1 << 20
#: Findings a review takes from its tools, at most (the most severe).
MAX_FINDINGS = 50
#: Tools run at once.
PARALLEL = 3
DEFAULT_LIMITS = Limits()
#: The head's bytes of a path (None: not there).
Read = Callable[[str], bytes | None]


@dataclass(frozen=True)
class ToolRun:
    """How one tool's run went: the files it checked, what it found on them (before the
    changed-lines filter), its time, and what went wrong ('' when nothing did)."""

    tool: str
    files: int
    found: int
    seconds: float
    problem: str = ""
    config: str = ""  # the repository's configuration it used, or why it used none


@dataclass(frozen=True)
class ToolReport:
    findings: list[ToolFinding] = field(default_factory=list)
    runs: list[ToolRun] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)  # "path: why"

    @property
    def problems(self) -> list[str]:
        return [f"{r.tool}: {r.problem}" for r in self.runs if r.problem]


def run_tools(
    diffs: Sequence[FileDiff],
    read: Read,
    policy: ToolsPolicy,
    limits: Limits = DEFAULT_LIMITS,
    tools: Sequence[Tool] = TOOLS,
) -> ToolReport:
    """Run ``policy``'s tools on what ``diffs`` changed; the findings on changed lines, at
    the policy's severity or above, once each, most severe first. A stage that cannot
    run (the host failing to give a file, no room for the scratch folder) is one
    problem in the report: the review goes on without the tools."""
    try:
        return _stage(diffs, read, policy, limits, tools)
    except (ReviewbotError, OSError) as exc:
        log.warning(kv("tools.failed", error=str(exc)), exc_info=True)
        return ToolReport(runs=[ToolRun("tools", 0, 0, 0.0, f"could not run ({exc})")])


def _stage(
    diffs: Sequence[FileDiff],
    read: Read,
    policy: ToolsPolicy,
    limits: Limits,
    tools: Sequence[Tool],
) -> ToolReport:
    wanted = [t for t in tools if policy.runs(t.name) and not (t.optional and t.locate() is None)]
    if not wanted:
        return ToolReport()
    texts, skipped = _files(diffs, read, policy, wanted)
    jobs = [(t, [p for p in texts if t.checks(p)]) for t in wanted]
    jobs = [(t, paths) for t, paths in jobs if paths]
    configs = _Configs(read)
    with ThreadPoolExecutor(max_workers=PARALLEL) as pool:
        done = list(pool.map(lambda job: _run(job[0], job[1], texts, configs, limits), jobs))
    runs = [run for run, _ in done]
    found = [f for _, findings in done for f in findings]
    kept = on_changed_lines(found, diffs, policy.diff_context)
    kept = deduplicated(at_least(kept, policy.min_severity))[:MAX_FINDINGS]
    for run in runs:
        if run.problem:
            log.warning(kv("tools.problem", tool=run.tool, problem=run.problem))
    return ToolReport(kept, runs, skipped)


def _files(
    diffs: Sequence[FileDiff], read: Read, policy: ToolsPolicy, tools: Sequence[Tool]
) -> tuple[dict[str, str], list[str]]:
    """The changed files some tool checks, as text; and the ones left out, with why."""
    texts: dict[str, str] = {}
    skipped = []
    for diff in diffs:
        path = diff.path
        if diff.status is FileStatus.DELETED or policy.skipped(path):
            continue
        if not any(t.checks(path) for t in tools):
            continue
        if not _safe_path(path):
            skipped.append(f"{path}: not a path inside the repository")
            continue
        data = None if diff.binary else read(path)
        if diff.binary or (data is not None and b"\0" in data[:8192]):
            skipped.append(f"{path}: binary")
        elif data is None:
            continue
        elif len(data) > MAX_FILE_BYTES:
            skipped.append(f"{path}: larger than {MAX_FILE_BYTES >> 20} MB")
        else:
            texts[path] = data.decode("utf-8", "replace")
    return texts, skipped


def _safe_path(path: str) -> bool:
    inside = not path.startswith("/") and ".." not in path.split("/")
    return bool(path) and inside and posixpath.normpath(path) == path


class _Configs:
    """The repository's configuration files at the head, each read once."""

    def __init__(self, read: Read) -> None:
        self._read = read
        self._found: dict[str, str | None] = {}

    def __call__(self, name: str) -> str | None:
        if name not in self._found:
            data = self._read(name)
            self._found[name] = data.decode("utf-8", "replace") if data is not None else None
        return self._found[name]


def _run(
    tool: Tool, paths: list[str], texts: dict[str, str], configs: _Configs, limits: Limits
) -> tuple[ToolRun, list[ToolFinding]]:
    executable = tool.locate()
    if executable is None:
        return ToolRun(tool.name, len(paths), 0, 0.0, "not installed"), []
    given = {n: t for n in tool.configs if (t := configs(n)) is not None}
    unsafe = [n for n, t in given.items() if not tool.config_safe(n, t)]
    used = {} if unsafe else given
    note = (
        f"{', '.join(unsafe)} not used (it could reach outside the change); defaults"
        if unsafe
        else ", ".join(used)
    )
    limits = replace(limits, memory_bytes=max(limits.memory_bytes, tool.memory_bytes))
    run, findings = _run_with(tool, executable, paths, texts, used, limits)
    if run.problem and used:  # a configuration this version cannot read: the defaults
        run, findings = _run_with(tool, executable, paths, texts, {}, limits)
        note = f"{', '.join(used)} not usable ({run.problem or 'the tool failed'}); defaults"
    return ToolRun(run.tool, run.files, run.found, run.seconds, run.problem, note), findings


def _run_with(
    tool: Tool,
    executable: Path,
    paths: list[str],
    texts: dict[str, str],
    configs: dict[str, str],
    limits: Limits,
) -> tuple[ToolRun, list[ToolFinding]]:
    with tempfile.TemporaryDirectory(prefix=f"reviewbot-{tool.name}-") as scratch:
        root, home = Path(scratch) / "src", Path(scratch) / "home"
        home.mkdir()
        for path in paths:
            (root / path).parent.mkdir(parents=True, exist_ok=True)
            (root / path).write_text(texts[path], encoding="utf-8")
        for name, text in configs.items():
            (root / name).write_text(text, encoding="utf-8")
        findings: list[ToolFinding] = []
        seconds = 0.0
        for start in range(0, len(paths), tool.batch):
            batch = paths[start : start + tool.batch]
            argv = [str(executable), *tool.arguments(bool(configs)), *batch]
            ran = run_limited(argv, root, home, limits)
            seconds += ran.seconds
            problem = _problem(tool, ran, limits)
            if problem:
                return ToolRun(tool.name, len(paths), len(findings), seconds, problem), findings
            try:
                findings += tool.parse(ran.stdout, str(root), texts)
            except ToolReportError as exc:
                return ToolRun(tool.name, len(paths), len(findings), seconds, str(exc)), findings
    findings = [f for f in findings if f.path in texts]  # never a file it was not given
    return ToolRun(tool.name, len(paths), len(findings), seconds), findings


def _problem(tool: Tool, ran: Ran, limits: Limits) -> str:
    if ran.timed_out:
        return f"stopped at its time limit ({limits.seconds:g} s)"
    if ran.truncated:
        return f"its report passed {limits.output_bytes >> 20} MB and was cut"
    if ran.returncode not in tool.ok_codes:
        said = ran.stderr.decode("utf-8", "replace").strip().splitlines()
        last = said[-1].strip()[:200] if said else "no message"  # a traceback's is the error
        return f"failed (exit {ran.returncode}): {last}"
    return ""
