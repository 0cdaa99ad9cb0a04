"""DynamoDB's legacy (non-expression) parameters, translated into their expression form.

`AttributesToGet`, `KeyConditions`, `QueryFilter`, `ScanFilter`, `Expected` (with
`ConditionalOperator`) and `AttributeUpdates` predate expressions and are still accepted
by DynamoDB (AWS, "Legacy conditional parameters", https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/LegacyConditionalParameters.html,
read 2026-11-25); code written before 2014 and many test suites still send them. Each is
rewritten here into ProjectionExpression, KeyConditionExpression, FilterExpression,
ConditionExpression or UpdateExpression with placeholders of its own (`#l0`, `:l0`, others
where the request uses those), so one path evaluates both forms. A request mixing the two
forms is refused, as DynamoDB does, except `KeyConditions`, which DynamoDB takes with a
FilterExpression or ProjectionExpression (DynamoDB Local 1.25.1, checked 2026-11-25).
`prepared` is that translation with the checks every single-table request starts with,
the first step of reading a request (protocol/item_requests.py, protocol/query_requests.py).
"""

from __future__ import annotations

from typing import Any

from .. import capacity
from ..errors import ServeError, validation
from .parsing import check_used
from .validation import check_table_name

_ONE = {"EQ": "{a} = {v}", "NE": "{a} <> {v}", "LE": "{a} <= {v}", "LT": "{a} < {v}", "GE": "{a} >= {v}",
        "GT": "{a} > {v}", "CONTAINS": "contains({a}, {v})", "BEGINS_WITH": "begins_with({a}, {v})",
        # on a missing attribute NOT_CONTAINS is false, as CONTAINS is (DynamoDB Local 1.25.1; NE is true there)
        "NOT_CONTAINS": "attribute_exists({a}) AND NOT contains({a}, {v})"}
_NONE = {"NOT_NULL": "attribute_exists({a})", "NULL": "attribute_not_exists({a})"}
# the value types each operator takes (EQ and NE take any; DynamoDB Local 1.25.1, checked 2026-11-25)
_SCALAR = {**{op: ("S", "N", "B") for op in ("LT", "LE", "GT", "GE", "BETWEEN", "IN", "CONTAINS", "NOT_CONTAINS")},
           "BEGINS_WITH": ("S", "B")}
# legacy parameter -> the expression it becomes
_TARGETS = {"AttributesToGet": "ProjectionExpression", "KeyConditions": "KeyConditionExpression",
            "QueryFilter": "FilterExpression", "ScanFilter": "FilterExpression", "Expected": "ConditionExpression",
            "AttributeUpdates": "UpdateExpression"}
_EXPRESSIONS = ("ProjectionExpression", "KeyConditionExpression", "FilterExpression", "ConditionExpression",
                "UpdateExpression", "ExpressionAttributeNames", "ExpressionAttributeValues")


class _Placeholders:
    def __init__(self, names: Any, values: Any) -> None:
        """Starts from the request's own ExpressionAttributeNames and Values (KeyConditions
        may come with expressions), so a new placeholder never takes one of theirs."""
        self.names: dict[str, str] = dict(names) if isinstance(names, dict) else {}
        self.values: dict[str, Any] = dict(values) if isinstance(values, dict) else {}

    def name(self, attribute: str) -> str:
        found = next((k for k, v in self.names.items() if v == attribute), None)
        if found is None:
            found = _fresh("#l", self.names)
            self.names[found] = attribute
        return found

    def value(self, value: Any) -> str:
        key = _fresh(":l", self.values)
        self.values[key] = value
        return key


def translated(body: dict[str, Any]) -> dict[str, Any]:
    """The request with its legacy parameters in expression form (unchanged without any)."""
    legacy = [k for k in _TARGETS if k in body]
    if "ConditionalOperator" in body and not any(body.get(k) for k in ("Expected", "QueryFilter", "ScanFilter")):
        raise validation("ConditionalOperator can only be used when Expected, QueryFilter or ScanFilter is given "
                         "(and not empty)")
    if not legacy:
        return body
    modern = [k for k in _EXPRESSIONS if k in body]
    mixed = [k for k in legacy if k != "KeyConditions" or "KeyConditionExpression" in body]
    if modern and mixed:
        raise validation(f"Can not use both expression and non-expression parameters in the same request: "
                         f"Non-expression parameters: {{{', '.join(mixed)}}} Expression parameters: "
                         f"{{{', '.join(modern)}}}")
    out = {k: v for k, v in body.items() if k not in _TARGETS and k != "ConditionalOperator"}
    marks = _Placeholders(body.get("ExpressionAttributeNames"), body.get("ExpressionAttributeValues"))
    joiner = f" {body.get('ConditionalOperator', 'AND')} "
    if joiner.strip() not in ("AND", "OR"):
        raise validation(f"ConditionalOperator must be AND or OR, not {body.get('ConditionalOperator')!r}")
    for parameter in legacy:
        if body[parameter] == {} and parameter != "KeyConditions":
            continue  # an empty map updates nothing, or is no condition, as in DynamoDB
        out[_TARGETS[parameter]] = _expression(parameter, body[parameter], joiner, marks)
    if marks.names:
        out["ExpressionAttributeNames"] = marks.names
    if marks.values:
        out["ExpressionAttributeValues"] = marks.values
    return out


def _expression(parameter: str, given: Any, joiner: str, marks: _Placeholders) -> str:
    """One legacy parameter in its expression form."""
    if parameter == "AttributesToGet":
        return ", ".join(marks.name(a) for a in _names(given, parameter))
    if parameter == "AttributeUpdates":
        return _updates(_map(given, parameter), marks)
    if parameter == "Expected":
        return joiner.join(f"({_expected(a, c, marks)})" for a, c in _map(given, parameter).items())
    # KeyConditions (always AND, no parentheses: a key condition's grammar), QueryFilter, ScanFilter
    parts = [_condition(a, c, marks) for a, c in _map(given, parameter).items()]
    return " AND ".join(parts) if parameter == "KeyConditions" else joiner.join(f"({p})" for p in parts)


_ADDABLE = ("N", "SS", "NS", "BS")
_TYPE_NAMES = {"S": "STRING", "B": "BINARY", "BOOL": "BOOLEAN", "NULL": "NULL", "L": "LIST", "M": "MAP"}


def _kind(value: Any) -> Any:
    return next(iter(value), None) if isinstance(value, dict) else None


def _fresh(prefix: str, taken: dict[str, Any]) -> str:
    return next(f"{prefix}{n}" for n in range(len(taken) + 1) if f"{prefix}{n}" not in taken)


def _map(given: Any, parameter: str) -> dict[str, Any]:
    if not isinstance(given, dict) or not given:
        raise validation(f"{parameter} must be a non-empty map of attribute names")
    return given


def _names(given: Any, parameter: str) -> list[str]:
    if not isinstance(given, list) or not given or not all(isinstance(a, str) for a in given):
        raise validation(f"{parameter} must be a non-empty list of attribute names")
    if len(set(given)) != len(given):
        raise validation(f"One or more parameter values were invalid: Duplicate value in attribute name: {given}")
    return given


def _condition(attribute: str, condition: Any, marks: _Placeholders) -> str:
    if not isinstance(condition, dict):
        raise validation(f"the condition on {attribute} must be a map with ComparisonOperator")
    op = condition.get("ComparisonOperator")
    values = condition.get("AttributeValueList") or []
    if not isinstance(values, list):  # counted below: it was a 500
        raise ServeError("SerializationException", "AttributeValueList must be a list")
    a = marks.name(attribute)
    expected = 0 if op in _NONE else 2 if op == "BETWEEN" else None if op == "IN" else 1
    if op not in (*_ONE, *_NONE, "BETWEEN", "IN"):
        raise validation(f"1 validation error detected: Value '{op}' at 'comparisonOperator' failed to satisfy "
                         f"constraint")
    if (expected is not None and len(values) != expected) or (op == "IN" and not values):
        raise validation(f"One or more parameter values were invalid: Invalid number of argument(s) for the "
                         f"{op} ComparisonOperator")
    if op in _NONE:
        return _NONE[op].format(a=a)
    for value in values:
        kind = next(iter(value), None) if isinstance(value, dict) else None
        if kind is not None and op in _SCALAR and kind not in _SCALAR[op]:
            raise validation(f"One or more parameter values were invalid: ComparisonOperator {op} is not valid for "
                             f"{kind} AttributeValue type")
    if len({next(iter(v), None) if isinstance(v, dict) else None for v in values}) > 1:
        raise validation("One or more parameter values were invalid: AttributeValues inside AttributeValueList must "
                         "be of same type")
    marked = [marks.value(v) for v in values]
    if op == "BETWEEN":
        return f"{a} BETWEEN {marked[0]} AND {marked[1]}"
    if op == "IN":
        return f"{a} IN ({', '.join(marked)})"
    return _ONE[op].format(a=a, v=marked[0])


def _expected(attribute: str, condition: Any, marks: _Placeholders) -> str:
    if isinstance(condition, dict) and "ComparisonOperator" in condition:
        for clash, other in (("Exists", "ComparisonOperator"), ("Value", "AttributeValueList")):
            if clash in condition:
                raise validation(f"One or more parameter values were invalid: {clash} and {other} cannot be used "
                                 f"together for Attribute: {attribute}")
        return _condition(attribute, condition, marks)
    if not isinstance(condition, dict):
        raise validation(f"Expected.{attribute} must be a map")
    exists = condition.get("Exists", True)
    if "Value" in condition:
        if exists is False:
            raise validation("One or more parameter values were invalid: Value cannot be used when Exists is false")
        return f"{marks.name(attribute)} = {marks.value(condition['Value'])}"
    if exists is not False:
        raise validation("One or more parameter values were invalid: Value must be provided when Exists is true")
    return f"attribute_not_exists({marks.name(attribute)})"


def _updates(updates: dict[str, Any], marks: _Placeholders) -> str:
    clauses: dict[str, list[str]] = {"SET": [], "REMOVE": [], "ADD": [], "DELETE": []}
    for attribute, update in updates.items():
        if not isinstance(update, dict):
            raise validation(f"AttributeUpdates.{attribute} must be a map with Action and Value")
        action, a = update.get("Action", "PUT"), marks.name(attribute)
        if action == "PUT" and "Value" in update:
            clauses["SET"].append(f"{a} = {marks.value(update['Value'])}")
        elif action == "DELETE" and "Value" not in update:
            clauses["REMOVE"].append(a)
        elif action == "ADD" and _kind(update.get("Value")) == "L":  # legacy ADD appends to a list
            clauses["SET"].append(f"{a} = list_append(if_not_exists({a}, {marks.value({'L': []})}), "
                                  f"{marks.value(update['Value'])})")
        elif action == "ADD" and "Value" in update and _kind(update["Value"]) not in _ADDABLE:
            raise validation(f"One or more parameter values were invalid: ADD action is not supported for the type "
                             f"{_TYPE_NAMES.get(_kind(update['Value']), _kind(update['Value']))}")
        elif action in ("ADD", "DELETE") and "Value" in update:
            clauses[action].append(f"{a} {marks.value(update['Value'])}")
        else:
            raise validation(f"One or more parameter values were invalid: Action {action} on {attribute} needs "
                             f"{'a' if action != 'DELETE' else 'no or a set'} Value")
    return " ".join(f"{kind} {', '.join(parts)}" for kind, parts in clauses.items() if parts)


def prepared(body: dict[str, Any]) -> dict[str, Any]:
    """The checks every single-table request starts with: a table name DynamoDB allows, its
    legacy parameters in expression form (below), and no expression attribute name or
    value that its expressions leave unused."""
    check_table_name(body.get("TableName"))
    capacity.check_mode(body)
    failure = body.get("ReturnValuesOnConditionCheckFailure", "NONE")
    if failure not in ("NONE", "ALL_OLD"):
        raise validation(f"1 validation error detected: Value '{failure}' at 'returnValuesOnConditionCheckFailure' "
                         f"failed to satisfy constraint: Member must satisfy enum value set: [ALL_OLD, NONE]")
    body = translated(body)
    check_used(body)
    return body
