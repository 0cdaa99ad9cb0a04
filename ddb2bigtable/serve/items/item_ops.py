"""GetItem, PutItem, DeleteItem and UpdateItem.

Writes are read-check-write, atomic per row (store.py): the row is read through the
single-cluster profile, the condition and the update are evaluated on the item as it is,
and the new cells are written only if the row has not changed since; otherwise it starts
over; the writes of one row take turns within a worker and a lost race is tried again
after a jittered pause while the request's deadline allows (hot_rows.py), then answers
ProvisionedThroughputExceededException (the SDK backs off and retries). A write also
clears every cell of the item's previous image (`Codec.delete` of the old item) so an
attribute the new image lacks does not survive; a whole row's delete is made family by
family (the spec's families), so the reserved transaction family's cells stay: a
ClientRequestToken's record lives in its transaction's primary row.
"""

from __future__ import annotations

from typing import Any

from ...codec.items import Item
from ...codec.mutations import CodecError, Expired, RowMutation
from .. import capacity
from ..catalog import ServedTable
from ..errors import ServeError, condition_failed, validation
from ..expressions import parsing as expressions
from ..expressions.projections import project
from ..requests import DeleteItem, GetItem, Path, PutItem, UpdateItem, WriteRequest
from ..session import Found, Session
from ..store import now_micros
from ..tables.types_record import recorded
from ..wire import WireItem, check_size, item_to_codec, item_to_wire
from .counters import counter_adds
from .hot_rows import Deadline, gave_up, one_writer, tries
from .locked_rows import read_item, unlocked, write_unless_locked

# an update meeting an attribute of another type: moto's words, DynamoDB's for expressions
MOTO_TYPE_ERRORS = ("An operand in the update expression has an incorrect data type", "Incorrect operand type")


async def get_item(session: Session, request: GetItem) -> dict[str, Any]:
    table = request.table
    item = await read_item(session, table, request.key, consistent=request.consistent)
    spent = capacity.consumed(request.capacity, table.name, capacity.read_item(item, request.consistent))
    if item is None:
        return spent
    return {"Item": project(item_to_wire(item), request.projection), **spent}


def write_of(table: ServedTable, found: Found, new: Item | None) -> RowMutation:
    """The one row mutation that replaces the found item with `new` (None: deletes it)."""
    codec = table.codec
    try:
        clear = codec.delete(found.item).mutations if found.item is not None else ()
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
    None) -> codec item or None`) and write it if the row is unchanged; (old, new)."""
    table, key = request.table, request.key
    holds = request.condition or _always
    store = session.store(table, consistent=True)
    deadline = Deadline()
    async with one_writer(table.name, table.row_key(key), deadline):
        async for _ in tries(deadline):
            found = await session.find(table, key, consistent=True)
            if not await unlocked(session, table, found):  # a transaction's lock, settled: read again
                continue
            old = item_to_wire(found.item) if found.item is not None else None
            if not holds(old):
                raise condition_failed(old if request.old_on_failure and old is not None else None)
            new = new_image(old)
            if new is None and found.item is None:
                return None, None  # nothing to delete
            table = await recorded(session, table, new)  # its new attributes in the table's record of types
            if await store.write_if_unchanged(write_of(table, found, new), found.cells, table.families):
                return found.item, new
    raise gave_up(table.name)


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
    if needs_no_read(request):
        table = await recorded(session, request.table, new)
        if await write_unless_locked(session, table, write_of(table, Found(table.row_key(key), [], None), new)
                                     if new is not None else table.codec.delete(key)):
            return None
        # a locked row: the read-check-write below settles the lock or meets a live transaction
    return (await change_item(session, request, lambda _old: new))[0]


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

    def updated(old: WireItem | None) -> Item:
        start = old if old is not None else item_to_wire(key)
        if expression is None:
            return item_to_codec(start)
        try:
            new = item_to_codec(expressions.update(start, expression, names, values, table.key_types), "Item")
        except ServeError as error:
            if request.legacy and any(m in error.message for m in MOTO_TYPE_ERRORS):  # AttributeUpdates: DynamoDB words
                raise validation("Type mismatch for attribute to update") from None
            raise
        check_size(new)
        return new

    adds = None if request.capacity_wanted else counter_adds(request)
    if adds is not None and await write_unless_locked(session, table, adds):  # AddToCell, no read (counters.py)
        return {}
    # not only additions, or a transaction's row: the read-check-write settles its lock or meets it live
    old, new = await change_item(session, request, updated)
    written = expressions.written_paths(expression, names) if expression is not None else []
    spent = capacity.consumed(request.capacity, table.name, capacity.write(table, old, new))
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
