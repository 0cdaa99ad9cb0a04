"""Query's KeyConditionExpression parsed once per shape, not on every request.

Parsing (moto's lexer and parser, then DynamoDB's checks) was a tenth of a Query's CPU
(docs/serve.md, Measured), while an application sends few distinct key conditions with
ever new values. So each worker keeps, for up to KEY_CONDITIONS shapes (least recently
used dropped first), what the parse found: which placeholder is the partition key's
value, and the sort key's operator and which placeholders are its bounds. A shape is the
expression's text, ExpressionAttributeNames, each ExpressionAttributeValues placeholder
with its type, and the table's (or the queried index's) key attributes: every check that reads no value gives the
same answer for one shape. The values are every request's own: checked and normalised as
on every request (validation.checked_placeholders), put where the parse said, and checked again where
a check reads them (BETWEEN's bounds in order). The first request of a shape goes through
the whole parse with its values; a shape where two placeholders held equal values is not
kept, since which one went where is not known.
"""

from __future__ import annotations

from collections import OrderedDict
from typing import Any

from moto.dynamodb import comparisons as moto

from . import parsing as expressions
from . import validation, validation_keys
from .validation_keys import KeyCondition

KEY_CONDITIONS = 512  # shapes kept per worker
Parse = tuple[tuple[str, str], tuple[str, str, tuple[str, ...]] | None]  # ((pk, placeholder), (sk, op, placeholders))
_parses: OrderedDict[tuple[Any, ...], Parse] = OrderedDict()


def key_condition(expression: str, names: Any, values: Any, keys: tuple[str, ...],
                  index: str | None = None) -> KeyCondition:
    """expressions.key_condition's answer, from the shape's parse when there is one; its
    values are checked on every request (validation_keys.no_empty_values). `keys`: the
    table's, or with `index` (its name) the index's."""
    return validation_keys.no_empty_values(_key_condition(expression, names, values, keys), index)


def _key_condition(expression: str, names: Any, values: Any, keys: tuple[str, ...]) -> KeyCondition:
    given_names, given = validation.checked_placeholders(names, values)
    shape = (expression, tuple(sorted(given_names.items())),
             tuple(sorted((name, next(iter(v))) for name, v in given.items())), keys)
    parse = _parses.get(shape)
    if parse is None:
        found = expressions.key_condition(expression, names, values, keys)
        parse = _placeholders(found, given)
        if parse is not None:
            _parses[shape] = parse
            while len(_parses) > KEY_CONDITIONS:
                _parses.popitem(last=False)
        return found
    _parses.move_to_end(shape)
    (partition, value), sort = parse
    if sort is None:
        return KeyCondition((partition, given[value]), None)
    bounds = [given[b] for b in sort[2]]
    if sort[1] == "BETWEEN":
        validation.check_tree(validation_keys.FIELD, moto.FuncBetween(
            moto.AttributePath([sort[0]]), moto.AttributeValue(bounds[0]), moto.AttributeValue(bounds[1])))
    return KeyCondition((partition, given[value]), (sort[0], sort[1], bounds))


def _placeholders(found: KeyCondition, given: dict[str, Any]) -> Parse | None:
    """The key condition with each value replaced by the placeholder that held it; None
    when a value was held by two placeholders alike."""
    def placeholder(value: Any) -> str | None:
        holders = [name for name, v in given.items() if v == value]
        return holders[0] if len(holders) == 1 else None

    partition = placeholder(found.partition[1])
    if partition is None:
        return None
    if found.sort is None:
        return (found.partition[0], partition), None
    bounds = [placeholder(v) for v in found.sort[2]]
    if any(b is None for b in bounds):
        return None
    return (found.partition[0], partition), (found.sort[0], found.sort[1], tuple(str(b) for b in bounds))
