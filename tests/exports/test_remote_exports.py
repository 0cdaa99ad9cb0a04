"""Exports read from `s3://` (boto3, against moto's S3 in server mode) and `gs://`
(google-cloud-storage, against a small server answering Cloud Storage's JSON API: no GCS
emulator is installed here), with the timeouts of every network call: a silent server
ends the command with exit 1 in the documented bound, a missing bucket is one line with
exit 1, a bad URL or missing credentials exit 2. Servers are processes started and
stopped by PID (moto, the silent server) or a thread shut down by its fixture (the JSON API).
"""

from __future__ import annotations

import http.server
import json
import os
import shutil
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from ddb2bigtable.exports import gcs_objects, s3_objects, stores
from ddb2bigtable.exports.errors import ExportError, ExportUnavailable
from ddb2bigtable.exports.locations import store_for
from ddb2bigtable.exports.manifests import export_folders, open_export, verify_file
from ddb2bigtable.exports.reader import read_records
from ddb2bigtable.spec.aws_endpoints import CONNECT_TIMEOUT_SECONDS, READ_TIMEOUT_SECONDS

from ..conftest import ROOT
from ..local_servers import silent_server
from ..sources import moto_server
from .gcs_json_api import answer_json, serve

BUCKET = "team-exports"
PREFIX = "dynamodb/movies"
MOVIES = ROOT / "exports" / "movies"
# A silent server's bound: one connect and one read timeout (no retry of a timed-out
# request), plus the CLI's start (about 1.5 s here) and a busy shared machine's slack.
SILENT_BOUND = CONNECT_TIMEOUT_SECONDS + READ_TIMEOUT_SECONDS + 5
FAKE_AWS = {"AWS_ACCESS_KEY_ID": "local", "AWS_SECRET_ACCESS_KEY": "local", "AWS_REGION": "us-east-1"}


@pytest.fixture(scope="module")
def moto():
    server = moto_server.start()
    try:
        s3 = server.client("s3")
        s3.create_bucket(Bucket=BUCKET)
        for path in sorted(MOVIES.rglob("*")):
            if path.is_file():
                s3.upload_file(str(path), BUCKET, f"{PREFIX}/{path.relative_to(MOVIES).as_posix()}")
        yield server
    finally:
        server.stop()


@pytest.fixture
def s3_env(moto, monkeypatch):
    """This process's S3 client pointed at moto (the client is made once per process)."""
    for name, value in {**FAKE_AWS, "AWS_ENDPOINT_URL_S3": moto.endpoint}.items():
        monkeypatch.setenv(name, value)
    s3_objects._client.cache_clear()
    yield {**os.environ}
    s3_objects._client.cache_clear()


@pytest.fixture(scope="module")
def json_api(tmp_path_factory):
    folder = tmp_path_factory.mktemp("gcs")
    shutil.copytree(MOVIES, folder / PREFIX)
    server = serve(folder, BUCKET)
    yield server
    server.shutdown()
    server.server_close()


@pytest.fixture
def gcs_env(json_api, monkeypatch):
    monkeypatch.setenv(gcs_objects.EMULATOR_VARIABLE, f"http://127.0.0.1:{json_api.server_port}")
    gcs_objects._client.cache_clear()
    yield {**os.environ}
    gcs_objects._client.cache_clear()


def items(location: str) -> list:
    manifest = open_export(location)
    found = []
    for f in manifest.files:
        verify_file(manifest, f)
        found += [(f.key, r.line, r.kind, r.item) for r in read_records(manifest, f)]
    return found


def run(*args: str, env: dict[str, str]) -> tuple[subprocess.CompletedProcess[str], float]:
    started = time.monotonic()
    out = subprocess.run([sys.executable, "-m", "ddb2bigtable", *args], cwd=ROOT, env=env, capture_output=True,
                         text=True, timeout=120)
    return out, time.monotonic() - started


def advise(export: str, env: dict[str, str]) -> tuple[subprocess.CompletedProcess[str], float]:
    return run("advise", "specs/movies.yaml", "--table", "movies", "--export", export, env=env)


# --- reading ----------------------------------------------------------------------------------

def test_an_s3_export_reads_as_the_same_export_on_disk(s3_env):
    local = open_export(str(MOVIES))
    remote = open_export(f"s3://{BUCKET}/dynamodb")  # the prefix above it: its one export is found
    assert remote.root == f"s3://{BUCKET}/{PREFIX}/AWSDynamoDB"
    assert (remote.item_count, remote.files, remote.export_arn) == (local.item_count, local.files, local.export_arn)
    assert items(f"s3://{BUCKET}/{PREFIX}") == items(str(MOVIES))
    assert export_folders(f"s3://{BUCKET}/{PREFIX}") == [f"{remote.root}/{remote.export_id}"]


def test_a_prefix_holding_a_full_export_and_its_incremental_lists_both_for_a_chain(s3_env, moto):
    s3 = moto.client("s3")
    for source in (MOVIES, ROOT / "exports" / "other" / "movies-incremental"):  # side by side, as AWS writes a chain
        for path in sorted(source.rglob("*")):
            if path.is_file():
                s3.upload_file(str(path), BUCKET, f"chain/{path.relative_to(source).as_posix()}")
    folders = export_folders(f"s3://{BUCKET}/chain")
    local = sorted(export_folders(str(MOVIES)) + export_folders(str(ROOT / "exports" / "other" / "movies-incremental")),
                   key=lambda folder: folder.rsplit("/", 1)[1])
    assert [f.rsplit("/", 1)[1] for f in folders] == [f.rsplit("/", 1)[1] for f in local]
    assert all(f.startswith(f"s3://{BUCKET}/chain/AWSDynamoDB/") for f in folders)
    assert [items(f) for f in folders] == [items(f) for f in local]  # the incremental's data is in AWSDynamoDB/data/


def test_a_gs_export_is_read_in_ranges_and_reads_as_the_same_export(gcs_env, json_api, monkeypatch):
    monkeypatch.setattr(stores, "WINDOW", 64 * 1024)  # the movies' data files are ~150 KB: three ranges each
    json_api.requests.clear()
    assert items(f"gs://{BUCKET}/{PREFIX}/") == items(str(MOVIES))
    ranges = [r for path, r in json_api.requests if path.startswith("/download/") and "/data/" in path]
    assert "bytes=65536-131071" in ranges and len(ranges) > 2 * len(open_export(str(MOVIES)).files)


def test_a_missing_bucket_or_object_is_exit_1_naming_the_url(s3_env, gcs_env, moto):
    with pytest.raises(ExportUnavailable, match=r"s3://no-such-bucket/x: ListObjectsV2: NoSuchBucket"):
        open_export("s3://no-such-bucket/x")
    with pytest.raises(ExportUnavailable, match=r"gs://no-such-bucket/x: objects.list: 404"):
        open_export("gs://no-such-bucket/x")
    manifest = open_export(f"s3://{BUCKET}/{PREFIX}")
    gone = manifest.files[0]
    tail = "AWSDynamoDB/" + gone.key.split("AWSDynamoDB/", 1)[1]  # where the manifest's key resolves
    s3 = moto.client("s3")
    s3.delete_object(Bucket=BUCKET, Key=f"{PREFIX}/{tail}")
    try:
        with pytest.raises(ExportUnavailable, match=rf"s3://{BUCKET}/{PREFIX}/{tail}: no such object"):
            list(read_records(manifest, gone))
    finally:
        s3.upload_file(str(MOVIES / tail), BUCKET, f"{PREFIX}/{tail}")


@pytest.mark.parametrize("location", ["memory://bucket/x", "s3://Not_A_Bucket/x", "gs://ab/x", "s3://bucket?x=1",
                                      "s3://key:secret@bucket/x"])
def test_a_bad_url_is_exit_2_before_any_request(location):
    with pytest.raises(ExportError) as raised:
        open_export(location)
    assert raised.value.exit_code == 2 and not isinstance(raised.value, ExportUnavailable)


# --- the command line: exit codes, one line, bounded time ---------------------------------------

def test_a_missing_bucket_ends_advise_with_exit_1_and_one_line(s3_env):
    out, _ = advise("s3://no-such-bucket/exports", s3_env)
    assert out.returncode == 1, out.stderr
    assert "s3://no-such-bucket/exports" in out.stderr and "no such bucket" in out.stderr
    assert "Traceback" not in out.stderr and len(out.stderr.strip().splitlines()) == 1, out.stderr


def test_advise_samples_an_s3_export_and_import_names_a_missing_bucket_with_exit_1(s3_env, tmp_path):
    out, _ = advise(f"s3://{BUCKET}/{PREFIX}", s3_env)
    assert out.returncode == 0 and "Traceback" not in out.stderr, out.stderr
    template = tmp_path / "movies.yaml"
    template.write_text("Resources:\n  Movies:\n    Type: AWS::DynamoDB::Table\n    Properties:\n"
                        "      TableName: Movies\n      BillingMode: PAY_PER_REQUEST\n"
                        "      AttributeDefinitions: [{AttributeName: year, AttributeType: N}]\n"
                        "      KeySchema: [{AttributeName: year, KeyType: HASH}]\n")
    out, _ = run("import", str(template), "--instance", "movies-prod", "--region", "us-east-1", "--export",
                 "s3://no-such-bucket/x", env=s3_env)
    assert out.returncode == 1 and "s3://no-such-bucket/x" in out.stderr and "no such bucket" in out.stderr, \
        out.stderr
    assert len(out.stderr.strip().splitlines()) == 1, out.stderr


def test_an_empty_or_secret_endpoint_variable_is_exit_2_and_no_secret_is_shown(s3_env):
    out, _ = advise(f"s3://{BUCKET}/{PREFIX}", {**s3_env, "AWS_ENDPOINT_URL_S3": ""})
    assert out.returncode == 2 and "AWS_ENDPOINT_URL_S3" in out.stderr, out.stderr
    out, _ = advise("s3://key:hunter2@bucket/x", s3_env)
    assert out.returncode == 2 and "hunter2" not in out.stderr and "Traceback" not in out.stderr, out.stderr


def test_gs_without_credentials_is_exit_2_naming_what_to_set(tmp_path):
    env = {k: v for k, v in os.environ.items() if k not in (gcs_objects.EMULATOR_VARIABLE,
                                                             "GOOGLE_APPLICATION_CREDENTIALS")}
    env.update(HOME=str(tmp_path), CLOUDSDK_CONFIG=str(tmp_path / "gcloud"), NO_GCE_CHECK="True")
    out, _ = advise(f"gs://{BUCKET}/{PREFIX}", env)
    assert out.returncode == 2 and "GOOGLE_APPLICATION_CREDENTIALS" in out.stderr, out.stderr
    assert "Traceback" not in out.stderr


@pytest.fixture
def silent():
    server = silent_server()
    yield server
    server.stop()


@pytest.mark.parametrize("scheme", ["s3", "gs"])
def test_a_silent_bucket_endpoint_ends_with_exit_1_within_one_read_timeout(silent, scheme, tmp_path):
    env = {**os.environ, **FAKE_AWS, "AWS_ENDPOINT_URL_S3": silent.endpoint,
           gcs_objects.EMULATOR_VARIABLE: silent.endpoint}
    out, seconds = advise(f"{scheme}://{BUCKET}/{PREFIX}", env)
    print(f"advise --export {scheme}://, silent endpoint: exit {out.returncode} after {seconds:.1f} s")
    assert out.returncode == 1, out.stderr
    assert f"no answer within {READ_TIMEOUT_SECONDS:g} s" in out.stderr and "Traceback" not in out.stderr
    assert seconds < SILENT_BOUND


class _Stalling(http.server.BaseHTTPRequestHandler):
    """Answers an object's size, then sends 100 bytes of it and nothing more."""

    protocol_version = "HTTP/1.1"
    released = threading.Event()

    def do_HEAD(self) -> None:  # noqa: N802 (S3's HeadObject)
        self.send_response(200)
        self.send_header("Content-Length", "1000000")
        self.send_header("ETag", '"0123"')
        self.end_headers()

    def do_GET(self) -> None:  # noqa: N802
        if "/storage/v1/" in self.path and "alt=media" not in self.path:  # Cloud Storage's objects.get
            answer_json(self, 200, {"name": "x/manifest-summary.json", "bucket": BUCKET, "size": "1000000",
                                    "generation": "1"})
            return
        self.send_response(206)
        self.send_header("Content-Length", "1000000")
        self.end_headers()
        self.wfile.write(b"{" * 100)
        self.wfile.flush()
        self.released.wait(60)

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def stalling(monkeypatch):
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Stalling)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    endpoint = f"http://127.0.0.1:{server.server_port}"
    for name, value in {**FAKE_AWS, "AWS_ENDPOINT_URL_S3": endpoint, gcs_objects.EMULATOR_VARIABLE: endpoint}.items():
        monkeypatch.setenv(name, value)
    s3_objects._client.cache_clear()
    gcs_objects._client.cache_clear()
    yield
    _Stalling.released.set()
    server.shutdown()
    server.server_close()
    s3_objects._client.cache_clear()
    gcs_objects._client.cache_clear()


@pytest.mark.parametrize("scheme", ["s3", "gs"])
def test_a_body_that_stalls_half_way_ends_the_read_after_one_read_timeout(stalling, scheme):
    store, path = store_for(f"{scheme}://{BUCKET}/x/manifest-summary.json")
    started = time.monotonic()
    with pytest.raises(ExportUnavailable, match=f"no answer within {READ_TIMEOUT_SECONDS:g} s"):
        with store.open(path) as stream:
            stream.read(1 << 20)
    assert time.monotonic() - started < READ_TIMEOUT_SECONDS + 5


# --- end to end: load and verify from a bucket ----------------------------------------------------

def own_instance(tmp_path: Path, instance: str) -> list[str]:
    """The arguments that load the Movies spec into an instance of this test's own on the
    local stage (a copy of the spec under another instance id, given by its whole path:
    a spec path is read from the working folder), so its rows never meet another test's."""
    root = tmp_path / "root"
    (root / "specs").mkdir(parents=True)
    (root / "stacks").mkdir()
    spec = root / "specs" / "movies.yaml"
    spec.write_text((ROOT / "specs" / "movies.yaml").read_text().replace("id: movies-sample", f"id: {instance}"))
    stage = (ROOT / "stacks" / "Pulumi.local.yaml").read_text().splitlines()
    (root / "stacks" / "Pulumi.local.yaml").write_text(
        "\n".join(s for s in stage if "- specs/" not in s or "- specs/movies.yaml" in s))
    return [str(spec), "--table", "movies", "--stage", "local", "--root", str(root)]


@pytest.mark.slow
@pytest.mark.parametrize("scheme,runner", [("s3", "local"), ("gs", "local"), ("s3", "beam")])
def test_load_from_a_bucket_then_verify_finds_every_item(bigtable_emulator, s3_env, gcs_env, scheme, runner,
                                                         tmp_path):
    """The local loader's forked encoders and Beam's workers each open the bucket themselves."""
    export = f"{scheme}://{BUCKET}/{PREFIX}"
    env, target = {**os.environ}, own_instance(tmp_path, f"remote-{scheme}-{runner}")
    out, seconds = run("load", *target, "--export", export, "--create-tables", "--runner", runner, "--format", "json",
                       "--work-dir", str(tmp_path / "work"), env=env)
    assert out.returncode == 0, out.stderr
    report = json.loads(out.stdout)
    assert report["complete"] and report["loaded"] == 4609 == report["manifest_items"]
    print(f"load --runner {runner} --export {export}: {seconds:.1f} s")
    out, _ = run("verify", *target, "--export", export, "--format", "json", "--work-dir", str(tmp_path / "work"),
                 env=env)
    assert out.returncode == 0, out.stderr
    verified = json.loads(out.stdout)
    assert verified["ok"] and verified["matched"] == 4609 == verified["table_items"] and verified["missing"] == 0


@pytest.mark.slow
def test_a_silent_bucket_ends_load_with_exit_1_and_nothing_written(bigtable_emulator, silent, tmp_path):
    env = {**os.environ, **FAKE_AWS, "AWS_ENDPOINT_URL_S3": silent.endpoint}
    work = tmp_path / "work"
    out, seconds = run("load", *own_instance(tmp_path, "remote-silent"), "--export", f"s3://{BUCKET}/{PREFIX}",
                       "--create-tables", "--work-dir", str(work), env=env)
    print(f"load --export s3://, silent endpoint: exit {out.returncode} after {seconds:.1f} s")
    assert out.returncode == 1 and f"no answer within {READ_TIMEOUT_SECONDS:g} s" in out.stderr, out.stderr
    assert "Traceback" not in out.stderr and len(out.stderr.strip().splitlines()) == 1, out.stderr
    assert not work.exists() or not any(work.rglob("state.json"))
    assert seconds < SILENT_BOUND + 10  # the table check against the emulator comes first
