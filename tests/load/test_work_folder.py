"""The work folder: private to its user, and no folder the user pointed at is ever changed.

Dead letters copy export lines (often personal data), so a work folder must be one nobody
else can write. Folders the tool creates are made 0700; one that already exists is used
only when no other user can write it (files inside are 0600 in any case). A shared folder (mode 1777), a device or a FIFO given as
`--work-dir` is refused before anything is written, and left exactly as it was.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest
from click.testing import CliRunner

from ddb2bigtable.cli.app import main
from ddb2bigtable.load.work_folder import private_dir, replace_private
from ddb2bigtable.spec.errors import InputError

from ..conftest import ROOT

MOVIES_EXPORT = ROOT / "exports" / "movies"


def _mode(path: Path) -> int:
    return stat.S_IMODE(os.stat(path).st_mode)


def _load(work: Path | str, *more: str):
    return CliRunner().invoke(main, ["load", str(ROOT / "specs" / "movies.yaml"), "--table", "movies",
                                     "--export", str(MOVIES_EXPORT), "--work-dir", str(work),
                                     "--root", str(ROOT), *more])


def test_a_shared_folder_is_refused_and_left_as_it_was(tmp_path, monkeypatch):
    monkeypatch.setenv("BIGTABLE_EMULATOR_HOST", "127.0.0.1:9")  # never reached: the folder is refused first
    shared = tmp_path / "shared"
    shared.mkdir()
    os.chmod(shared, 0o1777)
    result = _load(shared, "--create-tables")
    assert result.exit_code == 2, result.output
    assert "writable by other users (mode 1777)" in result.output and "Traceback" not in result.output
    assert _mode(shared) == 0o1777
    assert list(shared.iterdir()) == []


@pytest.mark.parametrize("command", ["load", "replicate"])
def test_a_device_given_as_work_folder_is_refused_untouched(tmp_path, monkeypatch, command):
    monkeypatch.setenv("BIGTABLE_EMULATOR_HOST", "127.0.0.1:9")
    for name, value in (("AWS_ACCESS_KEY_ID", "local"), ("AWS_SECRET_ACCESS_KEY", "local")):
        monkeypatch.setenv(name, value)
    before = os.stat("/dev/null")
    args = ["--export", str(MOVIES_EXPORT)] if command == "load" else ["--endpoint-url", "http://127.0.0.1:9"]
    result = CliRunner().invoke(main, [command, str(ROOT / "specs" / "movies.yaml"), "--table", "movies",
                                       "--work-dir", "/dev/null", "--root", str(ROOT), *args])
    after = os.stat("/dev/null")
    assert result.exit_code == 2, result.output
    assert "Traceback" not in result.output
    assert (stat.S_ISCHR(after.st_mode), after.st_mode, after.st_rdev) == (True, before.st_mode, before.st_rdev)


def test_a_fifo_is_not_a_work_folder(tmp_path):
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo, 0o644)
    with pytest.raises(InputError, match="is not a folder"):
        private_dir(fifo)
    assert _mode(fifo) == 0o644 and stat.S_ISFIFO(os.stat(fifo).st_mode)


def test_another_users_folder_is_refused(tmp_path):
    theirs = tmp_path / "theirs"
    theirs.mkdir(mode=0o700)
    os.chown(theirs, 65534, 65534)  # the suite runs as root, as CI does
    with pytest.raises(InputError, match="belongs to another user"):
        private_dir(theirs)


def test_new_folders_are_private_whatever_the_umask(tmp_path):
    old = os.umask(0o000)
    try:
        work = private_dir(tmp_path / "a" / "b" / "work")
    finally:
        os.umask(old)
    assert [_mode(f) for f in (tmp_path / "a", tmp_path / "a" / "b", work)] == [0o700] * 3


@pytest.mark.parametrize("mode", [0o700, 0o755])
def test_an_existing_folder_only_its_owner_writes_is_used_as_it_is(tmp_path, mode):
    mine = tmp_path / "mine"
    mine.mkdir()
    os.chmod(mine, mode)
    assert private_dir(mine) == mine and _mode(mine) == mode


@pytest.mark.parametrize("mode", [0o775, 0o757, 0o1777])
def test_a_folder_others_can_write_is_refused(tmp_path, mode):
    shared = tmp_path / "shared"
    shared.mkdir()
    os.chmod(shared, mode)
    with pytest.raises(InputError, match="writable by other users"):
        private_dir(shared)
    assert _mode(shared) == mode


def test_a_file_that_cannot_be_replaced_keeps_its_last_version_and_leaves_no_temporary(tmp_path):
    work = private_dir(tmp_path / "work")
    replace_private(work / "state.json", "first")
    blocked = work / "checkpoint.json"
    blocked.mkdir()  # a folder where the file should be: the rename fails
    (blocked / "x").write_text("")
    with pytest.raises(InputError, match="cannot save it"):
        replace_private(blocked, "second")
    assert (work / "state.json").read_text() == "first"
    assert sorted(p.name for p in work.iterdir()) == ["checkpoint.json", "state.json"]


def test_a_symlink_in_the_work_folder_is_not_written_through(tmp_path):
    work = private_dir(tmp_path / "work")
    victim = tmp_path / "victim.txt"
    victim.write_text("keep me")
    (work / "state.tmp").symlink_to(victim)
    with pytest.raises(InputError):
        replace_private(work / "state.json", "data")
    assert victim.read_text() == "keep me"
