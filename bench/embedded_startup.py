"""Time the embedded PostgreSQL: first start (initdb + start) and second start (start only).

Each start runs in a fresh interpreter, as `reviewbot serve` would, and is stopped in
between. Usage: python bench/embedded_startup.py [--runs N]
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

CHILD = """
import sys, time
from pathlib import Path
t = time.perf_counter()
from app.db.embedded import start_embedded_server
start_embedded_server(Path(sys.argv[1]))
print(time.perf_counter() - t)
"""


def one_start(data_dir: Path) -> float:
    """Seconds from a fresh interpreter's import to a ready server with our database."""
    result = subprocess.run(
        [sys.executable, "-c", CHILD, str(data_dir)], capture_output=True, text=True, check=True
    )
    return float(result.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    first, second = [], []
    for _ in range(args.runs):
        with tempfile.TemporaryDirectory() as tmp:
            first.append(one_start(Path(tmp) / "data"))
            second.append(one_start(Path(tmp) / "data"))
    print(f"first start  (initdb + start): median {statistics.median(first):.2f} s  {first}")
    print(f"second start (start only)    : median {statistics.median(second):.2f} s  {second}")


if __name__ == "__main__":
    main()
