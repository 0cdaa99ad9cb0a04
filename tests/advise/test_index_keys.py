"""An index keyed on an attribute no item has (issue #53: `statuss` for `status`): the spec
validates and the load loads, so `advise`, which reads the items, says so, with the
sampled attribute nearest in spelling. On a real export written from Movies-like items."""

from __future__ import annotations

import yaml

from ddb2bigtable.advise.run import advise
from ddb2bigtable.spec.reading import read_spec

from .helpers import codes, export_of


def _spec(tmp_path, index_key: str):
    table = {"id": "orders", "source": {
        "table": "Things", "region": "us-east-1", "reads": 30000, "writes": 10,
        "key": {"partition": {"name": "customerId", "type": "S"}, "sort": {"name": "orderId", "type": "S"}},
        "gsis": [{"name": "by-status", "key": {"partition": {"name": index_key, "type": "S"},
                                               "sort": {"name": "orderId", "type": "S"}}, "reads": 10, "writes": 10}]}}
    path = tmp_path / "orders.yaml"
    path.write_text(yaml.safe_dump({"version": 1, "instance": {"id": "orders-inst"}, "tables": [table]}))
    return read_spec(path)


def _items():
    return [{"customerId": f"c{i % 30:02d}", "orderId": f"o{i:04d}", "status": "new", "total": i} for i in range(300)]


def test_an_index_keyed_on_an_attribute_no_item_has_is_a_warning_naming_the_nearest(tmp_path):
    export = str(export_of(tmp_path, _items()))
    found = [f for f in advise([_spec(tmp_path, "statuss")], export=export, sample="10000").findings
             if f.code == "index-key-absent"]
    (absent,) = found
    assert absent.severity == "warning" and absent.table == "orders"
    assert absent.evidence.startswith("index by-status is keyed on statuss, which none of the whole export's 300 "
                                      "items has; did you mean 'status'?")
    assert absent.source.section == "Data plane"


def test_a_sample_says_it_is_one_and_a_right_key_is_quiet(tmp_path):
    export = str(export_of(tmp_path, _items(), per_file=50))
    sampled = advise([_spec(tmp_path, "statuss")], export=export, sample="100").findings
    (absent,) = [f for f in sampled if f.code == "index-key-absent"]
    assert "none of 100 sampled items of the export's 300 has" in absent.evidence
    assert "index-key-absent" not in codes(advise([_spec(tmp_path, "status")], export=export, sample="100").findings)


def test_validate_and_plan_warn_of_it_for_an_export_given(tmp_path, monkeypatch):
    """Issue #53: `validate` and `plan` read no export, so the misspelt key validated and
    planned without a word; given `--export`, they run advise's check on its sample."""
    from click.testing import CliRunner

    from ddb2bigtable.cli.app import main

    from ..conftest import ROOT

    monkeypatch.setenv("COLUMNS", "80")
    export = str(export_of(tmp_path, _items()))
    spec = _spec(tmp_path, "statuss").path
    for command in (["validate", spec], ["plan", spec, "--root", str(ROOT)]):
        warned = CliRunner().invoke(main, [*command, "--export", export])
        quiet = CliRunner().invoke(main, command)
        assert warned.exit_code == quiet.exit_code == 0, warned.output
        assert warned.stdout == quiet.stdout and "index-key-absent" not in quiet.stderr
        assert ("warning: orders: index by-status is keyed on statuss, which none of the whole export's 300 items "
                "has; did you mean 'status'?") in warned.stderr and warned.stderr.endswith("[index-key-absent]\n")
    right = CliRunner().invoke(main, ["validate", _spec(tmp_path, "status").path, "--export", export])
    assert right.exit_code == 0 and "warning" not in right.stderr
