"""Question to code on real commit histories: a commit's subject as the question, the
functions it changed as the answers (issue 29, part 4). ``/ask`` and the dashboard's
search take a question, not a diff; this measures how well each signal finds the code a
question is about.

A case is a first-parent commit (a merge: against its first parent) that changes 1-6
functions in source files of one language (tests, docs and examples excluded) and whose
subject is a sentence (at least four words; no "Merge", "Bump", "Release" or version
lines; a trailing "(#123)" and a "fix:"-style prefix are dropped). The index is at the
commit's parent. Retrievers: BM25 over tree-sitter definitions (the benchmark's own;
"BM25 functions": over functions and methods only, as ``bench/cochange_bench.py`` says),
the product's lexical signal (BM25 over names, references and summaries), its vector
signal (the embedder chosen), and both fused as ``/ask`` fuses them. Scored: MRR (1 /
rank of the first changed function found) and R@10. Cases are mined back from the
commit each repository's co-change cases were pinned at (``bench/cases/cochange.json``),
and reported held out and in sample as there.

    python -m bench.question_bench [--cases 30] [--embedder hash|local] [--json FILE]
    python -m bench.question_bench --json FILE --report   # the tables of what FILE holds
"""

from __future__ import annotations

import argparse
import json
import re
import statistics
import sys
import tempfile
from collections import defaultdict
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from bench.cochange_bench import HELD_OUT, REPOS
from bench.cochange_cases import changed_functions, old_side_lines
from bench.recall_bench import BASELINES, PINNED_HEADS, bm25_baselines, hits
from bench.recall_cases import LANGS, SECONDARY, Definition, Item, git, git_bytes, parse
from bench.retrieval_runner import ProductRunner, dump, masked, repeatable

_SKIP = re.compile(r"^(merge|bump|release|version|v?\d+\.\d+|revert|update (changelog|deps))", re.I)
_PREFIX = re.compile(r"^[a-z]+(\([^)]*\))?!?:\s*")
_PR = re.compile(r"\s*\(#\d+\)\s*$")


@dataclass
class QuestionCase:
    repo: str
    language: str
    parent: str
    commit: str
    question: str
    targets: list[Definition]


def question_of(subject: str) -> str | None:
    """The question a commit subject asks, or None when it is not a sentence."""
    text = _PREFIX.sub("", _PR.sub("", subject.strip()))
    if _SKIP.match(text) or len(text.split()) < 4:
        return None
    return text


def mine_questions(
    git_dir: str, repo: str, lang: str, limit: int, scan: int, head: str = "HEAD"
) -> list[QuestionCase]:
    spec = LANGS[lang]
    cases: list[QuestionCase] = []
    for commit in git(git_dir, "rev-list", "--first-parent", f"-n{scan}", head).split():
        parents = git(git_dir, "rev-list", "--parents", "-n1", commit).split()[1:]
        question = question_of(git(git_dir, "log", "-1", "--format=%s", commit))
        if not parents or question is None:
            continue
        status = git(git_dir, "diff", "--name-status", "--no-renames", parents[0], commit)
        code = [
            line.split("\t")[1]
            for line in status.splitlines()
            if line.startswith("M\t")
            and line.endswith(spec.extensions)
            and not SECONDARY.search(line.split("\t")[1])
        ]
        if not 1 <= len(code) <= 4:
            continue
        targets: list[Definition] = []
        for path in code:
            old = parse(spec.name, path, git_bytes(git_dir, "show", f"{parents[0]}:{path}"))
            changed, inserted = old_side_lines(git_dir, parents[0], commit, path)
            targets += changed_functions(old, spec.name, changed, inserted)
        if 1 <= len(targets) <= 6:
            cases.append(QuestionCase(repo, lang, parents[0], commit, question, targets))
            if len(cases) >= limit:
                break
    return list(reversed(cases))


def scores(items: list[Item], targets: list[Definition]) -> dict[str, float]:
    first = next((i for i, it in enumerate(items, 1) if any(hits(it, t) for t in targets)), None)
    top = items[:10]
    return {
        "MRR": 1 / first if first else 0.0,
        "R@10": sum(any(hits(i, t) for i in top) for t in targets) / len(targets),
    }


def main() -> None:
    repeatable()
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--mirrors", type=Path, default=Path("/work/.mirror"))
    parser.add_argument("--cases", type=int, default=30, help="cases per repository")
    parser.add_argument("--scan", type=int, default=3000)
    parser.add_argument("--embedder", choices=["hash", "local"], default="hash")
    parser.add_argument("--repos", help="only these (comma-separated owner/name)")
    parser.add_argument("--json", type=Path, help="write per-case scores here")
    parser.add_argument("--dump", type=Path, help="write every case's candidates here")
    parser.add_argument("--report", action="store_true", help="the tables of what --json holds")
    args = parser.parse_args()
    if args.report:
        report(json.loads(args.json.read_text()), args.embedder)
        return
    only = set(args.repos.split(",")) if args.repos else {name for name, _ in REPOS}

    from app.config import Settings
    from app.db.engine import open_database
    from app.indexing.embedder import HashEmbedder, select_embedder

    rows: list[dict[str, Any]] = []
    dumped: list[dict[str, Any]] = []
    # the server may still be writing its last WAL as it stops: a results file must not be lost
    with tempfile.TemporaryDirectory(ignore_cleanup_errors=True) as tmp:
        settings = Settings(data_dir=Path(tmp) / "data", embedding_provider=args.embedder)
        embedder = HashEmbedder() if args.embedder == "hash" else select_embedder(settings)
        with open_database(settings) as db:
            runner = ProductRunner(db.engine, embedder, history=False)
            for full_name, language in [r for r in REPOS if r[0] in only]:
                git_dir = str(args.mirrors / full_name.replace("/", "+") / "repo")
                head = PINNED_HEADS.get(full_name, "HEAD")
                cases = mine_questions(git_dir, full_name, language, args.cases, args.scan, head)
                for case in cases:
                    runner.index(full_name, git_dir, case.parent)
                    chunks = question_candidates(db.engine, full_name, case.question, embedder)
                    results = {
                        name: question_items(chunks, signals)
                        for name, signals in QUESTION_RETRIEVERS.items()
                    }
                    results.update(
                        bm25_baselines(git_dir, case.parent, language, set(), case.question)
                    )
                    for retriever, items in results.items():
                        rows.append(
                            {
                                "repo": full_name,
                                "language": language,
                                "held_out": full_name in HELD_OUT,
                                "commit": case.commit,
                                "retriever": retriever,
                                **scores(items, case.targets),
                            }
                        )
                    if args.dump:
                        dumped.append(
                            {
                                "benchmark": "question",
                                "repo": full_name,
                                "commit": case.commit,
                                "targets": [[t.path, t.start, t.end] for t in case.targets],
                                "candidates": dump(chunks),
                            }
                        )
                print(f"{full_name}: {len(cases)} cases", file=sys.stderr)
                if args.json:  # after each repository: a long run can be cut short
                    args.json.write_text(json.dumps(rows, indent=1))
    if args.json:
        args.json.write_text(json.dumps(rows, indent=1))
    if args.dump:
        args.dump.write_text(json.dumps(dumped))
    report(rows, args.embedder)


QUESTION_RETRIEVERS = {
    "fused": ("lexical", "vector", "words"),
    "lexical + vector": ("lexical", "vector"),
    "lexical": ("lexical",),
    "vector": ("vector",),
    "words": ("words",),
}
SEARCH_SIGNALS = QUESTION_RETRIEVERS["fused"]


def question_candidates(engine: Any, repo: str, question: str, embedder: Any) -> list[Any]:
    """Every candidate ``/ask`` weighs for ``question``, with its evidence."""
    from app.config import SECONDARY_PATHS
    from app.indexing.embedder import EmbeddingUsage
    from app.retrieval.candidates import load_candidates, question_evidence, secondary_paths
    from app.retrieval.vector_search import indexed_repository
    from app.retrieval.weights import QUESTION_DEPTH

    vectors = embedder.embed([question], EmbeddingUsage())
    with engine.begin() as conn:
        repo_id = indexed_repository(conn, repo, embedder.model)
        found = question_evidence(
            conn, repo_id, question, vectors, embedder.model, set(SEARCH_SIGNALS), QUESTION_DEPTH
        )
        return load_candidates(conn, found, secondary_paths(SECONDARY_PATHS))


def question_items(chunks: list[Any], signals: tuple[str, ...], weights: Any = None) -> list[Item]:
    from app.retrieval.ranking import rank_context
    from app.retrieval.weights import QUESTION_MAX_PER_FILE, QUESTION_WEIGHTS, question_score

    weights = weights or QUESTION_WEIGHTS
    scored = []
    for chunk in chunks:
        evidence = masked(chunk.evidence, signals)
        if evidence.signals:
            score = question_score(weights, evidence, chunk.chunk_type)
            scored.append(replace(chunk, evidence=evidence, score=score))
    ranked = rank_context(scored, QUESTION_MAX_PER_FILE)
    return [Item(c.file_path, c.start_line, c.end_line, c.chunk_type, 0) for c in ranked]


def report(rows: list[dict[str, Any]], embedder: str) -> None:
    cases = len({r["commit"] for r in rows})
    print(f"\n{cases} cases, embedder {embedder}\n")
    print("| retriever | scope | cases | MRR | R@10 |")
    print("|---|---|---|---|---|")
    groups: dict[tuple[str, str], list[dict[str, Any]]] = defaultdict(list)
    for r in rows:
        sample = "held out" if r.get("held_out") else "in sample"
        groups[(r["retriever"], sample)].append(r)
        groups[(r["retriever"], f"{sample} {r['language']}")].append(r)
    languages = sorted({f" {r['language']}" for r in rows})
    for retriever in [*QUESTION_RETRIEVERS, *BASELINES]:
        for scope in (
            f"{sample}{lang}" for sample in ("held out", "in sample") for lang in ("", *languages)
        ):
            group = groups.get((retriever, scope), [])
            if group:
                mrr = statistics.mean(g["MRR"] for g in group)
                r10 = statistics.mean(g["R@10"] for g in group)
                print(f"| {retriever} | {scope} | {len(group)} | {mrr:.3f} | {r10:.3f} |")


if __name__ == "__main__":
    main()
