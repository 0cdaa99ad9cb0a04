"""The shipped Movies export and the seeds' three designs: only what a reviewer agrees with.

Movies (4,609 items) is sampled whole: its key (year, title) leads with a year, an integer
shared by many films, neither a time nor a sequential id, and no year holds a quarter of
the films. The seeds' designs hold 5 to 9 items: too few for any distribution, which the
report says, and nothing else: their keys are readable ids, their rows small.
"""

from __future__ import annotations

import pytest

from ddb2bigtable.advise.run import advise
from ddb2bigtable.spec.reading import read_specs

from ..conftest import ROOT
from .helpers import codes


@pytest.mark.parametrize(("spec", "export", "expected"), [
    ("movies.yaml", "movies", []),
    ("video-single-table.yaml", "videos", ["sample-too-small"]),
    ("invoices-adjacency.yaml", "invoices", ["sample-too-small"]),
    ("product-catalog.yaml", "products", ["sample-too-small"]),
])
def test_shipped_designs(spec, export, expected):
    report = advise(read_specs([str(ROOT / "specs" / spec)]), export=str(ROOT / "exports" / export))
    assert codes(report.findings) == expected
    (sampled,) = report.sampled
    assert sampled.items == sampled.export_items  # small exports are read whole


def test_movies_with_a_small_sample_still_reports_nothing():
    report = advise(read_specs([str(ROOT / "specs" / "movies.yaml")]), export=str(ROOT / "exports" / "movies"),
                    sample="500")
    assert codes(report.findings) == [] and report.sampled[0].items == 500


def test_specs_alone():
    """Only the plan's own warning on shop-global's GSI keyed by `status`, under its code."""
    specs = read_specs([str(p) for p in sorted((ROOT / "specs").glob("*.yaml"))])
    (found,) = advise(specs).findings
    assert (found.code, found.table) == ("hot-key", "orders") and found.evidence.startswith("GSI by-status")
