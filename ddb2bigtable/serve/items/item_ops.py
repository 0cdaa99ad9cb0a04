"""GetItem, PutItem, DeleteItem and UpdateItem.

Writes are read-check-write, atomic per row (store.py), by the model-checked machines of
serve/transactions (resolve.SingleWrite; BlindWrite for a write that needs no read), which
the driver runs: the row is read through the single-cluster profile, the condition and the
update are evaluated on the item as it is (`_change`), and the new cells are written only
if the row has not changed since; otherwise it starts over; the writes of one row take
turns within a worker and a lost race is tried again after a jittered pause while the
request's deadline allows (hot_rows.py), then answers
ProvisionedThroughputExceededException (the SDK backs off and retries). A write also
clears every cell of the item's previous image (`Codec.delete` of the old item) so an
attribute the new image lacks does not survive; a whole row's delete is made family by
family (the spec's families), so the reserved transaction family's cells stay: a
ClientRequestToken's record lives in its transaction's primary row.
"""

from __future__ import annotations

from typing import Any

from ...codec.items import Item
from ...codec.mutations import Cell, CodecError, Expired, RowMutation
from .. import capacity
from ..catalog import ServedTable
from ..errors import ServeError, condition_failed, validation
from ..expressions import parsing as expressions
from ..expressions.projections import project
from ..requests import DeleteItem, GetItem, Path, PutItem, UpdateItem, WriteRequest
from ..session import Found, Session, same_key
from ..store import client_mutations, now_micros
from ..tables.types_record import recorded, unrecorded
from ..transactions import cells
from ..transactions.resolve import BlindWrite, SingleWrite, Writing
from ..transactions.steps import Finished, View
from ..wire import WireItem, answer_item, changed_to_codec, check_wire_size, item_to_codec, item_to_wire
from . import known_rows
from .counters import counter_adds
from .hot_rows import Deadline, one_writer
from .locked_rows import read_item, write_row
from .stream_writes import Numbering, expired, lapsed, record_cells, stream_view, with_records

FRESH = 0.5  # the share of a table's recent writes that found an empty row above which a write tries it first
FRESH_WEIGHT = 1 / 8  # how much one write's finding moves that share (an exponentially weighted mean)
_fresh: dict[str, float] = {}  # this worker's share per table (1.0 for a table none wrote yet)
HELD = 0.5  # the share of a table's rows known to the worker still so when written next, above which it is trusted
_right: dict[str, float] = {}  # that share per table (the same weighting)

# an update meeting an attribute of another type: moto's words, DynamoDB's for expressions
MOTO_TYPE_ERRORS = ("An operand in the update expression has an incorrect data type", "Incorrect operand type")


async def get_item(session: Session, request: GetItem) -> dict[str, Any]:
    table = request.table
    item = await read_item(session, table, request.key, consistent=request.consistent)
    spent = capacity.consumed(request.capacity, table.name, capacity.read_item(item, request.consistent))
    if item is None:
        return spent
    return {"Item": project(item, request.projection), **spent}  # as read: binary written by the answer's JSON


def write_of(table: ServedTable, found: Found, new: Item | None) -> RowMutation:
    """The one row mutation that replaces the found item with `new` (None: deletes it)."""
    codec = table.codec
    whole_rows = len(codec.plans) == 1 and codec.plans[0].index is None  # a new image's DeleteRow clears the old
    try:
        clear = codec.delete(found.item).mutations if found.item is not None and (new is None or not whole_rows) \
            else ()
        if new is None:
            return RowMutation(found.row_key, clear)
        table.check_index_keys(new)
        now = now_micros()
        written = codec.encode(new, write_time_micros=now, now_micros=now, replace=True)
    except CodecError as error:
        raise validation(f"One or more parameter values were invalid: {error}") from None
    if isinstance(written, Expired):  # its TTL has passed: DynamoDB would no longer return it
        return RowMutation(found.row_key, clear or (written.delete.mutations if written.delete else ()))
    return RowMutation(written.key, (*clear, *written.mutations))


async def change_item(session: Session, request: WriteRequest, new_image: Any) -> tuple[Item | None, Item | None]:
    """Read, check the ConditionExpression, compute the new image (`new_image(old wire item or
    None, old codec item or None) -> codec item or None`) and write it if the row is unchanged;
    (old, new). The
    model-checked SingleWrite does it (`_change` decides); its new attributes' types are
    recorded first, then it runs again."""
    table, key = request.table, request.key
    row = (table.name, table.row_key(key))
    deadline = Deadline()
    view = await stream_view(session, table)
    async with one_writer(*row, deadline):
        known = known_rows.known(row)
        known_rows.forget(row)  # whatever happens to the row now, only a write of this worker's tells it again
        change = _change(session, request, table, row[1], new_image, view)
        machine = _first_write(row, change, known)
        while (finished := await write_row(session, table, machine, deadline)).kind == "unrecorded":
            table = await recorded(session, table, finished.value)
            machine = _first_write(row, _change(session, request, table, row[1], new_image, view))  # known: spent
        if finished.kind == "written":
            seen, intent = finished.value
            _found(table.name, empty=not seen)
            if known is not None:  # the guess held (its write went through), or a read shows whether it would have
                _held(table.name, seen is known or known_rows.would_hold(known, seen))
            known_rows.remember(row, known_rows.after_write(seen, intent.mutations))
    if finished.kind == "failed":
        raise condition_failed(finished.value if request.old_on_failure else None)
    if finished.kind == "unchanged":
        return None, None  # nothing to delete
    old, new = finished.value[1].about
    return old, new


def _change(session: Session, request: WriteRequest, table: ServedTable, row_key: bytes, new_image: Any,
            view: str | None) -> Any:
    """SingleWrite's decision over the row's cells as read: the item's new image written over
    the old (an intent of plain mutations) with its stream records when the table has a
    stream (`view`: stream_writes.py), or how the write ends without writing. The old item's
    wire form shares the stored item's values (`answer_item`): the condition and the update
    read it, neither changes it (the update makes a new image)."""
    key, holds = request.key, request.condition or _always

    def change(data: tuple[Cell, ...]) -> cells.Mutations | Finished:
        found = next((i for i in session.decode(table, cells.RowCells(row_key, data)) if same_key(i, key)), None) \
            if data else None
        old = answer_item(found) if found is not None else None
        if not holds(old):
            return Finished("failed", old)
        new = new_image(old, found)
        lapsed_old = lapsed(session, table, row_key, data, key) if view is not None and found is None else None
        if new is None and found is None and lapsed_old is None:
            return Finished("unchanged")
        if unrecorded(session, table, new):
            return Finished("unrecorded", new)
        written = None if view is not None and expired(table, new) else new  # recorded, then removed by TTL at once
        mutation = write_of(table, Found(row_key, [], found or lapsed_old), written)
        records = record_cells(table, view, Numbering.of(data), found, new, lapsed_old=lapsed_old)
        return _intent(table, with_records(mutation, records), (found, new))

    return change


def _first_write(row: tuple[str, bytes], change: Any, known: tuple[Cell, ...] | None = None) -> SingleWrite:
    """The write's machine: SingleWrite from its read, or from the state a read would lead to.

    A row this worker wrote last (`known`: known_rows.py) is presumed to hold what that write
    left, while most of the table's such guesses held (`HELD`): SingleWrite starts at its
    write over those cells, guarded on them, so a write of an item the worker wrote itself
    is one CheckAndMutateRow with its record decided as after a read (docs/streams.md,
    "Write amplification"); on a row that changed since, nothing is written and it reads.

    Otherwise, while most of the table's recent
    writes found their row empty (`FRESH`), SingleWrite already at its write over an empty,
    unlocked row: the state its read of such a row leads to. Its guard (nothing a writer's
    read sees: no item cell, lock or record) makes the one CheckAndMutateRow write the new
    item, and on a table with a stream its INSERT numbered first, only on a row that is
    empty then; on any other row nothing is written and the machine goes on as after a lost
    race, from a fresh read (a pause, then read-check-write). So a new item costs one round
    trip with a stream too (docs/streams.md, "Write amplification"). A new attribute's type
    is recorded first whatever the row holds (Finished "unrecorded", then the write runs
    again); a change that the empty row would end otherwise without a write (a failed
    condition) or refuse takes the read first: it must be decided on the row as it is."""
    if known is not None:
        if _right.get(row[0], 1.0) < HELD:
            return SingleWrite(row, change)
        guess = known
    elif _fresh.get(row[0], 1.0) < FRESH:
        return SingleWrite(row, change)
    else:
        guess = ()
    try:
        intent = change(guess)
    except ServeError:
        return SingleWrite(row, change)
    seen = View(row, guess, None)
    if isinstance(intent, Finished):
        return SingleWrite(row, change, pc=Writing.END, seen=seen, intent=intent) \
            if intent.kind == "unrecorded" and not guess else SingleWrite(row, change)
    return SingleWrite(row, change, pc=Writing.WRITE, seen=seen, intent=intent, presumed=True)


def _found(table: str, *, empty: bool) -> None:
    """A written row's finding (empty or not) moves the table's guess."""
    _fresh[table] = (1 - FRESH_WEIGHT) * _fresh.get(table, 1.0) + FRESH_WEIGHT * empty


def _held(table: str, right: bool) -> None:
    """Whether what the worker knew of a written row was still so moves the table's trust in it."""
    _right[table] = (1 - FRESH_WEIGHT) * _right.get(table, 1.0) + FRESH_WEIGHT * right


def _intent(table: ServedTable, mutation: RowMutation, about: tuple[Item | None, Item | None]) -> cells.Mutations:
    """The row mutation as the single write sends it, its row delete made family by family (the
    reserved family's cells stay: a ClientRequestToken's record lives in its primary row).
    Every single-item write's intent is made here, with the item before and after when
    known (`about`): a cell the same write must carry is appended to its mutations here."""
    return cells.Mutations(client_mutations(mutation, table.families), about)


def _always(_item: WireItem | None) -> bool:
    return True


def needs_no_read(request: WriteRequest) -> bool:
    """A write that can go without reading first: no condition, nothing to return (its
    consumed capacity neither: DynamoDB's figure depends on the old item), and a table with
    the default mapping alone, where an item is a whole row, so the new image's row
    mutation (the row deleted, then its cells) clears every cell of the previous one."""
    plans = request.table.codec.plans
    return (request.condition is None and request.returns == "NONE" and not request.capacity_wanted
            and len(plans) == 1 and plans[0].index is None)


async def replace_item(session: Session, request: WriteRequest, new: Item | None) -> Item | None:
    """PutItem (`new`) or DeleteItem (None) of one item; the old image (None when unread or absent).
    One CheckAndMutateRow refused by a locked row when `needs_no_read`, else `change_item`'s read-check-write."""
    key = request.key
    # BlindWrite: on a locked row, it settles the lock or meets a live transaction; never on a table with a
    # stream, whose record needs the old item (stream_writes.py)
    if needs_no_read(request) and await stream_view(session, request.table) is None:
        table = await recorded(session, request.table, new)
        row_key = table.row_key(key)
        mutation = write_of(table, Found(row_key, [], None), new) if new is not None else table.codec.delete(key)
        known_rows.forget((table.name, row_key))
        await write_row(session, table, BlindWrite((table.name, row_key), _intent(table, mutation, (None, new))),
                        Deadline())
        return None
    return (await change_item(session, request, lambda _old, _found: new))[0]


async def put_item(session: Session, request: PutItem) -> dict[str, Any]:
    old = await replace_item(session, request, request.item)
    return _returned_old(request, old, request.item)


async def delete_item(session: Session, request: DeleteItem) -> dict[str, Any]:
    old = await replace_item(session, request, None)
    return _returned_old(request, old, None)


def _returned_old(request: WriteRequest, old: Item | None, new: Item | None) -> dict[str, Any]:
    """ALL_OLD's attributes and the consumed capacity, each only when asked for (sizing
    an item walks every attribute)."""
    spent = capacity.consumed(request.capacity, request.table.name, capacity.write(request.table, old, new)) \
        if request.capacity_wanted else {}
    return ({"Attributes": item_to_wire(old)} if request.returns == "ALL_OLD" and old else {}) | spent


async def update_item(session: Session, request: UpdateItem) -> dict[str, Any]:
    table, key, expression = request.table, request.key, request.expression
    names, values = request.names, request.values

    def updated(old: WireItem | None, found: Item | None) -> Item:
        start = old if old is not None else item_to_wire(key)
        if expression is None:
            return item_to_codec(start)
        try:  # names and values checked with the request (item_requests.update_item)
            image = expressions.update(start, expression, names, values, table.key_types, checked=True)
            new = changed_to_codec(image, old, found)
        except ServeError as error:
            if request.legacy and any(m in error.message for m in MOTO_TYPE_ERRORS):  # AttributeUpdates: DynamoDB words
                raise validation("Type mismatch for attribute to update") from None
            raise
        check_wire_size(image, new)
        return new

    adds = None if request.capacity_wanted or await stream_view(session, table) else counter_adds(request)
    if adds is not None:  # AddToCell, no read (counters.py); a locked row's lock is settled first, or met live
        known_rows.forget((table.name, adds.key))
        await write_row(session, table, BlindWrite((table.name, adds.key), _intent(table, adds, (None, None))),
                        Deadline())
        return {}
    old, new = await change_item(session, request, updated)
    written = expressions.written_paths(expression, names) if expression and request.returns.startswith("UPDATED") \
        else []
    # sized only when asked (every attribute of both images walked), as a PutItem's are
    spent = capacity.consumed(request.capacity, table.name, capacity.write(table, old, new)) \
        if request.capacity_wanted else {}
    return _returned(request.returns, old or {}, new or {}, written) | spent


def _returned(returns: str, old: Item, new: Item, written: list[Path]) -> dict[str, Any]:
    """What ReturnValues asks for; UPDATED_OLD and UPDATED_NEW are the paths the update
    wrote (only `a.b` of `SET a.b = :v`, as DynamoDB returns them), before or after."""
    if returns == "NONE":
        return {}
    if returns == "ALL_OLD":
        return {"Attributes": item_to_wire(old)} if old else {}
    if returns == "ALL_NEW":
        return {"Attributes": item_to_wire(new)}
    side = old if returns == "UPDATED_OLD" else new
    picked = project(item_to_wire(side), written)
    return {"Attributes": picked} if picked else {}
