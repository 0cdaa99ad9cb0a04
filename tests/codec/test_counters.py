"""Counters in aggregate (int64 Sum) families (#35): how the codec writes them.

A counter kept in a family of its own is set by deleting its cell and adding the value in
one row mutation (a rerun or a replayed record converges), at one fixed time (0; the
item's expiry in a TTL family), so an application's AddToCell reaches the same cell.
"""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ddb2bigtable.codec.app_writes import counter_add
from ddb2bigtable.codec.cell_values import COUNTER_TIME_MICROS, counter_write
from ddb2bigtable.codec.codec import Codec, CodecError
from ddb2bigtable.codec.mutations import AddToCell, Cell, DeleteCells, DeleteRow, RowMutation, SetCell
from ddb2bigtable.spec.families import counter_families
from ddb2bigtable.spec.model import AttributeMapping, FamilyMapping, MappingRule

from .test_codec import NOW, WRITE, table

INT64 = st.integers(-(2**63), 2**63 - 1)
STATS = (FamilyMapping("stats"),)


def counter_table(**kw):
    return table(attributes=[AttributeMapping("hits", "counter", family="stats"), AttributeMapping("name", "S")],
                 families=STATS, **kw)


def decoded(codec: Codec, written: RowMutation) -> list[dict]:
    """What a read returns after `written` landed on an empty row (an addition from a deleted
    cell leaves the amount itself)."""
    cells = [Cell(m.family, m.qualifier, m.value, m.timestamp_micros) for m in written.mutations
             if isinstance(m, SetCell | AddToCell)]
    return codec.decode(written.key, cells)


@given(INT64)
def test_a_counter_in_its_own_family_is_deleted_then_added_at_time_zero(n):
    codec = Codec(counter_table(), {})
    item = {"pk": {"S": "p"}, "sk": {"S": "s"}, "hits": {"N": str(n)}, "name": {"S": "x"}}
    written = codec.encode(item, write_time_micros=WRITE, now_micros=NOW)
    assert isinstance(written, RowMutation)
    assert written.mutations == (DeleteCells("stats", b"hits"), AddToCell("stats", b"hits", n, COUNTER_TIME_MICROS),
                                 SetCell("cf", b"name", b"x", WRITE // 1000 * 1000))
    assert decoded(codec, written) == [item]
    assert codec.expected(item, now_micros=NOW) == item


def test_replace_deletes_the_row_once_and_the_counter_still_carries_its_own_delete():
    codec = Codec(counter_table(), {})
    item = {"pk": {"S": "p"}, "sk": {"S": "s"}, "hits": {"N": "7"}}
    written = codec.encode(item, write_time_micros=WRITE, now_micros=NOW, replace=True)
    assert isinstance(written, RowMutation)
    assert written.mutations == (DeleteRow(), DeleteCells("stats", b"hits"), AddToCell("stats", b"hits", 7, 0))


def test_in_a_ttl_table_the_counter_cell_carries_the_items_expiry_like_every_ttl_cell():
    codec = Codec(counter_table(ttl="expires"), {})
    item = {"pk": {"S": "p"}, "sk": {"S": "s"}, "hits": {"N": "4"}, "expires": {"N": "1800000000"}}
    written = codec.encode(item, write_time_micros=WRITE, now_micros=NOW)
    assert isinstance(written, RowMutation)
    (add,) = [m for m in written.mutations if isinstance(m, AddToCell)]
    assert add.timestamp_micros == 1_800_000_000_000_000
    assert decoded(codec, written) == [item]


def test_a_counter_outside_a_counter_family_stays_an_8_byte_cell():
    """Where no family is a counter family (a spec validate refuses, or an attribute-plan rule's
    own family), the counter is the int64 cell Bigtable's Increment reads, as before."""
    codec = Codec(table(attributes=[AttributeMapping("hits", "counter")]), {})
    written = codec.encode({"pk": {"S": "p"}, "sk": {"S": "s"}, "hits": {"N": "9"}}, write_time_micros=WRITE,
                           now_micros=NOW)
    assert isinstance(written, RowMutation)
    assert written.mutations == (SetCell("cf", b"hits", (9).to_bytes(8, "big"), WRITE // 1000 * 1000),)


VIDEO = table(attributes=[AttributeMapping("Count", "counter")], families=STATS, rules=[
    MappingRule("likes", row_key="{pk}", family="stats", qualifier="Likes", value="Count"),
    MappingRule("video", row_key="{pk}", family="cf", qualifier="Title", value="Title")])


def test_counter_add_is_one_addition_to_the_cell_the_load_sets():
    codec = Codec(VIDEO, {})
    keys = {"pk": {"S": "0123"}, "sk": {"S": "likes"}}
    loaded = codec.encode({**keys, "Count": {"N": "3"}}, write_time_micros=WRITE, now_micros=NOW)
    added = counter_add(codec, keys, "Count", 5, now_micros=NOW + 10**9)
    assert isinstance(loaded, RowMutation)
    assert added == RowMutation(loaded.key, (AddToCell("stats", b"Likes", 5, 0),))
    assert loaded.mutations[-1] == AddToCell("stats", b"Likes", 3, 0)  # the same column and time


@pytest.mark.parametrize(("keys", "name"), [
    ({"pk": {"S": "0123"}, "sk": {"S": "video"}}, "Count"),  # that item's rule stores Title
    ({"pk": {"S": "0123"}, "sk": {"S": "likes"}}, "Title"),  # not a counter
])
def test_counter_add_refuses_what_is_not_a_counter_in_a_counter_family(keys, name):
    with pytest.raises(CodecError, match="not a counter kept in a counter family"):
        counter_add(Codec(VIDEO, {}), keys, name, 1, now_micros=NOW)


def test_counter_write_sets_or_adds_and_keeps_to_int64():
    assert counter_write("s", b"q", 3, 0, replace=True) == (DeleteCells("s", b"q"), AddToCell("s", b"q", 3, 0))
    assert counter_write("s", b"q", -2, 0, replace=False) == (AddToCell("s", b"q", -2, 0),)
    with pytest.raises(CodecError, match="int64"):
        counter_write("s", b"q", 2**63, 0, replace=False)


def test_counter_families_are_the_counters_own_families_and_their_rules_families():
    assert counter_families(counter_table()) == {"stats": "attributes[0]"}
    assert counter_families(VIDEO) == {"stats": "rules[0]"}
    assert counter_families(table(attributes=[AttributeMapping("hits", "counter")])) == {}
