"""Co-change recall on real commit histories: "what else must change?" (issue 29).

Cases come from ``bench/cochange_cases.py`` (its own resolver, nothing from ``app``):
a commit that changed functions in several files; the retriever gets the diff of one
file, and the targets are the functions the commit changed in the others. For each case
the repository is indexed at the commit's parent (incrementally, oldest case first) and
its history is mined up to the parent, never past it. Scored as the structural benchmark
scores (``bench/recall_bench.py``): R@2000/4000/8000 (items in rank order while
ceil(chars/4) of their code fits), R@10, MRR; "R@4000 unlinked" counts only the targets
the benchmark's resolver does not link to the given change (no call or import between
them), the ones a symbol graph cannot find; "lines R@B" costs each item by its whole
line range (ceil(chars/4) of lines start..end), not by what the product shows of it
(an excerpt). Retrievers: reviewbot (all signals), each signal left out and each alone
(ablation), and BM25 over tree-sitter definitions of the parent (the given file, tests,
docs and examples left out), queried with the given file's diff: "BM25" over every
definition, a class whole with its methods, and "BM25 functions" over functions and
methods, a class holding methods left to them (``recall_bench.function_chunks``): the
units the product ranks. A whole class is one item that hits every method in it, so
"BM25"'s R@10 and MRR count items no function-level ranking can match; its R@B pays
for the whole class.

    python -m bench.cochange_bench --out DIR [--embedder hash|local] [--repos R,..]
    python -m bench.cochange_bench --out DIR --report   # the tables of what DIR holds
    python -m bench.cochange_bench --pin [--cases 15]   # mine and pin the cases (once)

**Pinned and held out** (issue 47). The cases are pinned in ``bench/cases/cochange.json``:
for each repository the commit its history was mined from, and each case's commit, given
file and targets (line ranges; no third-party code). A run derives each case again from
its commit and refuses a case that no longer matches its pin, so a rerun anywhere (the
mirrors' location is ``--mirrors``) is the same benchmark. ``HELD_OUT`` repositories were
chosen before any change of the ranking in issue 47 and are never inspected while
designing or fitting: their figures are reported, and are the headline ones.

Each repository's per-case scores and candidates go to DIR/<owner+name>.json and
.dump.json as soon as it is done, so a run can be split over processes and resumed.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

from bench.cochange_cases import CoChangeCase, case_key, mine_cochange, pinned_case
from bench.recall_bench import BASELINES, _recall, bm25_baselines, score, span_cost
from bench.recall_cases import Item, git
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
    ("encode/starlette", "python"),
    ("pallets/jinja", "python"),
    ("Textualize/rich", "python"),
    ("spf13/cobra", "go"),
    ("gin-gonic/gin", "go"),
    ("urfave/cli", "go"),
    ("uber-go/zap", "go"),
    ("sirupsen/logrus", "go"),
    ("colinhacks/zod", "typescript"),
    ("trpc/trpc", "typescript"),
    ("sindresorhus/got", "typescript"),
    ("reduxjs/redux-toolkit", "typescript"),
    ("honojs/hono", "typescript"),
    # held out (HELD_OUT): chosen 2026-12-04 before any ranking change of issue 47
    ("pallets/flask", "python"),
    ("encode/uvicorn", "python"),
    ("marshmallow-code/marshmallow", "python"),
    ("labstack/echo", "go"),
    ("go-chi/chi", "go"),
    ("spf13/viper", "go"),
    ("immerjs/immer", "typescript"),
    ("pmndrs/jotai", "typescript"),  # in place of sindresorhus/ky: 2 cases in 3,000 commits
    # issue 52's languages, chosen 2026-12-05: for Java and Rust before any of their link
    # rules was written, for the others before theirs (Kotlin's were, on a made-up file)
    ("square/javapoet", "java"),
    ("jhy/jsoup", "java"),
    ("serde-rs/json", "rust"),
    ("BurntSushi/ripgrep", "rust"),
    ("square/moshi", "kotlin"),
    ("FluentValidation/FluentValidation", "csharp"),  # Newtonsoft.Json's mirror lacks blobs
    ("serilog/serilog", "csharp"),
    ("rack/rack", "ruby"),
    ("guzzle/guzzle", "php"),
    # chosen 2026-12-06, in sample: two more PHP repositories, one of many classes behind
    # one interface (handlers), one whose tests sit beside its code, to look into the
    # held-out PHP failure without looking at the held-out repository
    ("Seldaek/monolog", "php"),
    ("thephpleague/csv", "php"),  # its tests sit beside the code (src/ReaderTest.php)
    # chosen 2026-12-06 (eleventh session), in sample: a second and third Ruby repository
    # (one with adapters and middleware, one a command-line library) and a third C# one
    # (a modern .NET library), to look into the held-out Ruby and C# misses without
    # looking at the held-out repositories
    ("lostisland/faraday", "ruby"),
    ("rails/thor", "ruby"),
    ("restsharp/RestSharp", "csharp"),
    ("redis/hiredis", "c"),
    ("fmtlib/fmt", "cpp"),
    # chosen 2026-12-06 (thirteenth session), in sample, before any run on them: two
    # Symfony components (one convention of many classes, services typed by interface),
    # to look into the held-out PHP shortfall without looking at the held-out repositories
    ("symfony/routing", "php"),
    ("symfony/http-foundation", "php"),
    # chosen 2026-12-07 (fourteenth session), in sample, before any run on them: two more
    # C# libraries (a mediator by AutoMapper's author; a generic-heavy container), to look
    # into the held-out C# shortfall without looking at the held-out repositories
    ("jbogard/MediatR", "csharp"),
    ("autofac/Autofac", "csharp"),
    # chosen 2026-12-07 (sixteenth session), in sample, before any run on them: an HTTP
    # library in Rust and a header-heavy C++ library, to look into held-out Rust's
    # co-change at 2,000 tokens and C++'s at 8,000 without looking at the held-out ones
    ("hyperium/hyper", "rust"),
    ("gabime/spdlog", "cpp"),
    # chosen 2026-12-07 (seventeenth session), in sample, before any run on it: a Java
    # library of class hierarchies (JUnit 4's runners), to test Java's inherited calls
    # where they occur (javapoet's and jsoup's cases reach none)
    ("junit-team/junit4", "java"),
    ("google/gson", "java"),  # held out
    ("tokio-rs/axum", "rust"),  # held out
    ("square/kotlinpoet", "kotlin"),  # held out (coil-kt/coil's mirror lacks blobs)
    ("App-vNext/Polly", "csharp"),  # held out
    ("jekyll/jekyll", "ruby"),  # held out
    ("thephpleague/flysystem", "php"),  # held out
    ("jqlang/jq", "c"),  # held out
    ("google/leveldb", "cpp"),  # held out
    # held out, chosen 2026-12-06 before any run on them: a second held-out repository a
    # language, as each of issue 52's criteria rested on one repository of 15 cases (a 95%
    # interval about +-0.15 wide: bench/RESULTS.md, "How sure")
    ("square/retrofit", "java"),
    ("AutoMapper/AutoMapper", "csharp"),
    ("seanmonstar/reqwest", "rust"),
    ("jbeder/yaml-cpp", "cpp"),
    ("InsertKoinIO/koin", "kotlin"),
    ("sinatra/sinatra", "ruby"),
    ("symfony/console", "php"),
    ("madler/zlib", "c"),
    # JavaScript, chosen 2026-12-06 (twelfth session) before any JavaScript link rule was
    # written and before any run on them: CommonJS and ES modules, a web framework, a
    # test runner, an HTTP client; two of them held out
    ("expressjs/express", "javascript"),
    ("fastify/fastify", "javascript"),
    ("mochajs/mocha", "javascript"),
    ("axios/axios", "javascript"),  # held out
    ("nodejs/undici", "javascript"),  # held out
    # held out, chosen 2026-12-07 (seventeenth session) before any run on them and with
    # app/ unchanged since: a third held-out repository for each of issue 52's eight
    # languages, every language alike (not only those short of a criterion), as the three
    # shortfalls left were each within chance. Issue 52 is judged on all three a language.
    # Pre-named alternates for one that yields under 10 cases: mockito/mockito,
    # square/wire, Humanizr/Humanizer, tokio-rs/tracing, sidekiq/sidekiq,
    # composer/composer, libuv/libuv, CLIUtils/CLI11.
    ("FasterXML/jackson-core", "java"),
    ("square/okio", "kotlin"),
    ("FakeItEasy/FakeItEasy", "csharp"),
    ("rust-random/rand", "rust"),
    ("ruby-grape/grape", "ruby"),
    ("slimphp/Slim", "php"),
    ("tmux/tmux", "c"),
    ("google/benchmark", "cpp"),
]
#: Never inspected while designing or fitting; their figures are the headline ones.
HELD_OUT = frozenset(
    {
        "pallets/flask",
        "encode/uvicorn",
        "marshmallow-code/marshmallow",
        "labstack/echo",
        "go-chi/chi",
        "spf13/viper",
        "immerjs/immer",
        "pmndrs/jotai",
        "google/gson",
        "tokio-rs/axum",
        "square/kotlinpoet",
        "App-vNext/Polly",
        "jekyll/jekyll",
        "thephpleague/flysystem",
        "jqlang/jq",
        "axios/axios",
        "nodejs/undici",
        "google/leveldb",
        "square/retrofit",
        "AutoMapper/AutoMapper",
        "seanmonstar/reqwest",
        "jbeder/yaml-cpp",
        "InsertKoinIO/koin",
        "sinatra/sinatra",
        "symfony/console",
        "madler/zlib",
        "FasterXML/jackson-core",
        "square/okio",
        "FakeItEasy/FakeItEasy",
        "rust-random/rand",
        "ruby-grape/grape",
        "slimphp/Slim",
        "tmux/tmux",
        "google/benchmark",
    }
)
PINNED = Path(__file__).parent / "cases" / "cochange.json"
METRICS = (
    "R@2000",
    "R@4000",
    "R@8000",
    "R@10",
    "MRR",
    "R@4000 unlinked",
    "lines R@2000",
    "lines R@4000",
    "lines R@8000",
)


def case_scores(items: list[Item], case: CoChangeCase) -> dict[str, Any]:
    found: dict[str, Any] = score(items, case.definitions)
    unlinked = [t.definition for t in case.targets if not t.linked]
    if unlinked:
        taken, used = [], 0
        for item in items:
            if used + item.cost <= 4000:
                used += item.cost
                taken.append(item)
        found["R@4000 unlinked"] = _recall(taken, unlinked)
    return found


def main() -> None:
    repeatable()
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--mirrors", type=Path, default=Path("/work/.mirror"))
    parser.add_argument("--cases", type=int, default=15, help="cases per repository (--pin)")
    parser.add_argument("--pin", action="store_true", help="mine the cases and pin them")
    parser.add_argument("--scan", type=int, default=3000, help="commits mined per repository")
    parser.add_argument("--embedder", choices=["hash", "local"], default="hash")
    parser.add_argument("--out", type=Path, help="per-repository results")
    parser.add_argument("--report", action="store_true", help="only print what --out holds")
    parser.add_argument("--repos", help="only these (comma-separated owner/name)")
    args = parser.parse_args()
    only = set(args.repos.split(",")) if args.repos else {name for name, _ in REPOS}
    if not args.pin and args.out is None:
        parser.error("--out is required")
    if args.pin:
        pin(args.mirrors, only, args.cases, args.scan)
        return
    args.out.mkdir(parents=True, exist_ok=True)
    if args.report:
        report_dir(args.out, args.embedder)
        return

    from app.config import Settings
    from app.db.engine import open_database
    from app.indexing.embedder import HashEmbedder, select_embedder

    # the server may still be writing its last WAL as it stops: a results file must not be lost
    with tempfile.TemporaryDirectory(ignore_cleanup_errors=True) as tmp:
        settings = Settings(data_dir=Path(tmp) / "data", embedding_provider=args.embedder)
        embedder = HashEmbedder() if args.embedder == "hash" else select_embedder(settings)
        with open_database(settings) as db:
            runner = ProductRunner(db.engine, embedder)
            for full_name, language in [r for r in REPOS if r[0] in only]:
                rows: list[dict[str, Any]] = []
                dumped: list[dict[str, Any]] = []
                git_dir = str(args.mirrors / full_name.replace("/", "+") / "repo")
                started = time.perf_counter()
                cases = pinned_cases(git_dir, full_name, language)
                mined = time.perf_counter() - started
                for case in cases:
                    runner.index(full_name, git_dir, case.parent)
                    chunks = runner.candidates(
                        full_name, git_dir, case.parent, case.commit, [case.given]
                    )
                    span = span_cost(git_dir, case.parent)
                    results = {
                        name: ranked(chunks, s, runner.touched, span=span)
                        for name, s in retrievers().items()
                    }
                    diff = git(
                        git_dir, "diff", "--no-renames", case.parent, case.commit, "--", case.given
                    )
                    results.update(
                        bm25_baselines(git_dir, case.parent, language, {case.given}, diff)
                    )
                    for retriever, items in results.items():
                        rows.append(
                            {
                                "repo": full_name,
                                "language": language,
                                "held_out": full_name in HELD_OUT,
                                "commit": case.commit,
                                "retriever": retriever,
                                "targets": len(case.targets),
                                "linked": sum(t.linked for t in case.targets),
                                **case_scores(items, case),
                            }
                        )
                    dumped.append(
                        {
                            "benchmark": "cochange",
                            "repo": full_name,
                            "language": language,
                            "commit": case.commit,
                            "targets": [
                                [t.definition.path, t.definition.start, t.definition.end]
                                for t in case.targets
                            ],
                            "changed": runner.touched,
                            "candidates": dump(chunks, span),
                        }
                    )
                stem = args.out / full_name.replace("/", "+")
                Path(f"{stem}.json").write_text(
                    json.dumps({"rows": rows, "timings": runner.timings}, indent=1)
                )
                Path(f"{stem}.dump.json").write_text(json.dumps(dumped))
                runner.timings = {name: [] for name in runner.timings}
                print(
                    f"{full_name}: {len(cases)} cases (mined in {mined:.0f} s)",
                    file=sys.stderr,
                )
    report_dir(args.out, args.embedder)


def pin(mirrors: Path, only: set[str], limit: int, scan: int) -> None:
    """Mine each repository's cases from its mirror's HEAD and pin them (a repository
    pinned already keeps its pin)."""
    pinned = json.loads(PINNED.read_text()) if PINNED.exists() else {}
    for full_name, language in REPOS:
        if full_name not in only or full_name in pinned:
            continue
        git_dir = str(mirrors / full_name.replace("/", "+") / "repo")
        head = git(git_dir, "rev-parse", "HEAD").strip()
        cases = mine_cochange(git_dir, full_name, language, limit, scan, head)
        pinned[full_name] = {
            "language": language,
            "held_out": full_name in HELD_OUT,
            "mined_from": head,
            "cases": [case_key(case) for case in cases],
        }
        print(f"{full_name}: pinned {len(cases)} cases", file=sys.stderr)
    PINNED.parent.mkdir(exist_ok=True)
    PINNED.write_text(json.dumps(pinned, indent=1, sort_keys=True) + "\n")


def pinned_cases(git_dir: str, full_name: str, language: str) -> list[CoChangeCase]:
    """The repository's pinned cases, each derived again and held to its pin."""
    pins = json.loads(PINNED.read_text())[full_name]["cases"]
    cases = []
    for pinned in pins:
        case = pinned_case(git_dir, full_name, language, pinned["commit"])
        if case_key(case) != pinned:
            raise ValueError(f"{full_name}@{pinned['commit'][:12]} differs from its pin")
        cases.append(case)
    return cases


def report_dir(out: Path, embedder: str) -> None:
    rows: list[dict[str, Any]] = []
    timings: dict[str, list[float]] = defaultdict(list)
    for path in sorted(out.glob("*.json")):
        if path.name.endswith(".dump.json"):
            continue
        data = json.loads(path.read_text())
        rows += data["rows"]
        for name, values in data["timings"].items():
            timings[name] += values
    report(rows, timings, embedder)


def report(rows: list[dict[str, Any]], timings: dict[str, list[float]], embedder: str) -> None:
    cases = len({r["commit"] for r in rows})
    targets = sum(r["targets"] for r in rows if r["retriever"] == "BM25")
    linked = sum(r["linked"] for r in rows if r["retriever"] == "BM25")
    print(f"\n{cases} cases, {targets} targets ({linked} linked), embedder {embedder}\n")
    print("| retriever | scope | cases | " + " | ".join(METRICS) + " |")
    print("|---|---|---|" + "---|" * len(METRICS))
    groups: dict[tuple[str, str], list[dict[str, Any]]] = defaultdict(list)
    for r in rows:
        sample = "held out" if r.get("held_out") else "in sample"
        groups[(r["retriever"], sample)].append(r)
        groups[(r["retriever"], f"{sample} {r['language']}")].append(r)
    for retriever in [*retrievers(), *BASELINES]:
        scopes = tuple(
            f"{sample}{lang}"
            for sample in ("held out", "in sample")
            for lang in ("", " python", " go", " typescript")
        )
        if retriever not in {"reviewbot", *BASELINES}:
            scopes = ("held out", "in sample")
        for scope in scopes:
            group = groups.get((retriever, scope), [])
            if not group:
                continue
            means = []
            for metric in METRICS:
                values = [float(g[metric]) for g in group if metric in g]
                means.append(f"{statistics.mean(values):.3f}" if values else "-")
            print(f"| {retriever} | {scope} | {len(group)} | " + " | ".join(means) + " |")
    print_timings(timings)


if __name__ == "__main__":
    main()
