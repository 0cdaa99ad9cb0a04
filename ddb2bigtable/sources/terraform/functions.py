"""Terraform's built-in functions that table definitions use, and its type conversions.

Written from Terraform's function reference (https://developer.hashicorp.com/terraform/
language/functions, read 2026-11-25). Each function gets evaluated arguments; an unknown
argument makes the result unknown, as in Terraform. Functions that read the disk or the
clock (`file`, `templatefile`, `timestamp`, `uuid`) are unknown on purpose: an import reads
the configuration, not what lies beside it. An unlisted function is unknown with its name.
"""

from __future__ import annotations

import base64
import hashlib
import json
import math
import re
from collections.abc import Callable, Mapping
from typing import Any

from ...spec.errors import EXIT_BAD_INPUT, Ddb2BigtableError
from ..cloudformation.intrinsics import Unresolved


class EvalError(Ddb2BigtableError):
    """What `terraform plan` would refuse too (a missing key, a wrong type). `try()` catches it and
    the evaluator turns it into an unknown; one that escaped would be bad input."""

    exit_code = EXIT_BAD_INPUT


def type_name(value: Any) -> str:
    if isinstance(value, bool):
        return "a bool"
    if isinstance(value, (int, float)):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, Mapping):
        return "an object"
    if isinstance(value, list):
        return "a list"
    return "null"


def to_text(value: Any, what: str) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    if isinstance(value, (str, int, float)):
        return str(value)
    raise EvalError(f"{what} needs a string, got {type_name(value)}")


def to_number(value: Any, what: str) -> int | float:
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return value
    if isinstance(value, str):
        try:
            number = float(value)
        except ValueError:
            pass
        else:
            return int(number) if number.is_integer() and "." not in value else number
    raise EvalError(f"{what} needs a number, got {type_name(value)} {str(value)[:40]!r}")


def to_bool(value: Any, what: str) -> bool:
    if isinstance(value, bool):
        return value
    if value in ("true", "false"):
        return value == "true"
    raise EvalError(f"{what} needs true or false, got {type_name(value)}")


def _collection(value: Any, what: str) -> list[Any] | Mapping[str, Any]:
    if isinstance(value, (list, Mapping)):
        return value
    raise EvalError(f"{what} needs a list or a map, got {type_name(value)}")


def _length(value: Any) -> int:
    if isinstance(value, str):
        return len(value)
    return len(_collection(value, "length"))


def _lookup(values: Any, key: Any, *default: Any) -> Any:
    if not isinstance(values, Mapping):
        raise EvalError(f"lookup needs a map, got {type_name(values)}")
    name = to_text(key, "lookup")
    if name in values:
        return values[name]
    if default:
        return default[0]
    raise EvalError(f"lookup: no key {name!r} and no default")


def _merge(*maps: Any) -> Any:
    out: dict[str, Any] = {}
    for one in maps:
        if one is None:
            continue
        if not isinstance(one, Mapping):
            raise EvalError(f"merge needs maps, got {type_name(one)}")
        out.update(one)
    return out


def _coalesce(*values: Any) -> Any:
    for value in values:
        if value is not None and value != "":
            return value
    raise EvalError("coalesce: every argument is null or empty")


def _flatten(value: Any) -> list[Any]:
    out: list[Any] = []
    for item in _list(value, "flatten"):
        out += _flatten(item) if isinstance(item, list) else [item]
    return out


def _list(value: Any, what: str) -> list[Any]:
    if isinstance(value, list):
        return value
    raise EvalError(f"{what} needs a list, got {type_name(value)}")


def _set(value: Any) -> list[Any]:
    out: list[Any] = []
    for item in _list(value, "toset"):
        if item not in out:
            out.append(item)
    return sorted(out, key=lambda v: (not isinstance(v, str), str(v)))


def _format(spec: Any, *values: Any) -> str:
    text, out, i, used = to_text(spec, "format"), [], 0, 0
    while i < len(text):
        if text[i] != "%":
            out.append(text[i])
            i += 1
            continue
        verb = text[i + 1] if i + 1 < len(text) else ""
        if verb == "%":
            out.append("%")
        elif verb in "sdvq" and verb and used < len(values):
            value = values[used]
            used += 1
            out.append(json.dumps(value) if verb == "q" else to_text(value, "format"))
        else:
            raise EvalError(f"format: the verb %{verb} is not supported here")
        i += 2
    return "".join(out)


def _element(values: Any, index: Any) -> Any:
    items = _list(values, "element")
    if not items:
        raise EvalError("element of an empty list")
    return items[int(to_number(index, "element")) % len(items)]


def _one(values: Any) -> Any:
    items = _list(values, "one")
    if len(items) > 1:
        raise EvalError("one: the list has more than one element")
    return items[0] if items else None


def _range(*bounds: Any) -> list[int | float]:
    numbers = [to_number(b, "range") for b in bounds]
    start: int | float
    step: int | float
    if len(numbers) == 1:
        start, stop, step = 0, numbers[0], 1
    else:
        start, stop, step = numbers[0], numbers[1], numbers[2] if len(numbers) > 2 else 1
    if step == 0 or abs((stop - start) / step) > 1024:
        raise EvalError("range: at most 1,024 elements")
    out: list[int | float] = []
    value = start
    while (value < stop) if step > 0 else (value > stop):
        out.append(value)
        value += step
    return out


def _replace(text: str, search: str, replacement: str) -> str:
    """Terraform's replace: a `/.../` search is a regular expression (RE2; `$1` refers to a group)."""
    if len(search) > 1 and search.startswith("/") and search.endswith("/"):
        return re.sub(search[1:-1], re.sub(r"\$\{?(\d+)\}?", r"\\\1", replacement), text)
    return text.replace(search, replacement)


def _regex(pattern: str, text: str) -> Any:
    found = re.search(pattern, text)
    if found is None:
        raise EvalError(f"regex: {pattern!r} does not match")
    if found.groupdict():
        return found.groupdict()
    return list(found.groups()) if found.groups() else found.group(0)


def _sets(op: Callable[[list[Any], list[Any]], list[Any]]) -> Callable[..., list[Any]]:
    def combined(first: Any, *rest: Any) -> list[Any]:
        out = _set(first)
        for other in rest:
            out = op(out, _set(other))
        return _set(out)
    return combined


def _text(name: str, f: Callable[..., Any]) -> Callable[..., Any]:
    return lambda *args: f(*(to_text(a, name) for a in args))


FUNCTIONS: dict[str, Callable[..., Any]] = {
    "length": _length, "lookup": _lookup, "merge": _merge, "coalesce": _coalesce,
    "coalescelist": lambda *ls: next((x for x in ls if _list(x, "coalescelist")), []),
    "concat": lambda *ls: [x for one in ls for x in _list(one, "concat")],
    "contains": lambda ls, v: v in _list(ls, "contains"),
    "keys": lambda m: sorted(_merge(m)), "values": lambda m: [v for _, v in sorted(_merge(m).items())],
    "toset": _set, "tolist": lambda v: _list(v, "tolist"), "tomap": lambda m: _merge(m),
    "tostring": lambda v: None if v is None else to_text(v, "tostring"),
    "tonumber": lambda v: None if v is None else to_number(v, "tonumber"),
    "tobool": lambda v: None if v is None else to_bool(v, "tobool"),
    "format": _format, "join": lambda sep, ls: to_text(sep, "join").join(to_text(x, "join") for x in _list(ls, "join")),
    "split": _text("split", lambda sep, s: s.split(sep)), "lower": _text("lower", str.lower),
    "upper": _text("upper", str.upper), "title": _text("title", str.title), "trimspace": _text("trimspace", str.strip),
    "chomp": _text("chomp", lambda s: s.rstrip("\r\n")), "replace": _text("replace", _replace),
    "trimprefix": _text("trimprefix", str.removeprefix), "trimsuffix": _text("trimsuffix", str.removesuffix),
    "startswith": _text("startswith", str.startswith), "endswith": _text("endswith", str.endswith),
    "substr": lambda s, o, n: to_text(s, "substr")[int(o):(None if int(n) < 0 else int(o) + int(n))],
    "element": _element, "flatten": _flatten, "one": _one, "range": _range,
    "distinct": lambda ls: [x for i, x in enumerate(_list(ls, "distinct")) if x not in ls[:i]],
    "compact": lambda ls: [x for x in _list(ls, "compact") if x not in (None, "")],
    "reverse": lambda ls: list(reversed(_list(ls, "reverse"))), "sort": lambda ls: sorted(_list(ls, "sort")),
    "slice": lambda ls, a, b: _list(ls, "slice")[int(a):int(b)],
    "zipmap": lambda ks, vs: dict(zip((to_text(k, "zipmap") for k in _list(ks, "zipmap")), _list(vs, "zipmap"),
                                      strict=True)),
    "index": lambda ls, v: _list(ls, "index").index(v),
    "max": lambda *n: max(to_number(x, "max") for x in n), "min": lambda *n: min(to_number(x, "min") for x in n),
    "abs": lambda n: abs(to_number(n, "abs")), "ceil": lambda n: math.ceil(to_number(n, "ceil")),
    "floor": lambda n: math.floor(to_number(n, "floor")),
    "sum": lambda ls: sum(to_number(x, "sum") for x in _list(ls, "sum")),
    "alltrue": lambda ls: all(to_bool(x, "alltrue") for x in _list(ls, "alltrue")),
    "anytrue": lambda ls: any(to_bool(x, "anytrue") for x in _list(ls, "anytrue")),
    "jsonencode": lambda v: json.dumps(v, separators=(",", ":")),
    "jsondecode": lambda s: json.loads(to_text(s, "jsondecode")),
    "setunion": lambda *ls: _set([x for one in ls for x in _list(one, "setunion")]),
    "setintersection": _sets(lambda a, b: [x for x in a if x in b]),
    "setsubtract": _sets(lambda a, b: [x for x in a if x not in b]),
    "regex": _text("regex", _regex), "regexall": _text("regexall", lambda p, s: [
        m.groupdict() or (list(m.groups()) if m.groups() else m.group(0)) for m in re.finditer(p, s)]),
    "strcontains": _text("strcontains", lambda s, part: part in s),
    "trim": _text("trim", lambda s, chars: s.strip(chars)), "strrev": _text("strrev", lambda s: s[::-1]),
    "md5": _text("md5", lambda s: hashlib.md5(s.encode()).hexdigest()),  # noqa: S324 (Terraform's md5)
    "sha1": _text("sha1", lambda s: hashlib.sha1(s.encode()).hexdigest()),  # noqa: S324
    "sha256": _text("sha256", lambda s: hashlib.sha256(s.encode()).hexdigest()),
    "base64encode": _text("base64encode", lambda s: base64.b64encode(s.encode()).decode()),
    "base64decode": _text("base64decode", lambda s: base64.b64decode(s).decode()),
    "sensitive": lambda v: v, "nonsensitive": lambda v: v,
    "pow": lambda a, b: to_number(a, "pow") ** to_number(b, "pow"),
    "parseint": lambda s, base: int(to_text(s, "parseint"), int(to_number(base, "parseint"))),
    "signum": lambda n: (to_number(n, "signum") > 0) - (to_number(n, "signum") < 0),
    "formatlist": lambda spec, *ls: [_format(spec, *row)
                                     for row in zip(*(_list(x, "formatlist") for x in ls), strict=True)],
}
_OUTSIDE = ("file", "templatefile", "fileexists", "filebase64", "timestamp", "uuid", "bcrypt", "plantimestamp")


def call(name: str, args: list[Any]) -> Any:
    """`name(args...)` as Terraform computes it; unknown when an argument is, or when the function
    reads something beside the configuration."""
    unknown = next((a for a in args if isinstance(a, Unresolved)), None)
    if unknown is not None:
        return unknown
    if name in _OUTSIDE or name not in FUNCTIONS:
        why = "reads files or the clock beside the configuration" if name in _OUTSIDE else \
            "is not one this importer evaluates"
        return Unresolved(f"{name}() {why}: give the value with --parameter/--var-file where it comes from a "
                          "variable, or import `terraform show -json`", f"unresolved-{name}")
    try:
        return FUNCTIONS[name](*args)
    except EvalError:
        raise
    except (TypeError, ValueError, KeyError, IndexError, AttributeError, RecursionError) as error:
        raise EvalError(f"{name}(): {error}") from None
