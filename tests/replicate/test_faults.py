"""Faults a long-running `replicate` meets, end to end on DynamoDB Local and the Bigtable
emulator: connections to DynamoDB cut mid-run (the project's TCP proxy), DynamoDB Local
stopped under a `--follow` and restarted (waited out), gone longer than an
`--until-caught-up` waits (exit 1, then resumed), Bigtable out of reach past the writer's retries (waited
out; past `--outage-limit`, exit 1, then resumed), and the lag behind a steady writer. In each, Bigtable ends
equal to DynamoDB item for item and every record is counted once: nothing lost, nothing
doubled."""

from __future__ import annotations

import threading
import time
from dataclasses import replace

import pytest

from ddb2bigtable.cli.output import report_error
from ddb2bigtable.replicate.opening import start_point
from ddb2bigtable.replicate.run import run_replicate
from ddb2bigtable.spec.errors import ServiceError

from ..tcp_proxy import TcpProxy
from . import dynamodb_local
from .scenario import create, differences, export_and_load
from .steady_writer import SteadyWriter, TimedReader, summary
from .test_replicate_emulator import credentials, movie

pytestmark = pytest.mark.slow


class CountingProxy(TcpProxy):
    """The TCP proxy, counting the live connections its drops cut."""

    cut = 0

    def drop(self) -> None:
        with self._lock:
            self.cut += len(self._sockets) // 2
        super().drop()


def many(db, table: str, first: int, count: int) -> None:
    """`count` puts in batches of 25 (a stream of many records, quickly)."""
    for i in range(first, first + count, 25):
        db.batch_write_item(RequestItems={table: [{"PutRequest": {"Item": movie(2001, f"Many {j}", n={"N": str(j)})}}
                                                  for j in range(i, min(i + 25, first + count))]})


def test_connections_to_dynamodb_cut_mid_run_are_retried_and_nothing_is_lost_or_doubled(
        dynamodb, bigtable_emulator, tmp_path, monkeypatch):
    from ddb2bigtable.replicate import run

    credentials(monkeypatch)
    monkeypatch.setattr(run, "PAGES_PER_VISIT", 2)  # more rounds: more requests for the cuts to hit
    scenario = create(dynamodb, tmp_path)
    db = dynamodb.client()
    export = export_and_load(dynamodb, scenario, tmp_path)
    many(db, scenario.dynamo_table, 0, 3000)
    for i in range(0, 3000, 7):  # and changes of the same items later in the stream
        db.update_item(TableName=scenario.dynamo_table, Key={"year": {"N": "2001"}, "title": {"S": f"Many {i}"}},
                       UpdateExpression="SET n = :n", ExpressionAttributeValues={":n": {"N": "-1"}})
    proxy = CountingProxy("127.0.0.1", dynamodb.port)
    cutting = threading.Event()

    def cut() -> None:
        while not cutting.wait(0.25):
            proxy.drop()

    cutter = threading.Thread(target=cut, daemon=True)
    cutter.start()
    try:
        options = replace(scenario.replicate_options(dynamodb, since_micros=start_point(str(export))),
                          endpoint_url=f"http://{proxy.address}")
        report = run_replicate(scenario.table, options)
    finally:
        cutting.set()
        cutter.join()
        proxy.close()
    assert proxy.cut >= 3  # connections were cut while it ran
    assert report.counts == {"insert": 3000, "modify": 429, "remove": 0, "ttl": 0} and report.dead_letters == 0
    assert differences(dynamodb, scenario) == []


def quick_outages(monkeypatch, caught_up_limit: float | None = None) -> None:
    """boto3 gives up at once (10 attempts by default), so the run's own retries
    (outage.py) meet the outage; short pauses between them."""
    from ddb2bigtable.replicate import outage, stream

    monkeypatch.setattr(stream, "MAX_ATTEMPTS", 1)
    monkeypatch.setattr(outage, "LONGEST_PAUSE", 1.0)
    if caught_up_limit is not None:
        monkeypatch.setattr(outage, "CAUGHT_UP_LIMIT", caught_up_limit)


def wait_for(condition, seconds: float, what: str) -> None:
    deadline = time.monotonic() + seconds
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"not within {seconds:.0f} s: {what}")
        time.sleep(0.5)


def follow_beside(steps, follow):
    """`follow(stop)` (a `replicate --follow` given `stop`) while `steps()` runs in a thread
    beside it: the run's report and the steps' failures. `stop` is set when the steps end,
    failed or not, so the run always ends."""
    stop, failures = threading.Event(), []

    def beside() -> None:
        try:
            steps()
        except Exception as error:  # reported by the caller: the run must still stop
            failures.append(repr(error))
        finally:
            stop.set()

    thread = threading.Thread(target=beside)
    thread.start()
    try:
        return follow(stop), failures
    finally:
        stop.set()
        thread.join()


def test_dynamodb_local_restarted_under_a_follow_resumes_and_converges(bigtable_emulator, tmp_path, monkeypatch):
    """DynamoDB Local (its data in a folder) stopped under a `replicate --follow`, and
    started again on the same port only once the run has announced the outage: the run
    waits it out, however long the restart takes, and resumes from its checkpoint."""
    credentials(monkeypatch)
    quick_outages(monkeypatch)
    own = dynamodb_local.start(db_path=tmp_path)
    try:
        scenario = create(own, tmp_path / "case")
        db = own.client()
        many(db, scenario.dynamo_table, 0, 100)
        export = export_and_load(own, scenario, tmp_path / "case")
        noticed = threading.Event()
        said: list[str] = []

        def progress(report) -> None:
            if report.outage:
                said.append(report.outage)
                noticed.set()

        def restart_and_write() -> None:
            many(db, scenario.dynamo_table, 100, 200)
            time.sleep(1.0)
            own.stop()  # SIGTERM: gone until the run has noticed
            wait_for(noticed.is_set, 60, "the outage announced")
            own.process = dynamodb_local.start(port=own.port, db_path=tmp_path).process
            many(own.client(), scenario.dynamo_table, 300, 200)
            wait_for(lambda: differences(own, scenario) == [], 120, "Bigtable equal to DynamoDB")

        report, failures = follow_beside(restart_and_write, lambda stop: run_replicate(
            scenario.table, scenario.replicate_options(own, since_micros=start_point(str(export)), follow=True,
                                                       stop=stop), progress))
        assert failures == []
        assert report.stopped == "interrupted" and report.counts["insert"] >= 400  # 400 after the export, + replays
        assert report.outages >= 1 and report.outage is None  # waited out, and over
        assert f"127.0.0.1:{own.port}) cannot be reached" in said[0] and "retrying in" in said[0]
        assert differences(own, scenario) == []
        again = run_replicate(scenario.table, scenario.replicate_options(own))
        assert again.applied == 0  # the checkpoint had everything: nothing twice
    finally:
        own.stop()


def test_dynamodb_local_gone_is_exit_1_naming_it_and_the_checkpoint_resumes(bigtable_emulator, tmp_path,
                                                                             monkeypatch, capsys):
    """Down longer than an `--until-caught-up` waits: exit 1 (a service failed, not bad
    input) naming the endpoint, no traceback; once it is back (its data kept), the rerun
    resumes from the checkpoint and converges."""
    credentials(monkeypatch)
    own = dynamodb_local.start(db_path=tmp_path)
    try:
        scenario = create(own, tmp_path / "case")
        export = export_and_load(own, scenario, tmp_path / "case")
        many(own.client(), scenario.dynamo_table, 0, 50)
        first = run_replicate(scenario.table, scenario.replicate_options(own, since_micros=start_point(str(export))))
        assert first.counts["insert"] == 50
        own.stop()
        quick_outages(monkeypatch, caught_up_limit=3.0)
        said: list[str] = []
        began = time.monotonic()
        with pytest.raises(ServiceError) as failed:
            run_replicate(scenario.table, scenario.replicate_options(own),
                          lambda report: said.append(report.outage or ""))
        assert 3.0 <= time.monotonic() - began < 30  # retried for the limit, then gave up
        assert any("retrying in" in s for s in said)
        with pytest.raises(SystemExit) as exited:
            report_error(failed.value)
        assert exited.value.code == 1
        message = capsys.readouterr().err
        assert f"127.0.0.1:{own.port}) cannot be reached" in message and "rerun to resume" in message
        own.process = dynamodb_local.start(port=own.port, db_path=tmp_path).process
        many(own.client(), scenario.dynamo_table, 50, 50)
        resumed = run_replicate(scenario.table, scenario.replicate_options(own))
        assert resumed.resumed and resumed.counts["insert"] == 50  # only what came after the checkpoint
        assert differences(own, scenario) == []
    finally:
        own.stop()


def test_lag_behind_a_steady_writer_is_reported_and_stays_bounded(dynamodb, bigtable_emulator, tmp_path, monkeypatch):
    credentials(monkeypatch)
    scenario = create(dynamodb, tmp_path)
    export = export_and_load(dynamodb, scenario, tmp_path)
    reader = TimedReader(scenario.dynamo_table, "us-west-2", dynamodb.endpoint)
    writer = SteadyWriter(dynamodb.client(), scenario.dynamo_table, rate=20, seconds=8,
                          applied=lambda: len(reader.lags))
    writer.start()
    report = run_replicate(scenario.table, scenario.replicate_options(
        dynamodb, since_micros=start_point(str(export)), follow=True, stop=writer.done), reader.applied, reader=reader)
    assert writer.errors == [] and writer.written >= 100  # a steady stream, not a burst
    assert len(reader.lags) == writer.written == report.counts["insert"]  # each write applied once, timed
    lags = summary(reader.lags)
    # Polled every second: a write waits for the next poll, then one round trip each way.
    assert lags["p50"] < 2.0 and lags["p99"] < 4.0, lags
    assert report.stopped == "interrupted" and report.as_json()["lag_seconds"] is not None
    assert differences(dynamodb, scenario) == []


def bigtable_proxy(bigtable_emulator, monkeypatch) -> CountingProxy:
    """A proxy between every Bigtable client made from here on and the emulator (the load
    too: the load's record names the emulator's address, which replicate must match)."""
    from ddb2bigtable.bigtable.emulator import EMULATOR_ENV

    proxy = CountingProxy(bigtable_emulator.host, bigtable_emulator.port)
    monkeypatch.setenv(EMULATOR_ENV, proxy.address)
    return proxy


def out_of_reach(proxy: CountingProxy) -> None:
    """Bigtable out of reach: new connections refused, live ones cut."""
    proxy.refuse = True
    proxy.drop()


def test_bigtable_out_of_reach_past_the_writers_retries_is_waited_out_and_nothing_is_lost_or_doubled(
        dynamodb, bigtable_emulator, tmp_path, monkeypatch):
    """Bigtable unreachable from the first write of a `--follow` for longer than the
    writer's retry deadline (twice): each failed round is announced naming Bigtable, tried
    again from the checkpoint, and once it answers every record is applied exactly once,
    including the ones written meanwhile. The first page was read (and the empty page
    after it, whose iterator the reader keeps) before its write failed: the retry reads it
    again from the checkpoint, not from the kept iterator past it."""
    from ddb2bigtable.load.writer import WriteSettings

    credentials(monkeypatch)
    quick_outages(monkeypatch)
    proxy = bigtable_proxy(bigtable_emulator, monkeypatch)
    scenario = create(dynamodb, tmp_path)
    db = dynamodb.client()
    export = export_and_load(dynamodb, scenario, tmp_path)
    many(db, scenario.dynamo_table, 0, 300)
    out_of_reach(proxy)
    said: list[str] = []

    def progress(report) -> None:
        if report.outage:
            said.append(report.outage)

    def outage_then_writes() -> None:
        wait_for(lambda: len(said) >= 2, 60, "two failed rounds announced")
        many(db, scenario.dynamo_table, 300, 200)  # written while Bigtable is out
        proxy.refuse = False
        wait_for(lambda: differences(dynamodb, scenario) == [], 120, "Bigtable equal to DynamoDB")

    try:
        report, failures = follow_beside(outage_then_writes, lambda stop: run_replicate(
            scenario.table, scenario.replicate_options(
                dynamodb, since_micros=start_point(str(export)), follow=True, stop=stop,
                writer=WriteSettings(operation_timeout_seconds=1.5), outage_limit=120), progress))
    finally:
        proxy.close()
    assert failures == []
    assert report.stopped == "interrupted" and report.outages == 1 and report.outage is None
    assert report.outage_side == "Bigtable"
    assert said[0].startswith(f"Bigtable table movies in instance {scenario.instance_id} cannot be written")  # its rows, or first its record of types
    assert "retrying in" in said[0] and "rerun the load" not in said[0] and "data file" not in said[0]
    assert report.counts == {"insert": 500, "modify": 0, "remove": 0, "ttl": 0} and report.dead_letters == 0
    assert differences(dynamodb, scenario) == []


def test_bigtable_out_of_reach_past_the_limit_is_exit_1_naming_it_and_the_checkpoint_resumes(
        dynamodb, bigtable_emulator, tmp_path, monkeypatch, capsys):
    """Down longer than `--outage-limit`: a `ServiceError` (exit 1) naming the Bigtable
    table and instance and the checkpoint to resume from, no traceback; the rerun, with
    Bigtable back, applies what the first run could not write, once."""
    from ddb2bigtable.load.writer import WriteSettings

    credentials(monkeypatch)
    quick_outages(monkeypatch)
    proxy = bigtable_proxy(bigtable_emulator, monkeypatch)
    scenario = create(dynamodb, tmp_path)
    export = export_and_load(dynamodb, scenario, tmp_path)
    many(dynamodb.client(), scenario.dynamo_table, 0, 100)
    first = run_replicate(scenario.table, scenario.replicate_options(dynamodb, since_micros=start_point(str(export))))
    assert first.counts["insert"] == 100
    many(dynamodb.client(), scenario.dynamo_table, 100, 100)
    out_of_reach(proxy)
    began = time.monotonic()
    try:
        with pytest.raises(ServiceError) as failed:
            run_replicate(scenario.table, scenario.replicate_options(
                dynamodb, writer=WriteSettings(operation_timeout_seconds=1), outage_limit=3))
        assert 3 <= time.monotonic() - began < 30  # retried for the limit, then gave up
        proxy.refuse = False  # Bigtable back
        with pytest.raises(SystemExit) as exited:
            report_error(failed.value)
        assert exited.value.code == 1
        message = capsys.readouterr().err
        assert f"Bigtable table movies in instance {scenario.instance_id} cannot be written" in message
        assert f"rerun to resume ({scenario.work_dir / 'replicate.json'} keeps its place)" in message
        assert "Traceback" not in message and "rerun the load" not in message
        resumed = run_replicate(scenario.table, scenario.replicate_options(dynamodb))
        assert resumed.resumed and resumed.counts["insert"] == 100  # only what came after the checkpoint
        assert differences(dynamodb, scenario) == []
    finally:
        proxy.close()
