"""Terraform expressions (python-hcl2's Lark trees) evaluated as `terraform plan` would, or left unknown.

Values are Python's: str, int/float, bool, None, list (tuples, lists, sets), dict (objects,
maps). What the files cannot give (a variable nobody set, a data source, an attribute AWS
computes at apply) is an `Unresolved` carrying why and what to pass; it flows through
operators, templates and functions as Terraform's unknown values do, so it reaches the
reader as one estimate, never as expression text. What Terraform itself would refuse (a
missing map key, a wrong type) is an `EvalError`: `try()` and `can()` catch it, as in
Terraform; elsewhere `tf_module` makes it an unknown naming the file and line where
`terraform plan` would stop, so one bad expression costs one estimate, not the import.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping
from typing import Any

from lark import Token, Tree

from ..cloudformation.intrinsics import Unresolved
from . import functions as tf_functions
from .functions import EvalError
from .syntax import tokens, trees
from .values import Lazy, Scope, is_unknown, plain

_ESCAPES = {"n": "\n", "t": "\t", "r": "\r", '"': '"', "\\": "\\"}
_ESCAPE = re.compile(r'\\(u[0-9a-fA-F]{4}|U[0-9a-fA-F]{8}|.)')
_HEREDOC = re.compile(r"^<<-?([A-Za-z][\w.-]*)\r?\n(.*?)\r?\n?[ \t]*\1\r?\n?$", re.DOTALL)
_ARITHMETIC: dict[str, Callable[[Any, Any], Any]] = {
    "+": lambda a, b: a + b, "-": lambda a, b: a - b, "*": lambda a, b: a * b,
    "/": lambda a, b: a / b, "%": lambda a, b: a % b,
    "<": lambda a, b: a < b, ">": lambda a, b: a > b, "<=": lambda a, b: a <= b, ">=": lambda a, b: a >= b}


def evaluate(node: Tree, scope: Scope) -> Any:
    """The value of one expression tree."""
    kind = node.data
    if kind == "expr_term":
        return evaluate(trees(node)[0], scope)
    handler = _HANDLERS.get(str(kind))
    if handler is None:
        raise EvalError(f"{kind} expressions are not supported by this importer")
    scope.budget.spend()
    return scope.budget.check(handler(node, scope))


def _literal(node: Tree, _: Scope) -> Any:
    return {"true": True, "false": False, "null": None}[str(tokens(node)[0])]


def _number(node: Tree, _: Scope) -> Any:
    text = str(tokens(node)[0])
    return int(text) if node.data == "int_lit" else float(text)


def _unescape(text: str) -> str:
    def one(m: re.Match[str]) -> str:
        code = m.group(1)
        return chr(int(code[1:], 16)) if code[0] in "uU" and len(code) > 1 else _ESCAPES.get(code, "\\" + code)
    return _ESCAPE.sub(one, text)


def _string(node: Tree, scope: Scope) -> Any:
    parts: list[Any] = []
    for part in node.children:
        if isinstance(part, Token):
            continue
        inner = part.children[0]
        if isinstance(inner, Token):
            text = str(inner)
            parts.append(text[1:] if inner.type in ("ESCAPED_INTERPOLATION", "ESCAPED_DIRECTIVE") else _unescape(text))
        elif inner.data == "interpolation":
            parts.append(evaluate(trees(inner)[0], scope))
        else:
            return Unresolved("a template directive (%{if}/%{for}) is not evaluated by this importer: write the "
                              "value out, or import `terraform show -json`", "unresolved-template")
    if len(parts) == 1 and not isinstance(parts[0], str):  # "${x}" is x, with its type
        return parts[0]
    return template(parts)


def template(parts: list[Any]) -> Any:
    """String parts joined as Terraform's templates do; the first unknown part makes it unknown."""
    out = []
    for part in parts:
        if is_unknown(part):
            return part
        out.append(tf_functions.to_text(part, "a template"))
    return "".join(out)


def _heredoc(node: Tree, _: Scope) -> Any:
    text = str(tokens(node)[0])
    found = _HEREDOC.match(text)
    body = found.group(2) if found else text
    if "${" in body or "%{" in body:
        return Unresolved("a heredoc with interpolations is not evaluated by this importer", "unresolved-heredoc")
    if text.startswith("<<-"):
        lines = body.split("\n")
        indent = min((len(x) - len(x.lstrip()) for x in lines if x.strip()), default=0)
        body = "\n".join(x[indent:] for x in lines)
    return body + "\n"


def _tuple(node: Tree, scope: Scope) -> Any:
    return [evaluate(c, scope) for c in trees(node)]


def _object(node: Tree, scope: Scope) -> Any:
    out: dict[str, Any] = {}
    for elem in trees(node):
        key_node, value_node = trees(elem)
        key_expr = trees(key_node)[0] if trees(key_node) else key_node
        bare = key_expr.data == "expr_term" and trees(key_expr)[0].data == "identifier" \
            and not tokens(key_expr)  # `{ name = ... }`: the name itself, not a variable
        key = str(trees(key_expr)[0].children[0]) if bare else (
            str(key_expr.children[0]) if key_expr.data == "keyword" else evaluate(key_expr, scope))
        if is_unknown(key):
            return key
        out[tf_functions.to_text(key, "an object key")] = evaluate(value_node, scope)
    return out


def _identifier(node: Tree, scope: Scope) -> Any:
    return scope.root(str(node.children[0]))


def _get(container: Any, key: Any) -> Any:
    """`container[key]` or `container.key`, as Terraform indexes."""
    if is_unknown(container):
        return container
    if is_unknown(key):
        return key
    if isinstance(container, Mapping):
        name = tf_functions.to_text(key, "a map key")
        if name not in container:
            if isinstance(container, Lazy) and container.missing is not None:
                return container.missing(name)
            raise EvalError(f"no element {name!r} in this map (it has {', '.join(list(container)[:10]) or 'none'})")
        return container[name]
    if isinstance(container, list):
        index = tf_functions.to_number(key, "a list index")
        if not isinstance(index, int) and not float(index).is_integer() or not 0 <= int(index) < len(container):
            raise EvalError(f"index {key!r} is out of range for a list of {len(container)}")
        return container[int(index)]
    if container is None:
        raise EvalError("cannot index a null value")
    raise EvalError(f"cannot index {tf_functions.type_name(container)}")


def _index(node: Tree, scope: Scope) -> Any:
    base, index = trees(node)
    return _step(evaluate(base, scope), index, scope)


def _step(value: Any, step: Tree, scope: Scope) -> Any:
    if step.data == "get_attr":
        return _get(value, str(trees(step)[0].children[0]))
    if step.data == "short_index":
        return _get(value, int(str(tokens(step)[-1])))
    return _get(value, evaluate(trees(step)[0], scope))


def _attr(node: Tree, scope: Scope) -> Any:
    base, attr = trees(node)
    return _step(evaluate(base, scope), attr, scope)


def _splat(node: Tree, scope: Scope) -> Any:
    base, splat = trees(node)
    value = evaluate(base, scope)
    if is_unknown(value):
        return value
    items = [] if value is None else value if isinstance(value, list) else [value]
    out = []
    for item in items:
        for step in trees(splat):
            item = _step(item, step, scope)
        out.append(item)
    return out


def _function(node: Tree, scope: Scope) -> Any:
    parts = trees(node)
    if any(t.type == "COLONS" for t in tokens(node)):
        return Unresolved("a provider-defined function is not evaluated by this importer", "unresolved-function")
    name = str(parts[0].children[0])
    args_node = parts[-1] if len(parts) > 1 and parts[-1].data == "arguments" else None
    arg_nodes = trees(args_node) if args_node is not None else []
    if name in ("try", "can"):
        return _try(name, arg_nodes, scope)
    args = [evaluate(a, scope) for a in arg_nodes]
    if args_node is not None and any(t.type == "ELLIPSIS" for t in tokens(args_node)):
        last = args.pop() if args else []
        if is_unknown(last):
            return last
        args += list(last) if isinstance(last, list) else []
    if name in ("file", "fileexists") and scope.read is not None and len(args) == 1 and isinstance(args[0], str):
        return scope.read(name, args[0])
    return tf_functions.call(name, args)


def _try(name: str, arg_nodes: list[Tree], scope: Scope) -> Any:
    for node in arg_nodes:
        try:
            value = evaluate(node, scope)
        except EvalError:
            continue
        if name == "can":
            return value if is_unknown(value) else True
        return value
    if name == "can":
        return False
    raise EvalError("no argument of try() could be evaluated")


def _conditional(node: Tree, scope: Scope) -> Any:
    condition, then, otherwise = trees(node)
    test = evaluate(condition, scope)
    if is_unknown(test):
        return test
    return evaluate(then if tf_functions.to_bool(test, "a condition") else otherwise, scope)


def _binary(node: Tree, scope: Scope) -> Any:
    left_node, term = trees(node)
    operator = str(tokens(trees(term)[0])[0]).strip()
    left = evaluate(left_node, scope)
    if operator in ("&&", "||") and not is_unknown(left):
        if tf_functions.to_bool(left, operator) == (operator == "||"):
            return operator == "||"
    right = evaluate(trees(term)[-1], scope)
    for side in (left, right):
        if is_unknown(side):
            return side
    if operator in ("&&", "||"):
        return tf_functions.to_bool(right, operator)
    if operator in ("==", "!="):
        return (plain(left) == plain(right)) == (operator == "==")
    a, b = tf_functions.to_number(left, operator), tf_functions.to_number(right, operator)
    if operator in ("/", "%") and b == 0:
        raise EvalError("division by zero")
    result = _ARITHMETIC[operator](a, b)
    return int(result) if isinstance(result, float) and result.is_integer() and operator != "/" else result


def _unary(node: Tree, scope: Scope) -> Any:
    operator = str(tokens(node)[0])
    value = evaluate(trees(node)[0], scope)
    if is_unknown(value):
        return value
    return not tf_functions.to_bool(value, "!") if operator == "!" else -tf_functions.to_number(value, "-")


def _for(node: Tree, scope: Scope) -> Any:
    intro, *rest = trees(node)
    names = [str(i.children[0]) for i in trees(intro)[:-1]]
    collection = evaluate(trees(intro)[-1], scope)
    if is_unknown(collection):
        return collection
    condition = rest[-1] if rest and rest[-1].data == "for_cond" else None
    bodies = [r for r in rest if r is not condition]
    if not isinstance(collection, (Mapping, list)):
        raise EvalError(f"a for expression needs a list or a map, got {tf_functions.type_name(collection)}")
    pairs = list(collection.items()) if isinstance(collection, Mapping) else list(enumerate(collection))
    grouping = any(t.type == "ELLIPSIS" for t in tokens(node))
    out_list: list[Any] = []
    out_map: dict[str, Any] = {}
    for key, value in pairs:
        inner = scope.child(dict(zip(names, (key, value), strict=True)) if len(names) == 2 else {names[0]: value})
        if condition is not None:
            keep = evaluate(trees(condition)[-1], inner)
            if is_unknown(keep):
                return keep
            if not tf_functions.to_bool(keep, "a for condition"):
                continue
        if node.data == "for_tuple_expr":
            out_list.append(evaluate(bodies[0], inner))
            continue
        name = evaluate(bodies[0], inner)
        if is_unknown(name):
            return name
        name = tf_functions.to_text(name, "a for key")
        item = evaluate(bodies[1], inner)
        if grouping:
            out_map.setdefault(name, []).append(item)
        elif name in out_map:
            raise EvalError(f"two elements with the key {name!r}: add `...` to group them, or make the key unique")
        else:
            out_map[name] = item
    return out_list if node.data == "for_tuple_expr" else out_map


def _template_string(node: Tree, _: Scope) -> Any:
    return json.loads(str(tokens(node)[0]).replace('\\\\"', '"'))


_HANDLERS: dict[str, Callable[[Tree, Scope], Any]] = {
    "literal_value": _literal, "int_lit": _number, "float_lit": _number, "string": _string,
    "heredoc_template": _heredoc, "heredoc_template_trim": _heredoc, "tuple": _tuple, "object": _object,
    "identifier": _identifier, "index_expr_term": _index, "get_attr_expr_term": _attr,
    "attr_splat_expr_term": _splat, "full_splat_expr_term": _splat, "function_call": _function,
    "conditional": _conditional, "binary_op": _binary, "unary_op": _unary, "for_tuple_expr": _for,
    "for_object_expr": _for, "template_string": _template_string,
}
