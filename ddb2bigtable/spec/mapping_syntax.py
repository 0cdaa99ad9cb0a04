"""The small languages inside a mapping: durations and `{attribute}` templates.

Kept apart from the loader because the codec (the data load) parses the same templates
and must agree with what validation accepted.
"""

from __future__ import annotations

import re

DURATION_UNITS = {"s": 1, "m": 60, "h": 3600, "d": 86400, "w": 604800}
_TEMPLATE_TOKEN = re.compile(r"\{\{|\}\}|\{([^{}]*)\}|[{}]")


def parse_duration(text: str) -> int:
    """Seconds in a spec duration (`90s`, `45m`, `36h`, `7d`, `1w`); the schema checked the form."""
    return int(text[:-1]) * DURATION_UNITS[text[-1]]


def template_fields(template: str) -> tuple[str, ...]:
    """The placeholder names of a mapping template, in order.

    Grammar: `{name}` is the attribute `name`; `{{` and `}}` are literal braces; anything
    else is text. Format specs (`{n:>5}`) are refused: keys must stay byte-exact.
    Raises ValueError saying what is wrong.
    """
    names: list[str] = []
    for match in _TEMPLATE_TOKEN.finditer(template):
        token, name = match.group(0), match.group(1)
        if token in ("{{", "}}"):
            continue
        if name is None:
            raise ValueError(f"unmatched {token!r} at character {match.start() + 1}; "
                             f"write {token * 2!r} for a literal brace")
        if not name.strip():
            raise ValueError("empty placeholder '{}'; write an attribute name inside the braces")
        if ":" in name or "!" in name:
            raise ValueError(f"placeholder {{{name}}} has a format spec; only plain {{attribute}} "
                             f"placeholders are supported")
        names.append(name)
    return tuple(names)
