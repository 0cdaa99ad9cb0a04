"""Sizes after the mapping, computed with the load's codec on sampled items."""

from __future__ import annotations

from .helpers import codes, findings

WIDE = {"attributes": [{"name": "body", "type": "S"}],
        "rules": [{"row_key": "{doc}", "qualifier": "{part}", "value": "body"}]}  # every part in one row


def test_row_key_over_4_kib_cannot_be_written(tmp_path):
    mapping = {"rules": [{"row_key": "{doc}#{title}"}]}
    items = [{"doc": f"d{i}", "title": "t" * (5000 if i == 3 else 100)} for i in range(20)]
    found = findings(tmp_path, items, ("doc", "S"), mapping=mapping)
    assert codes(found) == ["item-not-writable", "sample-too-small"]
    (error,) = [f for f in found if f.code == "item-not-writable"]
    assert error.severity == "error" and error.evidence.startswith("1 of 20 sampled items (5 %) cannot be written")
    assert "Bigtable allows at most 4,096" in error.evidence


def test_long_but_legal_keys_pass(tmp_path):
    mapping = {"rules": [{"row_key": "{doc}#{title}"}]}
    items = [{"doc": f"d{i}", "title": "t" * 3000} for i in range(20)]
    assert codes(findings(tmp_path, items, ("doc", "S"), mapping=mapping)) == ["sample-too-small"]


def test_wide_row_over_100_mb(tmp_path):
    """350 parts of 300 KB gathered in one row: 105 MB, over the seeds' 100 MB."""
    items = [{"doc": "big", "part": f"p{i:04d}", "body": "x" * 300_000} for i in range(350)]
    found = findings(tmp_path, items, ("doc", "S"), ("part", "S"), mapping=WIDE)
    (row,) = [f for f in found if f.code == "row-over-100mb"]
    assert row.severity == "warning" and row.evidence == "row `big` already holds 105.0 MB from 350 sampled items"
    assert row.source.section == "Rows"


def test_wide_row_projected_from_a_partial_sample(tmp_path):
    """A 10 % sample fills the row to 10.5 MB: the whole export would take it past 100 MB."""
    items = [{"doc": "big", "part": f"p{i:04d}", "body": "x" * 300_000} for i in range(350)]
    found = findings(tmp_path, items, ("doc", "S"), ("part", "S"), mapping=WIDE, sample="0.1", per_file=50)
    (row,) = [f for f in found if f.code == "row-over-100mb"]
    assert row.severity == "info" and "the whole row may reach 105.0 MB" in row.evidence


def test_wide_rows_under_the_limit_pass(tmp_path):
    items = [{"doc": f"d{i % 5}", "part": f"p{i:04d}", "body": "x" * 300_000} for i in range(100)]
    assert codes(findings(tmp_path, items, ("doc", "S"), ("part", "S"), mapping=WIDE)) == []
