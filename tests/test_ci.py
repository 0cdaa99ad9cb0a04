"""CI's choice of interpreter: the oldest supported Python on the machine, never a broken one."""

from __future__ import annotations

import importlib.util
import os
import stat
import sys
from pathlib import Path

from .conftest import ROOT

_spec = importlib.util.spec_from_file_location("oldest_python", ROOT / "scripts" / "oldest_python.py")
oldest_python = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(oldest_python)


def _fake(folder: Path, name: str, body: str) -> Path:
    exe = folder / name
    exe.write_text(f"#!/bin/sh\n{body}\n")
    exe.chmod(exe.stat().st_mode | stat.S_IXUSR)
    return exe


def test_the_oldest_supported_interpreter_is_chosen(tmp_path, monkeypatch):
    monkeypatch.setattr(oldest_python, "SYSTEM", [])
    a, b = tmp_path / "a", tmp_path / "b"
    a.mkdir(), b.mkdir()
    _fake(a, "python3.10", "echo 3 10 13")  # too old for the project
    _fake(a, "python3.12", "echo 3 12 1")
    _fake(b, "python3.11", "echo 3 11 2")
    _fake(b, "python3", "echo 3 11 7")
    _fake(b, "python3.13", "echo 'pyenv: python3.13: command not found' >&2; exit 127")  # a shim
    _fake(b, "python3-config", "echo 3 0 0")  # not an interpreter
    assert oldest_python.oldest(os.pathsep.join([str(a), str(b)])) == b / "python3.11"


def test_no_interpreter_means_no_answer(tmp_path, monkeypatch):
    monkeypatch.setattr(oldest_python, "SYSTEM", [])
    _fake(tmp_path, "python3", "echo 3 9 18")
    assert oldest_python.oldest(str(tmp_path)) is None


def test_this_machine_has_one_at_least_as_old_as_the_running_python():
    found = oldest_python.oldest(os.environ["PATH"])
    assert found is not None and oldest_python.version(found) <= tuple(sys.version_info[:3])
