"""`import --export PATH`: attribute types sampled from a DynamoDB export, written into the
imported table's `mapping.attributes`, so the first load starts from declared types.

The export is read with the project's reader (`exports.manifests.open_export`,
`exports.reader.scan_items`: DynamoDB JSON or ION, local, `gs://` or `s3://`); types are
collected by the codec's own `TypeScan`, the pass the load would run. The sample is the
first `ceil(N / files)` valid items of each data file (the files split the table by
partition, so the sample spans it) up to N items. An attribute is declared only when every
sampled item that has it holds the same type and that type stores as the load would store
it: key attributes keep their key type (not repeated), an M, L or NS holding a set, binary
or a non-JSON number (the codec stores those self-describing) and an attribute seen with
two types are left to the load's inference, and named in a warning. A sample is not the
whole table: an item of another type later is dead-lettered by the load with the reason,
which the warning says.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from ..codec.cell_values import MIXED
from ..codec.type_inference import TypeScan
from ..exports.manifests import open_export
from ..exports.reader import scan_items
from ..spec.errors import Ddb2BigtableError, InputError, Problem, ServiceError
from .emit import Document, Leaf
from .model import Notice, TableDefinition

DEFAULT_SAMPLE = 1000


@dataclass(frozen=True)
class Sampled:
    """What a sample of one export says about its table's attributes."""

    location: str
    table: str | None  # the table name in the export's tableArn
    seen: dict[str, str]  # attribute -> one type, or "mixed"
    not_plain: frozenset[str]
    items: int
    total: int  # the export's item count


def sample_export(location: str, sample: int) -> Sampled:
    """Up to `sample` items of the export at `location`, their attribute types scanned."""
    try:
        manifest = open_export(location)
        scan, taken = TypeScan(), 0
        each = math.ceil(sample / max(1, len(manifest.files)))
        for data_file in manifest.files:
            for n, item in enumerate(scan_items(manifest, data_file, lambda _: True)):
                if n >= each or taken >= sample:
                    break
                scan.add(item)
                taken += 1
    except (InputError, ServiceError):  # ServiceError: the export's bucket failed (exit 1)
        raise
    except Ddb2BigtableError as error:  # ExportError: a missing manifest, a corrupt file
        said = str(error)  # an export error names its location already; say it once
        raise InputError([Problem.about("--export", "", said if location in said else f"{location}: {said}")]) \
            from None
    return Sampled(location, manifest.table_name, dict(scan.seen), frozenset(scan.not_plain), taken,
                   manifest.item_count)


def _keys(table: TableDefinition) -> set[str]:
    names = {table.partition.value.name} | ({table.sort.value.name} if table.sort else set())
    for gsi in table.gsis:
        names |= {gsi.partition.value.name} | ({gsi.sort.value.name} if gsi.sort else set())
    return names | {lsi.sort.value.name for lsi in table.lsis}


def _declare(table: TableDefinition, sampled: Sampled) -> tuple[list[tuple[str, str]], list[str]]:
    """(attribute, type) pairs to declare, and the attributes left to the load's inference."""
    keys, ttl = _keys(table), table.ttl_attribute.value if table.ttl_attribute else None
    declared, left = [], []
    for name in sorted(sampled.seen):
        kind = sampled.seen[name]
        if name in keys:
            continue
        if kind == MIXED or name in sampled.not_plain or (name == ttl and kind != "N"):
            left.append(name)
        else:
            declared.append((name, kind))
    return declared, left


def _match(tables: Sequence[TableDefinition], sampled: Sampled) -> int:
    names = [t.name.value for t in tables]
    if sampled.table in names:
        return names.index(sampled.table)
    if sampled.table is None and len(tables) == 1:
        return 0
    raise InputError([Problem.about(sampled.location, "", f"--export: this export is of table "
                                    f"{sampled.table or '(its manifest names none)'}, not of an imported table "
                                    f"({', '.join(names)}): pass the export of one of them")])


def add_mappings(doc: Document, tables: Sequence[TableDefinition], samples: Sequence[Sampled]) -> Document:
    """`doc` with `mapping.attributes` for each sampled table, and a notice per export."""
    notices = list(doc.notices)
    for sampled in samples:
        at = _match(tables, sampled)
        table = tables[at]
        declared, left = _declare(table, sampled)
        why = (f"every one of the {sampled.items:,} items sampled from {sampled.location} (of {sampled.total:,}) "
               "that has it holds")
        if declared:
            doc.tree["tables"][at]["mapping"] = {"attributes": [
                {"name": Leaf(name, f"sampled from the export {sampled.location}"), "type": Leaf(kind, f"{why} {kind}")}
                for name, kind in declared]}
        message = (f"{len(declared)} attribute type(s) recorded in mapping.attributes from {sampled.items:,} of "
                   f"{sampled.total:,} items of {sampled.location}; an item of another type later is dead-lettered "
                   "by the load with the reason: remove an attribute's entry to let the load infer its type")
        if left:
            message += f"; left to the load's inference (types vary, or stored self-describing): {', '.join(left)}"
        notices.append(Notice("export-types", table.name.value, message))
    return Document(doc.tree, tuple(notices), doc.sources)
