"""The CI example stays in step with the CLI it calls."""

from __future__ import annotations

import re
import shlex

import yaml
from click.testing import CliRunner

from ddb2bigtable.cli.app import main

from ..conftest import ROOT

WORKFLOW = ROOT / "examples" / "ci" / "bigtable-pr.yml"


def test_the_workflow_is_valid_and_its_ddb2bigtable_commands_parse():
    workflow = yaml.safe_load(WORKFLOW.read_text())
    steps = [s for job in workflow["jobs"].values() for s in job["steps"]]
    commands = [line.strip() for s in steps for line in s.get("run", "").splitlines()
                if "ddb2bigtable diff" in line]
    assert commands
    for command in commands:
        words = shlex.split(re.sub(r"\$\{\{[^}]*\}\}", "main", command.split(">")[0]))
        args = words[words.index("ddb2bigtable") + 1:]
        result = CliRunner().invoke(main, [args[0], "--help"])
        assert result.exit_code == 0
        options = set(re.findall(r"--[a-z-]+", result.output))
        assert {a for a in args if a.startswith("--")} <= options, command
