"""Shards in parallel inside one process (bounded, children after their parents) and
`--shards I/N` across processes sharing a work folder: each shard read by one process,
lineage kept across them, checkpoints apart, and a new N resuming from them all."""

from __future__ import annotations

import json
import threading
import time
import zlib
from concurrent.futures import ThreadPoolExecutor

import pytest

from ddb2bigtable.load.work_folder import locked
from ddb2bigtable.replicate.opening import start_point
from ddb2bigtable.replicate.run import run_replicate
from ddb2bigtable.replicate.shares import Share, current_partition, parse_share
from ddb2bigtable.spec.errors import InputError

from .scenario import bigtable_rows, create, differences, export_and_load
from .test_replicate_emulator import credentials
from .test_replicate_refusals import RecordedStream, change


class SlowStream(RecordedStream):
    """A recorded stream whose pages take `delay` seconds each to read (GetRecords'
    round trip), counting how many shards are being read at once."""

    def __init__(self, shards, records, delay: float = 0.05):
        super().__init__(shards, records)
        self.delay, self.reading, self.most = delay, 0, 0
        self.readers: dict[str, set[str]] = {}  # shard -> the checkpoint files' "finished" seen when it started
        self._lock = threading.Lock()
        self.work_dir = None

    def read(self, arn, shard, after):
        if self.work_dir is not None:
            finished = set()
            for path in self.work_dir.glob("replicate*.json"):
                finished |= set(json.loads(path.read_text())["finished"])
            self.readers.setdefault(shard.id, finished)
        for page in super().read(arn, shard, after):
            with self._lock:
                self.reading += 1
                self.most = max(self.most, self.reading)
            time.sleep(self.delay)
            with self._lock:
                self.reading -= 1
            yield page


def titled(kind: str, seq: int, title: str, rating: str) -> dict:
    record = change(kind, seq, rating)
    record["dynamodb"]["Keys"]["title"] = {"S": title}
    record["dynamodb"]["NewImage"]["title"] = {"S": title}
    return record


def open_shard(name: str, parent: str | None = None, closed: bool = False) -> dict:
    numbers = {"StartingSequenceNumber": "1", **({"EndingSequenceNumber": "99999"} if closed else {})}
    return {"ShardId": name, **({"ParentShardId": parent} if parent else {}), "SequenceNumberRange": numbers}


def owned_by(index: int, count: int, prefix: str) -> str:
    """A shard id that `--shards index/count` owns."""
    return next(f"{prefix}-{n}" for n in range(1000) if zlib.crc32(f"{prefix}-{n}".encode()) % count == index)


def test_shards_are_read_in_parallel_up_to_the_worker_bound_and_children_after_parents(
        dynamodb, bigtable_emulator, tmp_path, monkeypatch):
    credentials(monkeypatch)
    scenario = create(dynamodb, tmp_path)
    export = export_and_load(dynamodb, scenario, tmp_path)
    # Six busy shards, one item each (7 versions); a closed parent whose child holds the
    # last versions of the parent's items.
    shards = [open_shard(f"s{i}") for i in range(6)] + [open_shard("parent", closed=True),
                                                         open_shard("child", parent="parent")]
    records = {f"s{i}": [titled("INSERT" if v == 1 else "MODIFY", v, f"Film {i}", str(v)) for v in range(1, 8)]
               for i in range(6)}
    records["parent"] = [titled("INSERT" if v == 1 else "MODIFY", v, f"Split {v % 2}", str(v)) for v in range(1, 9)]
    records["child"] = [titled("MODIFY", 100 + v, f"Split {v % 2}", str(100 + v)) for v in range(2)]
    stream = SlowStream(shards, records)
    stream.work_dir = scenario.work_dir
    options = scenario.replicate_options(dynamodb, since_micros=start_point(str(export)), workers=3)
    report = run_replicate(scenario.table, options, reader=stream)
    assert stream.most == 3  # parallel, and never more than --shard-workers
    assert "parent" in stream.readers["child"]  # the child began after its parent was finished (checkpointed)
    assert report.applied == 6 * 7 + 8 + 2 and report.stopped == "caught up"
    ratings = {i["title"]["S"]: i["info"]["M"]["rating"]["N"] for row in bigtable_rows(scenario) for i in row}
    assert ratings == {**{f"Film {i}": "7" for i in range(6)}, "Split 0": "100", "Split 1": "101"}


def test_n_processes_split_the_shards_keep_lineage_across_them_and_a_new_n_resumes(
        dynamodb, bigtable_emulator, tmp_path, monkeypatch):
    credentials(monkeypatch)
    scenario = create(dynamodb, tmp_path)
    export = export_and_load(dynamodb, scenario, tmp_path)
    parent, child = owned_by(0, 2, "parent"), owned_by(1, 2, "child")  # lineage crosses processes
    others = [owned_by(0, 2, "x"), owned_by(1, 2, "y")]
    shards = [open_shard(parent, closed=True), open_shard(child, parent=parent)] + [open_shard(s) for s in others]
    records = {parent: [titled("INSERT", 1, "Moved", "1"), titled("MODIFY", 2, "Moved", "2")],
               child: [titled("MODIFY", 200, "Moved", "3")],
               **{s: [titled("INSERT", 1, s, "5")] for s in others}}
    stream = SlowStream(shards, records, delay=0.3)  # the parent takes a while: the child must wait
    stream.work_dir = scenario.work_dir
    since = start_point(str(export))

    def share(text: str):
        return run_replicate(scenario.table, scenario.replicate_options(
            dynamodb, since_micros=since, share=parse_share(text)), reader=stream)

    with ThreadPoolExecutor(2) as pool:  # two processes at once, as a Cloud Run job's tasks
        second = pool.submit(share, "1/2")
        first = pool.submit(share, "0/2")
        zero, one = first.result(timeout=120), second.result(timeout=120)
    assert set(stream.read_order) == {parent, child, *others}
    assert parent in stream.readers[child]  # the other process's parent was finished first
    assert (zero.shards_owned, one.shards_owned) == (2, 2)
    assert (zero.applied, one.applied) == (3, 2)  # each shard's records by its owner alone, none twice
    files = {p.name: json.loads(p.read_text()) for p in scenario.work_dir.glob("replicate*.json")}
    assert set(files) == {"replicate-0-of-2.json", "replicate-1-of-2.json"}
    assert set(files["replicate-0-of-2.json"]["after"]) == {parent, others[0]}
    assert set(files["replicate-1-of-2.json"]["after"]) == {child, others[1]}
    (moved,) = [i for row in bigtable_rows(scenario) for i in row if i["title"]["S"] == "Moved"]
    assert moved["info"]["M"]["rating"]["N"] == "3"  # the child's record last
    assert len(current_partition(scenario.work_dir)) == 2

    # One process now (N changed): it starts where the two stopped, no --since, nothing twice.
    resumed = run_replicate(scenario.table, scenario.replicate_options(dynamodb), reader=stream)
    assert resumed.resumed and resumed.applied == 0 and resumed.shards_owned == 4
    assert [p.name for p in current_partition(scenario.work_dir)] == ["replicate.json"]


def test_shares_are_parsed_and_split_shards_evenly():
    assert parse_share(" 3 / 4 ") == Share(3, 4) and str(Share(3, 4)) == "3/4"
    for bad in ("4/4", "1", "-1/2", "a/b", "0/0"):
        with pytest.raises(InputError, match="0 <= I < N"):
            parse_share(bad)
    ids = [f"shardId-00000001700000000000-{n:08x}" for n in range(4000)]
    counts = [sum(Share(i, 4).owns(s) for s in ids) for i in range(4)]
    assert sum(counts) == 4000 and min(counts) > 900  # each shard owned once, about a quarter each
    assert Share(0, 1).checkpoint_name == "replicate.json"
    assert Share(2, 5).checkpoint_name == "replicate-2-of-5.json"


def test_two_cli_processes_with_shards_0_of_2_and_1_of_2_replicate_dynamodb_local(
        dynamodb, bigtable_emulator, tmp_path, monkeypatch):
    from .test_replicate_cli import replicate, writes

    credentials(monkeypatch)
    scenario = create(dynamodb, tmp_path)
    writes(dynamodb, scenario, 0, 5)
    export = export_and_load(dynamodb, scenario, tmp_path)
    writes(dynamodb, scenario, 5, 10)
    outs = [replicate(scenario, dynamodb, "--since", str(export), "--shards", f"{i}/2", "--format", "json")
            for i in range(2)]
    assert [o.returncode for o in outs] == [0, 0], [o.stderr for o in outs]
    reports = [json.loads(o.stdout) for o in outs]
    assert sum(r["shards_owned"] for r in reports) == reports[0]["shards_seen"]
    assert sum(r["inserts"] for r in reports) == 15 and differences(dynamodb, scenario) == []
    bad = replicate(scenario, dynamodb, "--shards", "2/2")
    assert bad.returncode == 2 and "0 <= I < N" in bad.stderr and "Traceback" not in bad.stderr


def test_a_partition_of_another_n_is_refused_while_one_runs_then_resumes_after_it(
        dynamodb, bigtable_emulator, tmp_path, monkeypatch):
    credentials(monkeypatch)
    scenario = create(dynamodb, tmp_path)
    export = export_and_load(dynamodb, scenario, tmp_path)
    shards = [open_shard(owned_by(0, 2, "a")), open_shard(owned_by(1, 2, "b"))]
    stream = SlowStream(shards, {s["ShardId"]: [titled("INSERT", 1, s["ShardId"], "5")] for s in shards}, delay=1.0)
    since = start_point(str(export))

    def run(text: str, **options):
        return run_replicate(scenario.table, scenario.replicate_options(
            dynamodb, share=parse_share(text), **options), reader=stream)

    with ThreadPoolExecutor(1) as pool:
        running = pool.submit(run, "1/2", since_micros=since)
        while stream.reading == 0:  # 1/2 holds its lock and reads its shard
            time.sleep(0.01)
        with pytest.raises(InputError) as refused:
            run("0/1")
        assert "replicate 1/2 (PID " in str(refused.value) and "--shards I/1" in str(refused.value)
        assert running.result(timeout=60).applied == 1
    with locked(scenario.work_dir):  # what a load, or replicate 0/1, holds
        with pytest.raises(InputError, match=r"0/1 or a load \(PID \d+\)"):
            run("0/3")
    # Nothing running now: the new N starts where 1/2 stopped, and reads the rest.
    assert run("0/1").applied == 1
    titles = {i["title"]["S"] for row in bigtable_rows(scenario) for i in row}
    assert {s["ShardId"] for s in shards} <= titles


def test_a_shard_with_more_pages_than_one_visit_reads_is_read_to_the_end(
        dynamodb, bigtable_emulator, tmp_path, monkeypatch):
    """A busy shard's turn ends after PAGES_PER_VISIT pages; the run goes on with it
    (another round) instead of taking the turn's end for caught up."""
    credentials(monkeypatch)
    monkeypatch.setattr("ddb2bigtable.replicate.run.PAGES_PER_VISIT", 3)
    scenario = create(dynamodb, tmp_path)
    export = export_and_load(dynamodb, scenario, tmp_path)
    shard = open_shard("busy")
    stream = SlowStream([shard], {"busy": [titled("INSERT", n, f"Busy {n}", "1") for n in range(1, 11)]}, delay=0)
    report = run_replicate(scenario.table, scenario.replicate_options(
        dynamodb, since_micros=start_point(str(export))), reader=stream)
    assert report.applied == 10 and stream.read_order == ["busy"] * 4  # 3 + 3 + 3 + 1 pages, then caught up
    assert {f"Busy {n}" for n in range(1, 11)} <= {i["title"]["S"] for row in bigtable_rows(scenario) for i in row}
