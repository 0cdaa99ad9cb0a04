"""`cutover check`: is Bigtable ready to take the table's reads and writes?

Replication converging is a claim; before switching an application over, it is checked
on the live table: a random sample of DynamoDB items (a strongly consistent parallel
Scan, stream.StreamReader.sample) is read back from Bigtable by row key (one ReadRows,
through the profile replicate writes with, so it sees what replicate wrote), decoded with
the load's codec and recorded types, and compared item by item exactly as `verify`
compares (load/verify.py: `Codec.expected`, `item_difference`). The replication lag comes
from replicate's checkpoint. Ready means no difference in the sample and a lag under the
limit; anything else is "not ready", with why.

An item written while the check runs can differ for a moment (read from DynamoDB before
replicate applied it), so a differing item is read again from both sides after
RECHECK_SECONDS; only what still differs is reported (one deleted meanwhile is counted as
vanished). A difference that stays is real.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import random
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from google.api_core import exceptions as api_exceptions
from google.cloud.bigtable.data import BigtableDataClientAsync

from ..bigtable.deadlines import READ_SECONDS, lookup_table
from ..codec.codec import Codec, CodecError
from ..codec.items import Item
from ..load.locks import locked_rows
from ..load.state import target
from ..load.verify import Difference, RowReader, item_difference
from ..spec.errors import InputError, Problem, ServiceError, redact_userinfo
from ..spec.model import TableSpec
from .bigtable_only import only_in_bigtable
from .checkpoint import load_checkpoint, resume_problem
from .lineage import iso
from .opening import now_micros, recorded_types, require_seconds
from .shares import FORWARD, current_partition
from .stream import StreamReader
from .through_serve import key_of, served_differences

LAG_LIMIT_SECONDS = 60.0  # ready only when Bigtable trails DynamoDB by less than this (--max-lag)
DEFAULT_SAMPLE = 1000
MAX_SAMPLE = 100_000  # items held in memory at once: about 100 MB at 1 KB an item
DEFAULT_SEGMENTS = 4
# Segments read at once. DynamoDB allows TotalSegments up to 1,000,000 (ScanRequest,
# https://docs.aws.amazon.com/amazondynamodb/latest/APIReference/API_Scan.html, read
# 2026-11-25), but each segment read at once is a thread here: 100,000 of them hung the check.
MAX_SEGMENTS = 64
NOT_RUN = "unknown: replicate has not run"
RECHECK_SECONDS = 2.0  # before a differing item is read again from both sides


@dataclass(frozen=True)
class CutoverOptions:
    project: str
    instance_id: str
    app_profile_id: str | None  # replicate's: the cluster its writes land on first
    work_dir: Path  # the load's work folder: its types and replicate's checkpoint
    sample: int = DEFAULT_SAMPLE
    segments: int = DEFAULT_SEGMENTS
    endpoint_url: str | None = None
    through: str | None = None  # a `serve` endpoint the sample is also read through (through_serve.py)
    lag_limit_seconds: float = LAG_LIMIT_SECONDS
    seed: int | None = None  # the sample's segments (None: different items every check)
    recheck_seconds: float = RECHECK_SECONDS


@dataclass
class CutoverReport:
    table: str
    lag_limit_seconds: float
    checked: int = 0
    matches: int = 0
    expired: int = 0  # past their TTL in the sample: Bigtable need not hold them
    vanished: int = 0  # differed, then were deleted from DynamoDB before the second look
    mismatches: list[dict[str, Any]] = field(default_factory=list)  # key, attributes, detail
    missing: list[dict[str, Any]] = field(default_factory=list)  # key, row_key
    only_in_bigtable: list[dict[str, Any]] = field(default_factory=list)  # key, row_key (bigtable_only.py)
    through: str | None = None  # the `serve` endpoint read, if any
    through_checked: int = 0  # items read through it (those equal in Bigtable, not expired)
    through_serve: list[dict[str, Any]] = field(default_factory=list)  # key, attributes, detail
    locked_rows: int = 0  # rows a serve transaction holds: read as before it, so they may differ (load/locks.py)
    lag_seconds: float | None = None
    lag_note: str = NOT_RUN  # where the lag comes from, or why it is unknown
    seconds: float = 0.0
    missing_side: str = "Bigtable"  # where `missing` items are missing: DynamoDB for `cutover check --reverse`

    @property
    def reasons(self) -> list[str]:
        """Why it is not ready (empty: ready)."""
        why = []
        if self.mismatches:
            why.append(f"{len(self.mismatches)} item(s) differ")
        if self.missing:
            why.append(f"{len(self.missing)} item(s) missing in {self.missing_side}")
        if self.only_in_bigtable:
            why.append(f"{len(self.only_in_bigtable)} item(s) only in Bigtable")
        if self.through_serve:
            why.append(f"{len(self.through_serve)} item(s) differ through serve")
        if self.lag_seconds is None:
            why.append(f"replication lag {self.lag_note}")
        elif self.lag_seconds >= self.lag_limit_seconds:
            why.append(f"replication lag {self.lag_seconds:,.1f} s is not under {self.lag_limit_seconds:g} s")
        return why

    @property
    def ready(self) -> bool:
        return not self.reasons

    def tally(self, key: dict[str, Any], row_key: Callable[[], bytes], result: Difference | str | None) -> None:
        """One sampled item's verdict counted: expired, matching, missing (at `row_key()`) or differing."""
        self.checked += 1
        if result == "expired":
            self.expired += 1
        elif result is None:
            self.matches += 1
        elif isinstance(result, Difference) and result.kind == "missing":
            self.missing.append({"key": key, "row_key": row_key().decode("utf-8", "replace")})
        elif isinstance(result, Difference):
            self.mismatches.append({"key": key, "attributes": list(result.attributes), "detail": result.detail})

    def as_json(self) -> dict[str, Any]:
        return {"table": self.table, "ready": self.ready, "reasons": self.reasons, "checked": self.checked,
                "matches": self.matches, "expired": self.expired, "vanished": self.vanished,
                "mismatches": self.mismatches,
                f"missing_in_{self.missing_side.lower()}": self.missing, "only_in_bigtable": self.only_in_bigtable,
                **({"through": self.through, "through_checked": self.through_checked,
                    "differ_through_serve": self.through_serve} if self.through else {}),
                "lag_seconds": None if self.lag_seconds is None else round(self.lag_seconds, 1),
                "lag": self.lag_note, "lag_limit_seconds": self.lag_limit_seconds, "locked_rows": self.locked_rows,
                "seconds": round(self.seconds, 3)}


def key_text(key: dict[str, Any]) -> str:
    """`year=1999, title=Live 3`: an item's key as a person reads it."""
    return ", ".join(f"{name}={next(iter(value.values()))}" for name, value in key.items())


def read_lag(work_dir: Path, where: dict[str, str], stream_arn: Callable[[], str], now: int,
             report: CutoverReport, prefix: str = FORWARD) -> None:
    """Now minus the later of replicate's newest applied record and its last catch-up (a
    round that found every shard of its share empty: all earlier writes were applied).
    With `--shards I/N`, the worst of the N processes' checkpoints. A checkpoint of another
    target or of an earlier stream of the table (`stream_arn()`: the current one) says
    nothing about this replication: refused, as replicate refuses to resume it."""
    worst: tuple[int, str] | None = None
    for path in current_partition(work_dir, prefix):
        checkpoint = load_checkpoint(path)
        if checkpoint is None:
            continue
        why = resume_problem(checkpoint, path, stream_arn(), where)
        if why:
            raise InputError([Problem.about(str(path), "--work-dir", f"the replication checkpoint {why}")])
        times = [t for t in (checkpoint.newest_micros, checkpoint.caught_up_micros) if t is not None]
        if not times:
            report.lag_note = f"unknown: replicate has not applied a record or caught up yet ({path.name})"
            return
        latest = max(times)
        kind = "caught up" if latest == checkpoint.caught_up_micros else "newest applied record"
        if worst is None or latest < worst[0]:
            worst = latest, f"{kind} at {iso(latest)} ({path})"
    if worst is not None:
        report.lag_seconds = max(0.0, (now - worst[0]) / 1_000_000)
        report.lag_note = worst[1]


def refuse_bad_options(options: CutoverOptions) -> None:
    """--sample, --segments and --max-lag out of range: bad input, before anything is read."""
    if options.sample < 1 or options.segments < 1:
        raise InputError([Problem.about("cutover check", "--sample" if options.sample < 1 else "--segments",
                                        "must be at least 1")])
    if options.sample > MAX_SAMPLE:
        raise InputError([Problem.about("cutover check", "--sample", f"{options.sample:,} is more than {MAX_SAMPLE:,} "
                                        f"items (each is held in memory and read from both sides): a sample of "
                                        f"{DEFAULT_SAMPLE:,} to {MAX_SAMPLE:,} checks a cutover; `verify` compares "
                                        f"a whole export")])
    if options.segments > MAX_SEGMENTS:
        raise InputError([Problem.about("cutover check", "--segments", f"{options.segments:,} is more than "
                                        f"{MAX_SEGMENTS} segments read at once (each a thread and a Scan in "
                                        f"flight): {DEFAULT_SEGMENTS} to 16 suit a sample of thousands of items")])
    require_seconds(options.lag_limit_seconds, "cutover check", "--max-lag")


async def check_cutover(table: TableSpec, options: CutoverOptions,
                        reader: StreamReader | None = None) -> CutoverReport:
    """The sample compared and the lag read; bad input (no load recorded, unknown table)
    raises `InputError` before anything is read from Bigtable."""
    refuse_bad_options(options)
    began = time.monotonic()
    where = target(options.project, options.instance_id, table.id)
    report = CutoverReport(table.id, options.lag_limit_seconds)
    reader = reader or StreamReader(table.source.table, table.source.region, options.endpoint_url)
    read_lag(options.work_dir, where, functools.cache(lambda: reader.stream(fetch_keys_only=True).arn),
             now_micros(), report)
    rng = random.Random(options.seed)
    items = await asyncio.to_thread(reader.sample, options.sample, options.segments, rng)
    codec = Codec(table, await recorded_types(table, options.work_dir, where))  # Bigtable is read after DynamoDB
    with bigtable_failures(options, table.id):
        results = await _compared(table, options, codec, reader, items, report)
    for item, result in results:
        report.tally(key_of(table, item), functools.partial(codec.row_key, item), result)
    report.seconds = time.monotonic() - began
    return report


async def _compared(table: TableSpec, options: CutoverOptions, codec: Codec, reader: StreamReader,
                    items: list[Item], report: CutoverReport) -> list[tuple[Item, Difference | str | None]]:
    """The sample judged against Bigtable (differing items read again from both sides),
    and the items only Bigtable holds (`report.only_in_bigtable`, `report.vanished`)."""
    async with BigtableDataClientAsync(project=options.project) as client:
        rows = RowReader(lookup_table(client, options.instance_id, table.id, options.app_profile_id),
                         codec, codec.ttl_families, now_micros())
        results = await _judged(codec, rows, items)
        suspects = [item for item, result in results if isinstance(result, Difference)]
        if suspects:  # written while we read? Read both sides again: only what stays different counts
            await asyncio.sleep(options.recheck_seconds)
            fresh = await asyncio.to_thread(reader.current, [key_of(table, item) for item in suspects])
            report.vanished = len(suspects) - len(fresh)
            results = [r for r in results if not isinstance(r[1], Difference)] + await _judged(codec, rows, fresh)
        report.only_in_bigtable = await only_in_bigtable(rows.table, codec, reader, items, rows.now,
                                                         options.recheck_seconds, codec.row_key)
        report.locked_rows = await locked_rows(rows.table)
    if options.through:
        matched = [item for item, result in results if result is None]
        await _through_serve(table, options.through, options.recheck_seconds, codec, reader, matched, report)
    return results


async def _through_serve(table: TableSpec, through: str, recheck_seconds: float, codec: Codec,
                         reader: StreamReader, matched: list[Item], report: CutoverReport) -> None:
    """The items equal in Bigtable read again through the `serve` endpoint `through`; a
    difference is judged once more after `recheck_seconds` against DynamoDB's item of
    then (one replicate changed meanwhile)."""
    endpoint = StreamReader(table.source.table, table.source.region, through)
    endpoint.where = f"serve endpoint {redact_userinfo(through)} (table {table.source.table}, --through)"
    report.through, report.through_checked = redact_userinfo(through), len(matched)  # printed: no password
    found = await asyncio.to_thread(served_differences, table, codec, endpoint, matched, now_micros())
    if found:
        await asyncio.sleep(recheck_seconds)
        fresh = await asyncio.to_thread(reader.current, [entry["key"] for entry in found])
        found = await asyncio.to_thread(served_differences, table, codec, endpoint, fresh, now_micros())
    report.through_serve = found


@contextlib.contextmanager
def bigtable_failures(options: CutoverOptions, table_id: str) -> Iterator[None]:
    """Bigtable's errors as the engine's: a missing table is bad input (exit 2), anything
    else (out of reach past the lookup deadline, refused) a ServiceError (exit 1) saying what to do."""
    where = f"Bigtable table {options.instance_id}/{table_id}"
    try:
        yield
    except api_exceptions.NotFound:
        raise InputError([Problem.about(where, "--table", "does not exist: load the export into it first "
                                        "(`load --create-tables`), or check --stage")]) from None
    except (api_exceptions.GoogleAPICallError, api_exceptions.RetryError) as error:
        raise ServiceError(f"{where} did not answer within {READ_SECONDS:g} s ({type(error).__name__}): check "
                           f"that Bigtable (or BIGTABLE_EMULATOR_HOST's emulator) is reachable, then rerun "
                           f"`cutover check`") from None


async def _judged(codec: Codec, rows: RowReader, items: list[Item]) -> list[tuple[Item, Difference | str | None]]:
    """Each item with None (Bigtable holds it), "expired" (past its TTL: need not) or its
    `Difference` (one that cannot be written at all: replicate dead-lettered it)."""
    results: list[tuple[Item, Difference | str | None]] = []
    wanted: list[tuple[Item, Item, bytes]] = []  # (item, what Bigtable should hold, row key)
    for item in items:
        try:
            expected = codec.expected(item, now_micros=rows.now)
            if expected is None:
                results.append((item, "expired"))
            else:
                wanted.append((item, expected, codec.row_key(item)))
        except CodecError as error:
            results.append((item, Difference("different", f"cannot be written: {error}")))
    found = await rows.lookup([row_key for _, _, row_key in wanted]) if wanted else {}
    return results + [(item, item_difference(expected, found.get(key, []), key)) for item, expected, key in wanted]


def run_cutover_check(table: TableSpec, options: CutoverOptions,
                      reader: StreamReader | None = None) -> CutoverReport:
    return asyncio.run(check_cutover(table, options, reader))
