"""What Terraform expressions evaluate with and to: lazy maps, the scope of names, the work budget.

`Lazy` maps compute a value when it is read (`var`, `local`, a resource type's names), so an
expression evaluates only what it refers to, as Terraform's graph does. `Scope` holds the
root names an expression may use, how to answer `file()`, and the `Budget` one import may
spend, so a configuration built to explode (huge ranges, doubled strings) ends in seconds.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from ...spec.errors import EXIT_BAD_INPUT, Ddb2BigtableError
from ..cloudformation.intrinsics import Unresolved


class Lazy(Mapping[str, Any]):
    """A map whose values are computed when read (`var`, `local`, a resource type's names):
    an expression evaluates only what it refers to, as Terraform's graph does."""

    def __init__(self, names: Callable[[], list[str]], get: Callable[[str], Any],
                 missing: Callable[[str], Any] | None = None):
        self._names, self._get, self.missing = names, get, missing

    def __getitem__(self, key: str) -> Any:
        if key not in self._names():
            raise KeyError(key)
        return self._get(key)

    def __contains__(self, key: object) -> bool:  # the names only: Mapping's would compute the value
        return key in self._names()

    def __iter__(self) -> Any:
        return iter(self._names())

    def __len__(self) -> int:
        return len(self._names())


class TooMuchWork(Ddb2BigtableError):
    """The configuration asks for more evaluation than any real one needs (a for expression over
    huge ranges, a string or list doubled in a chain of locals): exit 2, not hours or gigabytes."""

    exit_code = EXIT_BAD_INPUT


class Budget:
    """Expression steps, text length and list length one import may spend."""

    STEPS = 500_000  # the module examples of tests/fixtures take under 1,000
    TEXT = 1024 * 1024
    ITEMS = 100_000

    def __init__(self) -> None:
        self.left = self.STEPS

    def spend(self) -> None:
        self.left -= 1
        if self.left < 0:
            raise TooMuchWork(f"evaluating the configuration takes more than {self.STEPS:,} steps")

    def check(self, value: Any) -> Any:
        if isinstance(value, str) and len(value) > self.TEXT:
            raise TooMuchWork(f"a string grows past {self.TEXT:,} characters")
        if isinstance(value, (list, dict)) and len(value) > self.ITEMS:
            raise TooMuchWork(f"a list or map grows past {self.ITEMS:,} elements")
        return value


class Scope:
    """The names an expression may use: `roots` (var, local, each, ...) and for/dynamic variables."""

    def __init__(self, roots: Mapping[str, Any], unknown: Callable[[str], Any], budget: Budget | None = None,
                 read: Callable[[str, str], Any] | None = None):
        """`read(function, path)` answers `file()` and `fileexists()` where files may be read."""
        self.roots, self.unknown, self.read = roots, unknown, read
        self.budget = budget or Budget()

    def child(self, names: dict[str, Any]) -> Scope:
        return Scope({**self.roots, **names}, self.unknown, self.budget, self.read)

    def root(self, name: str) -> Any:
        return self.roots[name] if name in self.roots else self.unknown(name)


def is_unknown(value: Any) -> bool:
    return isinstance(value, Unresolved)


def plain(value: Any) -> Any:
    """`value` with its lazy maps read out: what a resource's arguments hold."""
    if isinstance(value, Mapping):
        return {str(k): plain(v) for k, v in value.items()}
    if isinstance(value, list):
        return [plain(v) for v in value]
    return value
