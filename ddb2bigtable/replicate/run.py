"""`replicate`: a table's DynamoDB stream applied to its Bigtable table until caught up,
or for as long as it runs (`follow`).

Rounds: each lists the stream's shards and visits the ready ones (parents finished:
lineage.py), up to `workers` shards at once, each for up to PAGES_PER_VISIT pages so a
busy shard cannot starve the others. One shard's pages are applied one after the other,
and a child is ready only in a round after its parent finished: an item's records stay
in one shard's lineage, so they reach Bigtable in stream order whatever runs beside
them. With `--shards I/N` this process visits only its share (shares.py). Each page of
records becomes row mutations with the load's codec and the table's recorded types
(apply.py), written through the load's writer in waves that keep each row's order, then
checkpointed (checkpoint.py). A record Bigtable refuses, or one the codec cannot
write, goes to `replicate-dead-letters.jsonl` in the work folder with its shard and
sequence number. Writes go through the `migration-load` app profile when the plan has
it: single-cluster routing, so Bigtable applies them in the order they are sent.
SIGINT and SIGTERM stop after the page in flight, its checkpoint saved. DynamoDB out of
reach past boto3's retries, or Bigtable past the writer's, fails the round, which is
tried again from the checkpoint after a pause (outage.py): minutes under --follow, a
minute under --until-caught-up, or --outage-limit.

`Run` is both directions' loop: what a page becomes and where it is written is its sink
(pages.Sink): Bigtable here (apply.BigtableSink), the source DynamoDB table in reverse
(reverse/writes.py), with the same rounds, lineage, shares, checkpoints and outages.
"""

from __future__ import annotations

import asyncio
import contextlib
import gc
import threading
import time
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field, replace
from functools import partial
from pathlib import Path

from ..bigtable.deadlines import REPLICATE_WRITE_ATTEMPT_SECONDS, REPLICATE_WRITE_SECONDS
from ..codec.codec import Codec
from ..load.state import target
from ..load.work_folder import locked, private_dir, private_open
from ..load.writer import WriteError, Writer, WriteSettings
from ..spec.model import TableSpec
from .apply import BigtableSink, dead_letter_json, with_current_images
from .checkpoint import Checkpoint, save_checkpoint
from .lineage import Shard, before_start, ready_shards
from .opening import now_micros, opening_checkpoint, require_seconds, types_waited_for
from .outage import BIGTABLE, Outage, StopOnSignals, answer, limit_for
from .pages import PagePipeline, Prepared, Sink
from .report import ReplicateReport
from .shares import Share, finished_elsewhere
from .stream import StreamReader, Unavailable
from .stream_records import Page, StreamRecord
from .types_record import NewAttributes

POLL_SECONDS = 1.0  # between polls of caught-up shards (AWS: at most 5 GetRecords/s per shard)
# Pages read from one shard before the next ready shard's turn: a shard that never runs
# dry (a busy table) must not starve the others.
PAGES_PER_VISIT = 10


@dataclass(frozen=True)
class ReplicateOptions:
    project: str
    instance_id: str
    app_profile_id: str | None
    work_dir: Path  # the load's work folder: its state.json has the table's types
    since_micros: int | None = None  # start point; None: resume from the checkpoint
    follow: bool = False  # keep polling until stopped (else stop when caught up)
    endpoint_url: str | None = None  # the source DynamoDB table's (and, forward, its stream's)
    stream_endpoint_url: str | None = None  # reverse: the stream read (serve's), when not endpoint_url's
    fetch_keys_only: bool = False  # a stream without new images: read each changed item (BatchGetItem)
    writer: WriteSettings = field(default_factory=lambda: WriteSettings(
        operation_timeout_seconds=REPLICATE_WRITE_SECONDS, attempt_timeout_seconds=REPLICATE_WRITE_ATTEMPT_SECONDS))
    share: Share = Share()  # --shards I/N: the shards this process reads
    workers: int = 4  # shards read and applied at once (--shard-workers)
    stop: threading.Event | None = None  # set: stop as SIGTERM would (for a caller that embeds a follow)
    outage_limit: float | None = None  # seconds an outage is waited out (None: outage.limit_for's)
    types_profile_id: str | None = None  # where the table's record of types is written (table_types.types_profile)


class Run:
    def __init__(self, reader: StreamReader, sink: Sink, checkpoint: Checkpoint, report: ReplicateReport,
                 options: ReplicateOptions, progress: Callable[[ReplicateReport], None] | None,
                 table: TableSpec, hold: Callable[[], str | None] | None = None):
        """`hold`: why not to write now (None: go on), asked before every round."""
        self.reader, self.sink, self.checkpoint = reader, sink, checkpoint
        self.report, self.options, self.progress, self.key_names = report, options, progress, key_names(table)
        self.hold = hold
        self.path = options.work_dir / options.share.checkpoint_name
        self.stopping = False
        # Stream reads block (boto3) and encoding is Python work: two threads per shard in
        # flight (one reads, one encodes: pages.py), and one for listing.
        self.pool = ThreadPoolExecutor(max_workers=2 * options.workers + 1, thread_name_prefix="replicate")
        self.outage = Outage(limit_for(options.follow, options.outage_limit), self._outage_news,
                             f"{self.path} keeps its place", sink.name)

    async def _thread(self, function: Callable[..., object], *args: object) -> object:
        return await asyncio.get_running_loop().run_in_executor(self.pool, function, *args)

    async def run(self) -> None:
        try:
            await self._rounds()
        finally:
            self.pool.shutdown(wait=False, cancel_futures=True)

    def stop(self) -> None:
        self.stopping = True

    def _stop_asked(self) -> bool:
        self.stopping |= self.options.stop is not None and self.options.stop.is_set()
        return self.stopping

    async def _rounds(self) -> None:
        while not self._stop_asked():
            began, clock = now_micros(), time.monotonic()
            if self._held():
                await asyncio.sleep(POLL_SECONDS)
                continue
            try:
                again = await self._round()
            except (Unavailable, WriteError) as error:  # a side out of reach: wait, then again from the
                # checkpoint. The reader's kept iterators go: one read ahead may point past
                # records whose writes failed, and a restarted DynamoDB may not know them.
                self.reader.forget()
                await self.outage.wait(error, clock, self._stop_asked)
                self.report.outages = self.outage.count
                continue
            self.outage.over()
            if not again and not self.report.waiting:  # every shard of ours answered "no more
                # records": caught up with everything written before this round began (the lag)
                self.checkpoint = replace(self.checkpoint, caught_up_micros=began, saved_micros=now_micros())
                save_checkpoint(self.path, self.checkpoint)
                if not self.options.follow:
                    return
            if not again:
                await asyncio.sleep(POLL_SECONDS)
        self.report.stopped = "interrupted"

    async def _round(self) -> bool:
        """Lists the shards and visits this process's ready ones; True when any may have more."""
        share, arn = self.options.share, self.checkpoint.stream_arn
        shards: list[Shard] = await self._thread(self.reader.shards, arn)  # type: ignore[assignment]
        finished = self.checkpoint.finished | finished_elsewhere(self.options.work_dir, share, arn)
        ready = [s for s in ready_shards(shards, set(finished)) if share.owns(s.id)]
        # Ours, but their parent is another process's and not finished yet.
        self.report.waiting = sorted(s.id for s in shards if share.owns(s.id) and s.id not in finished
                                     and s not in ready)
        self._waiting_elsewhere(shards)
        self.report.shards_seen = len(shards)
        self.report.shards_owned = sum(share.owns(s.id) for s in shards)
        return await self._visit_all(ready)  # a shard ended (its children are ready) or has more

    def _held(self) -> bool:
        """Asks `hold` and tells a change (the reverse direction waits for forward's end)."""
        why = self.hold() if self.hold else None
        if why != self.report.held:
            self.report.held = why
            if self.progress:
                self.progress(self.report)
        return why is not None

    def _waiting_elsewhere(self, shards: list[Shard]) -> None:
        """The parents another --shards process reads that our waiting shards wait for;
        told as it changes, since a process that only waits has nothing else to show."""
        by_id = {s.id: s for s in shards}
        parents = sorted({p for s in self.report.waiting if (p := by_id[s].parent) is not None
                          and not self.options.share.owns(p)})
        if parents != self.report.waiting_parents:
            self.report.waiting_parents = parents
            if self.progress:
                self.progress(self.report)

    def _outage_news(self, message: str | None) -> None:
        self.report.outage_side = self.outage.side
        tell_outage(self.report, self.progress, message)

    async def _visit_all(self, ready: list[Shard]) -> bool:
        """Visits the ready shards, `workers` at a time; True when any may have more. A
        failure (Bigtable unreachable past its retries) cancels the others: their
        checkpoints cover only what was acknowledged."""
        limit = asyncio.Semaphore(max(1, self.options.workers))

        async def turn(shard: Shard) -> bool:
            async with limit:
                return False if self.stopping else await self._visit(shard)
        try:
            async with asyncio.TaskGroup() as group:
                turns = [group.create_task(turn(shard)) for shard in ready]
        except BaseExceptionGroup as failures:
            raise failures.exceptions[0] from None
        return any(t.result() for t in turns)

    async def _visit(self, shard: Shard) -> bool:
        """Reads and applies `shard` up to now, or PAGES_PER_VISIT pages; True when it
        ended (its children are ready) or may have more. Pages are read, encoded and
        written in overlapping stages (pages.py); the checkpoint still only moves past
        pages Bigtable acknowledged, and one page's writes end before the next page's begin."""
        pages = self.reader.read(self.checkpoint.stream_arn, shard, self.checkpoint.after.get(shard.id))
        pipeline = PagePipeline(pages, PAGES_PER_VISIT, self._thread, self._prepare)
        ahead, more = pipeline.next(), False
        try:
            while ahead is not None and (prepared := await ahead) is not None:
                page = prepared.page
                more = bool(page.raw) and not page.ended  # an empty or last page ends the reading
                ahead = pipeline.next()  # encoded while this page is written
                await self._apply(prepared)
                last = page.last_sequence
                if last or page.ended:
                    self.checkpoint = self.checkpoint.advanced(shard.id, last, page.ended, now_micros(),
                                                          self.report.newest_micros)
                    save_checkpoint(self.path, self.checkpoint)
                if page.ended:
                    self.report.shards_finished += 1
                    return True
                if self.stopping:
                    break
            return more  # the pages ran out on a full one: its turn is over, not its records
        finally:
            await pipeline.settle()

    def _prepare(self, page: Page) -> Prepared:
        """A page's records after the start point (with the table's current images for a
        stream without new ones: --fetch-keys-only), encoded by the sink, in a thread."""
        start = self.checkpoint.start_micros
        kept = [r for r in page.records if not before_start(r.micros, start)]
        if self.options.fetch_keys_only:
            wanted = [r.keys for r in kept if r.kind in ("insert", "modify") and r.new_image is None]
            if wanted:
                kept = with_current_images(kept, self.reader.current(wanted), self.key_names)
        return Prepared(page, kept, len(page.records) - len(kept), start, self.sink.encode(kept, start))

    async def _apply(self, prepared: Prepared) -> None:
        refused = await self.sink.write(prepared)
        self.report.skipped_before_start += prepared.skipped
        for record in prepared.records:
            reason = refused.get((record.shard, int(record.sequence)))
            if reason is not None:
                self._dead_letter(record, reason)
            else:
                self.report.counts[record.kind] += 1
                self.report.saw(record.shard, record.micros)
        if self.progress:
            self.progress(self.report)

    def _dead_letter(self, record: StreamRecord, reason: str) -> None:
        """Appended, 0600 (a rerun may replay a record: its dead letter then appears again)."""
        path = private_dir(self.options.work_dir) / self.options.share.dead_letter_name
        line = dead_letter_json(record, reason)
        with private_open(path, append=True) as out:  # a regular file only: a FIFO there would block
            out.write(line + "\n")
        self.report.dead_letters += 1
        self.report.dead_letter_file = str(path)


def tell_outage(report: ReplicateReport, progress: Callable[[ReplicateReport], None] | None,
                 message: str | None) -> None:
    report.outage = message
    if progress:
        progress(report)


async def run_and_report(run: Run) -> ReplicateReport:
    """The run until caught up or stopped (SIGINT and SIGTERM ask it to stop after the
    page in flight), and its report with the time it took."""
    began = time.monotonic()
    with StopOnSignals(run.stop), frozen_heap():
        await run.run()
    run.report.seconds = time.monotonic() - began
    run.report.ended_micros = now_micros()
    return run.report


def key_names(table: TableSpec) -> list[str]:
    schema = table.source.key
    return [k.name for k in (schema.partition, schema.sort) if k]


@contextlib.contextmanager
def frozen_heap() -> Iterator[None]:
    """Full garbage collections skip what the process held before the run (modules,
    clients, the codec; gc.freeze). Each page parsed here (the loader parses in its
    encoder processes) is 100,000s of objects that live long enough to reach the oldest
    generation, so full collections came often, and each walked the whole heap again:
    up to 0.2 s for one page, and the largest cost of replicating (benchmarks/README.md)."""
    gc.freeze()
    try:
        yield
    finally:
        gc.unfreeze()


async def replicate_table(table: TableSpec, options: ReplicateOptions,
                          progress: Callable[[ReplicateReport], None] | None = None,
                          reader: StreamReader | None = None) -> ReplicateReport:
    """`reader`: the stream to read (default: the spec's source table through boto3)."""
    if options.outage_limit is not None:
        require_seconds(options.outage_limit, "replicate", "--outage-limit")
    where = target(options.project, options.instance_id, table.id)
    reader = reader or StreamReader(table.source.table, table.source.region, options.endpoint_url,
                                    connections=options.workers + 2)
    waiting = ReplicateReport(table.id, "", 0, resumed=False)  # what the live line shows while DynamoDB is out
    stream = await answer(partial(reader.stream, options.fetch_keys_only),
                          Outage(limit_for(options.follow, options.outage_limit),
                                 partial(tell_outage, waiting, progress),
                                 "nothing was read yet"), lambda: options.stop is not None and options.stop.is_set())
    path = options.work_dir / options.share.checkpoint_name
    with locked(options.work_dir, options.share.lock_name, f"replicate --shards {options.share}"):
        types_outage = Outage(limit_for(options.follow, options.outage_limit), partial(tell_outage, waiting, progress),
                              f"{path} keeps its place" if path.is_file() else "nothing was read yet",
                              f"Bigtable table {table.id} in instance {options.instance_id}")
        types = await types_waited_for(table, options.work_dir, where, types_outage,
                                       lambda: options.stop is not None and options.stop.is_set())
        checkpoint = opening_checkpoint(options.since_micros, options.share, path, stream.arn, where,
                                        stream.created_micros)
        save_checkpoint(path, checkpoint)  # a rerun resumes from the start point even if nothing came
        report = ReplicateReport(table.id, stream.arn, checkpoint.start_micros, resumed=options.since_micros is None,
                                 checkpoint_file=str(path), share=str(options.share))
        report.outages = types_outage.count
        if report.outages:
            report.outage_side = BIGTABLE
        codec = Codec(table, types)
        async with Writer(options.project, options.instance_id, table.id, options.app_profile_id,
                          options.writer) as writer:
            sink = BigtableSink(writer, codec, NewAttributes(options.project, options.instance_id, table.id,
                                                             options.types_profile_id), options.instance_id)
            return await run_and_report(Run(reader, sink, checkpoint, report, options, progress, table))


def run_replicate(table: TableSpec, options: ReplicateOptions,
                  progress: Callable[[ReplicateReport], None] | None = None,
                  reader: StreamReader | None = None) -> ReplicateReport:
    return asyncio.run(replicate_table(table, options, progress, reader))
