"""The common UpdateExpressions applied without moto (expressions/direct_updates.py) answer as
moto's validator and executor do: the same item, attributes in the same order, or the same
refusal, on generated items and expressions (the direct path's constructs, and some it leaves
to moto, mixed in)."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ddb2bigtable.serve.errors import ServeError
from ddb2bigtable.serve.expressions import direct_updates
from ddb2bigtable.serve.expressions import parsing as expressions

KEY_TYPES = {"pk": "S"}
ATTRIBUTES = ("a", "b", "n", "s", "size")  # `size` is a reserved word: moto refuses it written plainly
NAMES = {"#a": "a", "#n": "n", "#s": "s", "#m": "m"}
NUMBERS = st.builds(lambda n: {"N": n}, st.sampled_from(["0", "1", "-2", "2.5", "1E+3", "9" * 38]))
VALUES = st.one_of(
    NUMBERS, NUMBERS, NUMBERS,
    st.builds(lambda s: {"S": s}, st.sampled_from(["", "x", "héllo"])),
    st.builds(lambda m: {"SS": m}, st.lists(st.sampled_from(["x", "y", "z"]), min_size=1, max_size=3, unique=True)),
    st.builds(lambda m: {"NS": m}, st.lists(st.sampled_from(["1", "2", "3.5"]), min_size=1, max_size=3, unique=True)),
    st.builds(lambda m: {"BS": m}, st.lists(st.sampled_from(["AQI=", "Aw=="]), min_size=1, max_size=2, unique=True)),
    st.just({"L": [{"N": "1"}, {"S": "x"}]}), st.just({"M": {"k": {"N": "1"}}}), st.just({"BOOL": True}),
    st.just({"NULL": True}), st.just({"B": "AQI="}),
)
PLACEHOLDERS = (":v", ":w", ":x")
COMMON = st.sampled_from(["a", "b", "n", "s", "#a", "#n", "#s"])
PATHS = st.one_of(COMMON, COMMON, COMMON, st.sampled_from(["size", "#m", "#undefined"]))
SIMPLE = st.one_of(st.sampled_from(PLACEHOLDERS), st.sampled_from(PLACEHOLDERS), st.just(":undefined"), PATHS,
                   st.builds(lambda p, v: f"if_not_exists({p}, {v})", PATHS, st.sampled_from([*PLACEHOLDERS, "b"])))
OPERAND = st.one_of(SIMPLE, st.builds(lambda x, op, y: f"{x} {op} {y}", SIMPLE, st.sampled_from("+-"), SIMPLE),
                    st.builds(lambda p, v: f"list_append({p}, {v})", PATHS, st.sampled_from(PLACEHOLDERS)))
TARGETS = st.one_of(PATHS, PATHS, PATHS, st.sampled_from(["m.k", "l[0]"]))  # the last two: moto's alone


@st.composite
def expressions_of(draw: st.DrawFn) -> str:
    clauses = []
    kinds = st.sampled_from(["SET", "REMOVE", "ADD", "DELETE"])
    for kind in draw(st.lists(kinds, min_size=1, max_size=3, unique=draw(st.booleans()))):
        targets = draw(st.lists(TARGETS, min_size=1, max_size=2, unique=draw(st.booleans())))
        if kind == "SET":
            actions = [f"{t} = {draw(OPERAND)}" for t in targets]
        elif kind == "REMOVE":
            actions = targets
        else:
            actions = [f"{t} {draw(st.sampled_from(PLACEHOLDERS))}" for t in targets]
        clauses.append(f"{kind} {', '.join(actions)}")
    return " ".join(clauses)


def outcome(item: dict, expression: str, values: dict) -> tuple[str, object]:
    try:
        new = expressions.update(item, expression, NAMES, values, KEY_TYPES)
    except ServeError as error:
        return "refused", (error.name, error.message)
    return "item", (new, list(new))


def moto_outcome(item: dict, expression: str, values: dict, monkeypatch: pytest.MonkeyPatch) -> tuple[str, object]:
    with monkeypatch.context() as patched:
        patched.setattr(direct_updates, "cached_plan", lambda _pickled: None)
        return outcome(item, expression, values)


@settings(max_examples=800)
@given(st.dictionaries(st.sampled_from([*ATTRIBUTES, "m", "l"]), VALUES, max_size=5),
       expressions_of(), st.dictionaries(st.sampled_from(PLACEHOLDERS), VALUES, min_size=1))
def test_direct_updates_answer_as_moto(item, expression, values):
    item = {"pk": {"S": "k"}, **item}
    with pytest.MonkeyPatch.context() as monkeypatch:
        assert outcome(item, expression, values) == moto_outcome(item, expression, values, monkeypatch)


# the direct path's own ground: attributes of a few types, distinct targets, one clause a kind
SMALL = st.one_of(NUMBERS, st.builds(lambda m: {"SS": m}, st.lists(st.sampled_from("xyz"), min_size=1, max_size=3,
                                                                   unique=True)), st.just({"S": "x"}))
HAPPY_SIMPLE = st.one_of(st.sampled_from(PLACEHOLDERS), st.sampled_from(["a", "#n", "c"]),
                         st.builds(lambda p, v: f"if_not_exists({p}, {v})", st.sampled_from(["a", "#n", "c"]),
                                   st.sampled_from([*PLACEHOLDERS, "b"])))


@st.composite
def happy_expressions(draw: st.DrawFn) -> str:
    clauses: dict[str, list[str]] = {}
    for target in draw(st.lists(st.sampled_from(["a", "b", "#n", "#s", "c"]), min_size=1, max_size=4, unique=True)):
        kind = draw(st.sampled_from(["SET", "SET", "REMOVE", "ADD", "DELETE"]))
        operand = draw(st.one_of(HAPPY_SIMPLE, st.builds(lambda x, op, y: f"{x} {op} {y}", HAPPY_SIMPLE,
                                                         st.sampled_from("+-"), HAPPY_SIMPLE)))
        clauses.setdefault(kind, []).append(
            target if kind == "REMOVE" else f"{target} = {operand}" if kind == "SET"
            else f"{target} {draw(st.sampled_from(PLACEHOLDERS))}")
    return " ".join(f"{kind} {', '.join(actions)}" for kind, actions in clauses.items())


@settings(max_examples=600)
@given(st.dictionaries(st.sampled_from(["a", "b", "n", "s"]), SMALL), happy_expressions(),
       st.fixed_dictionaries({p: SMALL for p in PLACEHOLDERS}))
def test_direct_updates_answer_as_moto_on_their_ground(item, expression, values):
    item = {"pk": {"S": "k"}, **item}
    with pytest.MonkeyPatch.context() as monkeypatch:
        assert outcome(item, expression, values) == moto_outcome(item, expression, values, monkeypatch)


ITEM = {"pk": {"S": "k"}, "n": {"N": "2"}, "s": {"SS": ["x"]}}


@pytest.mark.parametrize(("expression", "expected"), [
    ("SET plays = :v", {**ITEM, "plays": {"N": "5"}}),
    ("SET n = n + :v", {**ITEM, "n": {"N": "7"}}),
    ("SET c = if_not_exists(c, :w) - :v", {**ITEM, "c": {"N": "-5"}}),
    ("ADD n :v, t :ss", {**ITEM, "n": {"N": "7"}, "t": {"SS": ["y", "x"]}}),
    ("ADD s :ss", {**ITEM, "s": {"SS": ["x", "y"]}}),
    ("DELETE s :ss", {"pk": {"S": "k"}, "n": {"N": "2"}}),
    ("REMOVE s, nothing", {"pk": {"S": "k"}, "n": {"N": "2"}}),
])
def test_common_updates_go_direct(expression, expected, monkeypatch):
    """The usual shapes take the direct path (no moto validator is made), with moto's answer."""
    values = {":v": {"N": "5"}, ":w": {"N": "0"}, ":ss": {"SS": ["y", "x"]}}
    assert moto_outcome(ITEM, expression, values, monkeypatch) == ("item", (expected, list(expected)))
    monkeypatch.setattr(expressions, "_Validator", lambda *a, **k: pytest.fail("moto's validator was made"))
    assert outcome(ITEM, expression, values) == ("item", (expected, list(expected)))


def _sets_sorted(item: dict) -> dict:
    return {name: {tag: sorted(v) if tag.endswith("S") and isinstance(v, list) else v for tag, v in value.items()}
            for name, value in item.items()}


@pytest.mark.parametrize("expression", [
    "SET b = a ADD a :v",  # the direct path
    "ADD a :v SET b = a",
    "SET b = a DELETE a :w",
    "SET b = a, l[0] = :x ADD a :v",  # a list element: moto's path
    "SET b = a, l[0] = :x DELETE a :w",
])
def test_every_operand_is_read_from_the_item_before_the_update_as_dynamodb_local_reads_it(dynamodb_oracle,
                                                                                       expression):
    """DynamoDB evaluates every action's operands on the item as it was: after `SET b = a ADD
    a :v`, b holds a's old set. moto's executor, reading operands from the item it changes,
    gave b the grown set (b and a one object); DynamoDB Local 1.25.1 says b = {x}."""
    item = {"pk": {"S": "k"}, "a": {"SS": ["x"]}, "l": {"L": [{"N": "1"}]}}
    values = {":v": {"SS": ["x", "y"]}, ":w": {"SS": ["x"]}, ":x": {"N": "2"}}
    used = {name: value for name, value in values.items() if name in expression}
    client = dynamodb_oracle.client()
    if "Operands" not in client.list_tables()["TableNames"]:
        client.create_table(TableName="Operands", KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"}],
                            AttributeDefinitions=[{"AttributeName": "pk", "AttributeType": "S"}],
                            BillingMode="PAY_PER_REQUEST")
    client.put_item(TableName="Operands", Item=item)
    theirs = client.update_item(TableName="Operands", Key={"pk": {"S": "k"}}, UpdateExpression=expression,
                                ExpressionAttributeValues=used, ReturnValues="ALL_NEW")["Attributes"]
    kind, (ours, _) = outcome(item, expression, used)
    assert kind == "item" and _sets_sorted(ours) == _sets_sorted(theirs)
