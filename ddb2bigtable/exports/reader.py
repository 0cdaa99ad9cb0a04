"""Reads the data files of a DynamoDB export to S3 exactly as AWS writes them.

`manifests.open_export` reads and checks the manifests first; this module then streams
each data file: gzip'd lines of DynamoDB JSON (`json_lines`) or text ION (`ion_lines`),
full or incremental. A data file is read line by line from the gzip stream, so memory
stays bounded whatever the export's size, and one bad line becomes an "error" record for
the dead-letter file instead of stopping the load. Item counts are checked by the caller.
"""

from __future__ import annotations

import contextlib
import zlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any, cast

import msgspec
from isal import isal_zlib

from ..codec.items import Item
from .ion_lines import ion_full, ion_incremental
from .json_lines import BadLine, Decoded, json_full, json_incremental, json_item, json_line
from .kept_lines import Keeping, KeptLines
from .manifests import (
    INCREMENTAL_EXPORT,
    DataFile,
    Digest,
    ExportError,
    Manifest,
    check_digest,
    data_path,
    missing_file,
)

RAW_LIMIT = 1000
# DynamoDB items are at most 400 KB (AWS, "Constraints in Amazon DynamoDB", items; read
# 2026-11-23); as an export line (base64 binary is 4/3 larger, JSON escapes more) one stays
# far below MAX_LINE, and a data file far below ITEM_BYTES per item of its manifest. Past
# either the bytes are not an export (a gzip bomb decompresses without end): memory and
# time stay bounded by these two numbers.
MAX_LINE = 4 * 1024 * 1024
ITEM_BYTES = 1024 * 1024
# A real export has no byte outside its items: no line over MAX_LINE, no line past a file's
# itemCount. A data file may hold at most MAX_WASTE bytes that are (a line past the count
# counting as at least EXTRA_LINE_COST): a gzip bomb of one endless line, or of endless
# short lines, stops there, where it ran to the file's ITEM_BYTES per item (a bomb in a
# file listing 1,000 items took 9-10 s) or, for short lines, for minutes. Every reader
# stops at the first file that fails, so a manifest costs at most MAX_WASTE per data file
# before one fails, not ITEM_BYTES per item it claims.
MAX_WASTE = 16 * 1024 * 1024
EXTRA_LINE_COST = 16 * 1024  # a line past the itemCount counts as at least this: 1,024 such lines end the read


@dataclass(frozen=True, init=False)
class Record:
    """One line of a data file. Made once per line: its `__init__` fills the instance dict
    at once (a frozen dataclass's own sets each of the ten fields through
    `object.__setattr__`, a tenth of what the loader spends on a flat item); it stays
    frozen, and compares and prints as a dataclass."""

    file: str
    line: int  # 1-based line in the decompressed data file
    kind: str  # "put" | "delete" | "error"
    item: Item | None  # full item (put; for incremental: NewImage)
    keys: Item | None  # incremental: Keys; full: None
    write_time_micros: int | None  # incremental: Metadata.WriteTimestampMicros
    error: str | None  # kind == "error": why the line could not be read
    raw: str | None  # kind == "error": the offending line (first 1000 chars)
    old_item: Item | None = None  # incremental: OldImage, when the export's view has it
    unchecked: bytes | None = None  # the line, when `item` is as parsed and not yet checked (`checked` checks it)

    def __init__(self, file: str, line: int, kind: str, item: Item | None, keys: Item | None,  # noqa: PLR0913  the fields
                 write_time_micros: int | None, error: str | None, raw: str | None, old_item: Item | None = None,
                 unchecked: bytes | None = None):
        self.__dict__.update(file=file, line=line, kind=kind, item=item, keys=keys,
                             write_time_micros=write_time_micros, error=error, raw=raw, old_item=old_item,
                             unchecked=unchecked)


# --- public API ---------------------------------------------------------------------------

def read_records(manifest: Manifest, f: DataFile, *, check: bool = True, digest: Digest | None = None,
                 keep: KeptLines | None = None) -> Iterator[Record]:
    """Every line of one data file as a `Record`, in order.

    A line that is not valid JSON/ION or not an item becomes an "error" record; a gzip
    stream that is cut short or corrupt raises `ExportError` after the last good line.
    `check=False` (the loader, whose codec checks the item as it encodes it: one walk
    instead of two) leaves a full DynamoDB JSON export's item as parsed, `unchecked`;
    `checked` gives the record this reader would have returned. `digest` (an md5) is fed
    every stored byte read, so a pass that reads the file anyway checks its md5 too
    (`manifests.check_digest`, once the file is read to its end). `keep`: its lines kept
    from an earlier read, or kept for a later one (`kept_lines.KeptLines`).
    """
    full_json = manifest.output_format == "DYNAMODB_JSON" and manifest.export_type != INCREMENTAL_EXPORT
    if not check and full_json:
        yield from _parsed_records(manifest, f, digest, keep)
        return
    decode = _LINE_DECODERS[manifest.output_format, manifest.export_type == INCREMENTAL_EXPORT]
    for line_no, line in _file_lines(manifest, f, digest, keep):
        if line is None:
            yield Record(f.key, line_no, "error", None, None, None, _TOO_LONG, None)
            continue
        try:
            item, keys, write_time, old = decode(line)
        except BadLine as bad:
            yield _error(f.key, line_no, line, bad)
        else:
            kind = "put" if item is not None else "delete"
            yield Record(f.key, line_no, kind, item, keys, write_time, None, None, old)


def _parsed_records(manifest: Manifest, f: DataFile, digest: Digest | None, keep: KeptLines | None
                    ) -> Iterator[Record]:
    """`read_records(check=False)` of a full DynamoDB JSON export: each line parsed (the
    JSON, its nesting and its `Item` object checked), its values not yet."""
    for line_no, line in _file_lines(manifest, f, digest, keep):
        if line is None:
            yield Record(f.key, line_no, "error", None, None, None, _TOO_LONG, None)
            continue
        try:
            item = json_line(line).get("Item")
            if type(item) is not dict or not item:
                json_item(item, "Item")  # raises its BadLine
        except BadLine as bad:
            yield _error(f.key, line_no, line, bad)
        else:
            yield Record(f.key, line_no, "put", item, None, None, None, None, None, line)


def checked(record: Record) -> Record:
    """The record `read_records` returns for this line when it checks it: an unchecked
    record's item checked (binary decoded), or the "error" record that says what is wrong."""
    if record.unchecked is None:
        return record
    try:
        item = json_item(record.item, "Item")
    except BadLine as bad:
        return _error(record.file, record.line, record.unchecked, bad)
    return Record(record.file, record.line, "put", item, None, None, None, None)


def _error(file: str, line_no: int, line: bytes, bad: BadLine) -> Record:
    text = line.decode("utf-8", "replace").rstrip("\r\n")[:RAW_LIMIT]
    return Record(file, line_no, "error", None, None, None, str(bad), text)


def scan_items(manifest: Manifest, f: DataFile, wanted: Callable[[Any], bool], digest: Digest | None = None,
               known: Callable[[], Any] | None = None, keep: KeptLines | None = None) -> Iterator[Item]:
    """The valid items of one data file that `wanted` asks for, for a pass that needs only
    a few of them (type inference: an item whose attributes all have types already seen
    changes nothing). `wanted` sees each item as parsed, before the validation that costs
    most of reading; what it turns down is neither validated nor returned, and what it
    asks for is returned only if valid (bad lines are the load's to dead-letter). `known`
    (`TypeScan.known_items`, asked again after each line it did not settle) is a msgspec
    type of the items `wanted` would turn down: a line whose `Item` decodes as one is
    skipped without being parsed into Python objects (most lines: `msgspec` decodes
    against the type in C, several times faster than parsing and asking `wanted`). Only
    full DynamoDB JSON exports skip the validation; ION and incremental exports are read
    as `read_records` reads them. `digest` and `keep`: as `read_records`'s."""
    if manifest.output_format != "DYNAMODB_JSON" or manifest.export_type == INCREMENTAL_EXPORT:
        for record in read_records(manifest, f, digest=digest, keep=keep):
            if record.item is not None and wanted(record.item):
                yield record.item
        return
    schema: Any = None
    skip: Callable[[bytes], Any] | None = None
    for _, line in _file_lines(manifest, f, digest, keep):
        if line is None:
            continue
        if skip is not None:
            try:
                skip(line)
                continue
            except (msgspec.DecodeError, RecursionError, ValueError):  # not settled: parse it, ask `wanted`
                pass  # (ValueError: a name that is not UTF-8, which msgspec reports as UnicodeDecodeError)
        try:
            raw = json_line(line).get("Item")
            if wanted(raw):
                yield json_item(raw, "Item")
        except BadLine:
            pass
        if known is not None and (now := known()) is not schema:
            schema, skip = now, (None if now is None else known_lines(now))


def known_lines(item_type: Any) -> Callable[[bytes], Any]:
    """Decodes a full export's line whose `Item` is of `item_type` (`TypeScan.known_items`);
    msgspec.DecodeError, RecursionError or UnicodeDecodeError when it is not, or the line is
    no JSON."""
    return msgspec.json.Decoder(msgspec.defstruct("KnownLine", [("Item", item_type)]), strict=False).decode


_TOO_LONG = f"the line is longer than {MAX_LINE:,} bytes; a DynamoDB item is at most 400 KB"


class _TooMuch(Exception):
    """The file decompresses to more than its manifest's items can take."""


class _Wasted(Exception):
    """The data file held more than MAX_WASTE bytes that are no item."""


class _Waste:
    """One data file's count of bytes that are no item, up to MAX_WASTE."""

    def __init__(self) -> None:
        self.total = 0

    def add(self, count: int) -> None:
        self.total += count
        if self.total > MAX_WASTE:
            raise _Wasted


def _file_lines(manifest: Manifest, f: DataFile, digest: Digest | None = None, keep: KeptLines | None = None
                ) -> Iterator[tuple[int, bytes | None]]:
    """(line number, line) of one data file, None for a line over MAX_LINE; ExportError
    when it is missing, unreadable, decompresses to more than ITEM_BYTES per item, or its
    gzip stream is cut short or corrupt (after the last good line). `digest` is fed each
    stored (compressed) chunk as it is read; a file `keep` holds is not read (`KeptLines`)."""
    if keep is not None and f.key in keep:
        yield from enumerate(keep.take(f.key), 1)
        return
    store, path = data_path(manifest, f)
    line_no = 0
    limit = f.item_count * ITEM_BYTES + MAX_LINE
    waste, items = _Waste(), f.item_count
    keeping = Keeping(keep.left if keep is not None and digest is not None else 0)
    try:
        with store.open(path) as stream:
            for line_no, line in enumerate(_gzip_lines(stream, limit, waste, digest, keeping), 1):
                if line_no > items and line is not None:  # past the file's itemCount: no item of it
                    waste.add(max(len(line) + 1, EXTRA_LINE_COST))
                yield line_no, line
    except _TooMuch:
        raise ExportError(f"{path}: {f.key} decompresses to more than {limit:,} bytes, far more than its "
                          f"{f.item_count} items can hold (at most 400 KB each); it is not this export's file or "
                          f"it is damaged (a gzip bomb); reading stopped after line {line_no}") from None
    except _Wasted:
        raise ExportError(f"{path}: {f.key}: more than {MAX_WASTE:,} decompressed bytes of it are no item "
                          f"(lines over {MAX_LINE:,} bytes, lines past its itemCount {f.item_count}); it is "
                          f"damaged or a gzip bomb: reading stopped after line {line_no}") from None
    except FileNotFoundError:
        raise missing_file(f, path) from None
    except (EOFError, _INFLATE_ERROR) as err:  # a stream cut short (`_gzip_lines`), or one isal refuses
        raise ExportError(f"{path}: the gzip stream of {f.key} is truncated or corrupt after line "
                          f"{line_no} ({err}); lines up to {line_no} were read: copy the file again "
                          f"from the export") from None
    except OSError as err:
        raise ExportError(f"{path}: cannot read {f.key} ({err})") from None
    if keep is not None and digest is not None and keeping.lines is not None:  # lines it may keep: md5 first
        with contextlib.suppress(ExportError):  # the caller's own check says what is wrong
            check_digest(manifest, f, digest)
            keep.kept(f.key, keeping)


# A corrupt stream: isal's IsalError (its stub types it as an instance), no subclass of
# zlib.error. Only `_gzip_lines` inflates (the stores hand back the stored bytes, GCS's
# `raw_download`), so neither zlib.error nor gzip's BadGzipFile can reach `_file_lines`.
_INFLATE_ERROR = cast(type[Exception], isal_zlib.error)
GZIP_CHUNK = 256 * 1024  # compressed bytes per read
GZIP_OUT = 1024 * 1024  # decompressed bytes per step: bounded even for data that compresses 100x


def _gzip_lines(stream: Any, limit: int, waste: _Waste, digest: Digest | None, keeping: Keeping
                ) -> Iterator[bytes | None]:
    """The lines of a gzip stream (concatenated members too), without their newline; None
    for a line longer than MAX_LINE (its bytes are dropped as they arrive, and counted as
    `waste`), `_TooMuch` past `limit` decompressed bytes. `keeping` is handed the lines
    as they are yielded, a step's at once.

    A gzip stream with our own line split: several times faster than `GzipFile`'s
    readline, which dominated the time of reading an export; inflated by ISA-L
    (`isal_zlib`, zlib's API and checks: the same bytes, a damaged stream refused alike),
    which takes ~40% less CPU than zlib on an export's lines (a fresh load's two passes
    read each file its encoder did not keep: `kept_lines`).
    """
    decompressor = isal_zlib.decompressobj(zlib.MAX_WBITS | 16)
    tail = b""
    dropping = False  # inside a line already too long: skip to its end
    total = 0
    while data := stream.read(GZIP_CHUNK):
        if digest is not None:
            digest.update(data)
        while data:
            out = decompressor.decompress(data, GZIP_OUT)
            data = decompressor.unconsumed_tail
            total += len(out)
            if total > limit:
                raise _TooMuch
            chunk = tail + out
            lines = cast(list[bytes | None], chunk.split(b"\n"))  # None marks a line dropped as too long
            tail = cast(bytes, lines.pop())
            if dropping and lines:
                waste.add(len(cast(bytes, lines[0])))
                lines[0], dropping = None, False
            if len(chunk) > MAX_LINE:  # only then can a line be too long (rare: no per-line cost)
                waste.add(sum(len(line) for line in lines if line is not None and len(line) > MAX_LINE))
                lines = [None if line is not None and len(line) > MAX_LINE else line for line in lines]
            keeping.add(lines, len(out))
            yield from lines
            if len(tail) > MAX_LINE:
                waste.add(len(tail))
                tail, dropping = b"", True
            if decompressor.eof and decompressor.unused_data.lstrip(b"\0"):  # the next member
                data = decompressor.unused_data.lstrip(b"\0")  # zero padding is allowed, as gzip does
                decompressor = isal_zlib.decompressobj(zlib.MAX_WBITS | 16)
    if not decompressor.eof:
        raise EOFError("Compressed file ended before the end-of-stream marker was reached")
    if dropping:
        waste.add(len(tail))
    last: list[bytes | None] = [None] if dropping else [tail] if tail else []
    keeping.add(last, 0)
    yield from last


_LINE_DECODERS: dict[tuple[str, bool], Callable[[bytes], Decoded]] = {
    ("DYNAMODB_JSON", False): json_full,
    ("DYNAMODB_JSON", True): json_incremental,
    ("ION", False): ion_full,
    ("ION", True): ion_incremental,
}
