"""Running the repository's CI templates as their runners would: the Action's steps of
``action.yml`` with the inputs the README's workflow gives, and the GitLab job's script
with GitLab's predefined variables."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import yaml

from tests.processes import clean_env

ROOT = Path(__file__).resolve().parents[2]
ACTION = ROOT / "action.yml"
WORKFLOW = ROOT / "templates" / "github-workflow.yml"
GITLAB_JOB = ROOT / "templates" / "reviewbot.gitlab-ci.yml"
EXPRESSION = re.compile(r"\$\{\{\s*([^}]+?)\s*\}\}")


def load(path: Path) -> dict[str, Any]:
    # YAML 1.1 reads a workflow's `on:` as True; GitHub reads it as "on"
    data = yaml.safe_load(path.read_text())
    if True in data:
        data["on"] = data.pop(True)
    return dict(data)


def workflow_inputs() -> dict[str, str]:
    """The inputs the README's workflow gives the action (``with:`` of its step)."""
    [step] = [s for s in load(WORKFLOW)["jobs"]["review"]["steps"] if "reviewbot" in s["uses"]]
    return {k: str(v) for k, v in step.get("with", {}).items()}


def evaluate(text: str, context: dict[str, str]) -> str:
    """``text`` with each ``${{ expression }}`` replaced by ``context[expression]``."""
    return EXPRESSION.sub(lambda m: context[m.group(1)], text)


def run_action_step(
    step_id: str, given: dict[str, str], actions_env: dict[str, str], cwd: Path, temp: Path
) -> subprocess.CompletedProcess[str]:
    """Run the step ``step_id`` of ``action.yml`` as the runner would: its ``env:`` with the
    expressions evaluated (``given`` inputs over the declared defaults, ``runner.temp``),
    the runner's own variables (``actions_env``), its ``run:`` script in bash."""
    action = load(ACTION)
    inputs = {name: str(spec.get("default", "")) for name, spec in action["inputs"].items()}
    context = {"runner.temp": str(temp), "github.token": actions_env.get("GITHUB_TOKEN", "")}
    for name, value in inputs.items():
        inputs[name] = given.get(name, evaluate(value, context))
    context |= {f"inputs.{name}": value for name, value in inputs.items()}
    [step] = [s for s in action["runs"]["steps"] if s.get("id") == step_id]
    env = {name: evaluate(str(value), context) for name, value in step["env"].items()}
    assert step["shell"] == "bash"
    bin_dir = str(Path(sys.executable).parent)
    full = clean_env(**actions_env) | env
    full["PATH"] = f"{bin_dir}:{os.environ['PATH']}:/usr/sbin:/sbin"
    return subprocess.run(
        ["bash", "-e", "-c", step["run"]],
        env=full,
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )


def run_gitlab_script(variables: dict[str, str], cwd: Path) -> subprocess.CompletedProcess[str]:
    """The GitLab job's ``script:`` (not its ``before_script``, which installs reviewbot
    in the job's image), with its ``variables:`` expanded from ``variables`` (GitLab's
    predefined ones and the project's) as the runner does."""
    job = load(GITLAB_JOB)["reviewbot"]
    env = clean_env(**variables)
    for name, value in job["variables"].items():
        env.setdefault(name, _expand(str(value), env))
    env["PATH"] = f"{Path(sys.executable).parent}:{os.environ['PATH']}:/usr/sbin:/sbin"
    script = "\n".join(job["script"])
    return subprocess.run(
        ["bash", "-e", "-c", script],
        env=env,
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )


def _expand(value: str, env: dict[str, str]) -> str:
    return re.sub(r"\$(\w+)", lambda m: env.get(m.group(1), ""), value)
