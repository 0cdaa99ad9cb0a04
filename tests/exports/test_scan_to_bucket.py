"""`ddb2bigtable export aws://REGION/TABLE -o s3://BUCKET/PREFIX` against DynamoDB Local and
moto in server mode: the export lands in the bucket whole (read back by the exports reader,
the same items as a local export), the checkpoint stays in the local work folder, and an
export killed mid-run resumes to the same objects. gs:// against gcp-storage-emulator (a
dev dependency; a stand-in for Cloud Storage's JSON API, not Cloud Storage itself) on
127.0.0.1, started and stopped by PID, reached through STORAGE_EMULATOR_HOST."""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from ddb2bigtable.bigtable.emulator import free_port
from ddb2bigtable.exports.errors import ExportError
from ddb2bigtable.exports.manifests import open_export, verify_file
from ddb2bigtable.exports.reader import read_records
from ddb2bigtable.exports.scan_state import CHECKPOINT

from ..local_servers import LocalServer, launch
from ..replicate import dynamodb_local
from ..sources import moto_server
from .scan_tables import killed_after_files, make_table

ROOT = Path(__file__).resolve().parents[2]
BUCKET = "scan-exports"
pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def servers():
    dynamodb, moto = dynamodb_local.start(), moto_server.start()
    try:
        moto.client("s3").create_bucket(Bucket=BUCKET)
        yield dynamodb, moto
    finally:
        moto.stop()
        dynamodb.stop()


def _env(servers) -> dict[str, str]:
    dynamodb, moto = servers
    return {**os.environ, "AWS_ENDPOINT_URL_DYNAMODB": dynamodb.endpoint, "AWS_ENDPOINT_URL_S3": moto.endpoint,
            "AWS_ACCESS_KEY_ID": "local", "AWS_SECRET_ACCESS_KEY": "local", "AWS_REGION": "us-east-1"}


def _export(servers, table: str, dest: str, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "ddb2bigtable", "export", f"aws://us-west-2/{table}", "-o", dest,
                           *args], capture_output=True, text=True, env=_env(servers), timeout=180, cwd=ROOT)


def _read_back(servers, monkeypatch, location: str) -> tuple[list[dict], list[int]]:
    """The export's items as load and verify read them (the exports reader, md5s checked)."""
    from ddb2bigtable.exports import s3_objects

    for name, value in _env(servers).items():
        monkeypatch.setenv(name, value)
    s3_objects._client.cache_clear()
    manifest = open_export(location)
    items = []
    for f in manifest.files:
        verify_file(manifest, f)
        items += [r.item for r in read_records(manifest, f)]
    s3_objects._client.cache_clear()
    return items, [f.item_count for f in manifest.files]


def _keys(servers, prefix: str) -> list[str]:
    page = servers[1].client("s3").list_objects_v2(Bucket=BUCKET, Prefix=prefix)
    return sorted(o["Key"][len(prefix):] for o in page.get("Contents", []))


def _key(item: dict) -> tuple:
    return item["pk"]["S"], item["sk"]["N"]


def test_an_export_to_s3_reads_back_whole_and_keeps_its_checkpoint_local(servers, monkeypatch, tmp_path):
    items = make_table(servers[0].client(), "ToBucket", 300)
    work = tmp_path / "work"
    out = _export(servers, "ToBucket", f"s3://{BUCKET}/whole/", "--segments", "3", "--items-per-file", "50",
                  "--work-dir", str(work), "--format", "json")
    assert out.returncode == 0, out.stderr
    exported, counts = _read_back(servers, monkeypatch, f"s3://{BUCKET}/whole")
    assert sorted(exported, key=_key) == sorted(items, key=_key) and sum(counts) == 300
    assert json.loads(out.stdout)["export"].startswith(f"s3://{BUCKET}/whole/AWSDynamoDB/")
    names = {k.rsplit("/", 1)[-1] for k in _keys(servers, "whole/")}
    assert {"manifest-summary.json", "manifest-summary.md5", "manifest-files.json", "manifest-files.md5",
            "_started"} <= names
    assert stat.S_IMODE(work.stat().st_mode) == 0o700 and not (work / CHECKPOINT).exists()
    assert not list(work.rglob("*.json.gz"))  # uploaded, not kept twice

    again = _export(servers, "ToBucket", f"s3://{BUCKET}/whole", "--work-dir", str(tmp_path / "other"))
    assert again.returncode == 2 and "new prefix" in again.stderr and "Traceback" not in again.stderr


def test_a_killed_export_to_s3_resumes_to_the_same_objects(servers, monkeypatch, tmp_path):
    make_table(servers[0].client(), "ToBucketKilled", 300)
    work, url = tmp_path / "work", f"s3://{BUCKET}/killed"
    slow = subprocess.Popen([sys.executable, "-m", "ddb2bigtable", "export", "aws://us-west-2/ToBucketKilled", "-o",
                             url, "--work-dir", str(work), "--segments", "2", "--items-per-file", "30",
                             "--max-rcu", "3"], env=_env(servers), cwd=ROOT,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    checkpoint = work / CHECKPOINT
    saved = killed_after_files(slow, checkpoint)  # files uploaded, more to come
    assert not all(s["done"] for s in saved["segments"]), "the export ended before it was killed"
    uploaded = _keys(servers, "killed/")
    assert uploaded and not any(k.endswith("manifest-summary.json") for k in uploaded)  # no reader sees it yet
    with pytest.raises(ExportError, match="no AWSDynamoDB/<exportId>/manifest-summary.json"):
        _read_back(servers, monkeypatch, url)

    resumed = _export(servers, "ToBucketKilled", url, "--work-dir", str(work), "--segments", "2",
                      "--items-per-file", "30")
    assert resumed.returncode == 0 and "resumed" in resumed.stdout, resumed.stderr
    items, counts = _read_back(servers, monkeypatch, url)
    assert len(items) == len({_key(i) for i in items}) == 300 and sum(counts) == 300  # nothing twice, none lost
    data = [k for k in _keys(servers, "killed/") if "/data/" in k]
    assert len(data) == len(counts)  # the file a kill cut short was uploaded again under its own name, once
    assert set(uploaded) <= set(_keys(servers, "killed/"))


def test_an_export_to_gs_reads_back_whole_from_the_storage_emulator(servers, monkeypatch, tmp_path):
    from ddb2bigtable.exports import gcs_objects

    port = free_port()
    gcs = launch(LocalServer, "gcp-storage-emulator", [
        str(Path(sys.executable).parent / "gcp-storage-emulator"), "start", "--host", "127.0.0.1", "--port", str(port),
        "--default-bucket", BUCKET, "--in-memory", "--quiet"], port, 60, "is gcp-storage-emulator installed (`uv sync`)?")
    try:
        monkeypatch.setenv(gcs_objects.EMULATOR_VARIABLE, gcs.endpoint)
        items = make_table(servers[0].client(), "ToGcs", 120)
        out = subprocess.run([sys.executable, "-m", "ddb2bigtable", "export", "aws://us-west-2/ToGcs", "-o",
                              f"gs://{BUCKET}/scan", "--work-dir", str(tmp_path / "work"), "--segments", "2",
                              "--items-per-file", "50"], capture_output=True, text=True, timeout=180, cwd=ROOT,
                             env={**_env(servers), gcs_objects.EMULATOR_VARIABLE: gcs.endpoint})
        assert out.returncode == 0, out.stderr
        gcs_objects._client.cache_clear()
        manifest = open_export(f"gs://{BUCKET}/scan")
        exported = []
        for f in manifest.files:
            verify_file(manifest, f)  # the md5 of the uploaded bytes, as the manifest says
            exported += [r.item for r in read_records(manifest, f)]
        assert sorted(exported, key=_key) == sorted(items, key=_key)
    finally:
        gcs_objects._client.cache_clear()
        gcs.stop()


@pytest.mark.parametrize(("dest", "extra", "said"), [
    ("s3://Bad_Bucket!/p", [], "not a bucket URL"),
    ("ftp://bucket/p", [], "s3://BUCKET/PREFIX or gs://BUCKET/PREFIX"),
    ("local-folder", ["--work-dir", "w"], "--work-dir: is for a bucket -o"),
])
def test_a_bad_output_is_exit_2_before_any_request(dest, extra, said, tmp_path):
    out = subprocess.run([sys.executable, "-m", "ddb2bigtable", "export", "aws://us-east-1/Orders", "-o", dest,
                          *extra], capture_output=True, text=True, timeout=60, cwd=tmp_path,
                         env={**os.environ, "AWS_ENDPOINT_URL_DYNAMODB": "http://127.0.0.1:9"})
    assert out.returncode == 2 and said in out.stderr and "Traceback" not in out.stderr, out.stderr
    assert not list(tmp_path.iterdir())  # nothing made
