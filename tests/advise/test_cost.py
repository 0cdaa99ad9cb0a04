"""consolidate-instances: small instances of a stage, priced apart and merged by the plan;
minimum-node: an instance at Bigtable's one-node minimum, with a stage or the specs as written."""

from __future__ import annotations

import json

from click.testing import CliRunner

from ddb2bigtable.advise.run import advise
from ddb2bigtable.cli.app import main
from ddb2bigtable.plan.planner import plan_files
from ddb2bigtable.spec.reading import read_specs

from ..conftest import ROOT, write_project
from .helpers import codes


def _spec(name: str, region: str, reads: int) -> str:
    return f"""
        version: 1
        instance: {{id: {name}-inst}}
        tables:
          - id: {name}
            source: {{table: {name.title()}, region: {region}, key: {{partition: {{name: pk, type: S}}}},
                      reads: {reads}, writes: 10, storage_gb: 1}}
        """


def test_prod_stage_small_instances_in_one_region():
    """prod: Movies and the videos both run in us-west-2 on less than a node each; the
    invoices (eu-west-1) and the catalog (us-east-1) have no neighbour in their region."""
    stage = plan_files(ROOT, "prod")
    specs = read_specs([str(ROOT / p) for p in
                        ("specs/invoices-adjacency.yaml", "specs/movies.yaml", "specs/product-catalog.yaml",
                         "specs/shop-global.yaml", "specs/video-single-table.yaml")])
    (found,) = [f for f in advise(specs, root=ROOT, stage="prod").findings if f.code == "consolidate-instances"]
    apart = sum(i.cost.bigtable_monthly_usd for i in stage.instances if i.id in ("movies-sample", "video-library"))
    assert found.code == "consolidate-instances" and found.severity == "info" and found.table == "movies-sample"
    assert "2 instances" in found.evidence and f"(${apart:,.2f}/month)" in found.evidence
    assert "movies-sample 0" in found.evidence and "video-library 0.37" in found.evidence
    saving = float(found.evidence.rsplit("): $", 1)[1].split("/month")[0].replace(",", ""))
    assert 0 < saving < apart
    assert "- id: movies   # from" in found.snippet and "- id: videos   # from" in found.snippet


def test_two_small_instances_merge(tmp_path):
    root = write_project(tmp_path, {"a": _spec("alpha", "us-east-1", 10), "b": _spec("beta", "us-east-1", 20)})
    specs = read_specs([str(root / "specs" / "a.yaml"), str(root / "specs" / "b.yaml")])
    (found,) = [f for f in advise(specs, root=root, stage="test").findings if f.code == "consolidate-instances"]
    assert "one shared instance needs 1 " in found.evidence


def test_a_busy_instance_is_not_merged(tmp_path):
    root = write_project(tmp_path, {"a": _spec("alpha", "us-east-1", 10), "b": _spec("beta", "us-east-1", 90000)})
    specs = read_specs([str(root / "specs" / "a.yaml"), str(root / "specs" / "b.yaml")])
    (found,) = advise(specs, root=root, stage="test").findings  # not merged: alpha is offered beta's nodes
    assert found.code == "minimum-node" and found.table == "alpha-inst" and "beta-inst (" in found.suggestion


def test_small_instances_in_different_regions_are_not_merged(tmp_path):
    root = write_project(tmp_path, {"a": _spec("alpha", "us-east-1", 10), "b": _spec("beta", "eu-west-1", 10)})
    specs = read_specs([str(root / "specs" / "a.yaml"), str(root / "specs" / "b.yaml")])
    assert codes(advise(specs, root=root, stage="test").findings) == ["minimum-node", "minimum-node"]


def test_a_table_at_bigtables_one_node_minimum_is_offered_an_instance_other_tables_pay_for():
    """prod: Movies (4,609 items) asks for a fraction of a node yet pays for one; the specs given hold
    two instances with a us-west1 cluster and room, and the one that adds no region comes first."""
    specs = read_specs([str(ROOT / p) for p in ("specs/movies.yaml", "specs/shop-global.yaml",
                                                 "specs/video-single-table.yaml")])
    found = {f.table: f for f in advise(specs, root=ROOT, stage="prod").findings if f.code == "minimum-node"}
    movies = found["movies-sample"]
    planned = next(i for i in plan_files(ROOT, "prod").instances if i.id == "movies-sample")
    assert movies.severity == "info" and "its cluster runs Bigtable's minimum of 1 node" in movies.evidence
    assert f"${planned.cost.bigtable_monthly_usd:,.2f}/month against DynamoDB's " \
           f"${planned.cost.dynamodb_monthly_usd:,.2f}" in movies.evidence
    videos, shop = (ROOT / "specs/video-single-table.yaml", ROOT / "specs/shop-global.yaml")
    assert f"video-library ({videos}); shop-global ({shop}; it also copies them to europe-west1, us-east4)" \
        in movies.suggestion
    assert movies.snippet.startswith(f"# in {videos} (instance video-library)")
    assert "shop-global" not in found  # it needs its nodes


def test_with_no_instance_in_the_specs_the_advice_says_so(tmp_path):
    root = write_project(tmp_path, {"tiny": _spec("tiny", "us-east-1", 5)})
    (found,) = [f for f in advise(read_specs([str(root / "specs/tiny.yaml")]), root=root, stage="test").findings
                if f.code == "minimum-node"]
    assert "none of the specs given has one with SSD clusters in us-east4" in found.suggestion
    assert found.snippet == ""


def test_a_cluster_its_load_fills_gets_no_minimum_advice():
    specs = read_specs([str(ROOT / "specs/shop-global.yaml")])
    assert not [f for f in advise(specs, root=ROOT, stage="prod").findings if f.code == "minimum-node"]


def test_without_a_stage_the_specs_as_written_show_a_small_tables_one_node():
    """No --stage: the specs planned as written. Movies (4,609 items) is told what its one node
    costs against DynamoDB, and the instances of the other specs given that could hold it."""
    specs = read_specs([str(ROOT / p) for p in ("specs/movies.yaml", "specs/shop-global.yaml",
                                                 "specs/video-single-table.yaml")])
    found = {f.table: f for f in advise(specs).findings if f.code == "minimum-node"}
    movies = found["movies-sample"]
    assert "asks for 0.0027 of a node, yet its cluster runs Bigtable's minimum of 1 node" in movies.evidence
    assert "$474.50/month against DynamoDB's $" in movies.evidence
    videos, shop = (ROOT / "specs/video-single-table.yaml", ROOT / "specs/shop-global.yaml")
    assert f"video-library ({videos}); shop-global ({shop}; it also copies them to europe-west1, us-east4)" \
        in movies.suggestion
    assert "shop-global" not in found


def test_without_a_stage_only_the_chosen_tables_instance_is_advised():
    specs = read_specs([str(ROOT / p) for p in ("specs/movies.yaml", "specs/video-single-table.yaml")])
    (found,) = [f for f in advise(specs, table_id="movies").findings if f.code == "minimum-node"]
    assert found.table == "movies-sample" and "video-library (" in found.suggestion


def test_an_export_of_a_small_table_is_told_its_one_node_with_no_stage():
    """`advise SPEC --export DIR`, as the rehearsal runs it: the data's findings and the cost."""
    result = CliRunner().invoke(main, ["advise", str(ROOT / "specs/movies.yaml"), "--export",
                                       str(ROOT / "exports/movies"), "--format", "json"])
    assert result.exit_code == 0, result.output
    (found,) = json.loads(result.output)["findings"]
    assert found["code"] == "minimum-node" and found["table"] == "movies-sample"
    assert "none of the specs given has one with SSD clusters in us-west1" in found["suggestion"]
