"""The chain of exports a table holds: a full export, then incremental exports in time order.

An incremental export holds, for each item changed in its window (exportFromTime to
exportToTime), the item as it was at exportToTime, or its deletion. Applied to a table that
holds the chain up to time T, it gives the table at its exportToTime only if its window
starts at or before T (no change is missed) and ends at or after T (nothing is undone: an
older incremental brings back items deleted since and reverts later updates, with every
line loading fine). So the load state records the chain it applied (`Link`s, from the
manifests) and `refusal` says why an export does not continue it, before anything is
written. A full export starts a chain, on a table that holds no other export.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from ..codec.timestamps import moment_of
from ..exports.manifests import FULL_EXPORT, ExportError, Manifest, export_folders, open_export
from ..spec.errors import InputError, Problem


@dataclass(frozen=True)
class Link:
    """One export applied to the table: its id and window (a full export's is one instant)."""

    export_id: str
    export_type: str
    from_micros: int
    to_micros: int

    @classmethod
    def of(cls, manifest: Manifest) -> Link:
        return cls(manifest.export_id, manifest.export_type, manifest.export_from_time_micros,
                   manifest.export_time_micros)

    def describe(self) -> str:
        if self.export_type == FULL_EXPORT:
            return f"full export {self.export_id} (exportTime {iso(self.to_micros)})"
        return f"incremental export {self.export_id} ({iso(self.from_micros)} to {iso(self.to_micros)})"


def refusal(chain: tuple[Link, ...], manifest: Manifest, fix: str) -> str | None:
    """Why `manifest` cannot be applied to a table holding `chain` (None: it continues the
    chain, or is its last export again: a rerun). `fix` ends each sentence (how to apply
    it anyway)."""
    this = Link.of(manifest)
    if chain and chain[-1].export_id == this.export_id:
        return None
    if this.export_type == FULL_EXPORT:
        if not chain:
            return None
        harm = ("bring back items deleted since and undo later updates" if this.to_micros < chain[-1].to_micros
                else "leave the rows of items it no longer has")
        return (f"the table already holds {_held(chain)}, and loading {this.describe()} over it would {harm}: a "
                f"full export starts a chain on an empty table (recreate the table), or {fix}")
    if not chain:
        return (f"{this.describe()} changes a table loaded from a full export, and no export is recorded for "
                f"this table: load its full export first (or the whole chain with --chain), or {fix}")
    end = chain[-1].to_micros
    if this.from_micros > end:
        return (f"{this.describe()} starts after {iso(end)}, where the table's chain ends ({_held(chain)}): "
                f"the changes in between would be missing; next comes the incremental export whose "
                f"exportFromTime is at or before {iso(end)}: load it first, or {fix}")
    if this.to_micros < end:
        return (f"{this.describe()} ends before {iso(end)}, where the table's chain ends ({_held(chain)}): "
                f"applying it again would bring back items deleted since and undo later updates; the next export "
                f"is an incremental whose exportFromTime is at or before {iso(end)} and whose exportToTime is "
                f"after it, or {fix}")
    return None


def extended(chain: tuple[Link, ...], manifest: Manifest, export: str, fresh: str | None,
             work_dir: Path) -> tuple[Link, ...]:
    """The chain once `manifest` is applied (the same chain when it reruns the last export).
    InputError (exit 2) when it does not continue the chain; `fresh` (`--fresh`, a table
    just created) starts the chain again with it."""
    if fresh:
        return (Link.of(manifest),)
    fix = f"give --fresh to apply it anyway (the chain recorded in {work_dir} then starts again with it)"
    if (why := refusal(chain, manifest, fix)) is not None:
        raise InputError([Problem.about(export, "export", why)])
    return chain if chain and chain[-1].export_id == manifest.export_id else (*chain, Link.of(manifest))


def ordered_chain(location: str) -> list[Manifest]:
    """The exports below `location` as the chain they make: the one full export, then every
    incremental by its window, each continuing the one before (ExportError naming the first
    that does not: a missing or extra export is for the user to sort out, not to guess)."""
    manifests = [open_export(folder) for folder in export_folders(location)]
    fulls = [m for m in manifests if m.export_type == FULL_EXPORT]
    if len(fulls) != 1:
        raise ExportError(f"{location}: a chain starts with one full export, and this prefix holds {len(fulls)} "
                          f"({', '.join(m.export_id for m in fulls) or 'none'}); give the prefix of one full export "
                          f"and its incrementals")
    incrementals = sorted((m for m in manifests if m.export_type != FULL_EXPORT),
                          key=lambda m: (m.export_from_time_micros, m.export_time_micros))
    chain: tuple[Link, ...] = ()
    for manifest in [*fulls, *incrementals]:
        if (why := refusal(chain, manifest, "put the export it needs in the prefix or take it out")) is not None:
            raise ExportError(f"{manifest.location}: {why}")
        chain += (Link.of(manifest),)
    return [*fulls, *incrementals]


def _held(chain: tuple[Link, ...]) -> str:
    if len(chain) == 1:
        return chain[0].describe()
    more = f"{len(chain) - 1} incremental exports, the last" if len(chain) > 2 else "then"
    return f"{chain[0].describe()}, {more} {chain[-1].describe()}"


def iso(micros: int) -> str:
    return moment_of(micros).isoformat().replace("+00:00", "Z")
