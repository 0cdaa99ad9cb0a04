"""What a load writes about the data is for its owner only, and can leave the data out.

Dead letters copy export lines (often personal data) and the state names the attributes;
under the usual umask 022 they would be world-readable. Each runner writes them 0600 in
folders 0700, and `--dead-letters-redact` keeps where the line is and why, not what it said.
"""

from __future__ import annotations

import json
import os
import shutil
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from ddb2bigtable.load.beam.direct import run_beam_load
from ddb2bigtable.load.run import run_load
from ddb2bigtable.load.work_folder import redact_reason

from ..conftest import ROOT
from .test_beam_pipeline import MOVIES, corrupt
from .test_load_emulator import options, prepare

SECRET = "Jane Doe, Elm Street"


@pytest.fixture
def export_with_personal_bad_lines(tmp_path: Path) -> Path:
    export = tmp_path / "export"
    shutil.copytree(MOVIES, export)
    corrupt(export, 7, ('{"Item": {"year": {"N": "2013"}, "title": {"S": "' + SECRET + '"}, ').encode())
    corrupt(export, 12, ('{"Item": {"year": {"N": "2013"}, "title": {"N": "' + SECRET + '"}}}').encode())
    return export


def dead_text(work: Path) -> str:
    return "".join(part.read_text() for part in sorted((work / "dead-letters").glob("*.jsonl")))


def _mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def _assert_private(work: Path) -> None:
    folders = [work, work / "dead-letters"]
    files = [work / "state.json", *(work / "dead-letters").iterdir()]
    assert {str(f.relative_to(work.parent)): _mode(f) for f in folders} == {
        str(f.relative_to(work.parent)): 0o700 for f in folders}
    assert {str(f.relative_to(work.parent)): _mode(f) for f in files} == {
        str(f.relative_to(work.parent)): 0o600 for f in files}


@pytest.mark.parametrize("runner", [run_load, run_beam_load], ids=["local", "beam"])
def test_dead_letters_and_state_are_written_for_their_owner_only(bigtable_emulator, tmp_path, runner,
                                                                 export_with_personal_bad_lines):
    old = os.umask(0o022)
    try:
        spec, instance_id = prepare("movies.yaml")
        work = tmp_path / "work"
        report = runner(spec.tables[0], str(export_with_personal_bad_lines), options(instance_id, work))
    finally:
        os.umask(old)
    assert report.total("dead_lettered") == 2 and report.accounted == 4609
    _assert_private(work)
    # Not redacted: the owner sees each refused line, once (no combined copy, no quote of
    # the value in the reason beside the line's own text).
    assert report.dead_letters == str(work / "dead-letters")
    assert sum(f.read_text().count("Jane") for f in work.rglob("*") if f.is_file()) == 2
    assert dead_text(work).count(SECRET) == 2


@pytest.mark.parametrize("runner", [run_load, run_beam_load], ids=["local", "beam"])
def test_redacted_dead_letters_hold_no_data(bigtable_emulator, tmp_path, runner, export_with_personal_bad_lines):
    spec, instance_id = prepare("movies.yaml")
    work = tmp_path / "work"
    report = runner(spec.tables[0], str(export_with_personal_bad_lines),
                    options(instance_id, work, redact_dead_letters=True))
    assert report.total("dead_lettered") == 2
    text = dead_text(work)
    records = sorted((json.loads(line) for line in text.splitlines()), key=lambda r: r["line"])
    assert [(r["line"], sorted(r)) for r in records] == [(7, ["file", "line", "reason"]),
                                                         (12, ["file", "line", "reason"])]
    assert "not valid JSON" in records[0]["reason"]
    for fragment in SECRET.split():
        assert fragment.strip(",") not in text


def test_the_cli_takes_the_redact_flag(bigtable_emulator, tmp_path, export_with_personal_bad_lines):
    work = tmp_path / "work"
    run = subprocess.run([sys.executable, "-m", "ddb2bigtable", "load", "specs/movies.yaml", "--table", "movies",
                          "--export", str(export_with_personal_bad_lines), "--stage", "local", "--create-tables",
                          "--work-dir", str(work), "--dead-letters-redact", "--format", "json"],
                         cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stderr
    assert json.loads(run.stdout)["dead_lettered"] == 2
    assert "Jane" not in dead_text(work)


@pytest.mark.parametrize("reason,kept", [
    ("Item.title: expected text, found 123", "Item.title: expected text, found …"),
    ("Item.title.N: 'Jane Doe' is not a number", "Item.title.N: … is not a number"),
    ('not valid JSON: unexpected character: line 1 column 40 (char 39)',
     'not valid JSON: unexpected character: line 1 column 40 (char 39)'),
    ("number '1e999' cannot be written as plain JSON", "number … cannot be written as plain JSON"),
])
def test_redaction_keeps_the_sentence_and_drops_the_values(reason, kept):
    assert redact_reason(reason) == kept
