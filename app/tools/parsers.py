"""Each tool's report as ``ToolFinding``s: ruff's and hadolint's JSON, shellcheck's json1,
yamllint's parsable lines, detect-secrets' baseline JSON, codespell's lines. A report
that cannot be read is ``ToolReportError``. Pure: ``root`` is the folder the tool ran in,
whose prefix is taken off the paths it reports; ``texts`` the files' texts, from which
a tool's fix becomes the lines it rewrites (a suggestion)."""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import replace
from typing import Any

from app.errors import ReviewbotError
from app.tools.findings import Edit, ToolFinding, rewritten_lines

#: The texts of the files a tool ran on, by the path it reports
Texts = Mapping[str, str]


class ToolReportError(ReviewbotError):
    """A tool's output is not the report it should print."""


def _json(output: bytes, tool: str) -> Any:
    try:
        return json.loads(output.decode("utf-8", "replace") or "null")
    except json.JSONDecodeError as exc:
        raise ToolReportError(f"{tool} printed no JSON report ({exc.msg})") from None


def _relative(path: str, root: str) -> str:
    path = path.removeprefix(root.rstrip("/") + "/")
    return path.removeprefix("./")


def _humanised(name: str) -> str:
    return name.replace("-", " ").replace("_", " ")


#: ruff: syntax errors and the pyflakes rules that are bugs; then the rules of likely
#: mistakes (pyflakes, bugbear, bandit, pylint's errors); the rest is style (imports'
#: order, upgrades, naming, docstrings), which a formatter or a quick edit settles
RUFF_MAJOR = re.compile(r"^(E9|F63|F7|F82|F811|F60)")
RUFF_MINOR = re.compile(r"^(F|B|S|PLE|PLW|ASYNC|DTZ|BLE|TRY|PERF)")


def ruff(output: bytes, root: str, texts: Texts) -> list[ToolFinding]:
    found = []
    for item in _json(output, "ruff") or []:
        code = str(item.get("code") or "syntax-error")
        start = (item.get("location") or {}).get("row") or 1
        end = (item.get("end_location") or {}).get("row") or start
        name = str(item.get("name") or "") or str(item.get("url") or "").rsplit("/", 1)[-1]
        severity = ruff_severity(code)
        finding = ToolFinding(
            "ruff",
            code,
            _humanised(name) or str(item.get("message") or code),
            _relative(str(item.get("filename") or ""), root),
            int(start),
            int(end),
            severity,
            str(item.get("message") or ""),
            str(item.get("url") or ""),
        )
        found.append(_with_fix(finding, ruff_edits(item.get("fix")), texts))
    return found


def ruff_severity(code: str) -> str:
    if code == "syntax-error" or RUFF_MAJOR.match(code):
        return "major"
    return "minor" if RUFF_MINOR.match(code) else "nit"


def _with_fix(finding: ToolFinding, edits: list[Edit], texts: Texts) -> ToolFinding:
    """``finding`` with the lines ``edits`` rewrite as its fix, when they are within
    its own lines (else as it is: a fix elsewhere is not a suggestion on this line)."""
    text = texts.get(finding.path)
    done = rewritten_lines(text, edits) if text is not None and edits else None
    if done is None:
        return finding
    first, last, lines = done
    if first < finding.line or last > max(finding.end_line, finding.line):
        return finding
    return replace(finding, line=first, end_line=last, fix=lines)


def ruff_edits(fix: Any) -> list[Edit]:
    """ruff's fix as edits, where ruff calls it safe (it keeps the code's meaning)."""
    if not isinstance(fix, dict) or fix.get("applicability") != "safe":
        return []
    return [
        (
            e["location"]["row"],
            e["location"]["column"],
            e["end_location"]["row"],
            e["end_location"]["column"],
            str(e.get("content") or ""),
        )
        for e in fix.get("edits") or []
    ]


SHELLCHECK_SEVERITY = {"error": "major", "warning": "minor", "info": "minor", "style": "nit"}


def shellcheck(output: bytes, root: str, texts: Texts) -> list[ToolFinding]:
    report = _json(output, "shellcheck") or {}
    found = []
    for item in report.get("comments") or []:
        code = f"SC{item.get('code')}"
        finding = ToolFinding(
            "shellcheck",
            code,
            str(item.get("message") or code),
            _relative(str(item.get("file") or ""), root),
            int(item.get("line") or 1),
            int(item.get("endLine") or item.get("line") or 1),
            SHELLCHECK_SEVERITY.get(str(item.get("level")), "minor"),
            str(item.get("message") or ""),
            f"https://www.shellcheck.net/wiki/{code}",
        )
        replacements = (item.get("fix") or {}).get("replacements") or []
        edits = [
            (r["line"], r["column"], r["endLine"], r["endColumn"], str(r["replacement"]))
            for r in replacements
        ]
        found.append(_with_fix(finding, edits, texts))
    return found


HADOLINT_SEVERITY = {"error": "major", "warning": "minor", "info": "nit", "style": "nit"}


def hadolint(output: bytes, root: str, texts: Texts) -> list[ToolFinding]:
    found = []
    for item in _json(output, "hadolint") or []:
        code = str(item.get("code") or "")
        url = (
            f"https://github.com/hadolint/hadolint/wiki/{code}"
            if code.startswith("DL")
            else f"https://www.shellcheck.net/wiki/{code}"
        )
        line = int(item.get("line") or 1)
        message = str(item.get("message") or code)
        found.append(
            ToolFinding(
                "hadolint",
                code,
                message.split(". ")[0],
                _relative(str(item.get("file") or ""), root),
                line,
                line,
                HADOLINT_SEVERITY.get(str(item.get("level")), "minor"),
                message,
                url,
            )
        )
    return found


#: yamllint's findings that change what the file means, not how it looks
YAMLLINT_MAJOR = frozenset({"syntax", "key-duplicates"})
YAMLLINT_RULES = "https://yamllint.readthedocs.io/en/stable/rules.html#module-yamllint.rules."
YAMLLINT_LINE = re.compile(
    r"^(?P<path>.+?):(?P<line>\d+):(?P<col>\d+): \[(?P<level>\w+)\] (?P<message>.*?)"
    r"(?: \((?P<rule>[\w-]+)\))?$"
)


def yamllint(output: bytes, root: str, texts: Texts) -> list[ToolFinding]:
    found = []
    for raw in output.decode("utf-8", "replace").splitlines():
        match = YAMLLINT_LINE.match(raw)
        if match is None:
            continue
        rule = match["rule"] or "syntax"
        level = "minor" if match["level"] == "error" else "nit"
        severity = "major" if rule in YAMLLINT_MAJOR else level
        line = int(match["line"])
        found.append(
            ToolFinding(
                "yamllint",
                rule,
                "YAML syntax error" if rule == "syntax" else _humanised(rule),
                _relative(match["path"], root),
                line,
                line,
                severity,
                match["message"],
                f"{YAMLLINT_RULES}{rule.replace('-', '_')}" if rule != "syntax" else "",
            )
        )
    return found


def detect_secrets(output: bytes, root: str, texts: Texts) -> list[ToolFinding]:
    """Its baseline's results: the kind of secret and its line, never the secret."""
    report = _json(output, "detect-secrets") or {}
    found = []
    for path, items in (report.get("results") or {}).items():
        for item in items:
            kind = str(item.get("type") or "secret")
            line = int(item.get("line_number") or 1)
            found.append(
                ToolFinding(
                    "detect-secrets",
                    kind,
                    "a secret in the code",
                    _relative(str(path), root),
                    line,
                    line,
                    "critical",
                    f"This line holds what looks like a {kind}. A secret in the repository"
                    " is readable by everyone with access to it, and stays in its history:"
                    " revoke it, then load it from the environment or a secret store.",
                    "https://github.com/Yelp/detect-secrets#viewing-results",
                )
            )
    return found


#: codespell's words this short or shorter are left out (bench/RESULTS.md)
CODESPELL_SHORTEST = 2
CODESPELL_LINE = re.compile(r"^(?P<path>.+?):(?P<line>\d+): (?P<word>\S+) ==> (?P<fix>.+)$")


def codespell(output: bytes, root: str, texts: Texts) -> list[ToolFinding]:
    found = []
    for raw in output.decode("utf-8", "replace").splitlines():
        match = CODESPELL_LINE.match(raw.strip())
        if match is None:
            continue
        line, word, fixed = int(match["line"]), match["word"], match["fix"]
        if len(word) <= CODESPELL_SHORTEST:
            continue  # "te", "ue": parts of identifiers and abbreviations far more often
        finding = ToolFinding(
            "codespell",
            "misspelling",
            f"misspelling: {word}",
            _relative(match["path"], root),
            line,
            line,
            "nit",
            f"`{word}` may be a misspelling of `{fixed}`.",
            "https://github.com/codespell-project/codespell",
        )
        text = texts.get(finding.path, "").split("\n")
        source = text[line - 1] if line <= len(text) else ""
        edits = [
            (line, m.start() + 1, line, m.end() + 1, fixed)
            for m in re.finditer(rf"\b{re.escape(word)}\b", source)
        ]
        # one fix only: "teh ==> the, tea" offers several
        found.append(_with_fix(finding, edits if "," not in fixed else [], texts))
    return found


SEMGREP_SEVERITY = {"ERROR": "major", "WARNING": "minor", "INFO": "nit"}


def semgrep(output: bytes, root: str, texts: Texts) -> list[ToolFinding]:
    """semgrep's JSON report of reviewbot's own rules (``semgrep_rules.yml``)."""
    report = _json(output, "semgrep") or {}
    found = []
    for item in report.get("results") or []:
        extra = item.get("extra") or {}
        message = " ".join(str(extra.get("message") or item.get("check_id")).split())
        references = (extra.get("metadata") or {}).get("references") or [""]
        start = int((item.get("start") or {}).get("line") or 1)
        found.append(
            ToolFinding(
                "semgrep",
                str(item.get("check_id") or "").rsplit(".", 1)[-1],
                message.split("; ")[0].split(" (")[0].rstrip("."),
                _relative(str(item.get("path") or ""), root),
                start,
                int((item.get("end") or {}).get("line") or start),
                SEMGREP_SEVERITY.get(str(extra.get("severity")), "minor"),
                message,
                str(references[0]),
            )
        )
    return found
