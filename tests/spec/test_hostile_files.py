"""Files that are not specs at all (devices, FIFOs, huge files) fail `validate` at once.

A spec or stack file reaches the tool from pull requests; a CI job that reads /dev/zero
or waits on a FIFO forever is a denial of service. The alias bomb and deep nesting are in
the broken-spec corpus (tests/broken_specs/55_*, 56_*). The timeouts are hang guards.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def validate(path: Path | str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "ddb2bigtable", "validate", str(path)],
                          cwd=ROOT, capture_output=True, text=True, timeout=30)


def test_a_device_is_refused():
    run = validate("/dev/zero")
    assert run.returncode == 2, run.stderr
    assert "/dev/zero: not a regular file" in run.stderr
    assert "Traceback" not in run.stderr


def test_a_fifo_is_refused_without_waiting_for_a_writer(tmp_path):
    fifo = tmp_path / "spec.yaml"
    os.mkfifo(fifo)
    run = validate(fifo)
    assert run.returncode == 2 and "not a regular file" in run.stderr


def test_a_folder_is_refused(tmp_path):
    run = validate(tmp_path)
    assert run.returncode == 2 and "not a regular file" in run.stderr


def test_a_two_gigabyte_file_is_refused_unread(tmp_path):
    huge = tmp_path / "huge.yaml"
    with open(huge, "wb") as f:  # sparse: nothing is written to disk
        f.truncate(2 * 1024**3)
    run = validate(huge)
    assert run.returncode == 2, run.stderr
    assert "the file is 2,147,483,648 bytes; a spec or stack file may be at most 16,777,216" in run.stderr


@pytest.mark.parametrize("name", ["55_alias_bomb", "56_deep_nesting"])
def test_the_hostile_corpus_files_stay_small(name):
    assert (ROOT / "tests" / "broken_specs" / f"{name}.yaml").stat().st_size < 8 * 1024


def test_a_spec_nested_100000_deep_is_refused_not_a_crash(tmp_path):
    """libyaml's composer recurses in C: this crashed the interpreter (exit -11) before
    the depth was checked on the parser's events."""
    deep = tmp_path / "deep.yaml"
    deep.write_text("version: 1\ninstance: " + "[" * 100_000 + "\n")
    run = validate(deep)
    assert run.returncode == 2, run.stderr
    assert f"{deep}:2:74: nested deeper than 64 levels" in run.stderr and "Traceback" not in run.stderr
