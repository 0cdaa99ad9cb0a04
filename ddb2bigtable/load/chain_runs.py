"""`load --chain`: a full export and its incremental exports, applied in order by one command.

AWS writes them side by side under one prefix (`AWSDynamoDB/<exportId>/` each), so the
prefix is the chain: `chain.ordered_chain` puts it in order (or says what is missing),
and each export loads as `load` would load it alone, with the same checks, resume state
and report. A chain that stopped part-way (an export failed) resumes where it stopped.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace

from ..exports.manifests import Manifest
from ..spec.model import TableSpec
from .chain import Link, ordered_chain
from .reports import LoadReport
from .run import LoadOptions
from .state import STATE_FILE, LoadState, target

LoadOne = Callable[[TableSpec, str, LoadOptions], LoadReport]  # (table, export folder, options)


def still_to_load(manifests: list[Manifest], recorded: tuple[Link, ...]) -> list[Manifest]:
    """The chain's exports to run: all of them, or, when the table already holds the first
    few (an earlier `--chain` stopped), the last of those again (it resumes its files) and
    the rest. Any other recorded chain is left to `load` to refuse, with its sentence."""
    ids = [m.export_id for m in manifests]
    held = [link.export_id for link in recorded]
    if held and ids[:len(held)] == held:
        return manifests[len(held) - 1:]
    return manifests


def run_chain(table: TableSpec, location: str, options: LoadOptions, load_one: LoadOne) -> list[LoadReport]:
    """One report per export loaded, in chain order; the first incomplete load stops the
    chain (the next export would apply changes to a table that misses some)."""
    manifests = ordered_chain(location)
    recorded = () if options.fresh else LoadState.open(
        options.work_dir / STATE_FILE, "", target(options.project, options.instance_id, table.id))[0].chain
    reports: list[LoadReport] = []
    for i, manifest in enumerate(still_to_load(manifests, recorded)):
        reports.append(load_one(table, manifest.location, options if i == 0 else replace(options, fresh=None)))
        if not reports[-1].complete:
            break
    return reports
