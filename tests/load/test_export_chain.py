"""A full export and two incrementals of one table (tests/load/export_chain.py, generated
with the export writer) loaded into the emulator: verify never raises, and the chain is
applied in order or refused."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from ddb2bigtable.load.run import run_load
from ddb2bigtable.load.verify import run_verify

from ..conftest import ROOT
from .export_chain import build_chain
from .test_load_emulator import PROJECT, options, prepare


def test_verifying_the_full_export_after_its_incrementals_reports_differences_and_never_raises(
        bigtable_emulator, tmp_path):
    chain = build_chain(tmp_path / "exports")
    spec, instance_id = prepare("movies.yaml")
    (table,) = spec.tables
    work = tmp_path / "work"
    for export in chain.exports:
        assert run_load(table, str(export), options(instance_id, work)).complete
    latest = run_verify(table, str(chain.inc2), project=PROJECT, instance_id=instance_id, work_dir=work)
    assert latest.ok
    full = run_verify(table, str(chain.full), project=PROJECT, instance_id=instance_id, work_dir=work)
    assert not full.ok and full.mismatched >= 1 and full.missing == 2  # two of its items were deleted since
    details = " ".join(e["detail"] for e in full.examples)
    assert "bin_update" in details and "tagline" in details


def cli_root(tmp_path: Path, instance: str) -> Path:
    """A project root whose local stage holds the Movies spec under its own instance id, so
    the CLI's loads never meet another test's rows."""
    root = tmp_path / "root"
    (root / "specs").mkdir(parents=True)
    (root / "stacks").mkdir()
    spec = (ROOT / "specs" / "movies.yaml").read_text().replace("id: movies-sample", f"id: {instance}")
    (root / "specs" / "movies.yaml").write_text(spec)
    stage = (ROOT / "stacks" / "Pulumi.local.yaml").read_text()
    stage = "\n".join(line for line in stage.splitlines() if not line.strip().startswith("- specs/")
                      or "movies" in line)
    (root / "stacks" / "Pulumi.local.yaml").write_text(stage)
    return root


def cli(root: Path, command: str, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "ddb2bigtable", command, "specs/movies.yaml", "--table", "movies",
                           "--stage", "local", "--root", str(root), "--work-dir", str(root / "work"), *args],
                          cwd=ROOT, capture_output=True, text=True, timeout=300)


def test_the_cli_verify_of_the_full_export_exits_1_with_a_report(bigtable_emulator, tmp_path):
    chain = build_chain(tmp_path / "exports")
    root = cli_root(tmp_path, "chain-verify")
    first = cli(root, "load", "--export", str(chain.full), "--create-tables")
    assert first.returncode == 0, first.stderr
    for export in chain.exports[1:]:
        loaded = cli(root, "load", "--export", str(export))
        assert loaded.returncode == 0, loaded.stderr
    out = cli(root, "verify", "--export", str(chain.full), "--format", "json")
    assert out.returncode == 1 and "Traceback" not in out.stderr, out.stderr
    report = json.loads(out.stdout)
    assert not report["ok"] and report["missing"] == 2
    assert any("bin_update" in e["detail"] for e in report["examples"]), report["examples"]


def test_a_cell_in_a_form_the_table_never_recorded_is_a_difference_naming_the_attribute(bigtable_emulator,
                                                                                        tmp_path):
    """Another writer (an application, a load with other types) may leave bytes the recorded
    type cannot read: verify says which attribute and why, and goes on."""
    import asyncio

    from google.cloud.bigtable.data import BigtableDataClientAsync, SetCell

    chain = build_chain(tmp_path / "exports")
    spec, instance_id = prepare("movies.yaml")
    (table,) = spec.tables
    assert run_load(table, str(chain.full), options(instance_id, tmp_path / "work")).complete

    async def overwrite() -> None:
        async with BigtableDataClientAsync(project=PROJECT) as client:
            await client.get_table(instance_id, "movies").mutate_row(b"d2003#Movie 3", SetCell("cf", b"info", b"{"))
    asyncio.run(overwrite())
    report = run_verify(table, str(chain.full), project=PROJECT, instance_id=instance_id, work_dir=tmp_path / "work")
    assert not report.ok and report.mismatched == 1 and report.matched == 11
    (example,) = report.examples
    assert example["detail"].startswith("row d2003#Movie 3 cannot be read back: attribute info: its cell cannot be "
                                        "read as M"), example
