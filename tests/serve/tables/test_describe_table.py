"""DescribeTable of a spec table says what its spec says, as DynamoDB would describe the
source table: a table with a stream says so (StreamSpecification), one without does not."""

from __future__ import annotations

from ddb2bigtable.serve.catalog import served_table
from ddb2bigtable.serve.tables.admin_ops import description
from ddb2bigtable.spec.reading import read_specs

from ...conftest import ROOT


def _described(spec_file: str) -> dict[str, dict]:
    (spec,) = read_specs([str(ROOT / "specs" / spec_file)])
    return {t.source.table: description(served_table(t, "i", {}, (None, None))) for t in spec.tables}


def test_a_table_with_a_stream_describes_it():
    """shop-global's Orders keeps a stream of new and old images: an application that checks
    StreamSpecification before relying on its consumers sees the same answer as from DynamoDB."""
    tables = _described("shop-global.yaml")
    assert tables["Orders"]["StreamSpecification"] == {"StreamEnabled": True, "StreamViewType": "NEW_AND_OLD_IMAGES"}
    assert "LatestStreamArn" not in tables["Orders"]  # none given: a cloud stage's (docs/streams.md, State)
    without = [name for name, table in tables.items() if "StreamSpecification" not in table]
    assert without and all(name != "Orders" for name in without)


def test_a_table_without_a_stream_has_no_stream_specification():
    assert "StreamSpecification" not in _described("movies.yaml")["Movies"]
