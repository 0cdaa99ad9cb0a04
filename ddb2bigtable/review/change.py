"""One line of a diff: where, what, before and after, a flag where it matters, and why."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

Flag = Literal["DESTRUCTIVE", "RISK"] | None


@dataclass(frozen=True)
class Change:
    """`before` and `after` are never empty: a side that does not exist says so ("absent", "removed",
    "none"), so every line reads as what it was and what it becomes.

    `why` is the full reason, as the plan gives it (a cluster's whole sizing arithmetic);
    `brief` is the same reason in one clause for a table cell (empty when `why` is already short).
    """

    scope: str  # "shop-global/cluster us-east4", "shop-global/table orders/family cf"
    what: str
    before: str
    after: str
    flag: Flag = None
    why: str = ""
    brief: str = ""

    @property
    def short_why(self) -> str:
        return self.brief or self.why
