"""Checks DynamoDB makes on a condition or filter expression before any item is read, and
moto's parser does not (its grammar is more lenient than DynamoDB's).

Two stages around moto's parse (parsing.py): `prepared` works on the text (an empty
expression, function names, `size()` of a value, `NOT NOT`), `check_tree` on the parsed
tree (operand types of values written in the request, BETWEEN's bounds, an operand
compared with itself, attribute_type's type name). Each refusal is DynamoDB's own
ValidationException text, as DynamoDB Local 1.25.1 answers it (checked 2026-11-25), so
code matching those messages behaves the same.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from moto.core.exceptions import JsonRESTError
from moto.dynamodb import comparisons as moto

from ...spec.errors import clip
from .. import wire
from ..errors import PREFIX, ServeError, UnsupportedExpression, validation
from .conditions import ORDERED, size, typed

Names = dict[str, str]  # ExpressionAttributeNames, checked
Values = dict[str, Any]  # ExpressionAttributeValues, checked and normalised (wire form)

FUNCTIONS = {"attribute_exists", "attribute_not_exists", "attribute_type", "begins_with", "contains", "size"}
UPDATE_FUNCTIONS = {"if_not_exists", "list_append"}
KEYWORDS = {"and", "or", "not", "in", "between"}
MAX_IN_OPERANDS = 100  # DynamoDB Local 1.25.1 refuses 101 with the words below (checked 2026-11-29)
TYPES = ("N", "BS", "L", "B", "NULL", "M", "S", "SS", "NS", "BOOL")  # in DynamoDB's message order
_CALL = re.compile(r"([A-Za-z_][A-Za-z0-9_]*)\s*\(")
_SIZE_OF_VALUE = re.compile(r"\bsize\s*\(\s*(:[A-Za-z0-9_]+)\s*\)")
_NOT_NOT = re.compile(r"\bnot\s+not\b", re.IGNORECASE)
_FUNCTION_AS_NAME = re.compile(rf"(?<![#:\w])({'|'.join(sorted(FUNCTIONS))})\b(?!\s*\()")


def refused(field: str, message: str) -> ServeError:
    return validation(f"Invalid {field}: {message}")


@contextmanager
def dynamodb_errors() -> Iterator[None]:
    """moto's DynamoDB exceptions (ValidationException, ...) as serve's, same name and text.
    moto meets some bad input with Python's own errors (an undefined `:value` is a KeyError,
    an unbalanced parenthesis a ValueError): inside its calls they are the request's fault.
    Its NotImplementedError (an update action or operator it does not execute) is answered
    as serve's own unsupported constructs are (UnsupportedExpression, a ServeError that
    passes through here)."""
    try:
        yield
    except JsonRESTError as error:
        name = str(getattr(error, "error_type", "ValidationException")).removeprefix(PREFIX)
        raise ServeError(name, str(getattr(error, "message", error))) from None
    except NotImplementedError as error:
        raise UnsupportedExpression(str(error)) from None
    except RecursionError:
        raise validation("Invalid expression: it nests deeper than ddb2bigtable serve can read") from None
    except AssertionError:  # moto's validator asserts a value where a path names no attribute (list_append's 2nd)
        raise validation("The provided expression refers to an attribute that does not exist in the item") from None
    except KeyError as error:
        what = "name" if str(error.args[0]).startswith("#") else "value"
        raise validation(f"Invalid expression: An expression attribute {what} used in expression is not defined; "
                         f"attribute {what}: {error.args[0]}") from None
    except (ValueError, TypeError, AttributeError, IndexError, OverflowError) as error:
        raise validation(f"Invalid expression: {error}") from None


def checked_placeholders(names: Any, values: Any) -> tuple[Names, Values]:
    """ExpressionAttributeNames (`#n` -> name) and ExpressionAttributeValues (`:v` -> typed
    value, normalised as stored), refused in DynamoDB's words when they have another shape."""
    names, values = names or {}, values or {}
    if not isinstance(names, dict) or not all(isinstance(k, str) and isinstance(v, str) for k, v in names.items()):
        raise validation("ExpressionAttributeNames must be a map of strings to strings")
    for key, name in names.items():  # DynamoDB Local 1.25.1's words (checked 2026-11-25)
        if not name or len(name.encode()) > wire.MAX_NAME_BYTES:
            raise validation("ExpressionAttributeNames contains invalid value: " + (
                f"Attribute name is too large, must be less than {wire.MAX_NAME_BYTES + 1} bytes for key {key}"
                if name else f"Empty attribute name for key {key}"))
    if not isinstance(values, dict):
        raise validation("ExpressionAttributeValues must be a map of strings to attribute values")
    for key, value in values.items():  # DynamoDB Local 1.25.1's words (checked 2026-11-29)
        if wire.nesting(value) > wire.MAX_NESTING:
            raise validation(f"ExpressionAttributeValues contains invalid value: Nesting Levels have exceeded "
                             f"supported limits: Attributes in the item have nested levels beyond supported limit "
                             f"for key {key}")
    # checked (a ValidationException when malformed) and normalised: numbers in their plain
    # digits (`9E+125` as moto's arithmetic reads integers, the sum's overflow then named)
    return names, wire.item_to_wire({name: wire.to_codec(value, f"ExpressionAttributeValues.{name}")
                                     for name, value in values.items()})


def undefined(field: str, placeholder: str) -> ServeError:
    """DynamoDB's words for a `#name` or `:value` the request does not define."""
    if placeholder.startswith("#"):
        return refused(field, f"An expression attribute name used in the document path is not defined; "
                              f"attribute name: {placeholder}")
    return refused(field, f"An expression attribute value used in expression is not defined; "
                          f"attribute value: {placeholder}")


def prepared(field: str, text: Any, names: dict[str, str],
             values: dict[str, Any]) -> tuple[str, dict[str, str], dict[str, Any]]:
    """The expression as moto's parser can take it, with the same meaning, and the names and
    values it then uses: `NOT NOT x` is `x`, `size(:v)` of a value is that size as a value
    of its own (moto parses size() of a path only), and an attribute named like a function
    (`size >= :s`, which DynamoDB reads as a path) is a name placeholder of its own.
    Refuses what DynamoDB refuses on the text."""
    if not isinstance(text, str) or not text.strip():
        raise refused(field, "The expression can not be empty;")
    check_list_indexes(field, text)
    for found in _CALL.finditer(text):
        name = found.group(1)
        if name.lower() in KEYWORDS or name in FUNCTIONS:
            continue
        if name in UPDATE_FUNCTIONS:
            raise refused(field, f"The function is not allowed in a condition expression; function: {name}")
        raise refused(field, f"Invalid function name; function: {name}")
    if re.search(r"\bsize\s*\(\s*size\s*\(", text):
        raise refused(field, "Incorrect operand type for operator or function; operator or function: size, "
                             "operand type: N")
    while _NOT_NOT.search(text):
        text = _NOT_NOT.sub("", text, count=1)
    names, values = dict(names), dict(values)
    for function in set(_FUNCTION_AS_NAME.findall(text)):
        names[f"#{function}__path"] = function
    text = _FUNCTION_AS_NAME.sub(lambda m: f"#{m.group(1)}__path", text)
    for found in _SIZE_OF_VALUE.finditer(text):
        placeholder = found.group(1)
        if placeholder not in values:
            continue  # moto names it undefined
        measured = size(typed(values[placeholder]))
        if measured is None:
            raise refused(field, f"Incorrect operand type for operator or function; operator or function: size, "
                                 f"operand type: {next(iter(values[placeholder]))}")
        values[f"{placeholder}__size"] = {"N": str(measured[1])}
    return _SIZE_OF_VALUE.sub(lambda m: f"{m.group(1)}__size", text), names, values


MAX_LIST_INDEX = 2 ** 31 - 1  # Java's int: DynamoDB Local 1.25.1 refuses l[2147483648] (checked 2026-11-29)
_INDEX = re.compile(r"\[\s*(\d+)\s*\]")


def check_list_indexes(field: str, text: str) -> None:
    """DynamoDB's refusal of a list index past its range, in any expression (moto's
    arithmetic overflowed on REMOVE, and SET appended)."""
    for found in _INDEX.finditer(text):
        digits = found.group(1).lstrip("0")
        if len(digits) > len(str(MAX_LIST_INDEX)) or int(digits or "0") > MAX_LIST_INDEX:
            raise refused(field, f"List index is not within the allowable range; index: [{clip(found.group(1))}]")


def syntax_error(field: str, error: Exception) -> ServeError:
    """moto's parse errors in DynamoDB's words (they say where, not always what)."""
    message = str(error)
    function = re.match(r"Wrong type for argument 0 in (attribute_exists|attribute_not_exists|size)", message)
    if function:
        return refused(field, f"Operator or function requires a document path; operator or function: "
                              f"{function.group(1)}")
    arguments = re.match(r"Wrong number of arguments in (\w+) \((.*)\)", message)
    if arguments:
        return refused(field, f"Incorrect number of operands for operator or function; operator or function: "
                              f"{arguments.group(1)}, number of operands: {arguments.group(2).count(',') + 1}")
    return refused(field, f"Syntax error; {message}")


def check_tree(field: str, node: Any) -> None:
    """DynamoDB's checks of a parsed condition that need no item."""
    if isinstance(node, moto.OpNot):
        check_tree(field, node.lhs)
    elif isinstance(node, moto.OpAnd | moto.OpOr):
        check_tree(field, node.lhs)
        check_tree(field, node.rhs)
    elif isinstance(node, moto.Op) and not isinstance(node, moto.OpDefault):
        _distinct(field, node.OP, [node.lhs, node.rhs])
        if node.OP not in ("=", "<>"):
            _ordered_values(field, node.OP, [node.lhs, node.rhs])
    elif isinstance(node, moto.FuncBetween):
        _distinct(field, "BETWEEN", [node.attr, node.start, node.end])
        _ordered_values(field, "BETWEEN", [node.attr, node.start, node.end])
        _bounds(field, node.start, node.end)
    elif isinstance(node, moto.FuncIn):
        _in(field, node)
    elif isinstance(node, moto.FuncBeginsWith):
        _distinct(field, "begins_with", [node.attr, node.substr])
        for value in _values([node.attr, node.substr]):
            if value.type not in ("S", "B"):
                raise _operand_type(field, "begins_with", value.type)
    elif isinstance(node, moto.FuncContains):
        _distinct(field, "contains", [node.attr, node.operand])
    elif isinstance(node, moto.FuncAttrType):
        _attribute_type(field, node.type)


def _in(field: str, node: moto.FuncIn) -> None:
    if len(node.possible_values) > MAX_IN_OPERANDS:
        raise refused(field, f"The IN operator is provided with too many operands; number of operands: "
                             f"{len(node.possible_values)}")
    _distinct(field, "IN", [node.attr, *node.possible_values])


def _values(operands: list[Any]) -> list[moto.AttributeValue]:
    return [o for o in operands if isinstance(o, moto.AttributeValue)]


def _operand_type(field: str, operator: str, kind: str) -> ServeError:
    return refused(field, f"Incorrect operand type for operator or function; operator or function: {operator}, "
                          f"operand type: {kind}")


def _ordered_values(field: str, operator: str, operands: list[Any]) -> None:
    for value in _values(operands):
        if value.type not in ORDERED:
            raise _operand_type(field, operator, value.type)


def _distinct(field: str, operator: str, operands: list[Any]) -> None:
    first = operands[0]
    if isinstance(first, moto.AttributePath) and any(
            isinstance(o, moto.AttributePath) and o.path == first.path for o in operands[1:]):
        shown = ", ".join(str(p) for p in first.path)
        raise refused(field, f"The first operand must be distinct from the remaining operands for this operator or "
                             f"function; operator: {operator}, first operand: [{shown}]")


def _bounds(field: str, low: Any, high: Any) -> None:
    if not (isinstance(low, moto.AttributeValue) and isinstance(high, moto.AttributeValue)):
        return
    shown = f"lower bound operand: AttributeValue: {{{low.type}:{low.value}}}, upper bound operand: " \
            f"AttributeValue: {{{high.type}:{high.value}}}"
    if low.type != high.type:
        raise refused(field, f"The BETWEEN operator requires same data type for lower and upper bounds; {shown}")
    (_, lo), (_, hi) = typed({low.type: low.value}), typed({high.type: high.value})
    if lo > hi:
        raise refused(field, f"The BETWEEN operator requires upper bound to be greater than or equal to lower "
                             f"bound; {shown}")


def _attribute_type(field: str, kind: Any) -> None:
    if not isinstance(kind, moto.AttributeValue):
        return
    if kind.type != "S":
        raise _operand_type(field, "attribute_type", kind.type)
    if kind.value not in TYPES:
        raise refused(field, f"Invalid attribute type name found; type: {kind.value}, valid types: "
                             f"{{{','.join(TYPES)}}}")


def paths(node: Any) -> list[list[str | int]]:
    """Every document path a parsed condition reads (Query refuses a filter on a key)."""
    if isinstance(node, moto.AttributePath):
        return [node.path]
    children = [getattr(node, a) for a in ("lhs", "rhs", "attr", "substr", "operand", "start", "end", "type")
                if getattr(node, a, None) is not None]
    children += list(getattr(node, "possible_values", ()))
    return [p for child in children for p in paths(child)]


MAX_NESTING = 32  # DynamoDB's document path depth (a.b...: 32 levels; DynamoDB Local 1.25.1 refuses 33)


def check_paths(field: str, paths: list[list[str | int]]) -> None:
    """DynamoDB refuses document paths that overlap (one inside, or equal to, another:
    `a, a.b`) or conflict (one reads a map where another reads a list: `a.b, a[1]`) in one
    projection or update, and paths nested deeper than 32 levels."""
    for path in paths:
        if len(path) > MAX_NESTING:
            raise refused(field, f"The document path has too many nesting levels; nesting levels: {len(path)}")
    for i, one in enumerate(paths):
        for two in paths[i + 1:]:
            common = next((n for n, (x, y) in enumerate(zip(one, two, strict=False)) if x != y), None)
            if common is None:
                kind = "overlap"
            elif isinstance(one[common], int) != isinstance(two[common], int):
                kind = "conflict"
            else:
                continue
            raise refused(field, f"Two document paths {kind} with each other; must remove or rewrite one of these "
                                 f"paths; path one: {_shown(one)}, path two: {_shown(two)}")


def _shown(path: list[str | int]) -> str:
    return "[" + ", ".join(f"[{p}]" if isinstance(p, int) else p for p in path) + "]"


_TABLE_NAME = re.compile(r"[a-zA-Z0-9_.-]+")


def check_table_name(name: Any) -> None:
    """A table name DynamoDB could not hold is a ValidationException (not "not found"): 3 to
    255 of a-z, A-Z, 0-9, `_`, `-`, `.` (AWS, "Supported data types and naming rules",
    https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/HowItWorks.NamingRulesDataTypes.html,
    read 2026-11-25)."""
    if not isinstance(name, str):
        return  # the catalog names what is missing
    if not _TABLE_NAME.fullmatch(name):
        raise validation(f"1 validation error detected: Value '{clip(name)}' at 'tableName' failed to satisfy "
                         f"constraint: Member must satisfy regular expression pattern: [a-zA-Z0-9_.-]+")
    if not 3 <= len(name) <= 255:
        bound = "greater than or equal to 3" if len(name) < 3 else "less than or equal to 255"
        raise validation(f"1 validation error detected: Value '{clip(name)}' at 'tableName' failed to satisfy "
                         f"constraint: Member must have length {bound}")
