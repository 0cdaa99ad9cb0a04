"""Faults during a load: each ends with every item accounted for, or with a clear error.

Never a silent loss: corrupt lines, a truncated gzip file, an md5 mismatch, a loader
killed half-way and rerun, TTL expiry, a connection dropped mid-load (a TCP proxy), a
file that breaks mid-load, and the encoder process dying.
"""

from __future__ import annotations

import base64
import gzip
import hashlib
import json
import os
import shutil
import signal
import subprocess
import sys
import threading
import time
from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path

from ddb2bigtable.bigtable.emulator import EMULATOR_ENV
from ddb2bigtable.bigtable.table_admin import ensure_tables
from ddb2bigtable.exports.manifests import open_export
from ddb2bigtable.exports.types import export_types
from ddb2bigtable.exports.writer import write_export
from ddb2bigtable.load.run import LoadOptions, export_fingerprint, run_load
from ddb2bigtable.load.state import LoadState
from ddb2bigtable.load.state import target as load_target
from ddb2bigtable.load.verify import run_verify
from ddb2bigtable.load.writer import WriteSettings
from ddb2bigtable.plan.planner import plan_stage
from ddb2bigtable.spec.reading import read_spec
from ddb2bigtable.spec.stage import load_stage

from ..conftest import ROOT
from ..tcp_proxy import TcpProxy
from .test_load_emulator import PROJECT, prepare, read_all

MOVIES = ROOT / "exports" / "movies"


def copy_export(tmp: Path) -> Path:
    dest = tmp / "export"
    shutil.copytree(MOVIES, dest)
    return dest


def data_files(export: Path) -> list[Path]:
    return sorted(export.glob("AWSDynamoDB/*/data/*.json.gz"))


def rewrite_manifest_md5(export: Path, data_file: Path) -> None:
    """Make the manifest agree with a file we changed on purpose (so the next check is reached)."""
    manifest = next(export.glob("AWSDynamoDB/*/manifest-files.json"))
    md5 = base64.b64encode(hashlib.md5(data_file.read_bytes()).digest()).decode()
    lines = []
    for line in manifest.read_text().splitlines():
        entry = json.loads(line)
        if entry["dataFileS3Key"].endswith(data_file.name):
            entry["md5Checksum"] = md5
        lines.append(json.dumps(entry, separators=(",", ":")))
    manifest.write_text("\n".join(lines) + "\n")


def tables_for(spec_file: Path, instance_id: str):
    """The spec, with its planned tables, families and GC rules created under `instance_id`."""
    spec = read_spec(spec_file)
    (instance,) = plan_stage(load_stage("local", ROOT), [spec]).instances
    ensure_tables(PROJECT, replace(instance, id=instance_id))
    return spec


def options(instance_id: str, work: Path, **kw) -> LoadOptions:
    return LoadOptions(project=PROJECT, instance_id=instance_id, app_profile_id="migration-load", work_dir=work, **kw)


def test_a_corrupt_line_is_dead_lettered_and_every_item_is_accounted_for(bigtable_emulator, tmp_path):
    export = copy_export(tmp_path)
    target = data_files(export)[1]
    lines = gzip.decompress(target.read_bytes()).decode().splitlines()
    lines[41] = '{"Item": {"year": {"N": "19'  # cut mid-line, as a bad upload would
    target.write_bytes(gzip.compress(("\n".join(lines) + "\n").encode()))
    rewrite_manifest_md5(export, target)
    spec, instance_id = prepare("movies.yaml")
    report = run_load(spec.tables[0], str(export), options(instance_id, tmp_path / "work"))
    assert report.complete and report.total("loaded") == 4608 and report.total("dead_lettered") == 1
    (part,) = Path(report.dead_letters).iterdir()
    (dead,) = [json.loads(x) for x in part.read_text().splitlines()]
    assert dead["line"] == 42 and target.name in dead["file"] and dead["reason"]
    verified = run_verify(spec.tables[0], str(export), project=PROJECT, instance_id=instance_id,
                          work_dir=tmp_path / "work")
    assert verified.ok and verified.dead_lettered == 1 and verified.accounted == 4609


def test_a_truncated_gzip_file_stops_with_a_clear_error(bigtable_emulator, tmp_path):
    export = copy_export(tmp_path)
    target = data_files(export)[2]
    target.write_bytes(target.read_bytes()[: target.stat().st_size // 2])
    rewrite_manifest_md5(export, target)  # the md5 matches: the gzip stream itself is broken
    spec, instance_id = prepare("movies.yaml")
    report = run_load(spec.tables[0], str(export), options(instance_id, tmp_path / "work"))
    assert not report.complete and target.name in report.error and "truncated" in report.error
    assert report.total("loaded") == 0 and read_all(instance_id, "movies") == []  # found before writing


def test_an_md5_mismatch_stops_before_writing_that_file(bigtable_emulator, tmp_path):
    export = copy_export(tmp_path)
    target = data_files(export)[0]
    data = bytearray(target.read_bytes())
    data[-12] ^= 0xFF
    target.write_bytes(bytes(data))
    spec, instance_id = prepare("movies.yaml")
    report = run_load(spec.tables[0], str(export), options(instance_id, tmp_path / "work"))
    assert not report.complete and "md5" in report.error.lower() and target.name in report.error
    assert report.total("loaded") == 0 and read_all(instance_id, "movies") == []



def replaced_after_inference(monkeypatch, target: Path, lines: bytes | None = None) -> None:
    """In the encoder processes (fork): `target` replaced once its types were inferred, by
    `lines` gzip'd, or by its own bytes and a zero (still gzip, the same lines, other bytes)."""
    from ddb2bigtable.load import encoder

    inferred = encoder.share_types

    def then_replaced(*args):
        shares = inferred(*args)
        if any(Path(key).name == target.name for key, _ in shares):
            target.write_bytes(gzip.compress(lines) if lines is not None else target.read_bytes() + b"\0")
        return shares

    monkeypatch.setattr(encoder, "share_types", then_replaced)


def test_a_file_replaced_after_its_md5_was_checked_fails_the_load(bigtable_emulator, tmp_path, monkeypatch):
    """A fresh load checks each file's md5 in its inference read, and hashes the rows' read
    again: a file replaced between the two (after its types were inferred) fails, is not
    marked done, and the rerun refuses it before writing. (A file whose lines the
    inference kept is not read again: no file here is kept, KEEP_BYTES 0.)"""
    from ddb2bigtable.load import encoder

    export = copy_export(tmp_path)
    target = data_files(export)[0]
    monkeypatch.setattr(encoder, "KEEP_BYTES", 0)
    replaced_after_inference(monkeypatch, target)
    spec, instance_id = prepare("movies.yaml")
    report = run_load(spec.tables[0], str(export), options(instance_id, tmp_path / "work"))
    assert not report.complete and "md5" in report.error and target.name in report.error
    failed = next(r for r in report.files if Path(r.file).name == target.name)
    assert failed.status == "failed"
    monkeypatch.undo()
    again = run_load(spec.tables[0], str(export), options(instance_id, tmp_path / "work"))
    assert not again.complete and "md5" in again.error and target.name in again.error
    assert again.total("loaded") == 4609 - failed.manifest_items  # the other files resumed as done


def test_a_small_file_is_read_once_and_its_checked_lines_are_loaded(bigtable_emulator, tmp_path, monkeypatch):
    """A fresh load keeps a small file's lines from its inference read (md5 checked) and
    encodes them: replaced afterwards, even by a damaged file, it is not read again."""
    export = copy_export(tmp_path)
    target = data_files(export)[0]
    replaced_after_inference(monkeypatch, target, b'{"Item": {"year": {"N": "19\n')
    spec, instance_id = prepare("movies.yaml")
    report = run_load(spec.tables[0], str(export), options(instance_id, tmp_path / "work"))
    assert report.complete and report.total("loaded") == 4609 and report.total("dead_lettered") == 0
    assert len(read_all(instance_id, "movies")) == 4609

def big_export(tmp: Path, items: int) -> Path:
    rows = ({"pk": {"S": f"device-{i % 977:04d}"}, "sk": {"N": str(i)}, "payload": {"S": "x" * 200},
             "n": {"N": str(i * 7)}} for i in range(items))
    return write_export(tmp / "big", "arn:aws:dynamodb:us-east-1:123456789012:table/Events", rows,
                        export_time=datetime(2026, 11, 20, tzinfo=UTC), items_per_file=4000)


BIG_SPEC = """\
version: 1
instance: {id: kill-test-instance}
tables:
  - id: events
    source:
      table: Events
      region: us-east-1
      key: {partition: {name: pk, type: S}, sort: {name: sk, type: N}}
      reads: 10
      writes: 10
"""


def test_a_loader_killed_half_way_resumes_and_loses_nothing(bigtable_emulator, tmp_path):
    export = big_export(tmp_path, 40_000)
    spec_file = tmp_path / "events.yaml"
    spec_file.write_text(BIG_SPEC)
    work = tmp_path / "work"
    command = [sys.executable, "-m", "ddb2bigtable", "load", str(spec_file), "--table", "events", "--export",
               str(export), "--stage", "local", "--create-tables", "--work-dir", str(work), "--format", "json",
               "--root", str(ROOT)]
    first = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    state = work / "state.json"
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        if state.is_file() and json.loads(state.read_text())["done"]:
            break
        time.sleep(0.02)
    first.send_signal(signal.SIGKILL)
    first.wait()
    assert _survivors(str(work), within=10) == [], "the encoder processes must die with their load"
    done_before = len(json.loads(state.read_text())["done"])
    assert 1 <= done_before < 10, "the kill must land half-way"
    second = subprocess.run(command, capture_output=True, text=True)
    assert second.returncode == 0, second.stderr
    report = json.loads(second.stdout)
    assert report["complete"] and report["accounted"] == 40_000
    resumed = [f for f in report["files"] if f["status"].startswith("resumed")]
    assert len(resumed) == done_before
    spec = read_spec(spec_file)
    verified = run_verify(spec.tables[0], str(export), project="local-project", instance_id="kill-test-instance-local",
                          work_dir=work)
    assert verified.ok and verified.table_items == 40_000  # nothing lost, nothing doubled


def _survivors(marker: str, within: float) -> list[int]:
    """PIDs of processes whose command line holds `marker`, once `within` seconds passed
    without them all going away."""
    deadline = time.monotonic() + within
    while True:
        found = []
        for proc in Path("/proc").iterdir():
            try:
                if proc.name.isdigit() and marker.encode() in (proc / "cmdline").read_bytes():
                    found.append(int(proc.name))
            except OSError:
                continue
        if not found or time.monotonic() > deadline:
            return found
        time.sleep(0.1)


TTL_SPEC = """\
version: 1
instance: {id: ttl-test-instance}
tables:
  - id: sessions
    source:
      table: Sessions
      region: us-east-1
      key: {partition: {name: id, type: S}}
      reads: 10
      writes: 10
      ttl: {attribute: expiresAt}
"""


def test_ttl_expired_items_are_skipped_and_future_expiry_is_collected_by_gc(bigtable_emulator, tmp_path):
    now = time.time()
    items = ([{"id": {"S": f"past-{i}"}, "expiresAt": {"N": str(int(now) - 3600)}} for i in range(3)]
             + [{"id": {"S": f"soon-{i}"}, "expiresAt": {"N": str(int(now) + 3)}} for i in range(3)]
             + [{"id": {"S": f"forever-{i}"}, "data": {"S": "keep"}} for i in range(3)])
    export = write_export(tmp_path / "ttl", "arn:aws:dynamodb:us-east-1:123456789012:table/Sessions", items,
                          export_time=datetime.now(UTC), items_per_file=4)
    spec_file = tmp_path / "sessions.yaml"
    spec_file.write_text(TTL_SPEC)
    spec = tables_for(spec_file, "ttl-test")
    report = run_load(spec.tables[0], str(export), options("ttl-test", tmp_path / "work"))
    assert report.complete and report.total("expired") == 3 and report.total("loaded") == 6
    keys = sorted(r.row_key.decode() for r in read_all("ttl-test", "sessions"))
    assert keys == sorted([f"soon-{i}" for i in range(3)] + [f"forever-{i}" for i in range(3)])
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:  # the emulator's GC: max_age 1s past the expiry timestamp
        keys = sorted(r.row_key.decode() for r in read_all("ttl-test", "sessions"))
        if not any(k.startswith("soon") for k in keys):
            break
        time.sleep(0.5)
    assert keys == [f"forever-{i}" for i in range(3)]
    verified = run_verify(spec.tables[0], str(export), project=PROJECT, instance_id="ttl-test",
                          work_dir=tmp_path / "work")
    assert verified.ok and verified.expired == 6 and verified.table_items == 3 and verified.accounted == 9


def test_a_connection_dropped_mid_load_is_retried_and_nothing_is_lost(bigtable_emulator, tmp_path):
    export = big_export(tmp_path, 30_000)
    spec_file = tmp_path / "events.yaml"
    spec_file.write_text(BIG_SPEC.replace("kill-test-instance", "drop-test-instance"))
    spec = tables_for(spec_file, "drop-test")
    proxy = TcpProxy(bigtable_emulator.host, bigtable_emulator.port)
    direct = os.environ[EMULATOR_ENV]
    os.environ[EMULATOR_ENV] = proxy.address
    cuts = 0

    def cut_twice():
        nonlocal cuts
        for threshold in (2_000_000, 5_000_000):
            while proxy.bytes_forwarded < threshold:
                time.sleep(0.005)
            proxy.drop()
            cuts += 1

    cutter = threading.Thread(target=cut_twice, daemon=True)
    cutter.start()
    try:
        report = run_load(spec.tables[0], str(export), options("drop-test", tmp_path / "work"))
    finally:
        os.environ[EMULATOR_ENV] = direct
        proxy.close()
    assert cuts == 2, "the proxy must have cut the link mid-load"
    assert report.complete and report.total("loaded") == 30_000
    verified = run_verify(spec.tables[0], str(export), project=PROJECT, instance_id="drop-test")
    assert verified.ok and verified.table_items == 30_000


def test_a_link_that_stays_down_ends_in_a_clear_error_and_a_rerun_completes(bigtable_emulator, tmp_path):
    export = big_export(tmp_path, 8_000)
    spec_file = tmp_path / "events.yaml"
    spec_file.write_text(BIG_SPEC)
    spec = tables_for(spec_file, "down-test")
    proxy = TcpProxy(bigtable_emulator.host, bigtable_emulator.port)
    direct = os.environ[EMULATOR_ENV]
    os.environ[EMULATOR_ENV] = proxy.address

    def go_down() -> None:  # once the load writes (the preflight's admin call went through)
        while proxy.bytes_forwarded < 200_000:
            time.sleep(0.005)
        proxy.refuse = True
        proxy.drop()

    threading.Thread(target=go_down, daemon=True).start()
    try:
        report = run_load(spec.tables[0], str(export),
                          options("down-test", tmp_path / "work", writer=WriteSettings(operation_timeout_seconds=3)))
    finally:
        os.environ[EMULATOR_ENV] = direct
        proxy.close()
    assert not report.complete and "rerun the load" in report.error
    rerun = run_load(spec.tables[0], str(export), options("down-test", tmp_path / "work"))
    assert rerun.complete and rerun.total("loaded") == 8_000
    assert len(read_all("down-test", "events")) == 8_000


def test_a_file_that_breaks_mid_load_stops_with_its_own_error_and_later_files_wait(bigtable_emulator, tmp_path):
    """The files are read by the encoder processes while other files' rows are still in
    flight; a file damaged after the types were inferred (a rerun with saved types) must
    still stop the load with that file's error: no file starts after it, and what was
    counted as loaded is exactly what the table holds."""
    export = copy_export(tmp_path)
    spec, instance_id = prepare("movies.yaml")
    work = tmp_path / "work"
    manifest = open_export(str(export))
    types = export_types(manifest, spec.tables[0])
    order = [f.key for f in manifest.files]
    target = next(p for p in data_files(export) if p.name in order[2])
    target.write_bytes(target.read_bytes()[: target.stat().st_size * 2 // 3])
    rewrite_manifest_md5(export, target)
    state = LoadState(export_fingerprint(open_export(str(export)), spec.tables[0]), types=types,
                      target=load_target(PROJECT, instance_id, spec.tables[0].id))
    state.save(work / "state.json")  # as a first run that inferred the types left it

    report = run_load(spec.tables[0], str(export), options(instance_id, work))

    assert not report.complete and "truncated" in report.error and target.name in report.error
    status = {f.file: f.status for f in report.files}
    assert status.pop(order[2]) == "failed"
    assert order[4] not in status  # next in the broken file's lane (encoder process): never started
    assert set(status.values()) == {"loaded"} and {order[0], order[1]} <= set(status)  # started before it
    loaded = report.total("loaded")
    items = {f.key: f.item_count for f in manifest.files}
    assert 0 < loaded - sum(items[k] for k in status) < items[order[2]]  # and the lines up to the cut
    assert len(read_all(instance_id, "movies")) == loaded  # what is counted is what is there


def test_an_encoder_process_that_dies_is_a_clear_error_and_a_rerun_completes(bigtable_emulator, tmp_path,
                                                                             monkeypatch):
    from ddb2bigtable.load import encoder

    spec, instance_id = prepare("movies.yaml")
    real = encoder._encode_file
    second = open_export(str(MOVIES)).files[1].key

    def dies_in_the_second_file(conn, job, codec, f, *rest):
        if f.key == second:
            os._exit(9)  # as the OOM killer would
        real(conn, job, codec, f, *rest)

    monkeypatch.setattr(encoder, "_encode_file", dies_in_the_second_file)
    report = run_load(spec.tables[0], str(MOVIES), options(instance_id, tmp_path / "work"))
    assert not report.complete and "encoder process stopped" in report.error and "rerun the load" in report.error
    status = {f.file: f.status for f in report.files}
    assert status.pop(second) == "failed" and set(status.values()) <= {"loaded"}
    monkeypatch.setattr(encoder, "_encode_file", real)
    rerun = run_load(spec.tables[0], str(MOVIES), options(instance_id, tmp_path / "work"))
    assert rerun.complete and rerun.total("loaded") == 4_609
    again = {f.file: f.status for f in rerun.files}
    assert again[second] == "loaded" and all(again[k] == "resumed: already loaded" for k in status)
    assert len(read_all(instance_id, "movies")) == 4_609
