"""Cell timestamps: always explicit, in milliseconds x 1000 (Bigtable's default granularity).

Sources of a cell's time:
- `write_time`: the caller's write time (the export time), so a rerun writes the same
  versions and the load is idempotent;
- an item attribute: N epoch seconds or milliseconds (a magnitude below 100,000,000,000 is
  seconds, i.e. before the year 5138; from there on milliseconds, i.e. after 1973-03-03),
  or S ISO-8601 (`2023-09-10T15:21:48`, UTC when it carries no offset; `Z`, offsets,
  fractions and plain dates are accepted);
- the TTL expiry (DynamoDB's TTL attribute: N epoch seconds).

Read back, an attribute time is rendered as S `YYYY-MM-DDTHH:MM:SS[.fff]` (UTC, no
offset) or N epoch seconds (`1694359308`, `1694359308.5`).

Far future: items without a valid TTL get 253402300799999000 (9999-12-31T23:59:59.999Z),
a whole number of milliseconds well inside Bigtable's int64 microseconds, which GC's
`max_age 1s` never reaches and readers' "timestamp >= now" filter always keeps.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from decimal import Decimal, InvalidOperation

from .items import AttributeValue, Item, value_type
from .mutations import CodecError, Expired

FAR_FUTURE_MICROS = 253_402_300_799_999_000  # 9999-12-31T23:59:59.999Z
MILLIS_FROM = Decimal(100_000_000_000)  # N times at or above this magnitude are milliseconds
# DynamoDB ignores a TTL more than five years in the past (AWS, "Using DynamoDB Time to
# Live (TTL)", time-to-live-ttl-before-you-start.html, read 2025): such an item never
# expires there, so it gets the far-future timestamp here too.
TTL_IGNORED_AFTER_MICROS = (5 * 365 + 1) * 86_400 * 1_000_000
EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
_MICRO = Decimal(1_000_000)


def moment_of(micros: int) -> datetime:
    """A cell timestamp (microseconds since the epoch) as an aware UTC time."""
    return EPOCH + timedelta(microseconds=micros)


def micros_of(moment: datetime) -> int:
    """An aware time as microseconds since the epoch (a cell timestamp's unit), rounded down."""
    return (moment - EPOCH) // timedelta(microseconds=1)


def millis(micros: int) -> int:
    """Down to a whole millisecond, in microseconds."""
    return micros // 1000 * 1000


def _checked(micros: int, what: str) -> int:
    if not 0 <= micros <= FAR_FUTURE_MICROS:
        raise CodecError(f"{what} is outside the times a Bigtable cell can carry (1970 to 9999)")
    return millis(micros)


def ttl_timestamp(item: Item, attribute: str, now_micros: int) -> int | Expired:
    """The cell time of a TTL table's item: its expiry, or far future without a valid TTL."""
    value = item.get(attribute)
    if value is None or value_type(value) != "N":
        return FAR_FUTURE_MICROS  # DynamoDB's TTL ignores items without a Number there
    try:
        expiry = Decimal(value["N"]) * _MICRO
    except InvalidOperation:
        return FAR_FUTURE_MICROS
    if not expiry.is_finite() or expiry >= FAR_FUTURE_MICROS:
        return FAR_FUTURE_MICROS
    micros = int(expiry.to_integral_value(rounding="ROUND_FLOOR"))
    if expiry <= now_micros:
        if now_micros - micros > TTL_IGNORED_AFTER_MICROS:
            return FAR_FUTURE_MICROS
        return Expired(millis(micros))
    return millis(micros)


def attribute_micros(value: AttributeValue, name: str) -> int:
    """The time an attribute holds, as a cell timestamp."""
    tag = value_type(value)
    if tag == "N":
        try:
            number = Decimal(value["N"])
        except InvalidOperation as exc:
            raise CodecError(f"{name} = {value['N']!r} is not a number") from exc
        scale = Decimal(1000) if abs(number) >= MILLIS_FROM else _MICRO
        micros = number * scale
        if not micros.is_finite() or not 0 <= micros <= FAR_FUTURE_MICROS:
            raise CodecError(f"{name} = {value['N']} is outside the times a Bigtable cell can carry (1970 to 9999)")
        return _checked(int(micros.to_integral_value(rounding="ROUND_FLOOR")), f"{name} = {value['N']}")
    if tag == "S":
        try:
            moment = datetime.fromisoformat(value["S"])
        except ValueError as exc:
            raise CodecError(f"{name} = {value['S']!r} is not an ISO-8601 time like 2023-09-10T15:21:48") from exc
        if moment.tzinfo is None:
            moment = moment.replace(tzinfo=UTC)
        return _checked(micros_of(moment), f"{name} = {value['S']}")
    raise CodecError(f"{name} is {tag}; a cell time comes from a number (epoch seconds or milliseconds) "
                     f"or an ISO-8601 string")


def time_attribute(micros: int, stored: str) -> AttributeValue:
    """An attribute time read back from a cell timestamp (N: epoch seconds; else ISO text)."""
    if stored in ("N", "counter"):
        seconds, rest = divmod(micros, 1_000_000)
        return {"N": f"{seconds}" + (f".{rest:06d}".rstrip("0") if rest else "")}
    moment = moment_of(millis(micros)).replace(tzinfo=None)
    return {"S": moment.isoformat(timespec="milliseconds" if moment.microsecond else "seconds")}


def epoch_seconds(micros: int) -> AttributeValue:
    """A TTL value read back from an expiry timestamp."""
    return time_attribute(micros, "N")
