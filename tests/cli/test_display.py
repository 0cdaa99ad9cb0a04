"""What a person sees at the terminal: the load's progress bar, its rate, shell completion."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

from rich.console import Console

from ddb2bigtable.cli.load_runs import _Rate, progress_bars

from ..conftest import ROOT


def test_the_bar_takes_the_manifests_total():
    console = Console(force_terminal=True, width=120, record=True)
    with progress_bars(console) as bars:
        advance = bars("movies-local/movies")
        advance(0, total=4609)
        advance(2000)
    assert "2000/4609" in console.export_text()  # was 2000/?


def test_the_rate_is_a_whole_number():
    assert _Rate().render(SimpleNamespace(speed=17525.819581525215)).plain == "17,526 items/s"
    assert _Rate().render(SimpleNamespace(speed=None)).plain == "- items/s"


def test_the_readmes_completion_line_prints_a_completion_script():
    assert '_DDB2BIGTABLE_COMPLETE=bash_source ddb2bigtable' in (ROOT / "README.md").read_text()
    cli = Path(sys.executable).parent / "ddb2bigtable"
    run = subprocess.run([str(cli)], env={**os.environ, "_DDB2BIGTABLE_COMPLETE": "bash_source"},
                         capture_output=True, text=True, timeout=60)
    assert run.returncode == 0 and "complete -o nosort -F _ddb2bigtable_completion ddb2bigtable" in run.stdout
