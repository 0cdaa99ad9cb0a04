"""Spec and stack files as they are at a git ref, read from git objects (no checkout).

`diff` plans both sides of a pull request. The base side is rebuilt in a temporary folder
from `git archive` of the YAML files (specs anywhere, stacks/) and the price lock at the
project root (each side is priced with its own), so no working tree is touched, no
credentials are needed, and a ref is never "checked out" under the user.
"""

from __future__ import annotations

import io
import subprocess
import tarfile
from pathlib import Path

from ..plan.price_lock import LOCK_FILE
from ..spec.errors import InputError, Problem

YAML_SUFFIXES = (".yaml", ".yml")


def _git(repo: Path, *args: str) -> bytes:
    try:
        return subprocess.run(["git", "-C", str(repo), *args], capture_output=True, check=True).stdout
    except FileNotFoundError:
        raise InputError([Problem.about(str(repo), "", "git is not installed; diff reads specs from git")]) from None
    except subprocess.CalledProcessError as error:
        message = error.stderr.decode(errors="replace").strip().splitlines()
        raise InputError([Problem.about(str(repo), "", f"git {' '.join(args[:2])} failed: "
                                        f"{message[-1] if message else error}")]) from None


def resolve(repo: Path, ref: str) -> str:
    """The commit a ref names; a clear error for a ref that does not exist."""
    try:
        return _git(repo, "rev-parse", "--verify", "--quiet", f"{ref}^{{commit}}").decode().strip()
    except InputError:
        raise InputError([Problem.about(str(repo), "", f"unknown git ref {ref!r}: give a branch, tag or commit "
                                        f"(e.g. origin/main, HEAD~1)")]) from None


def materialize(repo: Path, ref: str, dest: Path) -> Path:
    """Writes the YAML files and price lock of `ref` under `dest` and returns it (a project root for `plan`)."""
    commit = resolve(repo, ref)
    prefix = _git(repo, "rev-parse", "--show-prefix").decode().strip()  # the project may be a subfolder
    tree = f"{commit}:{prefix}" if prefix else commit
    names = [n for n in _git(repo, "ls-tree", "-r", "-z", "--name-only", tree).decode().split("\0")
             if n.endswith(YAML_SUFFIXES) or n == LOCK_FILE]
    dest.mkdir(parents=True, exist_ok=True)
    if names:
        archive = _git(repo, "archive", "--format=tar", tree, "--", *names)
        with tarfile.open(fileobj=io.BytesIO(archive)) as tar:
            _extract_files(tar, dest)
    return dest


def _extract_files(tar: tarfile.TarFile, dest: Path) -> None:
    """The archive's regular files below `dest`. Not `extractall(filter="data")`: that
    needs Python 3.11.4, and Debian 12's python3 is 3.11.2. A link in the repository is
    skipped (its spec is then missing at that ref, and the plan says so)."""
    for member in tar.getmembers():
        target = (dest / member.name).resolve()
        if not member.isfile() or not target.is_relative_to(dest.resolve()):
            continue
        target.parent.mkdir(parents=True, exist_ok=True)
        source = tar.extractfile(member)
        if source is not None:
            target.write_bytes(source.read())
