"""The smaller findings of issue 45, each as a user meets it: `verify --help` explains every
option, `replicate --until-caught-up` is what a run without `--follow` does, `up` of a cloud
stage does not end "the local stage is not ready", and replicate's lag says what it counts from."""

from __future__ import annotations

import subprocess
import sys

import click
import pytest
from click.testing import CliRunner

from ddb2bigtable.cli import replicate_cmd
from ddb2bigtable.cli.app import main
from ddb2bigtable.replicate.report import ReplicateReport

from ..conftest import ROOT


@pytest.mark.parametrize("path", ["verify", "load", "plan", "diff", "advise", "replicate", "cutover check",
                                  "prices refresh"])
def test_every_option_has_help(path):
    """`verify --help` had four options without a word; these commands now explain every one."""
    command: click.Command = main
    for name in path.split():
        assert isinstance(command, click.Group)
        command = command.commands[name]
    missing = [p.opts[0] for p in command.params if isinstance(p, click.Option) and not p.help]
    assert missing == []


def test_a_run_without_follow_stops_when_caught_up_as_the_flag_says(monkeypatch):
    """`--until-caught-up` is described as what a run without `--follow` does: both reach the
    engine with follow off, and the help says the flag changes nothing."""
    seen = []
    monkeypatch.setattr(replicate_cmd, "_run", lambda *args, **kwargs: seen.append(args[5]) or 0)
    for flags in ([], ["--until-caught-up"], ["--follow"]):
        result = CliRunner().invoke(main, ["replicate", "specs/movies.yaml", "--table", "movies", *flags])
        assert result.exit_code == 0, result.output
    assert seen == [False, False, True]
    help_text = CliRunner().invoke(main, ["replicate", "--help"]).output
    assert "what a run without --follow does" in " ".join(help_text.split())


def test_up_of_a_cloud_stage_says_why_and_claims_no_local_stage():
    out = subprocess.run([sys.executable, "-m", "ddb2bigtable", "up", "--stage", "prod"], cwd=ROOT,
                         capture_output=True, text=True, timeout=60)
    assert out.returncode == 2 and "Traceback" not in out.stderr
    assert "'prod' is a cloud stage: deploy it with `pulumi up --stack prod`" in out.stderr
    assert "local stage" not in out.stderr
    assert out.stderr.splitlines()[-1] == "1 problem found; nothing was created or loaded."  # the check came first


def test_a_load_refused_before_it_wrote_says_nothing_was_loaded(tmp_path):
    """Issue #53: bad input met before the first item said 'the load stopped before its end'."""
    out = subprocess.run([sys.executable, "-m", "ddb2bigtable", "load", "specs/movies.yaml", "--table", "film",
                          "--export", "exports/movies", "--work-dir", str(tmp_path / "work")], cwd=ROOT,
                         capture_output=True, text=True, timeout=60)
    assert out.returncode == 2 and "Traceback" not in out.stderr
    assert "no table 'film' in this spec; its tables: movies" in out.stderr
    assert out.stderr.splitlines()[-1] == "1 problem found; nothing was loaded."


def test_replicates_lag_says_what_it_counts_from_and_why_cutover_check_reads_lower():
    report = ReplicateReport("movies", "arn", 0, resumed=False, newest_micros=1_000_000, ended_micros=50_900_000)
    lines = replicate_cmd.text_lines(report, "movies")
    assert lines[0].endswith("lag 49.9 s")
    assert lines[1] == replicate_cmd.LAG_WHY
    assert "DynamoDB Local: to the minute" in lines[1] and "`cutover check` counts from" in lines[1]
    nothing = replicate_cmd.text_lines(ReplicateReport("movies", "arn", 0, resumed=False), "movies")
    assert nothing[0].endswith("lag -") and replicate_cmd.LAG_WHY not in nothing
