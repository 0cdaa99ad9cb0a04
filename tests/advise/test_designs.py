"""The shipped Movies export and the seeds' three designs: only what a reviewer agrees with.

Movies (4,609 items) is sampled whole: its key (year, title) leads with a year, an integer
shared by many films, neither a time nor a sequential id, and no year holds a quarter of
the films. The seeds' designs hold 5 to 9 items: too few for any distribution, which the
report says, and nothing else: their keys are readable ids, their rows small. Each of
these instances asks for a fraction of a node, so each is told it pays for Bigtable's
one-node minimum (`minimum-node`, test_cost.py).
"""

from __future__ import annotations

import json

import pytest

from ddb2bigtable.advise.run import advise
from ddb2bigtable.spec.reading import read_specs

from ..conftest import ROOT, SHIPPED_SPECS
from .helpers import codes


@pytest.mark.parametrize(("spec", "export", "expected"), [
    ("movies.yaml", "movies", ["minimum-node"]),
    ("video-single-table.yaml", "videos", ["minimum-node", "sample-too-small"]),
    ("invoices-adjacency.yaml", "invoices", ["minimum-node", "sample-too-small"]),
    ("product-catalog.yaml", "products", ["minimum-node", "sample-too-small"]),
])
def test_shipped_designs(spec, export, expected):
    report = advise(read_specs([str(ROOT / "specs" / spec)]), export=str(ROOT / "exports" / export))
    assert codes(report.findings) == expected
    (sampled,) = report.sampled
    assert sampled.items == sampled.export_items  # small exports are read whole


def test_movies_with_a_small_sample_still_reports_nothing_of_its_data():
    report = advise(read_specs([str(ROOT / "specs" / "movies.yaml")]), export=str(ROOT / "exports" / "movies"),
                    sample="500")
    assert codes(report.findings) == ["minimum-node"] and report.sampled[0].items == 500


def test_specs_alone():
    """The plan's own warning on shop-global's GSI keyed by `status`, under its code; and the
    four instances under a node, each offered another's (shop-global needs its nodes)."""
    specs = read_specs([str(ROOT / spec) for spec in SHIPPED_SPECS])
    found, *small = advise(specs).findings
    assert [(f.code, f.table) for f in small] == [("minimum-node", t) for t in (
        "billing-invoices", "movies-sample", "product-catalog", "video-library")]
    assert (found.code, found.table) == ("hot-key", "orders") and found.evidence.startswith("GSI by-status")
    # an export sample reads the table, never the index's view: the fix must not send the user there
    assert "--export" not in found.suggestion and "distinct values" in found.suggestion


def _scaled(export: str, copies: int) -> list:
    """The shipped export's typed items, repeated under `copies` renumbered entities (ids of
    4 digits, as the seeds write them), so the distribution and mix checks have data to weigh."""
    from ddb2bigtable.exports.manifests import open_export
    from ddb2bigtable.exports.reader import read_records

    manifest = open_export(str(ROOT / "exports" / export))
    items = [r.item for f in manifest.files for r in read_records(manifest, f) if r.item]
    out = []
    for n in range(copies):
        for item in items:
            text = json.dumps(item)
            for old in ("0123", "0124", "0125"):
                text = text.replace(old, f"{(int(old) * 37 + n * 101) % 10000:04d}")
            out.append(json.loads(text))
    return out


@pytest.mark.parametrize(("spec", "export"), [("video-single-table.yaml", "videos"),
                                              ("invoices-adjacency.yaml", "invoices")])
def test_the_seeds_designs_at_scale_give_nothing(tmp_path, spec, export):
    """Near miss for every phase-2 check: the seeds' own designs, 40 times over (their
    families mix no retention needs, their names are short, their numbers padded, their
    rows small): still nothing to say of the data (their one node is the spec's)."""
    from ddb2bigtable.exports.manifests import open_export
    from ddb2bigtable.exports.writer import write_export

    from .helpers import ARN, WHEN

    items = _scaled(export, 40)
    table_arn = open_export(str(ROOT / "exports" / export)).table_arn or ARN  # the design's own table
    folder = write_export(tmp_path / "export", table_arn, items, export_time=WHEN, items_per_file=1000)
    report = advise(read_specs([str(ROOT / "specs" / spec)]), export=str(folder))
    assert report.sampled[0].items == len(items) >= 200
    assert codes(report.findings) == ["minimum-node"]
