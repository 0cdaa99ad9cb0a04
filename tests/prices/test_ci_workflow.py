"""The scheduled price-refresh workflow stays in step with the CLI it calls."""

from __future__ import annotations

import re
import shlex

import yaml
from click.testing import CliRunner

from ddb2bigtable.cli.app import main

from ..conftest import ROOT

WORKFLOW = ROOT / "examples" / "ci" / "prices-refresh.yml"


def _commands(workflow: dict) -> list[list[str]]:
    lines = [line.strip() for job in workflow["jobs"].values() for step in job["steps"]
             for line in step.get("run", "").splitlines() if "ddb2bigtable " in line]
    return [shlex.split(re.sub(r"\$\{\{[^}]*\}\}", "x", line.split(">")[0])) for line in lines]


def test_the_refresh_workflow_runs_on_a_schedule_and_its_commands_parse():
    workflow = yaml.safe_load(WORKFLOW.read_text())
    triggers = workflow[True]  # YAML 1.1 reads the key `on` as true
    assert triggers["schedule"] and "workflow_dispatch" in triggers
    commands = _commands(workflow)
    assert any(words[words.index("ddb2bigtable") + 1:][:2] == ["prices", "refresh"] for words in commands)
    for words in commands:
        args = words[words.index("ddb2bigtable") + 1:]
        path = args[:2] if args[0] == "prices" else args[:1]
        result = CliRunner().invoke(main, [*path, "--help"])
        assert result.exit_code == 0, result.output
        options = set(re.findall(r"--[a-z-]+|-o\b", result.output))
        assert {a for a in args if a.startswith("-")} <= options, words


def test_the_pull_request_it_opens_carries_only_the_lock_and_can_trigger_the_diff():
    workflow = yaml.safe_load(WORKFLOW.read_text())
    step = next(s for s in workflow["jobs"]["refresh"]["steps"] if "create-pull-request" in s.get("uses", ""))
    assert step["with"]["add-paths"] == "prices.lock.json"
    assert "GITHUB_TOKEN" not in step["with"]["token"]  # its pull requests would not run bigtable-pr.yml
    diff = yaml.safe_load((ROOT / "examples" / "ci" / "bigtable-pr.yml").read_text())
    assert "prices.lock.json" in diff[True]["pull_request"]["paths"]
