"""Co-change cases from real commit histories: "what else must change?"

Like ``bench/recall_cases.py`` (whose parser and resolver it shares), nothing here is
imported from ``app``. A case is a first-parent commit (a merge: against its first
parent) that changes function bodies in two or more source files of one language
(tests, docs and examples excluded). The retriever is given the diff of one of those
files, the one with the most changed lines; the targets are the functions the commit
changed in the other files, as they were at the parent (that is what the index holds).

Each target is marked ``linked`` when the benchmark's name resolver connects it to the
given file's changed functions (a callee or a caller, as the structural benchmark
defines them): the structural signal can find those, the others need co-change,
sibling, lexical or semantic evidence.

Kept: 2-6 modified source files, 2-12 changed functions in all, at most 6 in the given
file, at most 400 changed lines. A changed function is the innermost function or method
holding a changed line of the parent version (a removed line, or an insertion strictly
inside its body).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from bench.recall_cases import (
    LANGS,
    MAX_NAME_DEFINITIONS,
    SECONDARY,
    Definition,
    Lang,
    ParsedFile,
    Snapshot,
    git,
    git_bytes,
    parse,
)

#: Definition node types that are functions or methods (targets), per language.
FUNCTION_TYPES = {
    "python": {"function_definition"},
    "go": {"function_declaration", "method_declaration"},
    "typescript": {"function_declaration", "method_definition"},
    "javascript": {
        "function_declaration",
        "generator_function_declaration",
        "method_definition",
        "variable_declarator",
        "assignment_expression",
    },
    "java": {"method_declaration", "constructor_declaration"},
    "rust": {"function_item"},
    "kotlin": {"function_declaration"},
    "csharp": {"method_declaration", "constructor_declaration"},
    "ruby": {"method", "singleton_method"},
    "php": {"function_definition", "method_declaration"},
    "c": {"function_definition"},
    "cpp": {"function_definition"},
}
MAX_FILES = 6
MAX_FUNCTIONS = 12
MAX_GIVEN_FUNCTIONS = 6
MAX_CHANGED_LINES = 400


@dataclass(frozen=True)
class Target:
    definition: Definition
    linked: bool  # the benchmark's resolver links it to the given change


@dataclass
class CoChangeCase:
    repo: str
    language: str
    parent: str
    commit: str
    subject: str
    given: str  # the path whose diff the retriever sees
    given_functions: list[str] = field(default_factory=list)  # names changed in it
    targets: list[Target] = field(default_factory=list)
    query_code: str = ""  # the given file's changed functions, new code (BM25's query)

    @property
    def definitions(self) -> list[Definition]:
        return [t.definition for t in self.targets]


def old_side_lines(git_dir: str, parent: str, commit: str, path: str) -> tuple[set[int], set[int]]:
    """Parent-version lines the commit changed in ``path`` (removed or replaced), and the
    insertion points (an insertion after line n is recorded as n)."""
    diff = git(git_dir, "diff", "-U0", "--no-renames", parent, commit, "--", path)
    changed: set[int] = set()
    inserted: set[int] = set()
    for m in re.finditer(r"^@@ -(\d+)(?:,(\d+))? \+\d+(?:,\d+)? @@", diff, re.MULTILINE):
        start, count = int(m.group(1)), int(m.group(2) or "1")
        if count:
            changed.update(range(start, start + count))
        else:
            inserted.add(start)
    return changed, inserted


def changed_functions(
    parsed: ParsedFile, lang: str, changed: set[int], inserted: set[int]
) -> list[Definition]:
    """The innermost functions of the parent version holding a changed line, or an
    insertion strictly inside their body."""
    kinds = FUNCTION_TYPES[lang]
    functions = [d for d in parsed.definitions if d.kind in kinds]
    touched = [
        d
        for d in functions
        if any(d.start <= n <= d.end for n in changed)
        or any(d.start <= n < d.end for n in inserted)
    ]
    return [
        d
        for d in touched
        if not any(o is not d and d.start <= o.start and o.end <= d.end for o in touched)
    ]


def mine_cochange(
    git_dir: str, repo: str, lang: str, limit: int, scan: int, head: str = "HEAD"
) -> list[CoChangeCase]:
    """Up to ``limit`` cases from the newest ``scan`` first-parent commits of ``head``,
    oldest first."""
    spec = LANGS[lang]
    commits = git(git_dir, "rev-list", "--first-parent", f"-n{scan}", head).split()
    cases: list[CoChangeCase] = []
    for commit in commits:
        parents = git(git_dir, "rev-list", "--parents", "-n1", commit).split()[1:]
        if not parents:
            continue
        case = _case(git_dir, repo, spec, parents[0], commit)
        if case is not None:
            cases.append(case)
            if len(cases) >= limit:
                break
    return list(reversed(cases))


def pinned_case(git_dir: str, repo: str, lang: str, commit: str) -> CoChangeCase:
    """The case of a pinned commit, derived again from the commit and its first parent
    (the derivation reads nothing else, so a rerun anywhere gives the same case)."""
    parents = git(git_dir, "rev-list", "--parents", "-n1", commit).split()[1:]
    case = _case(git_dir, repo, LANGS[lang], parents[0], commit) if parents else None
    if case is None:
        raise ValueError(f"{repo}@{commit[:12]} no longer makes a case: the rules changed")
    return case


def case_key(case: CoChangeCase) -> dict[str, object]:
    """What a pinned case records: the commit and what the benchmark asks of it."""
    return {
        "commit": case.commit,
        "given": case.given,
        "targets": [
            [t.definition.path, t.definition.start, t.definition.end] for t in case.targets
        ],
    }


def _case(git_dir: str, repo: str, spec: Lang, parent: str, commit: str) -> CoChangeCase | None:
    status = git(git_dir, "diff", "--name-status", "--no-renames", parent, commit).splitlines()
    code = [
        line.split("\t")[1]
        for line in status
        if line.startswith("M\t")
        and line.endswith(spec.extensions)
        and not SECONDARY.search(line.split("\t")[1])
    ]
    if not 2 <= len(code) <= MAX_FILES:
        return None
    numstat = git(git_dir, "diff", "--numstat", parent, commit, "--", *code)
    sizes = {
        r.split("\t")[2]: int(r.split("\t")[0]) + int(r.split("\t")[1])
        for r in numstat.splitlines()
        if not r.startswith("-")
    }
    if sum(sizes.values()) > MAX_CHANGED_LINES:
        return None
    per_file: dict[str, list[Definition]] = {}
    parsed_old: dict[str, ParsedFile] = {}
    for path in code:
        old = parse(spec.name, path, git_bytes(git_dir, "show", f"{parent}:{path}"))
        changed, inserted = old_side_lines(git_dir, parent, commit, path)
        found = changed_functions(old, spec.name, changed, inserted)
        if found:
            per_file[path] = found
            parsed_old[path] = old
    if len(per_file) < 2 or sum(len(v) for v in per_file.values()) > MAX_FUNCTIONS:
        return None
    given = max(per_file, key=lambda p: (sizes.get(p, 0), p))
    if len(per_file[given]) > MAX_GIVEN_FUNCTIONS:
        return None
    linked = _linked(git_dir, spec, parent, commit, given, per_file[given])
    targets = [
        Target(d, (d.path, d.start) in linked)
        for path, found in sorted(per_file.items())
        if path != given
        for d in found
    ]
    new_code = git(git_dir, "show", f"{commit}:{given}")
    new = parse(spec.name, given, new_code.encode())
    names = {d.name for d in per_file[given]}
    new_lines = new_code.split("\n")
    query = "\n".join(
        "\n".join(new_lines[d.start - 1 : d.end]) for d in new.definitions if d.name in names
    )
    subject = git(git_dir, "log", "-1", "--format=%s", commit).strip()
    return CoChangeCase(
        repo,
        spec.name,
        parent,
        commit,
        subject,
        given,
        sorted(names),
        targets,
        query,
    )


def _linked(
    git_dir: str,
    spec: Lang,
    parent: str,
    commit: str,
    given: str,
    functions: list[Definition],
) -> set[tuple[str, int]]:
    """(path, first line) of the parent's definitions the benchmark's resolver links to
    the given file's changed functions: what they call (names with at most
    ``MAX_NAME_DEFINITIONS`` definitions) and what calls them."""
    before = Snapshot(git_dir, parent, spec.name)
    new = parse(spec.name, given, git_bytes(git_dir, "show", f"{commit}:{given}"))
    linked: set[tuple[str, int]] = set()
    names = {d.name for d in functions}
    for definition in new.definitions:
        if definition.name not in names:
            continue
        called = {n for line, n in new.calls if definition.start <= line <= definition.end}
        for name in called - names:
            found = before.by_name.get(name, [])
            if 1 <= len(found) <= MAX_NAME_DEFINITIONS:
                linked.update((d.path, d.start) for d in found)
    for path, parsed in before.files.items():
        if path == given:
            continue
        lines = [line for line, n in parsed.calls if n in names]
        for d in parsed.definitions:
            if any(d.start <= line <= d.end for line in lines):
                linked.add((d.path, d.start))
    return linked
