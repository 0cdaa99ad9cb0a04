"""The attribute types of an export, inferred one data file at a time.

Inference is one pass over the export before anything is written (codec/type_inference.py says
why and how). The files are independent, so the pass can be shared out: each process
infers its share of the files (`share_types`) and `merged_types` combines the shares as
one pass over the whole export would have. The local loader's encoder processes do this
before they encode (load/encoder.py); the Beam pipeline has its own DoFn on `file_types`.
"""

from __future__ import annotations

from collections.abc import Iterable

from ..codec.type_inference import AttributeTypes, TypeScan, merge_types, with_recorded
from ..spec.model import TableSpec
from .kept_lines import KeptLines
from .manifests import DataFile, ExportError, Manifest, check_digest, file_digest, verify_file
from .reader import scan_items

FileTypes = tuple[str, AttributeTypes | str]  # (data file key, its types or why it cannot be read)


def file_types(manifest: Manifest, f: DataFile, table: TableSpec, keep: KeptLines | None = None) -> AttributeTypes:
    """One data file's attribute types inferred (validating only the items that could
    change them: reader.scan_items) and its md5 checked, in one read of the file: its
    stored bytes are hashed as they are decompressed. A file that fails half-way is
    checked alone first, so a damaged or replaced file is refused by its md5 (copy it
    again), as before any other complaint about its bytes. `keep` may keep its lines for
    the next pass (`reader.KeptLines`)."""
    scan, digest = TypeScan(), file_digest()
    try:
        for item in scan_items(manifest, f, scan.news, digest, scan.known_items, keep):
            scan.add(item)
    except ExportError:
        verify_file(manifest, f)
        raise
    check_digest(manifest, f, digest)
    return scan.types(table)


def share_types(manifest: Manifest, files: Iterable[DataFile], table: TableSpec, keep: KeptLines | None = None
                ) -> list[FileTypes]:
    """`file_types` of each file in turn, up to the first that cannot be read (its error)."""
    results: list[FileTypes] = []
    for f in files:
        try:
            results.append((f.key, file_types(manifest, f, table, keep)))
        except ExportError as error:
            results.append((f.key, str(error)))
            break
    return results


def merged_types(manifest: Manifest, shares: Iterable[FileTypes], table: TableSpec,
                 recorded: AttributeTypes | None = None) -> AttributeTypes:
    """The shares as one pass over the export: an attribute two files disagree on is
    `mixed`; then the types the table already `recorded` from earlier exports win
    (`with_recorded`). Raises the ExportError of the first failing file in manifest order."""
    order = {f.key: i for i, f in enumerate(manifest.files)}
    types = TypeScan().types(table)  # the declared types, for an export with no items
    for _, part in sorted(shares, key=lambda share: order[share[0]]):
        if isinstance(part, str):
            raise ExportError(part)
        types = merge_types(types, part)
    return with_recorded(types, recorded or {}, table)


def export_types(manifest: Manifest, table: TableSpec, recorded: AttributeTypes | None = None) -> AttributeTypes:
    """Every data file's types, merged, in this process (the Beam pipeline's local run)."""
    return merged_types(manifest, share_types(manifest, manifest.files, table), table, recorded)
