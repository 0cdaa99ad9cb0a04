"""Runs a whole job of examples/ci as its CI service would: every step or script line, in
order, under the shell the service uses, with stand-in `pulumi` and `gh` on PATH.

The shells, from the services' own documentation and source:
- GitHub (Workflow syntax, `jobs.<job_id>.steps[*].shell`, docs.github.com, read 2026-12-07):
  a step with no `shell` on Linux runs `bash -e {0}` (no pipefail: "this runs a different
  command to when `bash` is specified explicitly"); `shell: bash`, given on the step or in
  `defaults.run.shell` of the job or the workflow, runs `bash --noprofile --norc -eo pipefail {0}`.
- GitLab (gitlab-runner, shells/bash.go, `BashWriter.Finish`): one script holding the job's
  `before_script` and `script` lines, run as `set -o pipefail` (when the shell has it),
  `set -o errexit`, `set +o noclobber`, then `: | eval '<the lines>'`; bash in both images the
  pipeline uses. A failed line ends the job with exit code 1 whatever its own code (errexit
  inside the eval of a pipeline's last part), as GitLab's "Job failed: exit code 1" shows.

What is not run, and why: `uses:` steps are what their action does for these jobs (checkout:
the test prepared the folder; setup-uv and pulumi/actions without a command: the tools are on
PATH already; google-github-actions/auth: GOOGLE_APPLICATION_CREDENTIALS set, and the service
account it was given recorded). Installing lines (`uv sync --frozen` of the copy, uv's and
Pulumi's installers) are left out: the project's own environment runs `uv run`, and the
stand-ins are the CLIs. INSTALLS lists them; a line not in it always runs.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .steps import EXPRESSION, uv

HERE = Path(__file__).resolve().parent
INSTALLS = {
    "uv sync --frozen",
    'pip install --quiet "uv==$UV_VERSION"',
    'curl -fsSL https://get.pulumi.com | sh -s -- --version "$PULUMI_VERSION"',
    'curl -LsSf "https://astral.sh/uv/$UV_VERSION/install.sh" | sh',
}
GITHUB_DEFAULT = ["bash", "-e"]
GITHUB_BASH = ["bash", "--noprofile", "--norc", "-eo", "pipefail"]
GITLAB_PROLOGUE = ("if set -o | grep pipefail > /dev/null; then set -o pipefail; fi; set -o errexit\n"
                   "set +o noclobber\n")


def standins(tmp: Path, world: dict[str, Any]) -> dict[str, str]:
    """A bin folder with `pulumi` and `gh` answering from `world` (saved as world.json), and
    the environment that puts them first on PATH."""
    bin_ = tmp / "standin-bin"
    bin_.mkdir(parents=True, exist_ok=True)
    for cli in ("pulumi", "gh"):
        shim = bin_ / cli
        shim.write_text(f'#!/bin/sh\nexec "{sys.executable}" "{HERE / "standin_cli.py"}" {cli} "$@"\n')
        shim.chmod(0o755)
    world.setdefault("pulumi", {}).setdefault("stacks", {})
    world.setdefault("gh", {}).setdefault("pulls", {})
    (tmp / "world.json").write_text(json.dumps(world))
    base = {k: v for k, v in os.environ.items() if k not in ("BIGTABLE_EMULATOR_HOST", "VIRTUAL_ENV")}
    return {**base, "PATH": os.pathsep.join([str(bin_), str(Path(uv()).parent), base["PATH"]]),
            "UV_PROJECT": str(HERE.parents[2]), "STANDIN_WORLD": str(tmp / "world.json")}


def world(tmp: Path) -> dict[str, Any]:
    return json.loads((tmp / "world.json").read_text())


@dataclass
class JobRun:
    returncode: int
    failed_step: str | None
    log: str
    summary: str = ""
    identities: list[str] = field(default_factory=list)
    ran: list[str] = field(default_factory=list)


def github_shell(workflow: dict[str, Any], job: dict[str, Any], step: dict[str, Any]) -> list[str]:
    """The command GitHub runs a `run:` step with on Linux (see the module's docstring)."""
    shell = step.get("shell") or job.get("defaults", {}).get("run", {}).get("shell") or \
        workflow.get("defaults", {}).get("run", {}).get("shell")
    if shell is None:
        return GITHUB_DEFAULT
    assert shell == "bash", f"shell {shell!r} is not modelled here"
    return GITHUB_BASH


def _sub(text: str, values: dict[str, str]) -> str:
    return EXPRESSION.sub(lambda m: values[m.group(1)], text)


def run_github_job(workflow: dict[str, Any], job_id: str, root: Path, values: dict[str, str],
                   env: dict[str, str]) -> JobRun:
    """Every step of the job in order, as GitHub would; stops at the first failing step.
    `values` gives each `${{ }}` expression the job's steps use (a missing one fails the test),
    `steps.<id>.outputs.<name>` filled in as the steps write them."""
    job = workflow["jobs"][job_id]
    values = dict(values)
    summary, output, github_env = root / ".summary.md", root / ".output", root / ".github-env"
    summary.write_text(""), github_env.write_text("")
    base = {**env, "GITHUB_STEP_SUMMARY": str(summary), "GITHUB_ENV": str(github_env)}
    for layer in (workflow.get("env", {}), job.get("env", {})):
        base.update({k: _sub(str(v), values) for k, v in layer.items()})
    run = JobRun(0, None, "")
    for number, step in enumerate(job["steps"]):
        name = step.get("name") or step.get("uses") or step["run"]
        assert "if" not in step, f"{job_id}/{name}: a step condition is not modelled"
        if "uses" in step:
            action = step["uses"].split("@")[0]
            with_ = {k: _sub(str(v), values) for k, v in step.get("with", {}).items()}
            if action == "google-github-actions/auth":
                run.identities.append(with_["service_account"])
                (root / ".gcp-credentials.json").write_text("{}")
                base["GOOGLE_APPLICATION_CREDENTIALS"] = str(root / ".gcp-credentials.json")
            elif action == "pulumi/actions":
                assert "command" not in with_, "pulumi/actions with a command is not run here"
            else:
                assert action in ("actions/checkout", "astral-sh/setup-uv", "google-github-actions/setup-gcloud"), action
            continue
        if step["run"].strip() in INSTALLS:
            continue
        output.write_text("")
        step_env = {**base, **{k: _sub(str(v), values) for k, v in step.get("env", {}).items()},
                    "GITHUB_OUTPUT": str(output)}
        for line in github_env.read_text().splitlines():
            key, _, value = line.partition("=")
            step_env[key] = value
        script = root / f".step-{number}.sh"
        script.write_text(step["run"])
        out = subprocess.run([*github_shell(workflow, job, step), str(script)], cwd=root, env=step_env,
                             capture_output=True, text=True, timeout=600)
        run.log += f"--- {name}: exit {out.returncode}\n{out.stdout}{out.stderr}"
        run.ran.append(name)
        if "id" in step:
            for line in output.read_text().splitlines():
                key, _, value = line.partition("=")
                values[f"steps.{step['id']}.outputs.{key}"] = value
        if out.returncode != 0:
            run.returncode, run.failed_step = out.returncode, name
            break
    run.summary = summary.read_text()
    return run


def gitlab_job(pipeline: dict[str, Any], name: str) -> dict[str, Any]:
    """The job with what it `extends` merged in (GitLab merges maps deeply; this file's jobs
    only override whole keys, so one level is enough)."""
    body = pipeline[name]
    parent = body.get("extends")
    merged = {**(gitlab_job(pipeline, parent) if parent else {}), **body}
    if parent and "variables" in body:
        merged["variables"] = {**gitlab_job(pipeline, parent).get("variables", {}), **body["variables"]}
    return merged


def gitlab_variables(pipeline: dict[str, Any], name: str, given: dict[str, str]) -> dict[str, str]:
    """The pipeline's then the job's variables, each expanded with what came before; `given`
    holds GitLab's predefined CI_* variables (the lowest precedence) and the project's CI/CD
    variables (the rest), which outrank the YAML's (GitLab docs, "CI/CD variable precedence");
    the job's `id_tokens` as tokens of their name."""
    values = dict(given)
    project = {k: v for k, v in given.items() if not k.startswith("CI_")}
    job = gitlab_job(pipeline, name)
    for layer in (pipeline.get("variables", {}), job.get("variables", {})):
        for key, value in layer.items():
            values[key] = re.sub(r"\$\{?(\w+)\}?", lambda m: values.get(m.group(1), ""), str(value))
    values.update(project)
    for token in job.get("id_tokens", {}):
        values[token] = f"oidc-token-of-{name}"
    return values


def gitlab_lines(pipeline: dict[str, Any], name: str, key: str = "script") -> list[str]:
    job = gitlab_job(pipeline, name)
    lines = (job.get("before_script", []) if key == "script" else []) + job.get(key, [])
    return [line for line in lines if line.strip() not in INSTALLS]


def run_gitlab_job(pipeline: dict[str, Any], name: str, root: Path, predefined: dict[str, str],
                   env: dict[str, str], key: str = "script") -> JobRun:
    """The job's before_script and script (or its after_script, alone, as GitLab runs it) in
    one bash, wrapped as gitlab-runner's bash.go wraps them."""
    variables = gitlab_variables(pipeline, name, {"CI_BUILDS_DIR": str(root), **predefined})
    body = root / f".{name}-{key}.sh"
    body.write_text("\n".join(gitlab_lines(pipeline, name, key)) + "\n")
    wrapper = root / f".{name}-{key}-runner.sh"
    wrapper.write_text(GITLAB_PROLOGUE + f': | eval "$(cat {body.name})"\nexit 0\n')
    out = subprocess.run(["bash", str(wrapper)], cwd=root, env={**env, **variables},
                         capture_output=True, text=True, timeout=600)
    return JobRun(out.returncode, None if out.returncode == 0 else name, out.stdout + out.stderr)

