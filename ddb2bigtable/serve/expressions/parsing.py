"""DynamoDB expressions (condition, filter, update, key condition, projection) through moto.

moto's DynamoDB expression parser and evaluator (Apache-2.0; `moto.dynamodb.parsing` and
`moto.dynamodb.comparisons`, pinned with moto in pyproject.toml) is what thousands of test
suites run their DynamoDB code against, so its grammar, functions, reserved words and
error messages follow DynamoDB's closely; writing a parser here would repeat that work
with fewer users. It evaluates items in wire form (binary as base64 text, as DynamoDB JSON
has it), which is why the operations keep items in wire form around this module and
convert to the codec's form only at Bigtable (wire.py). moto is used as a library only:
no mock is started, nothing is patched. This module is the one place that calls its
parser; conditions.py (evaluation with DynamoDB's types), validation.py and
validation_keys.py (what DynamoDB refuses and moto accepts) read the tree it returns, so a
later parser can replace it behind the same functions (docs/serve.md, "Choices"). What needs
no parse lives beside it: the placeholders' checks and moto's errors in DynamoDB's words
(validation.py), a ProjectionExpression's paths (projections.py).
"""

from __future__ import annotations

import decimal
import functools
import pickle
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import orjson
from moto.dynamodb.comparisons import get_filter_expression
from moto.dynamodb.exceptions import InvalidConditionExpression
from moto.dynamodb.models.dynamo_type import DynamoType
from moto.dynamodb.models.dynamo_type import Item as MotoItem
from moto.dynamodb.parsing.executors import UpdateExpressionExecutor
from moto.dynamodb.parsing.expressions import UpdateExpressionParser  # type: ignore[attr-defined]
from moto.dynamodb.parsing.validators import UpdateExpressionValidator

from ..errors import validation as invalid
from ..wire import WireItem
from . import (
    conditions,
    direct_updates,
    list_updates,
    nested_functions,
    parsed_conditions,
    validation,
    validation_keys,
    validation_updates,
)
from .projections import Path, follow, projection
from .validation import Names, Values, checked_placeholders, dynamodb_errors, undefined
from .validation_keys import KeyCondition

EXPRESSIONS = ("ConditionExpression", "UpdateExpression", "KeyConditionExpression", "FilterExpression",
               "ProjectionExpression")
# "Maximum length of any expression string: 4 KB" (AWS, "Quotas in Amazon DynamoDB",
# Expression parameters, https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/ServiceQuotas.html,
# read 2026-11-25); it also keeps moto's recursive parser far from Python's recursion limit.
MAX_EXPRESSION_BYTES = 4 * 1024
# "The maximum number of operators or functions allowed in any expression is 300" (same
# page; AWS, "Count expression operators in DynamoDB with an AWS SDK",
# https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/example_dynamodb_Scenario_ExpressionOperatorCounting_section.html,
# read 2026-11-25, counts them). DynamoDB counts the operators alone (comparisons, AND, OR, NOT, BETWEEN, IN, + and
# -): 1,355 nested function calls under 4 KB are refused for their name, not their count
# (the Alternator suite's test_limits.py, run against DynamoDB). Parentheses nested past
# MAX_OPERATORS levels (redundant ones, or calls no expression needs) are refused too,
# before moto's recursive parser meets Python's recursion limit.
MAX_OPERATORS = 300
_OPERATOR = re.compile(r"<>|<=|>=|[=<>+-]|(?<![\w#:])(?:AND|OR|NOT|BETWEEN|IN)(?!\w)", re.IGNORECASE)
_NAME, _VALUE = re.compile(r"#[A-Za-z0-9_]+"), re.compile(r":[A-Za-z0-9_]+")


def _check_operators(field: str, text: str) -> None:
    count = len(_OPERATOR.findall(text))
    if count > MAX_OPERATORS:
        raise invalid(f"Invalid {field}: The expression contains too many operators; operator count: {count}")
    if text.count("(") <= MAX_OPERATORS:  # no deeper than that: the walk below is one step a character
        return
    depth = deepest = 0
    for char in text:
        depth += 1 if char == "(" else -1 if char == ")" else 0
        deepest = max(deepest, depth)
    if deepest > MAX_OPERATORS:
        raise invalid(f"Invalid {field}: The expression nests parentheses {deepest} levels deep; ddb2bigtable serve "
                      f"reads at most {MAX_OPERATORS}, as many as DynamoDB's operators in one expression")


def check_limits(request: dict[str, Any]) -> None:
    """DynamoDB refuses an expression over 4 KB or 300 operators (and moto's recursive parser
    is not handed one)."""
    for field in EXPRESSIONS:
        text = request.get(field)
        if isinstance(text, str) and len(text.encode()) > MAX_EXPRESSION_BYTES:
            raise invalid(f"Invalid {field}: Expression size has exceeded the maximum allowed size; "
                             f"expression size: {len(text.encode())}")
        if isinstance(text, str):
            _check_operators(field, text)


def check_used(request: dict[str, Any]) -> None:
    """The expressions' limits (check_limits); ExpressionAttributeNames or Values a request's
    expressions never use (a typo in a placeholder would otherwise pass silently), and either
    without an expression."""
    check_limits(request)
    texts = [t for t in (request.get(f) for f in EXPRESSIONS) if isinstance(t, str)]
    for field, pattern in (("ExpressionAttributeNames", _NAME), ("ExpressionAttributeValues", _VALUE)):
        given = request.get(field)
        if not given or not isinstance(given, dict):
            continue
        if not texts:
            raise invalid(f"{field} can only be specified when using expressions")
        used = {m for t in texts for m in pattern.findall(t)}
        unused = sorted(set(given) - used)
        if unused:
            for parsed in ("ConditionExpression", "FilterExpression"):  # DynamoDB names a syntax error first
                if isinstance(request.get(parsed), str):
                    parsed_condition(parsed, request[parsed], request.get("ExpressionAttributeNames"),
                                     request.get("ExpressionAttributeValues"))
            raise invalid(f"Value provided in {field} unused in expressions: keys: {{{', '.join(unused)}}}")


def _moto_item(item: WireItem, keys: tuple[str, ...]) -> MotoItem:
    """The item as moto's executor changes it in place: a copy (a wire item is plain JSON, and
    orjson copies it several times faster than copy.deepcopy)."""
    range_key = DynamoType(item[keys[1]]) if len(keys) > 1 else None
    return MotoItem(DynamoType(item[keys[0]]), range_key, orjson.loads(orjson.dumps(item)))


@functools.lru_cache(maxsize=1024)
def _pickled_update(text: str) -> bytes:
    return pickle.dumps(UpdateExpressionParser.make(text))


def _update_tree(text: str) -> Any:
    """moto's tree of an UpdateExpression's text, parsed once per text: an application sends
    the same few texts (the values are placeholders), and moto's parser took about 135 us a
    time, three times per UpdateItem. A fresh copy each time (unpickled, about 30 us), for
    moto's validator, which rewrites the tree it is given. A text that does not parse raises
    each time (lru_cache keeps only answers)."""
    return pickle.loads(_pickled_update(text))


@functools.lru_cache(maxsize=1024)
def _read_tree(text: str) -> Any:
    """The same tree, shared, for what only reads it (serve's checks, the written paths)."""
    return _update_tree(text)


class _Validator(UpdateExpressionValidator):
    """moto's validator without its deep copy of the tree (as long as its checks): it gets a fresh one."""

    def __init__(self, tree: Any, **arguments: Any):
        super().__init__(None, **arguments)
        self.node_to_validate = tree  # what moto's __init__ would have deep-copied


def condition(expression: str | None, names: Names | None, values: Values | None, keys: tuple[str, ...],
              field: str = "ConditionExpression", *, checked: bool = False) -> Callable[[WireItem | None], bool]:
    """A ConditionExpression or FilterExpression (`field`) as a test of one item (None: no
    item): parsed by moto, checked (validation.py) and evaluated (conditions.py) as DynamoDB does.
    `checked`: the names and values are checked_placeholders' already (an UpdateItem's, once for both)."""
    if expression is None:
        return lambda item: True
    tree = parsed_condition(field, expression, names, values, checked=checked)
    return lambda item: conditions.holds(tree, item)


def parsed_condition(field: str, expression: Any, names: Any, values: Any, *, checked: bool = False) -> Any:
    """moto's tree of a condition, refused in DynamoDB's words where DynamoDB refuses it."""
    if not checked:
        names, values = checked_placeholders(names, values)
    text, names, values = validation.prepared(field, expression, names, values)
    tree = parsed_conditions.parsed(field, text, names, values, _parsed_text)
    validation.check_tree(field, tree)
    return tree


def _parsed_text(field: str, text: str, names: Names, values: Values) -> Any:
    with dynamodb_errors():
        try:
            return get_filter_expression(text, names, values)
        except ValueError as error:
            raise validation.syntax_error(field, error) from None
        except InvalidConditionExpression as error:  # moto names every field ConditionExpression
            raise validation.refused(field, error.condition_expression_error) from None
        except KeyError as error:
            raise undefined(field, str(error.args[0])) from None


def written_paths(expression: str, names: Names | None) -> list[Path]:
    """The document paths an UpdateExpression's actions write (for ReturnValues UPDATED_*)."""
    text, _ = nested_functions.folded(expression, lambda _operand: {"NULL": True})  # values do not matter here
    with dynamodb_errors():
        return validation_updates.targets(_read_tree(text), names or {})


def parsed_update(expression: Any, names: Any, values: Any) -> None:
    """An UpdateExpression read without its item, as DynamoDB reads a transaction's before any
    table: its grammar, then its `#names`, then its `:values` defined (nested `if_not_exists`
    included); what depends on the item is left to `update`."""
    names, values = checked_placeholders(names, values)
    validation_updates.check_text(expression)
    with dynamodb_errors():
        _read_tree(nested_functions.folded(expression, lambda _operand: {"NULL": True})[0])
    for pattern, given in ((_NAME, names), (_VALUE, values)):
        missing = next((m for m in pattern.findall(expression) if m not in given), None)
        if missing is not None:
            raise undefined(validation_updates.FIELD, missing)


def _resolver(item: WireItem, names: Names, values: Values) -> nested_functions.Resolve:
    """An operand of a nested if_not_exists as its wire value in the item (None: missing)."""
    def resolve(operand: str) -> Any:
        if operand.startswith(":"):
            return values.get(operand)
        paths = projection(operand, names)
        return follow({"M": item}, paths[0]) if paths else None
    return resolve


@dataclass(frozen=True)
class _KeyTable:
    """What moto's update validator asks of a table: its key attributes and their types."""

    table_key_attrs: list[str]
    attr: list[dict[str, str]]

    @property
    def attribute_keys(self) -> list[str]:
        return self.table_key_attrs


def update(item: WireItem, expression: str, names: Names | None, values: Values | None,
           key_types: dict[str, str], *, checked: bool = False) -> WireItem:
    """The item after an UpdateExpression (SET, REMOVE, ADD, DELETE), in wire form.
    `item` holds at least the key attributes (a new item is just its key); `checked` as for
    `condition`."""
    keys = tuple(key_types)
    if not checked:
        names, values = checked_placeholders(names, values)
    names, values = names or {}, values or {}
    # no key attributes for moto's validator, which refuses a key read as well as written:
    # validation_updates checks the written paths
    table = _KeyTable([], [{"AttributeName": k, "AttributeType": t} for k, t in key_types.items()])
    validation_updates.check_text(expression)
    expression, nested = nested_functions.folded(expression, _resolver(item, names, values))
    values = {**values, **nested}
    with dynamodb_errors(), decimal.localcontext(direct_updates.EXACT):  # exact sums (direct_updates.EXACT)
        tree = _read_tree(expression)
        validation_updates.check_tree(tree, names, values, keys)
        validation_updates.check_targets(tree, names, item)
        planned = direct_updates.cached_plan(_pickled_update(expression))  # the common actions without moto's
        if planned is not None and (direct := direct_updates.apply(planned, item, names, values)) is not None:
            return direct
        target = _moto_item(item, keys)
        for text in list_updates.passes(expression):  # list elements updated against the original list
            # operands from the item as it was, as DynamoDB reads them (not one object for b and a)
            validated = _Validator(_update_tree(text), expression_attribute_names=names,
                                   expression_attribute_values=values, item=_moto_item(item, keys),
                                   table=table).validate()
            validated.normalize()
            UpdateExpressionExecutor(validated, target, names).execute()
        return dict(target.to_json()["Attributes"])


def key_condition(expression: str, names: Names | None, values: Values | None,
                  keys: tuple[str, ...]) -> KeyCondition:
    """A Query's KeyConditionExpression: equality on the partition key, at most one
    comparison on the sort key (validation_keys.py). Query parses it once per shape
    (parsed_keys.py)."""
    return validation_keys.key_condition(parsed_condition(validation_keys.FIELD, expression, names, values), keys)
