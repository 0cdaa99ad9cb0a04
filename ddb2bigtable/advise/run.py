"""`advise`: the spec's checks, then the sample's, then the cost (the stage's plan, or the
specs planned as written), as one report.

I/O stays here (reading the export, timing it); every check it calls is a pure function
of the spec, the sampled items or the plan.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path

from ..codec.codec import Codec
from ..codec.type_inference import infer_types
from ..exports.manifests import open_export
from ..plan.model import InstancePlan
from ..plan.planner import plan_stage
from ..plan.price_lock import PriceLock
from ..spec.errors import InputError, Problem
from ..spec.model import Spec, TableSpec
from ..spec.stage import Stage, load_stage
from . import habits, key_numbers, keys
from .cost import consolidation, minimum_nodes
from .findings import ROW_KEYS, Finding
from .index_keys import absent_index_keys
from .limits import long_family_names, many_cells, row_sizes, size_findings
from .retention import lists_in_default_family, mixed_retention
from .sample import DEFAULT_SAMPLE, Sample, sample_size, take_sample
from .static import named_hot_keys, static_findings, table_per_dataset


@dataclass(frozen=True)
class Sampled:
    """What was read of one table's export, for the report's header."""

    table: str
    export: str
    items: int
    export_items: int
    files_read: int
    files: int
    seconds: float
    bad_lines: int = 0  # lines read that are not items (`load` dead-letters them)


@dataclass(frozen=True)
class Report:
    specs: tuple[str, ...]
    tables: tuple[str, ...]
    sampled: tuple[Sampled, ...]
    findings: tuple[Finding, ...]


def data_findings(table: TableSpec, sample: Sample) -> list[Finding]:
    """The sample's checks, with the codec the load would use (types inferred from the sample)."""
    codec = Codec(table, infer_types(sample.items, table))
    views = keys.key_views(codec, sample.items)
    found: list[Finding] = []
    if len(sample.items) < keys.MIN_ITEMS:
        found.append(Finding(
            "sample-too-small", "info", table.id,
            f"{len(sample.items):,} items sampled ({sample.export_items:,} in the export): the distribution checks "
            f"(time-leading keys, sequential ids, hot partitions, write sharding, split items) need "
            f"{keys.MIN_ITEMS}",
            ROW_KEYS, "the whole export was read: judge the key's distribution from a larger export or from "
            "production" if sample.complete else "sample more items (--sample)"))
    for check in (keys.time_leading, keys.hot_partition, habits.write_sharding, habits.version_prefix,
                  habits.split_items, keys.domain_not_reversed, keys.hashed_key, keys.personal_data):
        found += check(table, views)
    sequential = keys.sequential_ids(table, views, sample.export_items)
    found += sequential + key_numbers.unsorted_numbers(table, views, bool(sequential))
    sizes = row_sizes(codec, sample.items, sample.export_time_micros)
    found += size_findings(table.id, sizes, sample.fraction)
    found += many_cells(table, sizes, sample.fraction)
    found += long_family_names(table, sizes.families)
    found += mixed_retention(codec, sample.items)
    found += habits.counter_items(table, sample.items)
    found += absent_index_keys(table, sample.items, sample.export_items, sample.complete)
    return found


def _chosen(specs: list[Spec], table_id: str | None) -> list[tuple[Spec, TableSpec]]:
    tables = [(spec, t) for spec in specs for t in spec.tables if table_id in (None, t.id)]
    if not tables:
        known = ", ".join(t.id for spec in specs for t in spec.tables)
        raise InputError([Problem.about(specs[0].path, "tables", f"no table {table_id!r}; the specs hold {known}")])
    return tables


def _exported(chosen: list[tuple[Spec, TableSpec]], exported: str | None, export: str,
              spec_path: str) -> list[tuple[Spec, TableSpec]]:
    """The one table `--export` samples: the chosen table whose `source.table` the export's
    `tableArn` names (the only chosen table when the manifest names none). An export of
    another table is bad input: its findings would be about the wrong data."""
    if exported is None:
        if len(chosen) == 1:
            return chosen
        raise InputError([Problem.about(spec_path, "tables", "--export samples one table; the specs hold "
                                        f"{', '.join(t.id for _, t in chosen)}: choose one with --table")])
    matching = [(spec, t) for spec, t in chosen if t.source.table == exported]
    if matching:
        return matching[:1]
    names = ", ".join(f"{t.id} ({t.source.table})" for _, t in chosen)
    raise InputError([Problem.about("--export", "", f"{export} is an export of the DynamoDB table {exported}, "
                                    f"not of {names}: give that table's export, or the spec (and --table) of "
                                    f"the table {exported}")])


def _as_written(specs: list[Spec], lock: PriceLock | None) -> list[InstancePlan] | None:
    """The specs planned as written (a stage that changes nothing: every region, full capacity,
    as `prod` plans them), for the one-node minimum without --stage; None when the specs do not
    plan (CMEK, a region with no counterpart): `plan` and `validate` report that, not advice."""
    try:
        return list(plan_stage(Stage(name="as-written", file="", gcp_project=None,
                                     specs=tuple(s.path for s in specs)), specs, lock).instances)
    except InputError:
        return None


def advise(specs: list[Spec], *, table_id: str | None = None, export: str | None = None,
           sample: str = DEFAULT_SAMPLE, root: Path = Path("."), stage: str | None = None,
           lock: PriceLock | None = None) -> Report:
    """Every finding for the chosen tables; the sample's when `export` is given (one table),
    the stage's cost when `stage` is, else the one-node minimum of the specs as written (priced
    from `lock` where it has the figure). Raises InputError (bad table or stage), ExportError
    (the export cannot be read) and ValueError (`sample` is neither a count nor a fraction)."""
    chosen = _chosen(specs, table_id)
    start = time.perf_counter()
    manifest = open_export(export) if export is not None else None
    if manifest is not None:
        chosen = _exported(chosen, manifest.table_name, export or "", specs[0].path)
    tables = [t for _, t in chosen]
    findings = [f for spec, t in chosen for f in static_findings(t) + named_hot_keys(spec, t, export is not None)]
    if export is None:  # with a sample, these are weighed against the data (data_findings)
        findings += [f for _, t in chosen for f in long_family_names(t, None) + lists_in_default_family(t)]
    findings += table_per_dataset(tables)
    sampled: list[Sampled] = []
    if manifest is not None:
        taken = take_sample(manifest, sample_size(sample, manifest.item_count))
        findings += data_findings(tables[0], taken)
        sampled.append(Sampled(tables[0].id, manifest.location, len(taken.items), taken.export_items, taken.files_read,
                               taken.files, time.perf_counter() - start, taken.bad_lines))
    if stage is not None:
        planned = load_stage(stage, root)
        instances = list(plan_stage(planned, specs, lock).instances)
        findings += consolidation(planned, specs, instances, lock) + minimum_nodes(specs, instances)
    elif (written := _as_written(specs, lock)) is not None:
        # the chosen tables' instances only; the other specs are offered as hosts
        mine = {spec.instance.id for spec, _ in chosen}
        findings += [f for f in minimum_nodes(specs, written) if f.table in mine]
    return Report(tuple(s.path for s in specs), tuple(t.id for t in tables), tuple(sampled), tuple(findings))


def export_key_findings(specs: list[Spec], exports: list[str], sample: int = int(DEFAULT_SAMPLE)) -> list[Finding]:
    """`validate --export` and `plan --export`: the check of advise's sample that the specs
    alone cannot make (an index keyed on an attribute no item has, `index-key-absent`), on a
    bounded sample of each export, matched to its table as `advise --export` matches it."""
    found: list[Finding] = []
    for export in exports:
        manifest = open_export(export)
        ((_, table),) = _exported(_chosen(specs, None), manifest.table_name, export, specs[0].path)
        taken = take_sample(manifest, sample)
        found += absent_index_keys(table, taken.items, taken.export_items, taken.complete)
    return found

