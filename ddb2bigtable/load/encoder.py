"""Reading and encoding in other processes, beside the writer.

Reading an export line and encoding it costs about as much CPU as the Bigtable client
spends sending the row (benchmarks/load_throughput.py); in one Python process the two add
up. So forked encoder processes (one per core, data files round-robin) read, route every
line (`buckets.route`: counts, dead letters) and ship the rows as packed protobuf chunks
over a pipe; the writer's process only unpacks and sends. On a fresh load each encoder
first infers the types of its own files and sends them; the writer merges them
(`Encoder.types`, meanwhile it has opened its client) and sends the export's types back,
and only then does any encoder encode, so every row is encoded with the same types.
Memory stays bounded: an encoder blocks on the pipe when the writer is behind, and the
writer prefetches at most `PREFETCH` chunks from each.

Fork, not spawn: the child gets the codec and the imported modules as they are (spawning
would import the Bigtable client again, about a second, longer than a small load) and
never touches gRPC. gRPC's fork handlers would only pause its threads around each fork
and log "skipping fork() handlers" when a call is in flight, so a program that loads sets
GRPC_ENABLE_FORK_SUPPORT=0 before gRPC is first imported (the CLI does, in its package; so do the
test session and the benchmarks). If the child dies, the writer says so and the data file
is not marked done: a rerun resumes with it, as after any failure.
"""

from __future__ import annotations

import asyncio
import contextlib
import ctypes
import multiprocessing
import os
import signal
import traceback
from collections.abc import AsyncIterator, Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, replace
from multiprocessing.connection import Connection
from multiprocessing.process import BaseProcess
from typing import Any

from ..codec.codec import Codec
from ..codec.mutations import RowCells, RowMutation
from ..codec.type_inference import AttributeTypes
from ..exports.kept_lines import KeptLines
from ..exports.manifests import DataFile, ExportError, Manifest, check_digest, file_digest, verify_file
from ..exports.reader import read_records
from ..exports.types import FileTypes, merged_types, share_types
from ..spec.errors import Ddb2BigtableError
from ..spec.model import TableSpec
from .buckets import count_loaded, loaded_cells, route
from .entry_bytes import EntryBytes
from .spot_check import CANDIDATES, Candidate, candidate
from .state import FileCounts
from .writer import Packer

CHUNK_ROWS = 500  # rows per pipe message: large enough to amortize the pickling
FIRST_CHUNK_ROWS = 50  # a file's first message; each next one twice as large, up to CHUNK_ROWS
PREFETCH = 4  # chunks the writer holds ahead of the batcher
# A fresh load's inference pass keeps the lines of the files it read for the encode pass
# (`exports.kept_lines`), up to this many decompressed bytes per encoder process: a small
# file is read, hashed and inflated once (gunzip and md5: ~1.4 us a Movies row), a larger
# one read again. Fixed, so the encoders' peak memory does not grow with the export.
KEEP_BYTES = 16 * 1024 * 1024

_PR_SET_PDEATHSIG = 1  # <linux/prctl.h>


@dataclass(frozen=True)
class FileEnd:
    """A data file is read to its end (error None) or stopped by an ExportError; `firsts`:
    its first rows, for the spot check (spot_check.candidate)."""

    counts: FileCounts
    error: str | None = None
    firsts: tuple[Candidate, ...] = ()


@dataclass(frozen=True)
class Chunk:
    """Consecutive lines of one data file: rows to write (packed) and lines dead-lettered.
    A file's last chunk carries its `end`, so the writer knows the file is read to its end
    when its last rows arrive, not only after they are acknowledged (`load.run._entries`)."""

    file: str
    packed: bytes
    lines: list[int]
    sizes: list[int]  # each row's serialized length (`Packer`)
    dead: list[tuple[int, str, str | None]]  # (line, reason, raw text)
    read: int  # export lines this chunk covers, for the progress bar
    end: FileEnd | None = None


@dataclass(frozen=True)
class _ShareTypes:
    """An encoder's inference over its own files, the first message of a fresh load."""

    results: list[FileTypes]


@dataclass(frozen=True)
class _Crash:
    traceback: str


@dataclass(frozen=True)
class EncodeJob:
    """What the encoders need: the table, its types (None: infer them first, a fresh load
    of every data file: `Encoder.types`), the files to encode and the routing inputs."""

    manifest: Manifest
    table: TableSpec
    types: AttributeTypes | None
    files: tuple[DataFile, ...]
    write_time: int
    now: int
    sample: float | None


def _encode_files(conn: Connection, job: EncodeJob) -> None:
    """The child's whole life: types (inferred and sent, then the export's received, or
    the job's), every file in order, then the pipe closes."""
    try:
        types, keep = job.types, None
        if types is None:
            keep = KeptLines(KEEP_BYTES)
            conn.send(_ShareTypes(share_types(job.manifest, job.files, job.table, keep)))
            types = conn.recv()
            if types is None:  # the export cannot be loaded: nothing to encode
                return
        codec, cells = Codec(job.table, types), EntryBytes()
        for f in job.files:
            kept = keep if keep is not None and f.key in keep else None  # read once, by the inference pass
            try:
                _encode_file(conn, job, codec, f, cells, kept)
            except ExportError:  # the file's last chunk said so
                return
    except (BrokenPipeError, ConnectionResetError, EOFError):  # the writer is gone (killed or stopped)
        return
    except BaseException:  # a bug, not bad data: hand the writer the traceback to show
        conn.send(_Crash(traceback.format_exc()))
    finally:
        conn.close()


def _encode_file(conn: Connection, job: EncodeJob, codec: Codec, f: DataFile, cells: EntryBytes,
                 kept: KeptLines | None = None) -> None:
    """One data file as chunks, the last one with the file's end: its counts, its first
    rows (so the spot check need not read the file again) and the ExportError that
    stopped it, if one did (what was read before it is in that chunk; then it is raised).

    Its md5 is checked before its first row, unless this process's inference pass has
    just checked it (a fresh load, `job.types` None: `file_types` hashes the bytes it reads).
    If that pass `kept` its lines, they are encoded and the file is not read again: with
    one read there is nothing to replace. Else the bytes read here are hashed too, and
    checked at the file's end: a file replaced between the two reads fails (not done: a
    rerun checks it first), with one read fewer than a check of its own (on a bucket, one
    download fewer)."""
    packer = Packer(cells)  # the process's heads (`EntryBytes`), made once for all its files
    counts, firsts, error = FileCounts(), list[Candidate](), None
    dead: list[tuple[int, str, str | None]] = []
    read, limit, loaded = 0, FIRST_CHUNK_ROWS, 0
    digest = file_digest() if job.types is None and kept is None else None
    write_time, now = job.write_time, job.now
    fast = loaded_cells(codec, job.sample)  # the common case in one call, without a `Routed`
    row: RowMutation | RowCells | None
    try:
        if job.types is not None:
            verify_file(job.manifest, f)
        for record in read_records(job.manifest, f, check=False, digest=digest, keep=kept):  # route checks it
            read += 1
            row = fast(record.item, write_time, now) if fast is not None and record.unchecked is not None else None
            if row is not None:
                loaded += 1
            else:
                declined = fast is not None and record.unchecked is not None  # the compiled encoder said None
                routed = route(record, codec, write_time, now, job.sample, counts, declined)
                if routed.dead is not None:
                    dead.append((record.line, routed.dead, routed.raw))
                row = routed.row
            if row is not None:
                packer.add(row, record.line)
                if len(firsts) < CANDIDATES:
                    firsts.append(candidate(row, record.line, now))
            if read == limit:
                packed, lines, sizes = packer.take()
                conn.send(Chunk(f.key, packed, lines, sizes, dead, read))
                dead, read, limit = [], 0, min(2 * limit, CHUNK_ROWS)
        if digest is not None:
            check_digest(job.manifest, f, digest)
    except ExportError as stop:
        error = stop
    count_loaded(counts, loaded)
    packed, lines, sizes = packer.take()
    conn.send(Chunk(f.key, packed, lines, sizes, dead, read,
                    FileEnd(counts, None if error is None else str(error), tuple(firsts))))
    if error is not None:
        raise error


def forked_child(target: Callable[..., None], *args: Any, name: str) -> tuple[BaseProcess, Connection]:
    """A forked child running `target(conn, *args)`, and this process's end of the pipe
    between them (why fork: the module docstring)."""
    context = multiprocessing.get_context("fork")
    ours, theirs = context.Pipe(duplex=True)
    process = context.Process(target=_dies_with_parent, args=(os.getpid(), target, theirs, *args), name=name,
                              daemon=True)
    process.start()
    theirs.close()
    return process, ours


def _dies_with_parent(parent: int, target: Callable[..., None], *args: Any) -> None:
    """Linux kills this child when the load that forked it dies (SIGKILL included): an
    orphaned encoder would otherwise wait on its pipe forever, holding the work folder's
    lock and the export's file open."""
    with contextlib.suppress(OSError, AttributeError):
        ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)
    if os.getppid() != parent:  # the parent died before prctl took effect
        os._exit(1)
    target(*args)


class EncoderDied(Ddb2BigtableError):
    """The encoder process stopped without finishing (killed, out of memory, or a bug)."""


class _Process:
    """One encoder process and the writer's end of its pipe, pumped into a bounded queue."""

    def __init__(self, job: EncodeJob):
        self._process, self._conn = forked_child(_encode_files, job, name="ddb2bigtable-encoder")
        self._queue: asyncio.Queue[Any] = asyncio.Queue(PREFETCH)
        # One thread of its own reads the pipe: with the event loop's shared pool, every
        # pool thread's malloc arena held some chunks' worth of freed memory, and the
        # writer's peak crept up with the export's length (benchmarks/README.md).
        self._reader = ThreadPoolExecutor(1, thread_name_prefix="ddb2bigtable-pipe")
        self._pump = asyncio.get_running_loop().create_task(self._receive())

    async def _receive(self) -> None:
        loop = asyncio.get_running_loop()
        while True:
            try:
                message = await loop.run_in_executor(self._reader, self._conn.recv)
            except (EOFError, OSError):
                await self._queue.put(None)
                return
            await self._queue.put(message)

    def send(self, message: Any) -> None:
        try:
            self._conn.send(message)
        except OSError:  # it died: `next` says so
            pass

    async def next(self) -> Any:
        message = await self._queue.get()
        if isinstance(message, _Crash):
            raise EncoderDied(f"the encoder process failed:\n{message.traceback}")
        if message is None:
            self._process.join(5)
            raise EncoderDied(f"the encoder process stopped (exit code {self._process.exitcode}) before the "
                              f"end of the export; nothing is lost: rerun the load, it resumes with this data file")
        return message

    async def close(self) -> None:
        if self._process.is_alive():
            self._process.terminate()
        self._conn.close()  # the pump's recv fails and it ends
        self._pump.cancel()
        await asyncio.gather(self._pump, return_exceptions=True)
        self._reader.shutdown(wait=False)
        self._process.join()


class Encoder:
    """The encoder processes of one load: file i goes to process i mod n, so while the
    writer sends one file, the next one is being encoded in another process (each runs
    at most PREFETCH chunks ahead)."""

    def __init__(self, job: EncodeJob, processes: int):
        n = max(1, min(processes, len(job.files)))
        self._job = job
        self._owner = {f.key: i % n for i, f in enumerate(job.files)}
        self._processes = [_Process(replace(job, files=job.files[i::n])) for i in range(n)]

    async def types(self, recorded: AttributeTypes) -> AttributeTypes:
        """A fresh load's types: every encoder's share merged (the types the table
        `recorded` from earlier exports win), then sent back to them all so they start
        encoding. ExportError (the first unreadable file in manifest order) or
        EncoderDied when the export cannot be loaded; the encoders then stop."""
        shares: list[FileTypes] = []
        for process in self._processes:
            message = await process.next()
            if not isinstance(message, _ShareTypes):
                raise EncoderDied(f"the encoder process sent {type(message).__name__} before the types")
            shares += message.results
        try:
            types = merged_types(self._job.manifest, shares, self._job.table, recorded)
        except ExportError:
            self._send_all(None)
            raise
        self._send_all(types)
        return types

    def _send_all(self, types: AttributeTypes | None) -> None:
        for process in self._processes:
            process.send(types)

    @property
    def lanes(self) -> int:
        """How many files are encoded side by side (one per process)."""
        return len(self._processes)

    def lane(self, file: str) -> int:
        """The process that encodes this file, after the earlier files of its lane."""
        return self._owner[file]

    async def next(self, file: str) -> Chunk:
        return await self._processes[self.lane(file)].next()

    async def close(self) -> None:
        for process in self._processes:
            await process.close()


async def chunks_of(encoder: Encoder, file: str) -> AsyncIterator[Chunk]:
    """The encoder's chunks of one data file, ending with the one that carries its end."""
    while True:
        message = await encoder.next(file)
        if message.file != file:
            raise EncoderDied(f"the encoder sent {message.file} while {file} was expected")
        yield message
        if message.end is not None:
            return
