"""Runs the steps of examples/ci as the CI services would, on this machine.

The commands come from the YAML files themselves: a step's `run:` (GitHub) or a job's
`script:` (GitLab) goes to bash with the environment its `env:`/`variables:` give it, each
`${{ expression }}` replaced by the value the test names (an expression the test does not
name fails the test, so a new input cannot slip by). `uv run --frozen ddb2bigtable` is the
real uv on this project's locked environment, run in a temporary copy of the project.
Pulumi is not here: steps that call `pulumi` are checked by the schema and zizmor only,
except `pulumi config set`, whose effect on the stack file is reproduced (as its
documentation states it) so the stage a workflow configures is planned for real.
"""

from __future__ import annotations

import os
import re
import shlex
import shutil
import subprocess
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from ...conftest import ROOT

CI = ROOT / "examples" / "ci"
EXPRESSION = re.compile(r"\$\{\{\s*(.*?)\s*\}\}")


def load(name: str) -> dict[str, Any]:
    return yaml.safe_load((CI / name).read_text())


def substitute(text: str, values: dict[str, str]) -> str:
    """`${{ expr }}` -> values[expr]; KeyError names an expression the test did not give."""
    return EXPRESSION.sub(lambda m: values[m.group(1)], text)


def step(workflow: dict[str, Any], job: str, name: str) -> dict[str, Any]:
    return next(s for s in workflow["jobs"][job]["steps"] if s.get("name") == name)


def ddb2bigtable_steps(workflow: dict[str, Any]) -> set[tuple[str, str]]:
    """(job, step name) of every step whose script runs ddb2bigtable."""
    return {(job_id, s.get("name", "")) for job_id, job in workflow["jobs"].items() for s in job["steps"]
            if "ddb2bigtable " in s.get("run", "")}


def github_env(workflow: dict[str, Any], job: str, step_: dict[str, Any], values: dict[str, str]) -> dict[str, str]:
    """The workflow's, the job's and the step's `env:`, in GitHub's order, expressions substituted."""
    env: dict[str, str] = {}
    for layer in (workflow.get("env", {}), workflow["jobs"][job].get("env", {}), step_.get("env", {})):
        env.update({k: substitute(str(v), values) for k, v in layer.items()})
    return env


def uv() -> str:
    found = os.environ.get("UV") or shutil.which("uv") or str(ROOT / ".tools" / "bin" / "uv")
    assert Path(found).exists(), "uv is needed to run the workflows' `uv run` lines"
    return found


@dataclass
class Ran:
    returncode: int
    stdout: str
    stderr: str
    summary: str
    output: str


def bash(script: str, cwd: Path, env: dict[str, str], flags: str = "-eo pipefail") -> Ran:
    """`script` as GitHub runs a `run:` (bash --noprofile --norc -eo pipefail), with a job
    summary and a step output file, `uv run` on this project's locked environment."""
    summary, output = cwd / ".step-summary.md", cwd / ".step-output"
    summary.write_text(""), output.write_text("")
    base = {k: v for k, v in os.environ.items() if k not in ("BIGTABLE_EMULATOR_HOST", "VIRTUAL_ENV")}
    full = {**base, "PATH": f"{Path(uv()).parent}{os.pathsep}{base['PATH']}", "UV_PROJECT": str(ROOT),
            "GITHUB_STEP_SUMMARY": str(summary), "GITHUB_OUTPUT": str(output), **env}
    (cwd / ".step.sh").write_text(script)
    out = subprocess.run(["bash", "--noprofile", "--norc", *flags.split(), ".step.sh"], cwd=cwd, env=full,
                         capture_output=True, text=True, timeout=600)
    return Ran(out.returncode, out.stdout, out.stderr, summary.read_text(), output.read_text())


def project(tmp: Path, *folders: str) -> Path:
    """A copy of the project's specs and stacks (and `folders`), with the helpers of
    examples/ci (stack_summary.py, pr-comment.sh, gitlab_mr.py) in ci/, where the jobs call them."""
    for folder in ("specs", "stacks", *folders):
        shutil.copytree(ROOT / folder, tmp / folder)
    (tmp / "ci").mkdir()
    for helper in [*CI.glob("*.py"), *CI.glob("*.sh")]:
        shutil.copy(helper, tmp / "ci" / helper.name)
    return tmp


def git(repo: Path, *args: str) -> None:
    subprocess.run(["git", "-C", str(repo), "-c", "user.email=t@example.com", "-c", "user.name=t", *args],
                   check=True, capture_output=True)


def pull_request(tmp: Path, path: str, old: str, new: str) -> Path:
    """A clone of an `origin` whose main holds the project, with one commit on a branch that
    replaces `old` by `new` in `path`: what a checkout of a pull request with fetch-depth 0 has."""
    origin = project(tmp / "origin")
    git(origin, "init", "-q", "-b", "main")
    git(origin, "add", ".")
    git(origin, "commit", "-q", "-m", "base")
    clone = tmp / "clone"
    subprocess.run(["git", "clone", "-q", str(origin), str(clone)], check=True, capture_output=True)
    git(clone, "checkout", "-q", "-b", "change")
    file = clone / path
    text = file.read_text()
    assert old in text, old
    file.write_text(text.replace(old, new, 1))
    git(clone, "commit", "-q", "-am", "head")
    return clone


def _typed(value: str, kind: str | None) -> Any:
    """What `pulumi config set --path` stores: "true"/"false" as booleans, integers as numbers,
    the rest as text (its documentation), unless `--type` says otherwise."""
    converters: dict[str, Callable[[str], Any]] = {"string": str, "int": int, "float": float,
                                                   "bool": lambda v: v == "true"}
    if kind is not None:
        return converters[kind](value)
    if value in ("true", "false"):
        return value == "true"
    return int(value) if re.fullmatch(r"-?\d+", value) else value


def _set_path(config: dict[str, Any], key: str, value: Any) -> None:
    """`key` as `--path` reads it: `top.a.b[0]` sets config[top][a][b][0], making what is missing."""
    top, _, rest = key.partition(".")
    parts: list[str | int] = [top, *(int(i) if i else name for name, i in re.findall(r"([^.\[\]]+)|\[(\d+)\]", rest))]
    node: Any = config
    for part, after in zip(parts, [*parts[1:], None], strict=True):
        if isinstance(part, int):
            node.extend([None] * (part + 1 - len(node)))
        if after is None:
            node[part] = value
        elif isinstance(part, int):
            node[part] = node[part] if node[part] is not None else ([] if isinstance(after, int) else {})
        else:
            node.setdefault(part, [] if isinstance(after, int) else {})
        node = node[part]


def pulumi_config(script: str, env: dict[str, str]) -> dict[str, Any]:
    """The `config:` the script's `pulumi config set` lines leave in the stack file."""
    config: dict[str, Any] = {}
    for line in script.splitlines():
        words = shlex.split(line, comments=True)
        if words[:3] != ["pulumi", "config", "set"]:
            continue
        words = [re.sub(r"\$(\w+)", lambda m: env[m.group(1)], w) for w in words[3:]]
        path, kind, positional, i = False, None, [], 0
        while i < len(words):
            if words[i] == "--path":
                path = True
            elif words[i] in ("--stack", "--type"):
                kind = words[i + 1] if words[i] == "--type" else kind
                i += 1
            else:
                positional.append(words[i])
            i += 1
        key, value = positional
        if path:
            _set_path(config, key, _typed(value, kind))
        else:
            config[key] = value
    return config


def write_stack(root: Path, stack: str, config: dict[str, Any]) -> None:
    (root / "stacks" / f"Pulumi.{stack}.yaml").write_text(yaml.safe_dump({"config": config}, sort_keys=False))
