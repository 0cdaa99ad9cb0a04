"""JSON Schema errors as sentences a user can act on, located in the YAML.

Shared by spec reading and stage reading: both validate against a schema shipped in
`schema/`, and both report "unknown key 'raeds'; did you mean 'reads'?" rather than
jsonschema's own wording.
"""

from __future__ import annotations

import difflib
import json
from collections.abc import Iterable
from functools import cache
from importlib import resources
from typing import Any

from jsonschema import Draft202012Validator, ValidationError

from .errors import Problem
from .yaml_source import JsonPath, YamlDocument, unquoted

# A problem plus the part of the document it spoils: cross-checks skip spoiled parts.
Issue = tuple[JsonPath, Problem]


def did_you_mean(word: str, choices: Iterable[str]) -> str:
    """`"; did you mean 'reads'?"` for the closest choice, or an empty string.

    Equally close choices are all offered ('us-est-1' is one letter from both us-east-1
    and us-west-1): guessing one of them would mislead half the time.
    """
    scored = sorted((-difflib.SequenceMatcher(None, word, c).ratio(), c) for c in set(choices))
    best = [c for score, c in scored if -score >= 0.6 and score <= scored[0][0] + 0.01]
    return f"; did you mean {' or '.join(map(repr, best))}?" if best else ""


@cache
def load_schema(name: str) -> dict[str, Any]:
    """A JSON Schema shipped in the package (`ddb2bigtable/spec/schema/<name>`)."""
    text = resources.files(__package__).joinpath("schema", name).read_text(encoding="utf-8")
    return json.loads(text)


def schema_problems(doc: YamlDocument, schema_name: str, at: JsonPath = ()) -> list[Issue]:
    """Schema errors for the value at `at` in `doc`, as located, readable problems."""
    schema = load_schema(schema_name)
    value = doc.value_at(at)
    issues: dict[Problem, JsonPath] = {}  # dict: one entry per problem, in order
    for error in Draft202012Validator(schema).iter_errors(value):
        for spoiled, problem in _explain(doc, schema, error, at):
            issues.setdefault(problem, spoiled)
    return [(spoiled, problem) for problem, spoiled in issues.items()]


def clean(issues: Iterable[Issue], part: JsonPath) -> bool:
    """True when no issue spoils `part` (an issue inside it, or around it)."""
    return not any(p[:len(part)] == part or part[:len(p)] == p for p, _ in issues)


# --- schema errors as sentences -----------------------------------------------------------

_TYPE_WORDS = {"integer": "an integer", "number": "a number", "string": "text", "boolean": "true or false",
               "object": "a mapping (key: value)", "array": "a list", "null": "nothing"}
_COMPARISONS = {"minimum": ">=", "maximum": "<=", "exclusiveMinimum": ">", "exclusiveMaximum": "<"}
# DynamoDB's API spellings (BillingMode, StreamViewType, TableClass) of the spec's values: a
# user copying from CloudFormation or `describe-table` writes these. (Plain STANDARD is left
# out: `write_mode: standard` is ours, not AWS's; the letter-case hint covers it.)
_AWS_WORDS = {"PAY_PER_REQUEST": "on_demand", "PROVISIONED": "provisioned", "KEYS_ONLY": "keys_only",
              "NEW_IMAGE": "new_image", "OLD_IMAGE": "old_image", "NEW_AND_OLD_IMAGES": "new_and_old_images",
              "STANDARD_INFREQUENT_ACCESS": "standard_infrequent_access"}


def _explain(doc: YamlDocument, root: dict[str, Any], error: ValidationError, at: JsonPath) -> list[Issue]:
    path = (*at, *error.absolute_path)
    # The failing keyword, the value it failed on, and that keyword's schema object and
    # argument (jsonschema's stubs type them as "maybe unset"; a raised error has them).
    kind = error.validator
    value: Any = error.instance
    schema: Any = error.schema
    argument: Any = error.validator_value
    if isinstance(value, str) and isinstance(schema, dict) and schema.get("writeOnly"):
        value = _HIDDEN  # a field a secret is pasted into by mistake (serve.keys_secret): never repeated
    if kind in ("anyOf", "oneOf"):
        deeper = [e for e in error.context or () if e.relative_path]
        if deeper:  # the value has the right shape for a branch; report inside it
            return [issue for e in deeper for issue in _explain(doc, root, e, at)]
    keys = _key_issues(doc, root, error, path)
    if keys is not None:
        return keys
    why = _description(root, error.absolute_schema_path)
    if kind == "pattern":
        # The rule itself, not only what the value is for: the schema holding a pattern
        # describes it in words (tests/spec/test_schema_words.py keeps that true).
        rule = schema.get("description") or f"text matching {argument}"
        if not why or why == rule:
            return [(path, doc.problem(path, f"expected {rule}, got {_show(value)}"))]
        return [(path, doc.problem(path, f"expected {why}, got {_show(value)}; the rule: {rule}"))]
    if kind in ("anyOf", "oneOf") and why:
        return [(path, doc.problem(path, f"expected {why}, got {_show(value)}"))]
    message = _value_message(str(kind), value, schema, argument) or error.message
    if why:
        message += f": {why}"
    return [(path, doc.problem(path, message))]


def _key_issues(doc: YamlDocument, root: dict[str, Any], error: ValidationError,
                path: JsonPath) -> list[Issue] | None:
    """Problems with a mapping's keys (unknown, missing, going together), each located at
    the key; None when the error is about a value."""
    kind = error.validator
    value: Any = error.instance
    schema: Any = error.schema
    argument: Any = error.validator_value
    if kind == "additionalProperties":
        allowed = sorted(schema.get("properties", {}))
        return [((*path, key), doc.problem((*path, key), _unknown_key(key, allowed), key=True))
                for key in value if key not in allowed]
    if kind == "dependentRequired":  # keys that go together: min_reads with max_reads
        return [((*path, need), doc.problem(path, f"missing key {need!r}: {key} and {need} go together", key=True))
                for key, needs in argument.items() if key in value for need in needs if need not in value]
    if kind == "anyOf" and all(set(b) == {"required"} for b in argument):  # at least one of some keys
        names = " or ".join(repr(k) for b in argument for k in b["required"])
        return [(path, doc.problem(path, f"missing key: give {names}"
                                         + (f" ({why})" if (why := _description(root, error.absolute_schema_path))
                                            else ""), key=True))]
    if kind == "minProperties":
        keys = ", ".join(sorted(schema.get("properties", {})))
        return [(path, doc.problem(path, f"expected at least {argument} of: {keys}; got {_show(value)}"))]
    if kind == "required":
        unknown = [k for k in value if k not in schema.get("properties", {})]
        return [((*path, name), doc.problem(path, _missing_key(root, schema, name), key=True))
                for name in argument
                if name not in value and not any(did_you_mean(k, [name]) for k in unknown)]
    return None


def _value_message(kind: str, value: Any, schema: Any, argument: Any) -> str | None:
    """What was expected of a value and what was found, with a hint for the usual slips;
    None for keywords that jsonschema's own message describes well enough."""
    if kind == "type":
        return f"expected {_types(argument)}, got {_show(value)}" + _type_hint(value, _as_list(argument))
    if kind == "enum":
        message = f"expected one of {', '.join(map(_show, argument))}; got {_show(value)}"
        if isinstance(value, str):
            message += _spelling_hint(value, [c for c in argument if isinstance(c, str)])
        return message
    if kind == "const":
        return f"expected {_show(argument)}, got {_show(value)}"
    if kind in _COMPARISONS:
        return f"expected {_types(schema.get('type', 'number'))} {_COMPARISONS[kind]} {argument}, got {_show(value)}"
    if kind in ("minLength", "maxLength"):
        bound = "at least" if kind == "minLength" else "at most"
        return f"expected {bound} {argument} characters, got {len(value)} ({_show(value)})"
    if kind in ("minItems", "maxItems"):
        bound = "at least" if kind == "minItems" else "at most"
        return f"expected {bound} {argument} item(s), got {len(value)}"
    if kind == "uniqueItems":
        return "an item is listed twice; keep one of them"
    return None


def _type_hint(value: Any, types: list[str]) -> str:
    if "string" in types and isinstance(value, bool):
        return " (YAML reads unquoted yes, no, on and off as true/false: put the text in quotes)"
    if "string" in types and isinstance(value, (int, float)):
        return f" (put it in quotes if it is text: '{value}')"
    if _quoted(value, types):
        return " (the quotes make it text: remove the quotes)"
    return ""


def _quoted(value: Any, types: list[str]) -> bool:
    """True for text that, without its quotes, would be a value of one of `types`."""
    if not isinstance(value, str) or len(value) > 40:  # numbers are short; spare long text the resolver
        return False
    meant = unquoted(value)
    if isinstance(meant, bool):  # before int: a bool is an int in Python
        return "boolean" in types
    return (isinstance(meant, int) and "integer" in types) or (isinstance(meant, int | float) and "number" in types)


def _spelling_hint(value: str, choices: list[str]) -> str:
    """AWS's word for a choice ("AWS's PAY_PER_REQUEST is `on_demand` here"), a choice in
    other letter case (`SSD`, `s`), or the closest choice."""
    if _AWS_WORDS.get(value) in choices:
        return f"; AWS's {value} is `{_AWS_WORDS[value]}` here"
    same = [c for c in choices if c.lower() == value.lower()]
    return f"; letter case matters: write `{same[0]}`" if same else did_you_mean(value, choices)


def _unknown_key(key: str, allowed: list[str]) -> str:
    return f"unknown key {key!r}" + (did_you_mean(key, allowed) or f"; expected one of: {', '.join(allowed)}")


def _missing_key(root: dict[str, Any], schema: dict[str, Any], name: str) -> str:
    why = _own_description(root, schema.get("properties", {}).get(name, {}))
    return f"missing key {name!r}" + (f": {why}" if why else "")


def _description(root: dict[str, Any], schema_path: Iterable[str | int]) -> str | None:
    """The description of the schema that describes the failing value.

    Walks the error's schema path from the root (jsonschema inlines `$ref`s in that path,
    so we follow them too). The description resets whenever the walk moves to a child
    value, so a property never borrows its parent's words.
    """
    parts = list(schema_path)[:-1]  # the last part is the failing keyword
    node: Any = root  # a schema object, or a list under anyOf/oneOf/allOf
    why, i = _own_description(root, root), 0
    while i < len(parts):
        key = parts[i]
        while key not in node and "$ref" in node:
            node = _resolve(root, node["$ref"])
        if key in ("properties", "patternProperties", "$defs"):
            node, i = node[key][parts[i + 1]], i + 2
            why = _own_description(root, node)
        elif key in ("items", "additionalProperties"):
            node, i = node[key], i + 1
            why = _own_description(root, node)
        elif key in ("anyOf", "oneOf", "allOf"):
            node, i = node[key][parts[i + 1]], i + 2
            why = _own_description(root, node) or why
        else:
            node, i = node[key], i + 1
    return why


def _own_description(root: dict[str, Any], node: dict[str, Any]) -> str | None:
    """A schema's description, else that of the schema its `$ref` points to."""
    while "description" not in node and "$ref" in node:
        node = _resolve(root, node["$ref"])
    return node.get("description")


def _resolve(root: dict[str, Any], ref: str) -> dict[str, Any]:
    node: Any = root
    for part in ref.removeprefix("#/").split("/"):
        node = node[part]
    return node


def _as_list(types: str | list[str]) -> list[str]:
    return [types] if isinstance(types, str) else list(types)


def _types(types: str | list[str]) -> str:
    return " or ".join(_TYPE_WORDS.get(t, t) for t in _as_list(types))


_HIDDEN = object()


def _show(value: Any) -> str:
    """A value as the user wrote it in YAML (one that may be a secret: not repeated)."""
    if value is _HIDDEN:
        return "a value not repeated here (it may hold a secret)"
    if value is None:
        return "nothing (an empty value)"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return repr(value)
    if isinstance(value, dict):
        return "a mapping" if value else "an empty mapping {}"
    if isinstance(value, list):
        return "a list"
    return str(value)
