"""Names and positions in a stream, in DynamoDB's forms (docs/streams.md): stream labels and
ARNs, shard ids, sequence numbers and shard iterators. Pure: every worker derives the same
names from the stream's creation time and label, with nothing stored per shard.

DynamoDB Local 1.25.1's forms (captured 2026-12-07): label `2026-12-07T12:26:15.677`, ARN
`arn:aws:dynamodb:<region>:<account>:table/<table>/stream/<label>`, shard id
`shardId-<20 digits>-<8 hex>`.
"""

from __future__ import annotations

import base64
import binascii
import re
import zlib
from dataclasses import dataclass
from datetime import UTC, datetime

ACCOUNT = "000000000000"  # no AWS account behind serve (tables/admin_ops.py's TableArn says the same)
SHARDS = 4  # a table's shards on emulator stages: few and stable (scylladb#8012 made thousands)
# "A shard iterator expires 15 minutes after it is retrieved using the GetShardIterator action"
# (DynamoDB Streams API reference, ExpiredIteratorException, read 2026-12-07)
ITERATOR_SECONDS = 15 * 60
# "In DynamoDB Streams, there is a 24 hour limit on data retention" (TrimmedDataAccessException, read 2026-12-07)
RETENTION_MICROS = 24 * 3600 * 1_000_000
MICROS_DIGITS, ROW_DIGITS, NUMBER_DIGITS = 17, 10, 10
SEQUENCE_DIGITS = MICROS_DIGITS + ROW_DIGITS + NUMBER_DIGITS  # 37: DynamoDB's are 21 to 40 characters
ITERATOR_VERSION = "1"
_ARN = re.compile(r"arn:aws:dynamodb:([^:]+):(\d{12}):table/([^/]+)/stream/(.+)")


def label(created_ms: int) -> str:
    """The stream's label: its creation time, UTC, to the millisecond."""
    when = datetime.fromtimestamp(created_ms / 1000, UTC)
    return when.strftime("%Y-%m-%dT%H:%M:%S.") + f"{created_ms % 1000:03d}"


def stream_arn(region: str, table: str, stream_label: str) -> str:
    return f"arn:aws:dynamodb:{region}:{ACCOUNT}:table/{table}/stream/{stream_label}"


def arn_parts(arn: str) -> tuple[str, str] | None:
    """(table name, label) of a stream ARN of serve's form, or None."""
    found = _ARN.fullmatch(arn)
    return (found.group(3), found.group(4)) if found else None


def shard_id(created_ms: int, stream_label: str, index: int) -> str:
    """An emulator-stage shard's id: the stream's creation and a crc32 of its label and index."""
    return f"shardId-{created_ms:020d}-{zlib.crc32(f'{stream_label}/{index}'.encode()):08x}"


def shard_of_row(row_key: bytes) -> int:
    """The emulator-stage shard an item's records go to, always the same for one row."""
    return zlib.crc32(row_key) % SHARDS


def sequence(commit_micros: int, row_key: bytes, number: int) -> str:
    """A record's sequence number: commit time, then a crc32 of the row, then the row's change
    number; one width, so string order is number order."""
    change = number % 10**NUMBER_DIGITS
    return f"{commit_micros:0{MICROS_DIGITS}d}{zlib.crc32(row_key):0{ROW_DIGITS}d}{change:0{NUMBER_DIGITS}d}"


def at_time(micros: int) -> str:
    """The smallest sequence number of a record committed at `micros` or later."""
    return f"{micros:0{MICROS_DIGITS}d}" + "0" * (ROW_DIGITS + NUMBER_DIGITS)


def sequence_micros(number: str) -> int:
    return int(number[:MICROS_DIGITS])


def is_sequence(text: str) -> bool:
    return len(text) == SEQUENCE_DIGITS and text.isdigit()


@dataclass(frozen=True)
class Position:
    """Where a shard iterator stands: records after `after` (from it, `inclusive`; from the
    shard's start when empty), in shard `shard` (its index in the stream's shards), issued
    at `issued_ms`. On cloud stages `token` is Bigtable's continuation token of the shard's
    partition where the last read stopped (empty before the first read: the read starts
    from `after`'s time or the shard's start)."""

    shard: int
    after: str
    inclusive: bool
    issued_ms: int
    token: str = ""

    def admits(self, number: str) -> bool:
        return not self.after or number > self.after or (self.inclusive and number == self.after)


def iterator(arn: str, position: Position) -> str:
    """`<stream ARN>|1|<base64url of the position>|<crc32>`: checked, not signed (docs/streams.md)."""
    inner = f"{position.shard}|{position.after}|{int(position.inclusive)}|{position.issued_ms}|{position.token}"
    payload = base64.urlsafe_b64encode(inner.encode()).decode().rstrip("=")
    check = zlib.crc32(f"{arn}|{payload}".encode())
    return f"{arn}|{ITERATOR_VERSION}|{payload}|{check:08x}"


def read_iterator(text: str) -> tuple[str, Position] | None:
    """The stream ARN and position of an iterator `iterator` made, or None for anything else."""
    parts = text.rsplit("|", 3)
    if len(parts) != 4 or parts[1] != ITERATOR_VERSION:
        return None
    arn, _, payload, check = parts
    if f"{zlib.crc32(f'{arn}|{payload}'.encode()):08x}" != check:
        return None
    try:
        inner = base64.urlsafe_b64decode(payload + "=" * (-len(payload) % 4)).decode()
        shard, after, inclusive, issued, token = inner.split("|", 4)
        position = Position(int(shard), after, inclusive == "1", int(issued), token)
    except (ValueError, binascii.Error, UnicodeDecodeError):
        return None
    if position.shard < 0 or (position.after and not is_sequence(position.after)):
        return None
    return arn, position
