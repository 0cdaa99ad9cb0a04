"""Long warnings at a terminal (issue #53: import's notices ran to 560 characters a line):
folded at the terminal's width on word boundaries, the lines after the first indented; into
a pipe, one whole line per warning as before. `import` of a describe-table file is run for
real, its stderr a pseudo-terminal of 80 columns."""

from __future__ import annotations

import os
import pty
import subprocess
import sys

from ..conftest import ROOT

SOURCE = ROOT / "tests" / "fixtures" / "describe-table" / "orders-global.json"


def _import(stderr, **env: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "ddb2bigtable", "import", str(SOURCE), "--instance", "orders-prod"],
                          stdout=subprocess.PIPE, stderr=stderr, env={**os.environ, **env}, cwd=ROOT, timeout=120)


def _read_all(fd: int) -> str:
    chunks = []
    while True:
        try:
            chunk = os.read(fd, 65536)
        except OSError:  # the other side closed
            break
        if not chunk:
            break
        chunks.append(chunk)
    return b"".join(chunks).decode().replace("\r\n", "\n")


def test_warnings_fold_at_a_terminals_width_and_stay_whole_in_a_pipe():
    piped = _import(subprocess.PIPE)
    assert piped.returncode == 0, piped.stderr
    whole = piped.stderr.decode().splitlines()
    assert max(len(line) for line in whole) > 200  # the notices as they are, one line each

    leader, follower = pty.openpty()
    try:
        shown = _import(follower, COLUMNS="80")
        os.close(follower)
        follower = -1
        text = _read_all(leader)
    finally:
        os.close(leader)
        if follower != -1:
            os.close(follower)
    assert shown.returncode == 0, text
    lines = text.splitlines()
    assert lines and max(len(line) for line in lines) <= 80, text
    assert len(lines) > len(whole)
    assert " ".join(text.split()) == " ".join(" ".join(whole).split())  # the same words, folded
    assert any(line.startswith("  ") for line in lines)  # a folded warning's lines after the first are indented
