"""Long warnings at a terminal (issue #53: import's notices ran to 560 characters a line):
folded at the terminal's width on word boundaries, the lines after the first indented; into
a pipe, one whole line per warning as before. `import` of a describe-table file is run for
real, its stderr a pseudo-terminal of 80 columns."""

from __future__ import annotations

import os
import pty
import re
import subprocess
import sys
from pathlib import Path

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


def _at_a_terminal(args: list[str], cwd: Path = ROOT) -> tuple[int, str]:
    """`ddb2bigtable ARGS` with stderr a pseudo-terminal of 80 columns: (exit code, stderr)."""
    leader, follower = pty.openpty()
    try:
        done = subprocess.run([sys.executable, "-m", "ddb2bigtable", *args], stdout=subprocess.PIPE, stderr=follower,
                              env={**os.environ, "COLUMNS": "80"}, cwd=cwd, timeout=120)
        os.close(follower)
        follower = -1
        return done.returncode, _read_all(leader)
    finally:
        os.close(leader)
        if follower != -1:
            os.close(follower)


def test_every_warning_of_the_command_line_folds(tmp_path):
    """Issue #53: the warnings printed with click.echo (validate's and plan's estimates,
    deprecation lines, the price lock's, serve's, up's unused export folders) and the
    problems of bad input ran on as one line at a terminal; they all go through
    cli/output.echo_warning now."""
    spec = tmp_path / "movies.yaml"
    text = (ROOT / "specs" / "movies.yaml").read_text(encoding="utf-8")
    lines = text.splitlines()
    marked = next(i for i, line in enumerate(lines) if line.strip().startswith("reads:"))
    lines[marked] += "  # estimate: from the table's size"
    spec.write_text("\n".join(lines) + "\n", encoding="utf-8")
    for args, cwd, says in [(["validate", spec.name], tmp_path, "value(s) still marked `# estimate:` by import"),
                            (["serve", "--root", "nowhere", "--region", "eu-west-1"], ROOT, "deprecated:")]:
        code, shown = _at_a_terminal(args, cwd)  # short paths: a path is never cut, so a long one would stay long
        assert code == (0 if args[0] == "validate" else 2) and says in " ".join(shown.split()), shown
        folded = [line for line in shown.splitlines() if line]
        assert max(len(line) for line in folded) <= 80 and any(line.startswith("  ") for line in folded), shown
    unfolded = [f"{path.relative_to(ROOT)}:{n}" for path in (ROOT / "ddb2bigtable").rglob("*.py")
                for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
                if re.search(r"""(click\.echo|(?<![.])print)\(.*f?["'](warning|note|deprecated): """, line)
                or "soft_wrap=True" in line and "warning" in line]  # a rich console wraps, unless told not to
    assert unfolded == [], "print warnings with cli/output.echo_warning, which folds them at a terminal"
