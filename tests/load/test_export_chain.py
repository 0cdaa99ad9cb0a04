"""A full export and two incrementals of one table (tests/load/export_chain.py, generated
with the export writer) loaded into the emulator: verify never raises (#19, 1), and the
chain is applied in order or refused (#19, 2)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from ddb2bigtable.codec.cell_values import canonical_item
from ddb2bigtable.codec.codec import Codec
from ddb2bigtable.codec.items import Item
from ddb2bigtable.codec.mutations import Cell
from ddb2bigtable.load.run import run_load
from ddb2bigtable.load.verify import run_verify
from ddb2bigtable.spec.errors import InputError

from ..conftest import ROOT, shipped_project
from .export_chain import build_chain
from .test_load_emulator import PROJECT, options, prepare, read_all


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
    # two of its items were deleted since (a delete leaves no row to date: missing); those the
    # incrementals changed were written after the full export's time: reported, not differences
    assert not full.ok and full.missing == 2 and full.mismatched == 0 and full.changed_after >= 1
    assert full.reasons[0] == "2 item(s) of the export missing from the table"
    details = " ".join(e["detail"] for e in full.later)
    assert "bin_update" in details and "tagline" in details


def cli_root(tmp_path: Path, instance: str) -> Path:
    """A project root whose local stage holds the Movies spec under its own instance id, so
    the CLI's loads never meet another test's rows."""
    root = tmp_path / "root"
    (root / "specs").mkdir(parents=True)
    (root / "stacks").mkdir()
    spec = (ROOT / "specs" / "movies.yaml").read_text().replace("id: movies-sample", f"id: {instance}")
    (root / "specs" / "movies.yaml").write_text(spec)
    stage = (shipped_project(tmp_path / "shipped") / "stacks" / "Pulumi.local.yaml").read_text()
    stage = "\n".join(line for line in stage.splitlines() if not line.strip().startswith("- specs/")
                      or "movies" in line)
    (root / "stacks" / "Pulumi.local.yaml").write_text(stage)
    return root


def cli(root: Path, command: str, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "ddb2bigtable", command, "specs/movies.yaml", "--table", "movies",
                           "--stage", "local", "--root", str(root), "--work-dir", str(root / "work"), *args],
                          cwd=root, capture_output=True, text=True, timeout=300)


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
    assert report["reasons"][0] == "2 item(s) of the export missing from the table"
    # the item the incrementals changed is reported as written after the full export, not as a difference
    assert any("bin_update" in e["detail"] for e in report["after_export"]["examples"]), report["after_export"]


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


# --- item 2: the chain is applied in order, or refused ---------------------------------------

def table_state(instance_id: str, table, work: Path) -> dict[tuple[str, str], Item]:
    """Every item in the table, decoded with the types the loads recorded, by (year, title)."""
    types = json.loads((work / "state.json").read_text())["table_types"]
    codec = Codec(table, types)
    items = [item for row in read_all(instance_id, table.id)
             for item in codec.decode(row.row_key, [Cell(c.family, c.qualifier, c.value, c.timestamp_micros)
                                                    for c in row])]
    return {(i["year"]["N"], i["title"]["S"]): canonical_item(i) for i in items}


def canonical_state(state: dict[tuple[str, str], Item]) -> dict[tuple[str, str], Item]:
    return {key: canonical_item(item) for key, item in state.items()}


def test_reloading_incremental_1_after_incremental_2_exits_2_and_changes_nothing(bigtable_emulator, tmp_path):
    """The issue's scenario: it exited 0, brought back the item incremental 2 deleted and
    reverted its update."""
    chain = build_chain(tmp_path / "exports")
    root = cli_root(tmp_path, "chain-order")
    assert cli(root, "load", "--export", str(chain.full), "--create-tables").returncode == 0
    for export in chain.exports[1:]:
        assert cli(root, "load", "--export", str(export)).returncode == 0
    again = cli(root, "load", "--export", str(chain.inc1))
    assert again.returncode == 2 and "Traceback" not in again.stderr, again.stderr
    text = " ".join(again.stderr.split())
    assert "ends before 2026-11-20T11:00:00Z, where the table's chain ends" in text, text
    assert "--fresh" in text
    verified = cli(root, "verify", "--export", str(chain.inc2), "--format", "json")
    assert verified.returncode == 0 and json.loads(verified.stdout)["ok"]


def test_an_incremental_must_continue_the_chain_the_work_folder_records(bigtable_emulator, tmp_path):
    chain = build_chain(tmp_path / "exports")
    spec, instance_id = prepare("movies.yaml")
    (table,) = spec.tables
    with pytest.raises(InputError) as no_full:
        run_load(table, str(chain.inc1), options(instance_id, tmp_path / "work"))
    assert "load its full export first (or the whole chain with --chain)" in str(no_full.value)
    assert run_load(table, str(chain.full), options(instance_id, tmp_path / "work")).complete
    with pytest.raises(InputError) as gap:
        run_load(table, str(chain.inc2), options(instance_id, tmp_path / "work"))
    assert ("starts after 2026-11-20T09:00:00Z, where the table's chain ends (full export "
            f"{chain.full.name} (exportTime 2026-11-20T09:00:00Z))") in str(gap.value)
    assert "exportFromTime is at or before 2026-11-20T09:00:00Z: load it first" in str(gap.value)
    assert table_state(instance_id, table, tmp_path / "work") == canonical_state(chain.states[0])  # untouched
    forced = run_load(table, str(chain.inc2), options(instance_id, tmp_path / "work", fresh="--fresh"))
    assert forced.complete  # --fresh applies it anyway, and the chain starts again with it
    assert [link["export_id"] for link in json.loads((tmp_path / "work" / "state.json").read_text())["chain"]] \
        == [chain.inc2.name]


def test_load_chain_applies_the_full_export_then_each_incremental_and_verify_chain_agrees(bigtable_emulator,
                                                                                         tmp_path):
    chain = build_chain(tmp_path / "exports")
    root = cli_root(tmp_path, "chain-cli")
    out = cli(root, "load", "--export", str(chain.prefix), "--chain", "--create-tables", "--format", "json")
    assert out.returncode == 0, out.stderr
    report = json.loads(out.stdout)
    assert report["complete"] and [r["export_type"] for r in report["chain"]] == \
        ["FULL_EXPORT", "INCREMENTAL_EXPORT", "INCREMENTAL_EXPORT"]
    assert [r["export"] for r in report["chain"]] == [str(e) for e in chain.exports]
    # each next export is the chain going on, not an alarm about a changed export or mapping
    for before, after in zip(report["chain"], report["chain"][1:], strict=False):
        assert not any("changed" in note for note in after["notes"])
        assert any(f"comes after {Path(before['export']).name}" in note for note in after["notes"]), after["notes"]
    verified = cli(root, "verify", "--export", str(chain.prefix), "--chain", "--format", "json")
    assert verified.returncode == 0, verified.stdout + verified.stderr
    result = json.loads(verified.stdout)
    assert result["ok"] and result["export_type"] == "CHAIN" and result["manifest_items"] == len(chain.final)
    assert result["table_items"] == len(chain.final) and result["deleted_absent"] == 3
    rerun = json.loads(cli(root, "load", "--export", str(chain.prefix), "--chain", "--format", "json").stdout)
    assert [r["export"] for r in rerun["chain"]] == [str(chain.inc2)]  # what the table holds is not loaded again
    assert {f["status"] for f in rerun["chain"][0]["files"]} == {"resumed: already loaded"}
    one = cli(root, "verify", "--export", str(chain.prefix))
    assert one.returncode == 2 and "holds 3 exports" in one.stderr


def test_a_chain_with_a_missing_incremental_is_refused_before_anything_is_loaded(bigtable_emulator, tmp_path):
    import shutil

    chain = build_chain(tmp_path / "exports")
    shutil.rmtree(chain.inc1)
    root = cli_root(tmp_path, "chain-gap")
    out = cli(root, "load", "--export", str(chain.prefix), "--chain", "--create-tables")
    assert out.returncode == 2 and "Traceback" not in out.stderr
    assert "the changes in between would be missing" in " ".join(out.stderr.split())


@settings(max_examples=25, derandomize=True, deadline=None, database=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@example(order=[0, 1, 2, 1])  # the issue's: incremental 1 again after incremental 2
@example(order=[0, 2, 1, 2])
@given(order=st.lists(st.sampled_from([0, 1, 2]), min_size=1, max_size=4))
def test_any_order_of_a_chains_exports_is_refused_or_leaves_the_table_as_the_chain_says(
        bigtable_emulator, tmp_path_factory, order):
    """Each export is applied in turn. One that does not continue the recorded chain (the
    chain so far, or a rerun of its last export) is refused with InputError and changes
    nothing; after every export applied, the table is exactly the chain's state at it."""
    chain = build_chain(tmp_path_factory.mktemp("exports"))
    spec, instance_id = prepare("movies.yaml")
    (table,) = spec.tables
    work = tmp_path_factory.mktemp("work")
    applied: int | None = None
    for index in order:
        continues = index == applied or index == (0 if applied is None else applied + 1)
        try:
            report = run_load(table, str(chain.exports[index]), options(instance_id, work))
        except InputError:
            assert not continues, (order, index)
        else:
            assert continues and report.complete, (order, index)
            applied = index
        if applied is not None:
            assert table_state(instance_id, table, work) == canonical_state(chain.states[applied]), (order, index)
