"""Recall of retrieved context on real commit histories (issue 9's benchmark).

Cases come from ``bench/recall_cases.py`` (its own resolver, independent of the
product). For each case the repository is indexed at the commit's parent (incrementally,
oldest case first, from ``git archive`` of a bare mirror), the commit's diff is read the
way ``reviewbot context`` reads it, and each retriever returns a ranked list. Scored:

- R@B: share of targets whose definition line lies in a returned item, taking items in
  rank order while their cost fits B tokens (an item too big for what is left is skipped,
  as the packer does); cost = ceil(chars / 4) of the item's code;
- R@10: share of targets hit by the first 10 items; MRR: 1 / rank of the first hit;
- R@4000 any part: as R@4000, but an item holding any line of the target counts (a long
  caller is returned as the window that holds its call, not the one with its signature).

An item of a class chunk hits only a target starting at the class itself (it carries the
member signatures, not their bodies). Retrievers: reviewbot (all signals), each signal
alone (ablation), and BM25 over tree-sitter definitions of the parent commit: "BM25"
over every definition (a class whole), "BM25 functions" over functions and methods
(``function_chunks``; see ``bench/cochange_bench.py``).

Mirrors come from the ``fetch`` tool (bare repositories under /work/.mirror). Run:

    python -m bench.recall_bench --mirrors /work/.mirror [--cases 40] [--embedder hash|local]
"""

from __future__ import annotations

import argparse
import json
import math
import re
import statistics
import sys
import tempfile
import time
from collections import Counter, defaultdict
from collections.abc import Callable, Sequence
from pathlib import Path

from bench.recall_cases import SECONDARY, Case, Definition, Item, Snapshot, git_bytes, mine
from bench.retrieval_runner import (
    ProductRunner,
    dump,
    print_timings,
    ranked,
    repeatable,
    retrievers,
)

REPOS = [
    ("encode/httpx", "python"),
    ("pallets/click", "python"),
    ("python-attrs/attrs", "python"),
    ("spf13/cobra", "go"),
    ("gin-gonic/gin", "go"),
    ("urfave/cli", "go"),
    ("uber-go/zap", "go"),
    ("colinhacks/zod", "typescript"),
    ("sindresorhus/ky", "typescript"),
    ("pmndrs/zustand", "typescript"),
    ("square/javapoet", "java"),
    ("jhy/jsoup", "java"),
    ("serde-rs/json", "rust"),
    ("BurntSushi/ripgrep", "rust"),
    ("square/moshi", "kotlin"),
    ("FluentValidation/FluentValidation", "csharp"),  # Newtonsoft.Json's mirror lacks blobs
    ("serilog/serilog", "csharp"),
    ("rack/rack", "ruby"),
    ("lostisland/faraday", "ruby"),  # in sample, added 2026-12-06 (eleventh session)
    ("rails/thor", "ruby"),  # the same
    ("restsharp/RestSharp", "csharp"),  # the same
    ("guzzle/guzzle", "php"),
    ("Seldaek/monolog", "php"),  # in sample (the co-change pins'), added 2026-12-06
    ("thephpleague/csv", "php"),  # the same
    ("symfony/routing", "php"),  # in sample, added 2026-12-06 (thirteenth session)
    ("symfony/http-foundation", "php"),  # the same
    ("jbogard/MediatR", "csharp"),  # in sample, added 2026-12-07 (fourteenth session)
    ("autofac/Autofac", "csharp"),  # the same
    ("hyperium/hyper", "rust"),  # in sample, added 2026-12-07 (sixteenth session)
    ("gabime/spdlog", "cpp"),  # the same
    ("junit-team/junit4", "java"),  # in sample, added 2026-12-07 (seventeenth session)
    ("redis/hiredis", "c"),
    ("fmtlib/fmt", "cpp"),
    # in sample, added 2026-12-06 (twelfth session; the co-change pins' JavaScript ones)
    ("expressjs/express", "javascript"),
    ("fastify/fastify", "javascript"),
    ("mochajs/mocha", "javascript"),
]
BUDGETS = (2000, 4000, 8000)
#: The co-change benchmark's pins (bench/cases/cochange.json): the commit each
#: repository's cases were mined from, and which repositories are held out.
_PINS = json.loads((Path(__file__).parent / "cases" / "cochange.json").read_text())
PINNED_HEADS = {name: str(pin["mined_from"]) for name, pin in _PINS.items()}
HELD_OUT = frozenset(name for name, pin in _PINS.items() if pin["held_out"])
# the held-out repositories are the co-change benchmark's, mined from the commits pinned there
REPOS += sorted((name, str(_PINS[name]["language"])) for name in HELD_OUT)


def hits(item: Item, target: Definition) -> bool:
    """The item holds the target's definition line (its signature)."""
    if item.path != target.path or not item.start <= target.start <= item.end:
        return False
    return item.chunk_type != "class" or target.start <= item.start + 3


def hits_any_part(item: Item, target: Definition) -> bool:
    """The item holds some of the target's lines: for a long caller cut into windows, the
    window with the call rather than the one with the signature counts too."""
    if item.path != target.path or item.end < target.start or target.end < item.start:
        return False
    return item.chunk_type != "class" or target.start <= item.start + 3


def score(items: Sequence[Item], targets: Sequence[Definition]) -> dict[str, float]:
    found: dict[str, float] = {}
    for budget in BUDGETS:
        used, taken = 0, []
        for item in items:
            if used + item.cost <= budget:
                used += item.cost
                taken.append(item)
        found[f"R@{budget}"] = _recall(taken, targets)
        used, by_lines = 0, []
        for item in items:
            if used + (item.span or item.cost) <= budget:
                used += item.span or item.cost
                by_lines.append(item)
        found[f"lines R@{budget}"] = _recall(by_lines, targets)
        if budget == 4000:
            found["R@4000 any part"] = _recall(taken, targets, hits_any_part)
    if items and items[0].tokens and sum(i.tokens for i in items) >= 4000:
        found["fill@4000"] = fill(items, 4000)  # only when enough candidates exist
    found["R@10"] = _recall(items[:10], targets)
    first = next((i for i, it in enumerate(items, 1) if any(hits(it, t) for t in targets)), None)
    found["MRR"] = 1 / first if first else 0.0
    return found


def fill(items: Sequence[Item], budget: int) -> float:
    """Share of ``budget`` the packer fills with these items, in exact tokens of their
    rendered blocks (what ``pack`` does: greedy, skipping what no longer fits)."""
    used = 0
    for item in items:
        if used + item.tokens <= budget:
            used += item.tokens
    return used / budget


def _recall(
    items: Sequence[Item],
    targets: Sequence[Definition],
    hit: Callable[[Item, Definition], bool] = hits,
) -> float:
    return sum(any(hit(i, t) for i in items) for t in targets) / len(targets)


# -- BM25 baseline --------------------------------------------------------------------

_WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def words(text: str) -> list[str]:
    out = []
    for ident in _WORD.findall(text):
        out.append(ident.lower())
        parts = re.findall(r"[A-Z]?[a-z]+|[A-Z]+(?![a-z])|\d+", ident)
        if len(parts) > 1:
            out += [p.lower() for p in parts]
    return out


def bm25(case: Case, git_dir: str) -> dict[str, list[Item]]:
    """The BM25 baselines for a structural case (``bm25_baselines``): the diff of the files
    the commit touches (its added, removed and context lines) against every definition of
    the parent commit outside them."""
    touched = sorted({c.split(":")[0] for c in case.changed})
    diff = git_bytes(git_dir, "diff", "--no-renames", case.parent, case.commit, "--", *touched)
    return bm25_baselines(
        git_dir, case.parent, case.language, set(touched), diff.decode("utf-8", "replace")
    )


#: Syntax nodes of a function, a method or a constructor, in every benchmarked language.
FUNCTION_KINDS = frozenset(
    {
        "function_definition",
        "function_declaration",
        "function_item",
        "method_declaration",
        "method_definition",
        "constructor_declaration",
        "method",
        "singleton_method",
        # JavaScript's (the resolver's ``Lang.values``: only where a function is the value)
        "generator_function_declaration",
        "variable_declarator",
        "assignment_expression",
    }
)
#: The second baseline's name: BM25 over function chunks (``function_chunks``).
BM25_FUNCTIONS = "BM25 functions"
#: The baselines every retrieval benchmark ranks beside reviewbot (``bm25_baselines``).
BASELINES = ("BM25", BM25_FUNCTIONS)


def function_chunks(definitions: Sequence[Definition]) -> list[Definition]:
    """The definitions a function-level index holds: a type that holds functions (a class
    with methods, an ``impl``) is left out and its functions stand for it; a type holding
    none (fields only, an enum, a struct) stays. Pure.

    Whole, such a type is one item holding every method: it is a target's "hit" for any of
    its methods, so its first hit and R@10 count items no function-level retriever can
    match (bench/RESULTS.md, "Whose first hit: a class or a function")."""
    functions = [d for d in definitions if d.kind in FUNCTION_KINDS]
    return [
        d
        for d in definitions
        if d.kind in FUNCTION_KINDS
        or not any(d.start <= f.start and f.end <= d.end and f != d for f in functions)
    ]


def bm25_items(
    git_dir: str,
    commit: str,
    language: str,
    exclude: set[str],
    query_text: str,
    k1: float = 1.2,
    b: float = 0.75,
    functions_only: bool = False,
) -> list[Item]:
    """Okapi BM25 over tree-sitter definitions at ``commit`` (files in ``exclude``, tests,
    docs and examples left out: no target is one), code words split as identifiers, best
    first, overlaps dropped, at most 200. Queried with a diff's text, it is the strongest
    plain BM25 of those tried (bench/RESULTS.md). Over every definition, a class whole is
    one item: its R@B pays for the whole class, and its R@10 and MRR count it a hit for
    any method in it; ``functions_only`` ranks ``function_chunks``, the units the product
    ranks."""
    snapshot = Snapshot(git_dir, commit, language)
    docs: list[tuple[Definition, Counter[str], int]] = []
    for path, parsed in snapshot.files.items():
        if path in exclude or SECONDARY.search(path):
            continue
        lines = _file_lines(git_dir, commit, path)
        kept = function_chunks(parsed.definitions) if functions_only else parsed.definitions
        for d in kept:
            text = "\n".join(lines[d.start - 1 : d.end])
            docs.append((d, Counter(words(text)), len(text)))
    if not docs:
        return []
    avg = statistics.mean(sum(c.values()) for _, c, _ in docs)
    df: Counter[str] = Counter()
    for _, counts, _ in docs:
        df.update(counts.keys())
    query = set(words(query_text))
    scored = []
    for d, counts, chars in docs:
        length = sum(counts.values())
        s = 0.0
        for term in query & counts.keys():
            idf = math.log(1 + (len(docs) - df[term] + 0.5) / (df[term] + 0.5))
            tf = counts[term]
            s += idf * tf * (k1 + 1) / (tf + k1 * (1 - b + b * length / avg))
        if s > 0:
            scored.append((s, d, chars))
    scored.sort(key=lambda x: (-x[0], x[1].path, x[1].start))
    items: list[Item] = []
    for _, d, chars in scored:
        if any(i.path == d.path and i.start <= d.end and d.start <= i.end for i in items):
            continue
        items.append(Item(d.path, d.start, d.end, "function", math.ceil(chars / 4)))
        if len(items) >= 200:
            break
    return items


def bm25_baselines(
    git_dir: str, commit: str, language: str, exclude: set[str], query_text: str
) -> dict[str, list[Item]]:
    """``BASELINES`` for one query: BM25 over every definition and over function chunks."""
    return {
        "BM25": bm25_items(git_dir, commit, language, exclude, query_text),
        BM25_FUNCTIONS: bm25_items(
            git_dir, commit, language, exclude, query_text, functions_only=True
        ),
    }


_LINES: dict[tuple[str, str], list[str]] = {}


def _file_lines(git_dir: str, commit: str, path: str) -> list[str]:
    key = (commit, path)
    if key not in _LINES:
        _LINES[key] = (
            git_bytes(git_dir, "show", f"{commit}:{path}").decode("utf-8", "replace").split("\n")
        )
    return _LINES[key]


def span_cost(git_dir: str, commit: str) -> Callable[[str, int, int], int]:
    """ceil(chars / 4) of lines ``start`` to ``end`` of a file at ``commit``."""

    def cost(path: str, start: int, end: int) -> int:
        return math.ceil(len("\n".join(_file_lines(git_dir, commit, path)[start - 1 : end])) / 4)

    return cost


def main() -> None:
    repeatable()
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--mirrors", type=Path, default=Path("/work/.mirror"))
    parser.add_argument("--cases", type=int, default=40, help="cases per repository")
    parser.add_argument("--scan", type=int, default=1500, help="commits mined per repository")
    parser.add_argument("--embedder", choices=["hash", "local"], default="hash")
    parser.add_argument("--json", type=Path, help="write per-case scores here")
    parser.add_argument("--dump", type=Path, help="write every case's candidates here")
    parser.add_argument("--repos", help="only these (comma-separated owner/name)")
    args = parser.parse_args()
    only = set(args.repos.split(",")) if args.repos else {name for name, _ in REPOS}

    from app.config import Settings
    from app.db.engine import open_database
    from app.indexing.embedder import HashEmbedder, select_embedder

    rows: list[dict[str, object]] = []
    dumped: list[dict[str, object]] = []
    # the server may still be writing its last WAL as it stops: a results file must not be lost
    with tempfile.TemporaryDirectory(ignore_cleanup_errors=True) as tmp:
        settings = Settings(data_dir=Path(tmp) / "data", embedding_provider=args.embedder)
        embedder = HashEmbedder() if args.embedder == "hash" else select_embedder(settings)
        with open_database(settings) as db:
            runner = ProductRunner(db.engine, embedder)
            for full_name, language in [r for r in REPOS if r[0] in only]:
                git_dir = str(args.mirrors / full_name.replace("/", "+") / "repo")
                started = time.perf_counter()
                head = PINNED_HEADS.get(full_name, "HEAD")
                cases = mine(git_dir, full_name, language, args.cases, args.scan, head)
                mined = time.perf_counter() - started
                for case in cases:
                    runner.index(full_name, git_dir, case.parent)
                    chunks = runner.candidates(full_name, git_dir, case.parent, case.commit)
                    span = span_cost(git_dir, case.parent)
                    results = {
                        name: ranked(
                            chunks, signals, runner.touched, tokens=name == "reviewbot", span=span
                        )
                        for name, signals in retrievers().items()
                    }
                    results.update(bm25(case, git_dir))
                    for retriever, items in results.items():
                        rows.append(
                            {
                                "repo": full_name,
                                "language": language,
                                "held_out": full_name in HELD_OUT,
                                "commit": case.commit,
                                "retriever": retriever,
                                "targets": len(case.targets),
                                **score(items, case.targets),
                            }
                        )
                    if args.dump:
                        dumped.append(
                            {
                                "benchmark": "structural",
                                "repo": full_name,
                                "language": language,
                                "commit": case.commit,
                                "targets": [[t.path, t.start, t.end] for t in case.targets],
                                "changed": runner.touched,
                                "candidates": dump(chunks, span),
                            }
                        )
                print(
                    f"{full_name}: {len(cases)} cases (mined in {mined:.0f} s)",
                    file=sys.stderr,
                )
    if args.json:
        args.json.write_text(json.dumps(rows, indent=1))
    if args.dump:
        args.dump.write_text(json.dumps(dumped))
    report(rows, runner.timings, args.embedder)


def report(rows: list[dict[str, object]], timings: dict[str, list[float]], embedder: str) -> None:

    metrics = [f"R@{b}" for b in BUDGETS] + ["R@10", "MRR", "R@4000 any part"]
    metrics += [f"lines R@{b}" for b in BUDGETS]
    cases = len({r["commit"] for r in rows})
    print(f"\n{cases} cases, embedder {embedder}\n")
    print("| retriever | scope | cases | " + " | ".join(metrics) + " |")
    print("|---|---|---|" + "---|" * len(metrics))
    groups: dict[tuple[str, str], list[dict[str, object]]] = defaultdict(list)
    for r in rows:
        sample = "held out" if r.get("held_out") else "in sample"
        groups[(str(r["retriever"]), sample)].append(r)
        groups[(str(r["retriever"]), f"{sample} {r['language']}")].append(r)
    order = [*retrievers(), *BASELINES]
    for retriever in order:
        scopes = tuple(
            f"{sample}{lang}"
            for sample in ("held out", "in sample")
            for lang in ("", " python", " go", " typescript")
        )
        if retriever not in {"reviewbot", *BASELINES}:
            scopes = ("held out", "in sample")
        for scope in scopes:
            group = groups.get((retriever, scope), [])
            if group:
                means = [[float(g[m]) for g in group if m in g] for m in metrics]  # type: ignore[arg-type]
                print(
                    f"| {retriever} | {scope} | {len(group)} | "
                    + " | ".join(f"{statistics.mean(v):.2f}" if v else "-" for v in means)
                    + " |"
                )
    fills = sorted(
        float(str(r["fill@4000"]))
        for r in rows
        if "fill@4000" in r and r["retriever"] == "reviewbot"
    )
    if fills:
        print(
            f"\nbudget filled at 4000 tokens (reviewbot, exact tokens, the {len(fills)} cases"
            f" with enough candidates): median {statistics.median(fills):.3f},"
            f" p10 {fills[len(fills) // 10]:.3f}"
        )
    print_timings(timings)


if __name__ == "__main__":
    main()
