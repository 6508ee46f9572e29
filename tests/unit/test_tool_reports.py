"""Each tool's real report (captured from the pinned wheels on the seeded files in
tests/data/tools) read into findings: rule, place, severity, documentation link, and the
tool's fix as the lines it rewrites."""

from __future__ import annotations

from pathlib import Path

import pytest

from app.tools import parsers
from app.tools.catalog import Parser
from app.tools.findings import rewritten_lines

DATA = Path(__file__).parent.parent / "data" / "tools"
ROOT = "/tmp/w60/seed"  # where the reports were made (ruff reports absolute paths)
TEXTS = {
    name: (DATA / f"src-{name}.txt").read_text()
    for name in ("app.py", "deploy.sh", "Dockerfile", "conf.yaml", "keys.txt", "spell.py")
}


def report(name: str) -> bytes:
    return (DATA / name).read_bytes()


def test_ruff() -> None:
    found = {f.rule: f for f in parsers.ruff(report("ruff.json"), ROOT, TEXTS)}
    assert set(found) == {"F401", "F841", "F821", "F541"}
    undefined = found["F821"]
    assert (undefined.path, undefined.line, undefined.severity) == ("app.py", 6, "major")
    assert undefined.title == "undefined name" and undefined.message == "Undefined name `taxx`"
    assert undefined.url == "https://docs.astral.sh/ruff/rules/undefined-name"
    assert undefined.fix is None  # ruff has none
    assert found["F541"].fix == 'print("done")'  # the f-string without placeholders
    assert found["F841"].fix is None  # ruff calls its fix unsafe: never suggested
    assert found["F401"].fix is None  # it deletes the line and the next: not this line's


def test_shellcheck_with_its_fix() -> None:
    [finding] = parsers.shellcheck(report("shellcheck.json"), ROOT, TEXTS)
    assert (finding.rule, finding.path, finding.line, finding.severity) == (
        "SC2086",
        "deploy.sh",
        3,
        "minor",
    )
    assert finding.fix == 'rm -rf "$name"/tmp'
    assert finding.url == "https://www.shellcheck.net/wiki/SC2086"


def test_hadolint() -> None:
    found = {f.rule: f for f in parsers.hadolint(report("hadolint.json"), ROOT, TEXTS)}
    assert found["DL3008"].severity == "minor" and found["DL3008"].line == 2
    assert found["DL3008"].title == "Pin versions in apt get install"
    assert found["DL3015"].severity == "nit"
    assert found["DL3008"].url.endswith("/wiki/DL3008")


def test_yamllint() -> None:
    found = {f.rule: f for f in parsers.yamllint(report("yamllint.txt"), ROOT, TEXTS)}
    assert found["key-duplicates"].severity == "major"  # it changes what the file means
    assert found["colons"].severity == "nit" and found["colons"].line == 3
    assert found["colons"].url.endswith("#module-yamllint.rules.colons")


def test_detect_secrets_never_carries_the_secret() -> None:
    found = parsers.detect_secrets(report("detect-secrets.json"), ROOT, TEXTS)
    assert [(f.rule, f.line, f.severity) for f in found] == [
        ("AWS Access Key", 1, "critical"),
        ("Private Key", 2, "critical"),
    ]
    said = " ".join(f"{f.title} {f.message}" for f in found)
    assert "AKIA" not in said and "MIIE" not in said


def test_codespell_fixes_every_place_of_the_word_in_its_line() -> None:
    found = parsers.codespell(report("codespell.txt"), ROOT, TEXTS)
    assert [(f.line, f.title) for f in found] == [
        (1, "misspelling: teh"),
        (1, "misspelling: recieve"),
        (2, "misspelling: recieve"),
    ]
    assert found[2].fix == "def receive():"


@pytest.mark.parametrize(
    "parse", [parsers.ruff, parsers.shellcheck, parsers.hadolint, parsers.detect_secrets]
)
def test_a_report_that_is_not_json_is_a_tool_report_error(parse: Parser) -> None:
    with pytest.raises(parsers.ToolReportError, match="printed no JSON report"):
        parse(b"Traceback (most recent call last):", ROOT, TEXTS)


def test_rewritten_lines() -> None:
    text = "one\ntwo three\nfour"
    assert rewritten_lines(text, [(2, 5, 2, 10, "3")]) == (2, 2, "two 3")
    assert rewritten_lines(text, [(1, 1, 1, 1, '"'), (1, 4, 1, 4, '"')]) == (1, 1, '"one"')
    assert rewritten_lines(text, [(2, 1, 3, 1, "")]) == (2, 3, "four")
    assert rewritten_lines(text, [(5, 1, 5, 2, "x")]) is None  # past the end
    assert rewritten_lines(text, [(1, 1, 1, 3, "a"), (1, 2, 1, 4, "b")]) is None  # overlap


@pytest.mark.parametrize(
    ("code", "severity"),
    [
        ("F821", "major"),
        ("E999", "major"),
        ("syntax-error", "major"),
        ("F401", "minor"),
        ("B006", "minor"),
        ("S602", "minor"),
        ("I001", "nit"),
        ("UP007", "nit"),
        ("E501", "nit"),
        ("RUF022", "nit"),
    ],
)
def test_ruffs_rules_by_what_they_catch(code: str, severity: str) -> None:
    assert parsers.ruff_severity(code) == severity


def test_codespell_leaves_out_two_letter_words() -> None:
    said = b"a.py:1: te ==> the, be\na.py:2: teh ==> the\n"
    assert [f.title for f in parsers.codespell(said, ROOT, {})] == ["misspelling: teh"]


def test_semgrep_with_reviewbots_rules() -> None:
    texts = {"b.py": (DATA / "src-semgrep.py.txt").read_text()}
    found = parsers.semgrep(report("semgrep.json"), "", texts)
    by_place = {(f.path, f.line): f for f in found if f.path == "b.py"}
    shell = by_place[("b.py", 5)]
    assert (shell.rule, shell.severity) == ("python-shell-command-from-data", "major")
    assert shell.title == "A shell command built from data runs whatever the data holds"
    assert shell.url == "https://cwe.mitre.org/data/definitions/78.html"
    assert by_place[("b.py", 9)].severity == "minor"  # pickle: a WARNING
    # the negatives of the rules: a safe loader, a literal eval, an argument list
    assert not {6, 8, 11} & {line for _, line in by_place}
    assert {f.rule for f in found if f.path == "d.go"} == {
        "go-tls-verification-off",
        "go-shell-command-from-data",
    }
