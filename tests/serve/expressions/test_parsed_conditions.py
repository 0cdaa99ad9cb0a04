"""Conditions parsed once per text, each request's values bound into the kept tree
(expressions/parsed_conditions.py): the tree is moto's own for those values, and every
request answers with its own values."""

from __future__ import annotations

import pytest
from moto.dynamodb import comparisons as moto

from ddb2bigtable.serve.errors import ServeError
from ddb2bigtable.serve.expressions import parsed_conditions
from ddb2bigtable.serve.expressions import parsing as expressions

KEYS = ("pk",)
CONDITIONS = [
    ("attribute_exists(title)", None, {}),
    ("version = :v", None, {":v": {"N": "3"}}),
    ("#s BETWEEN :lo AND :hi AND NOT contains(tags, :t)", {"#s": "score"},
     {":lo": {"N": "1"}, ":hi": {"N": "9"}, ":t": {"S": "x"}}),
    ("a IN (:x, :y, :z) OR size(b) > :n", None,
     {":x": {"S": "p"}, ":y": {"N": "2"}, ":z": {"B": "AQI="}, ":n": {"N": "1"}}),
    ("attribute_type(m, :t) AND begins_with(s, :p) AND size(:p) = :one", None,
     {":t": {"S": "M"}, ":p": {"S": "ab"}, ":one": {"N": "2"}}),
    ("m.k[1] <> :v AND (x < :v OR y >= :v)", None, {":v": {"L": [{"N": "1"}, {"M": {"q": {"NULL": True}}}]}}),
]


def shape(node):
    """A tree as comparable data: class and fields, values as written."""
    if isinstance(node, moto.AttributeValue):
        return "value", node.type, node.value
    if isinstance(node, list | tuple):
        return [shape(n) for n in node]
    if isinstance(node, moto.Op | moto.Func | moto.AttributePath):
        return type(node).__name__, {k: shape(v) for k, v in sorted(vars(node).items())}
    return node


def parsed(text, names, values):
    try:
        return shape(expressions.parsed_condition("ConditionExpression", text, names, values))
    except ServeError as error:
        return error.message


@pytest.mark.parametrize(("text", "names", "values"), CONDITIONS)
def test_a_bound_tree_is_motos_own(text, names, values, monkeypatch):
    """The kept tree with each request's values is the tree moto makes from them (or the same
    refusal)."""
    parsed_conditions._trees.clear()
    requests = (values, {k: {"S": f"other {k}"} for k in values}, {k: {"N": "7"} for k in values}, values)
    bound = [parsed(text, names, request_values) for request_values in requests]
    assert len(parsed_conditions._trees) == 1
    monkeypatch.setattr(parsed_conditions, "parsed", lambda field, t, n, v, parse: parse(field, t, n, v))
    assert bound == [parsed(text, names, request_values) for request_values in requests]


def test_each_request_is_answered_with_its_own_values(monkeypatch):
    """`version = :v` parsed once, answered with each request's :v (fails before: parsed on every request)."""
    parsed_conditions._trees.clear()
    parses = []
    real = expressions.get_filter_expression
    monkeypatch.setattr(expressions, "get_filter_expression", lambda *a: parses.append(a[0]) or real(*a))
    item = {"pk": {"S": "k"}, "version": {"N": "2"}}
    answers = [expressions.condition("version = :v", None, {":v": {"N": str(n)}}, KEYS)(item) for n in (1, 2, 3, 2)]
    assert answers == [False, True, False, True]
    assert parses == ["version = :v"]


def test_a_bad_text_is_refused_in_its_own_words_every_time():
    for _ in range(2):
        with pytest.raises(ServeError, match="An expression attribute value used in expression is not defined; "
                                             "attribute value: :w"):
            expressions.condition("a = :w", None, {":v": {"N": "1"}}, KEYS)
        with pytest.raises(ServeError, match="Incorrect operand type for operator or function; operator or "
                                             "function: BETWEEN"):
            expressions.condition("a BETWEEN :lo AND :hi", None, {":lo": {"BOOL": True}, ":hi": {"N": "2"}}, KEYS)
