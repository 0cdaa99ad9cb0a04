"""A write of an item the worker wrote last is one CheckAndMutateRow on a table with a stream
(items/known_rows.py): the worker presumes the row holds what its write left, decides the
record on it (MODIFY and its OldImage, or none when nothing changes) and guards the write on
it. When another writer changed the row in between (here serve's own process, another
worker of the same table), the guard fails, nothing is written, and the write reads the row:
the record still carries the right OldImage. In this process over serve's stage (the
driver's steps counted, test_first_writes._steps), records read back with boto3."""

from __future__ import annotations

from typing import Any

from .test_first_writes import TABLE, _key, _put, _records, _steps

ONE_WRITE = ["WriteIfUnchanged"]


def _update(pk: str, v: str, **more: Any) -> tuple[str, dict[str, Any]]:
    return "UpdateItem", {"TableName": TABLE, "Key": _key(pk), "UpdateExpression": "SET v = :v",
                          "ExpressionAttributeValues": {":v": {"S": v}}, **more}


def _events(streamed, arn: str, pk: str) -> list[tuple[str, Any, Any]]:
    return [(r["eventName"], r.get("OldImage", {}).get("v"), r.get("NewImage", {}).get("v"))
            for r in _records(streamed, arn, pk)]


def test_writes_of_an_item_the_worker_wrote_last_are_one_call_each(streamed, arn, monkeypatch) -> None:
    steps = _steps(streamed, monkeypatch, [
        _put("known-1", "a"), _put("known-1", "b"), _update("known-1", "c"), _put("known-1", "c"),
        ("DeleteItem", {"TableName": TABLE, "Key": _key("known-1")}), _put("known-1", "d")], remembering=True)
    # before: each write after the first read the row first (or tried it empty, then read)
    assert steps == [ONE_WRITE] * 6
    assert _events(streamed, arn, "known-1") == [
        ("INSERT", None, {"S": "a"}), ("MODIFY", {"S": "a"}, {"S": "b"}), ("MODIFY", {"S": "b"}, {"S": "c"}),
        ("REMOVE", {"S": "c"}, None), ("INSERT", None, {"S": "d"})]  # the identical put: no record


def test_a_row_another_worker_changed_is_read_and_the_record_has_its_old_image(streamed, arn, monkeypatch) -> None:
    db = streamed.client("dynamodb")

    def elsewhere(n: int) -> None:  # serve's own process writes the item between this worker's writes
        if n == 1:
            db.put_item(TableName=TABLE, Item=_key("known-2") | {"v": {"S": "theirs"}})
        if n == 2:
            db.update_item(TableName=TABLE, Key=_key("known-2"), UpdateExpression="SET w = :w",
                           ExpressionAttributeValues={":w": {"S": "also theirs"}})

    first = _put("known-2", "a")
    first[1]["Item"]["w"] = {"S": "mine"}  # (w's type recorded here first: a new type would take a read of its own)
    steps = _steps(streamed, monkeypatch, [first, _put("known-2", "b"), _update("known-2", "c")],
                   remembering=True, before=elsewhere)
    assert steps[0] == ONE_WRITE
    assert steps[1:] == [["WriteIfUnchanged", "Read", "WriteIfUnchanged"]] * 2  # refused, read at once, written
    found = _records(streamed, arn, "known-2")
    assert [(r["eventName"], r.get("OldImage"), r["NewImage"]) for r in found] == [
        ("INSERT", None, _key("known-2") | {"v": {"S": "a"}, "w": {"S": "mine"}}),
        ("MODIFY", _key("known-2") | {"v": {"S": "a"}, "w": {"S": "mine"}}, _key("known-2") | {"v": {"S": "theirs"}}),
        ("MODIFY", _key("known-2") | {"v": {"S": "theirs"}}, _key("known-2") | {"v": {"S": "b"}}),
        ("MODIFY", _key("known-2") | {"v": {"S": "b"}}, _key("known-2") | {"v": {"S": "b"}, "w": {"S": "also theirs"}}),
        ("MODIFY", _key("known-2") | {"v": {"S": "b"}, "w": {"S": "also theirs"}},
         _key("known-2") | {"v": {"S": "c"}, "w": {"S": "also theirs"}})]
    assert db.get_item(TableName=TABLE, Key=_key("known-2"))["Item"] == _key("known-2") | {
        "v": {"S": "c"}, "w": {"S": "also theirs"}}


def test_a_condition_is_decided_on_the_row_as_it_is(streamed, arn, monkeypatch) -> None:
    """A conditional put presumed to fail on what the worker wrote reads the row first: the
    other worker's change makes it hold."""
    db = streamed.client("dynamodb")

    def elsewhere(n: int) -> None:
        if n == 1:
            db.put_item(TableName=TABLE, Item=_key("known-3") | {"v": {"S": "ready"}})

    steps = _steps(streamed, monkeypatch, [_put("known-3", "a"), _put(
        "known-3", "b", ConditionExpression="v = :r", ExpressionAttributeValues={":r": {"S": "ready"}})],
                   remembering=True, before=elsewhere)
    assert steps == [ONE_WRITE, ["Read", "WriteIfUnchanged"]]
    assert _events(streamed, arn, "known-3") == [
        ("INSERT", None, {"S": "a"}), ("MODIFY", {"S": "a"}, {"S": "ready"}), ("MODIFY", {"S": "ready"}, {"S": "b"})]
