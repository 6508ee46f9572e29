"""Context retrieval on real release histories: chunks and tokens packed, time split.

Each project's released wheels become a git history (one commit per version, the
package's own source only); every consecutive pair of versions is reviewed like
`reviewbot review --dry-run` (hash embedder, heuristic summaries, no LLM), on a fresh
embedded PostgreSQL. Reported per project: medians over its version pairs.

    for w in requests==2.30.0 requests==2.31.0 requests==2.32.3 click==8.1.3 \\
        click==8.1.7 click==8.2.0 attrs==23.1.0 attrs==23.2.0 attrs==24.2.0; do
        pip download --no-deps -d /tmp/wheels "$w"; done  # one at a time: versions conflict
    python bench/retrieval_bench.py /tmp/wheels
"""

from __future__ import annotations

import argparse
import itertools
import re
import statistics
import subprocess
import tempfile
import time
import zipfile
from collections import defaultdict
from pathlib import Path

from app.config import Settings
from app.db.engine import open_database
from app.indexing.embedder import HashEmbedder
from app.review.local import review_local

GIT_ENV = {
    "GIT_AUTHOR_NAME": "b",
    "GIT_AUTHOR_EMAIL": "b@b",
    "GIT_COMMITTER_NAME": "b",
    "GIT_COMMITTER_EMAIL": "b@b",
    "PATH": "/usr/bin:/bin",
    "HOME": "/nonexistent",
}


def git(root: Path, *args: str) -> str:
    return subprocess.run(
        ["git", "-C", str(root), *args], check=True, capture_output=True, env=GIT_ENV, text=True
    ).stdout.strip()


def history(project: str, wheels: list[Path], root: Path) -> list[str]:
    """A repository with one commit per wheel (oldest first); returns the commit ids."""
    root.mkdir(parents=True)
    git(root, "init", "-q", "-b", "main")
    commits = []
    for wheel in wheels:
        for path in root.iterdir():
            if path.name != ".git":
                subprocess.run(["rm", "-rf", str(path)], check=True)
        with zipfile.ZipFile(wheel) as archive:
            members = [m for m in archive.namelist() if ".dist-info/" not in m]
            archive.extractall(root, members)
        git(root, "add", "-A")
        git(root, "commit", "-q", "-m", f"{project} {wheel.name}")
        commits.append(git(root, "rev-parse", "HEAD"))
    return commits


def version_key(wheel: Path) -> tuple[int, ...]:
    return tuple(int(p) for p in re.findall(r"\d+", wheel.name.split("-")[1]))


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("wheels", type=Path)
    args = parser.parse_args()
    projects: dict[str, list[Path]] = defaultdict(list)
    for wheel in args.wheels.glob("*.whl"):
        projects[wheel.name.split("-")[0]].append(wheel)
    with tempfile.TemporaryDirectory() as tmp:
        settings = Settings(data_dir=Path(tmp) / "data")
        with open_database(settings) as db:
            for project, wheels in sorted(projects.items()):
                wheels.sort(key=version_key)
                root = Path(tmp) / project
                commits = history(project, wheels, root)
                rows = []
                for base, head in itertools.pairwise(commits):
                    started = time.perf_counter()
                    local = review_local(
                        db.engine,
                        root,
                        settings,
                        embedder=HashEmbedder(),
                        summarizer=None,
                        base=base,
                        head=head,
                        name=project,
                    )
                    total = time.perf_counter() - started
                    ctx = local.prepared.context
                    rows.append(
                        (
                            len(ctx.changed),
                            len(ctx.context),
                            ctx.tokens_used,
                            ctx.timings["embedding_s"],
                            ctx.timings["database_s"],
                            local.index.wall_seconds,
                            total,
                        )
                    )
                    print(
                        f"  {project} {base[:7]}..{head[:7]}: {len(ctx.changed)} changed, "
                        f"{len(ctx.context)} chunks, {ctx.tokens_used} tokens, embed "
                        f"{ctx.timings['embedding_s'] * 1000:.0f} ms, db "
                        f"{ctx.timings['database_s'] * 1000:.0f} ms"
                    )
                med = [statistics.median(col) for col in zip(*rows, strict=True)]
                print(
                    f"{project}: {len(rows)} reviews; median {med[0]:.0f} changed functions, "
                    f"{med[1]:.0f} context chunks, {med[2]:.0f} tokens packed; retrieval "
                    f"embedding {med[3] * 1000:.0f} ms + database {med[4] * 1000:.0f} ms; "
                    f"base index {med[5]:.1f} s; whole dry run {med[6]:.1f} s"
                )


if __name__ == "__main__":
    main()
