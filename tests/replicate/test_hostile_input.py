"""Hostile or mistaken input to `replicate` and `cutover check`, as a user runs them against
DynamoDB Local and the Bigtable emulator: a checkpoint holding Infinity, a wrong sequence
number or another stream's ARN, a checkpoint or work folder that cannot be written, a huge
`--segments`, an empty `--endpoint-url`, a password in `--endpoint-url`. Each ends in
seconds with one located line and exit 2 (or 1 for a service), no traceback, no temporary
file left behind, no secret echoed, and never a "ready" verdict."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from contextlib import contextmanager
from pathlib import Path

import pytest

from ddb2bigtable.bigtable.emulator import free_port
from ddb2bigtable.replicate.checkpoint import CHECKPOINT

from ..conftest import ROOT
from ..local_servers import html_server
from .scenario import create, export_and_load
from .test_cutover import cutover_check
from .test_replicate_cli import environment, replicate, writes
from .test_replicate_emulator import movie

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def replicated(dynamodb, bigtable_emulator, tmp_path_factory):
    """A table replicated until caught up: `cutover check` says ready (asserted once)."""
    scenario = create(dynamodb, tmp_path_factory.mktemp("hostile"))
    writes(dynamodb, scenario, 0, 5)
    export = export_and_load(dynamodb, scenario, scenario.spec_file.parent)
    writes(dynamodb, scenario, 5, 10)
    out = replicate(scenario, dynamodb, "--since", str(export))
    assert out.returncode == 0, out.stderr
    ready = cutover_check(scenario, dynamodb, "--sample", "20")
    assert ready.returncode == 0 and "verdict: ready" in ready.stdout, ready.stdout + ready.stderr
    return scenario


@pytest.fixture
def checkpoint(replicated):
    """The replicated table's checkpoint file, put back as it was after the test."""
    path = replicated.work_dir / CHECKPOINT
    saved = path.read_text()
    yield path
    path.write_text(saved)


def one_line_exit(out: subprocess.CompletedProcess, code: int, *words: str) -> str:
    assert out.returncode == code, out.stdout + out.stderr
    assert "Traceback" not in out.stderr and "verdict: ready" not in out.stdout, out.stderr
    for word in words:
        assert word in out.stderr, out.stderr
    return out.stderr


def line_of(path: Path, text: str) -> int:
    return next(n for n, line in enumerate(path.read_text().splitlines(), 1) if text in line)


@pytest.mark.parametrize("field, value", [("newest_micros", "Infinity"), ("caught_up_micros", "NaN"),
                                          ("start_micros", "1e400")])
def test_a_checkpoint_holding_infinity_or_nan_is_exit_2_at_its_line(replicated, dynamodb, checkpoint, field, value):
    document = json.loads(checkpoint.read_text())
    checkpoint.write_text(json.dumps(document, indent=1).replace(f'"{field}": {json.dumps(document[field])}',
                                                                 f'"{field}": {value}'))
    line = line_of(checkpoint, f'"{field}"')
    for out in (cutover_check(replicated, dynamodb), replicate(replicated, dynamodb)):
        one_line_exit(out, 2, f"{checkpoint}:{line}:", f"{field}: the replication checkpoint is damaged",
                      "delete it and rerun with --since")


def test_a_wrong_sequence_number_or_another_streams_checkpoint_is_never_ready(replicated, dynamodb, checkpoint):
    document = json.loads(checkpoint.read_text())
    shard = next(iter(document["after"]))
    for wrong in ("not-a-sequence", 12, None):
        checkpoint.write_text(json.dumps(document | {"after": {shard: wrong}}, indent=1))
        one_line_exit(cutover_check(replicated, dynamodb), 2, f"{checkpoint}:{line_of(checkpoint, shard)}:",
                      f"after.{shard}: the replication checkpoint is damaged", "is not a DynamoDB Streams sequence")
    earlier = document["stream_arn"].rsplit("/", 1)[0] + "/2020-01-01T00:00:00.000"
    checkpoint.write_text(json.dumps(document | {"stream_arn": earlier}, indent=1))
    one_line_exit(cutover_check(replicated, dynamodb), 2, "belongs to the stream", "Re-export")


@contextmanager
def unwritable(path: Path):
    """`path` made unchangeable: immutable for root (who writes through any mode), 0500 else."""
    root = os.geteuid() == 0
    before = path.stat().st_mode
    subprocess.run(["chattr", "+i", str(path)], check=True) if root else path.chmod(0o500)
    try:
        yield
    finally:
        subprocess.run(["chattr", "-i", str(path)], check=True) if root else path.chmod(before)


@pytest.mark.skipif(os.geteuid() != 0, reason="only root can make a file immutable (chattr +i)")
def test_a_checkpoint_that_cannot_be_replaced_is_one_line_and_leaves_no_temporary_file(replicated, dynamodb,
                                                                                       checkpoint):
    writes(dynamodb, replicated, 20, 3)  # records to apply, so the checkpoint must move
    with unwritable(checkpoint):
        out = replicate(replicated, dynamodb)
    one_line_exit(out, 2, f"{checkpoint}: cannot save it")
    assert len(out.stderr.strip().splitlines()) == 2  # the problem and "nothing ... written"-style summary
    assert sorted(p.name for p in replicated.work_dir.glob("replicate*")) == [CHECKPOINT]


def test_a_read_only_work_folder_is_one_line_and_leaves_no_temporary_file(replicated, dynamodb):
    with unwritable(replicated.work_dir):
        out = replicate(replicated, dynamodb)
    one_line_exit(out, 2, str(replicated.work_dir))
    assert sorted(p.name for p in replicated.work_dir.glob("replicate*")) == [CHECKPOINT]


def test_segments_and_the_sample_are_bounded_and_the_message_says_what_suits(replicated, dynamodb):
    began = time.monotonic()
    out = cutover_check(replicated, dynamodb, "--segments", "100000")
    one_line_exit(out, 2, "--segments: 100,000 is more than 64 segments", "4 to 16 suit")
    assert time.monotonic() - began < 15
    huge = cutover_check(replicated, dynamodb, "--sample", "1000000000")
    one_line_exit(huge, 2, "--sample: 1,000,000,000 is more than 100,000 items", "`verify` compares a whole export")


def test_an_empty_endpoint_url_is_refused_everywhere_not_taken_for_aws(replicated, dynamodb):
    nowhere = type("Endpoint", (), {"endpoint": ""})()
    for out in (cutover_check(replicated, nowhere), replicate(replicated, nowhere),
                run_cli("import", "aws://us-west-2/Movies", "--instance", "movies", "--endpoint-url", ""),
                run_cli("import", "aws://us-west-2/Movies", "--instance", "movies", "--metrics-endpoint-url", "")):
        one_line_exit(out, 2, "'' is not an endpoint URL")


def test_a_password_in_the_endpoint_url_is_never_echoed(replicated):
    closed = type("Endpoint", (), {"endpoint": f"http://user:hunter2@127.0.0.1:{free_port()}"})()
    for out in (cutover_check(replicated, closed), replicate(replicated, closed, "--outage-limit", "1")):
        one_line_exit(out, 1, "http://***@127.0.0.1")
        assert "hunter2" not in out.stderr + out.stdout
    # import's refused local endpoint is bad input (exit 2, with the local servers' hint: #53)
    refused = run_cli("import", "aws://us-west-2/Movies", "--instance", "movies", "--endpoint-url", closed.endpoint)
    one_line_exit(refused, 2, "http://***@127.0.0.1", "scripts/local-servers.sh start")
    assert "hunter2" not in refused.stderr + refused.stdout
    bad = run_cli("import", "aws://us-west-2/Movies", "--instance", "movies", "--endpoint-url", "ftp://u:hunter2@x")
    one_line_exit(bad, 2, "ftp://***@x")
    assert "hunter2" not in bad.stderr


def test_an_endpoint_that_answers_html_is_exit_1_naming_it(replicated):
    """200 with an HTML page (a captive portal, a proxy's error page): a KeyError before."""
    server = html_server()
    try:
        for out in (cutover_check(replicated, server), replicate(replicated, server)):
            one_line_exit(out, 1, f"({server.endpoint})", "does not speak DynamoDB's API", "--endpoint-url")
    finally:
        server.stop()


def run_cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "ddb2bigtable", *args], capture_output=True, text=True,
                          env=environment(), timeout=120, cwd=ROOT)


def test_a_fifo_where_dead_letters_go_is_refused_not_waited_on(replicated, dynamodb):
    """A record that cannot become a row is appended to replicate-dead-letters.jsonl; a FIFO
    in its place (no reader) blocked that open forever."""
    dead_letters = replicated.work_dir / "replicate-dead-letters.jsonl"
    os.mkfifo(dead_letters)
    try:
        dynamodb.client().put_item(TableName=replicated.dynamo_table,
                                   Item=movie(2001, "Bad") | {"info": {"S": "not the declared map"}})
        began = time.monotonic()
        out = replicate(replicated, dynamodb)
        one_line_exit(out, 2, f"{dead_letters}: is not a regular file")
        assert time.monotonic() - began < 60
    finally:
        dead_letters.unlink()


def test_shard_workers_are_bounded_before_anything_runs(tmp_path):
    began = time.monotonic()
    out = subprocess.run([sys.executable, "-m", "ddb2bigtable", "replicate", str(ROOT / "specs" / "movies.yaml"),
                          "--table", "movies", "--root", str(ROOT), "--work-dir", str(tmp_path / "work"),
                          "--shard-workers", "100000"], capture_output=True, text=True, timeout=60)
    assert out.returncode == 2 and "100000 is not in the range 1<=x<=64" in out.stderr, out.stderr
    assert time.monotonic() - began < 30 and not (tmp_path / "work").exists()
