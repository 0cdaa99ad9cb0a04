"""`--shards I/N`: a process whose shards wait on parents another process reads says so
(it has nothing else to show while it waits): one stderr line off a terminal when the
waiting starts and one when it ends, and a note on the live line on a terminal."""

from __future__ import annotations

import time
from concurrent.futures import ThreadPoolExecutor

from ddb2bigtable.cli.replicate_cmd import PARENTS_FINISHED, _progress_line
from ddb2bigtable.replicate.opening import start_point
from ddb2bigtable.replicate.report import ReplicateReport
from ddb2bigtable.replicate.run import run_replicate
from ddb2bigtable.replicate.shares import Share, parse_share

from .scenario import create, export_and_load
from .test_parallel_shards import SlowStream, open_shard, owned_by, titled
from .test_replicate_emulator import credentials

WAITING = ("waiting for 1 parent shard(s) that another --shards process reads "
           "(all 2 processes must share this work folder)")


def test_a_process_waiting_on_another_ones_parent_says_so_when_it_starts_and_ends(
        dynamodb, bigtable_emulator, tmp_path, monkeypatch, capsys):
    credentials(monkeypatch)
    scenario = create(dynamodb, tmp_path)
    export = export_and_load(dynamodb, scenario, tmp_path)
    parent, child = owned_by(0, 2, "parent"), owned_by(1, 2, "child")  # lineage crosses processes
    stream = SlowStream([open_shard(parent, closed=True), open_shard(child, parent=parent)],
                        {parent: [titled("INSERT" if v == 1 else "MODIFY", v, "Moved", str(v)) for v in range(1, 6)],
                         child: [titled("MODIFY", 200, "Moved", "9")]}, delay=0.5)  # the parent takes 2.5 s
    since = start_point(str(export))
    seen: list[list[str]] = []

    def share(text: str, fmt: str):
        with _progress_line(fmt, parse_share(text)) as progress:
            def told(report: ReplicateReport) -> None:
                seen.append(list(report.waiting_parents)) if text == "1/2" else None
                progress(report)
            return run_replicate(scenario.table, scenario.replicate_options(
                dynamodb, since_micros=since, share=parse_share(text)), told, reader=stream)

    with ThreadPoolExecutor(2) as pool:
        waiting = pool.submit(share, "1/2", "text")
        reading = pool.submit(share, "0/2", "json")  # json: its own lines (none here) also go to stderr
        one, zero = waiting.result(timeout=120), reading.result(timeout=120)
    assert (zero.applied, one.applied) == (5, 1)
    assert [parent] in seen and seen[-1] == [] and one.waiting_parents == []
    lines = [line for line in capsys.readouterr().err.splitlines() if line.startswith("replicate: ")]
    assert lines == [f"replicate: {WAITING}", f"replicate: {PARENTS_FINISHED}"]  # once each, not every round


def test_the_live_line_shows_the_waiting(monkeypatch, capsys):
    monkeypatch.setenv("FORCE_COLOR", "1")  # rich draws the live line as on a terminal
    monkeypatch.setenv("TERM", "xterm")
    monkeypatch.setenv("COLUMNS", "400")  # one line, not wrapped
    report = ReplicateReport("movies", "arn", 0, resumed=False, share="1/2", waiting=["child"],
                             waiting_parents=["parent"])
    with _progress_line("text", Share(1, 2)) as show:
        show(report)
        time.sleep(0.5)  # a few refreshes of the live line
    err = capsys.readouterr().err
    assert "replicating: 0 applied, 0 dead letters" in err and WAITING in err
