"""Every broken spec fails `ddb2bigtable validate` the way a user needs: exit 2, the file,
line and column of the mistake, a message saying what to do, and never a traceback.

Each file's first line says what to expect: `# expect: LINE:COL <fragment of the message>`.
The CLI runs as a real subprocess (that is what users and CI see); the runs happen in
parallel once per session, so 50 files cost about as much as a handful.
"""

from __future__ import annotations

import re
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from ..conftest import ROOT, SHIPPED_SPECS

BROKEN = sorted((ROOT / "tests" / "broken_specs").glob("*.yaml"))
EXPECT = re.compile(r"^# expect: (\d+):(\d+) (.+)$")


def validate(*files: str | Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "ddb2bigtable", "validate", *map(str, files)],
                          cwd=ROOT, capture_output=True, text=True, timeout=60)


@pytest.fixture(scope="module")
def runs() -> dict[Path, subprocess.CompletedProcess[str]]:
    relative = [f.relative_to(ROOT) for f in BROKEN]
    with ThreadPoolExecutor(max_workers=8) as pool:
        return dict(zip(BROKEN, pool.map(validate, relative), strict=False))


def test_there_are_enough_broken_specs():
    assert len(BROKEN) >= 34


@pytest.mark.parametrize("spec", BROKEN, ids=[f.stem for f in BROKEN])
def test_broken_spec_is_reported_where_it_is_broken(spec: Path, runs):
    match = EXPECT.match(spec.read_text(encoding="utf-8").splitlines()[0])
    assert match, f"{spec.name}: the first line must be '# expect: LINE:COL fragment'"
    line, column, fragment = match.groups()
    result = runs[spec]
    where = f"{spec.relative_to(ROOT)}:{line}:{column}:"
    assert result.returncode == 2, result.stdout + result.stderr
    assert "Traceback" not in result.stderr
    assert any(where in out and fragment in out for out in result.stderr.splitlines()), result.stderr


def test_truly_empty_file_is_a_problem_not_a_crash(tmp_path: Path):
    empty = tmp_path / "empty.yaml"
    empty.write_text("")
    result = validate(empty)
    assert result.returncode == 2
    assert f"{empty}:1:1:" in result.stderr and "the file is empty" in result.stderr
    assert "Traceback" not in result.stderr


def test_all_independent_errors_of_one_file_are_reported(tmp_path: Path):
    spec = tmp_path / "three.yaml"
    spec.write_text(
        "version: 1\n"
        "instance:\n"
        "  id: Shop\n"                              # 3: uppercase and too short
        "tables:\n"
        "  - id: orders\n"
        "    source:\n"
        "      table: Orders\n"
        "      region: eu-wst-1\n"                  # 8: not an AWS region
        "      key: {partition: {name: id, type: S}}\n"
        "      billing: provisioned\n"
        "      reads: 10\n"
        "      writes: 10\n"
        "  - id: carts\n"
        "    source:\n"
        "      table: Carts\n"
        "      region: us-east-1\n"
        "      key: {partition: {name: id, type: S}}\n"
        "      billing: provisioned\n"
        "      reads: 10\n"
        "      wrties: 10\n"                        # 20: typo, so writes are missing too
    )
    result = validate(spec)
    assert result.returncode == 2
    assert f"{spec}:3:7: instance.id: 'Shop' is not a valid Bigtable instance id" in result.stderr
    assert f"{spec}:8:15: tables[0].source.region: unknown AWS region 'eu-wst-1'" in result.stderr
    assert f"{spec}:20:7: tables[1].source.wrties: unknown key 'wrties'; did you mean 'writes'?" in result.stderr


def test_problems_of_several_files_are_reported_together():
    first, second = BROKEN[0], BROKEN[1]
    result = validate(first.relative_to(ROOT), second.relative_to(ROOT))
    assert result.returncode == 2
    assert str(first.relative_to(ROOT)) in result.stderr and str(second.relative_to(ROOT)) in result.stderr


def test_valid_specs_pass():
    specs = [ROOT / spec for spec in SHIPPED_SPECS]
    result = validate(*(s.relative_to(ROOT) for s in specs))
    assert result.returncode == 0, result.stderr
    assert all(f"ok: {s.relative_to(ROOT)}" in result.stdout for s in specs)
