"""Requests as the operations take them: typed, checked, made once from the JSON body.

`protocol/` reads each operation's JSON body into one of these (protocol/item_requests.py,
protocol/query_requests.py) after the table is resolved and before any other room sees
the request, in the order DynamoDB checks its parameters, so an error names the same
parameter DynamoDB's would.
The operations then read fields, never the body: the table is looked up once, the key
and the item are in the codec's form, legacy parameters are already expressions, and a
ConditionExpression is already a test of one item. They live in the kernel because the
rooms that answer them (items/, queries/) never import protocol/.
Where DynamoDB names a problem of the body only after it has looked for the table
(CreateTable, UpdateTable), the request carries the problem, raised by the operation then.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from ..codec.items import AttributeValue, Item
from ..spec.model import Gsi
from .catalog import ServedTable
from .errors import ServeError
from .wire import WireItem

Path = list[str | int]  # a document path: `a.b[2]` is ['a', 'b', 2]
Condition = Callable[[WireItem | None], bool]  # a ConditionExpression on the item as it is (None: no item)


@dataclass(frozen=True)
class ItemRequest:
    """What every request on one item names: its table, the item's key (checked against the
    table's key schema) and ReturnConsumedCapacity (NONE, TOTAL or INDEXES)."""

    table: ServedTable
    key: Item
    capacity: str

    @property
    def capacity_wanted(self) -> bool:
        return self.capacity != "NONE"


@dataclass(frozen=True)
class GetItem(ItemRequest):
    projection: list[Path] | None  # None: the whole item
    consistent: bool


@dataclass(frozen=True)
class WriteRequest(ItemRequest):
    """A write of one item: its condition (None: unconditional), ReturnValues and whether a
    failed condition returns the item as it was (ReturnValuesOnConditionCheckFailure)."""

    condition: Condition | None
    returns: str
    old_on_failure: bool


@dataclass(frozen=True)
class PutItem(WriteRequest):
    item: Item  # the whole new item, key included, its size checked


@dataclass(frozen=True)
class DeleteItem(WriteRequest):
    pass


@dataclass(frozen=True)
class UpdateItem(WriteRequest):
    """The UpdateExpression stays text with its placeholders: it is applied to the item as
    read (an `if_not_exists` operand depends on it), by expressions.parsing.update."""

    expression: str | None  # None: the item is only created if missing (its key alone)
    names: dict[str, str] | None
    values: dict[str, Any] | None
    legacy: bool  # from AttributeUpdates: a type mismatch is said in its words


@dataclass(frozen=True)
class Reading:
    """What a Query or Scan page needs, on the table or one of its indexes."""

    table: ServedTable
    index: Gsi | None  # the index read (a local one as the GSI of the table's partition key); None: the table
    limit: int | None
    start: Item | None  # ExclusiveStartKey, checked
    filter: Condition | None
    projection: list[Path] | None  # None: every attribute (of the index's projection)
    select: str | None  # Select as given, checked (None: not given)
    consistent: bool
    capacity: str


@dataclass(frozen=True)
class Query(Reading):
    partition: AttributeValue  # the key condition's partition value
    sort: tuple[str, list[AttributeValue]] | None  # the sort key's operator and bounds
    reverse: bool  # ScanIndexForward false


@dataclass(frozen=True)
class Scan(Reading):
    segment: int
    total: int  # TotalSegments; 0: not a parallel scan


@dataclass(frozen=True)
class TableKeys:
    """BatchGetItem's keys of one table, checked and distinct. `sent` is the table's
    request with its legacy parameters in expression form, returned as it is in
    UnprocessedKeys when Bigtable throttles the read (the SDK sends it again)."""

    table: ServedTable
    keys: list[Item]
    projection: list[Path] | None
    consistent: bool
    sent: dict[str, Any]


@dataclass(frozen=True)
class BatchGetItem:
    tables: list[TableKeys]  # in the body's order
    capacity: str


@dataclass(frozen=True)
class BatchWrite:
    """One PutRequest or DeleteRequest of BatchWriteItem; `sent` is it as sent, returned in
    UnprocessedItems when Bigtable throttles it."""

    table: ServedTable
    key: Item
    item: Item | None  # the new item, its size and index keys checked; None: a delete
    sent: dict[str, Any]


@dataclass(frozen=True)
class BatchWriteItem:
    writes: list[BatchWrite]  # in the body's order, every table's keys distinct
    capacity: str


@dataclass(frozen=True)
class TransactGet:
    table: ServedTable
    key: Item
    projection: list[Path] | None  # None: the whole item


@dataclass(frozen=True)
class TransactGetItems:
    gets: list[TransactGet]  # 1 to 100, distinct items, in the body's order
    capacity: str


@dataclass(frozen=True)
class TransactAction:
    """One action of TransactWriteItems on one item: `kind` is ConditionCheck, Put, Delete
    or Update. An Update's expression stays text, applied to the item as read (as UpdateItem's)."""

    kind: str
    table: ServedTable
    key: Item
    condition: Condition | None
    old_on_failure: bool  # ReturnValuesOnConditionCheckFailure ALL_OLD
    item: Item | None = None  # a Put's new item, its size checked
    expression: str | None = None  # an Update's UpdateExpression (None: the item only created if missing)
    names: dict[str, str] | None = None
    values: dict[str, Any] | None = None
    # a key that does not fit its table (its type or size, DynamoDB Local 1.25.1's words): the key is as
    # sent, no row is read for it, and the decision gives this as the action's ValidationError reason
    refused: str | None = None


@dataclass(frozen=True)
class TransactWriteItems:
    """`fingerprint` is what a retry under the same ClientRequestToken must repeat: a hash
    of the body without the options a retry may change."""

    actions: list[TransactAction]  # 1 to 100, distinct items, 4 MB of items at most
    token: str | None  # ClientRequestToken
    fingerprint: str
    capacity: str


@dataclass(frozen=True)
class TableNamed:
    """A table operation's TableName, a string (checked against DynamoDB's pattern where
    DynamoDB checks it). The operation looks the table up itself, after reading the
    registry of created tables, which may have changed in another worker just now."""

    name: str


@dataclass(frozen=True)
class DescribeTable(TableNamed):
    pass


@dataclass(frozen=True)
class DeleteTable(TableNamed):
    pass


@dataclass(frozen=True)
class CreateTable:
    """CreateTable's table as DynamoDB would accept it (tables/table_requests.checked_request),
    or the first thing DynamoDB finds wrong with it. Neither is said before the operation
    has looked the name up: a table of the stage's specs is ResourceInUse, and a cloud stage
    refuses CreateTable, whatever the definition holds."""

    name: str | None  # TableName, if a string
    definition: dict[str, Any] | ServeError  # as the registry keeps it (JSON), or its first problem
    stream: str | None  # the StreamViewType of the stream StreamSpecification enables (docs/streams.md)


@dataclass(frozen=True)
class IndexUpdate:
    """One of UpdateTable's GlobalSecondaryIndexUpdates: Create (`index`: the new index as
    sent, checked with the whole new definition; `keys`: its KeySchema's attribute names),
    Update (`index` holds its new ProvisionedThroughput) or Delete."""

    kind: str  # Create, Update or Delete
    name: str
    index: dict[str, Any]
    keys: tuple[Any, ...]


@dataclass(frozen=True)
class TableChanges:
    """What an UpdateTable asks of the table's definition (tables/table_updates.py), its
    shape checked; the values themselves are checked with the new definition."""

    billing: str | None  # BillingMode given (null: PROVISIONED, CreateTable's default); None: kept
    throughput: Any  # ProvisionedThroughput as sent
    sets_throughput: bool  # the body has ProvisionedThroughput (null: the table's is dropped)
    indexes: tuple[IndexUpdate, ...]
    types: dict[Any, Any]  # AttributeDefinitions, name -> type: where a created index's keys are defined
    stream: tuple[bool, str | None] | None = None  # StreamSpecification: enable (with its view type) or disable


@dataclass(frozen=True)
class UpdateTable:
    """UpdateTable's changes, or the first thing DynamoDB finds wrong in the body alone:
    said only once the table is found, a created one (tables/admin_ops.py), as DynamoDB
    answers ResourceNotFound before any of it."""

    name: str | None  # TableName, if a string and not empty
    changes: TableChanges | ServeError


@dataclass(frozen=True)
class DescribeTimeToLive(TableNamed):
    pass


@dataclass(frozen=True)
class UpdateTimeToLive(TableNamed):
    attribute: str
    enabled: bool


@dataclass(frozen=True)
class ListTables:
    limit: int  # 1 to 100
    after: str | None  # ExclusiveStartTableName
