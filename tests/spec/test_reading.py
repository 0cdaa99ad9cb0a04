"""The loader builds the dataclasses the planner trusts, and stages load from Pulumi files."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ddb2bigtable.spec import ids
from ddb2bigtable.spec.errors import InputError
from ddb2bigtable.spec.mapping_syntax import parse_duration, template_fields
from ddb2bigtable.spec.model import GcRule, KeyAttribute, Location, Rate, Replica
from ddb2bigtable.spec.reading import read_spec, read_specs
from ddb2bigtable.spec.stage import LoadSettings, load_stage, stage_names
from ddb2bigtable.spec.yaml_source import parse_yaml

from ..conftest import ROOT, SHIPPED_SPECS, shipped_project

SPECS = ROOT / "specs"
STAGES = ["dev", "local", "pr", "prod", "staging"]


def spec_text(tmp_path: Path, text: str, name: str = "spec.yaml") -> Path:
    path = tmp_path / name
    path.write_text(textwrap.dedent(text))
    return path


MINIMAL = """\
    version: 1
    instance:
      id: {instance}
    tables:
      - id: orders
        source:
          table: Orders
          region: us-east-1
          key: {{partition: {{name: id, type: S}}}}
          reads: 10
          writes: 10
"""


# --- example specs ------------------------------------------------------------------------

def test_product_catalog_keeps_the_seed_layout():
    spec = read_spec(SPECS / "product-catalog.yaml")
    (table,) = spec.tables
    assert spec.instance.id == "product-catalog"
    assert table.source.key.partition == KeyAttribute("category", "S")
    assert table.source.key.sort == KeyAttribute("sku", "S")
    assert table.mapping.delimiter == "#" and table.mapping.default_family == "SKU"
    assert table.mapping.families[0].gc == GcRule(max_versions=1)
    assert table.mapping.rules == ()  # default row key: hats#fedoras#brandA


def test_video_single_table_maps_items_onto_one_row_per_video():
    (table,) = read_spec(SPECS / "video-single-table.yaml").tables
    source, mapping = table.source, table.mapping
    assert source.billing == "on_demand" and source.peak == Rate(2000.0, 300.0)
    assert {f.name: f.gc.max_versions for f in mapping.families} == {"Video": 1, "Stats": 1, "UserComments": 500}
    assert [a.type for a in mapping.attributes if a.name == "Count"] == ["counter"]
    assert [r.sort_key_prefix for r in mapping.rules] == ["VideoComment#", "VideoStatsLikes", "VideoStatsViews", "Video"]
    assert {r.row_key for r in mapping.rules} == {"{VideoId}"}
    assert mapping.rules[-1].timestamp == "UploadDate"
    assert isinstance(mapping.rules, tuple)


def test_invoices_strip_the_key_prefixes():
    (table,) = read_spec(SPECS / "invoices-adjacency.yaml").tables
    invoice, payment = table.mapping.rules
    assert (invoice.partition_key_prefix, invoice.sort_key_prefix) == ("Invoice-", "Invoice-")
    assert (invoice.family, invoice.qualifier) == ("Invoice", "Details")
    assert (payment.family, payment.qualifier, payment.row_key) == ("Payment", "{SK}", "{PK}")
    assert table.source.point_in_time_recovery.recovery_period_days == 35


def test_movies():
    (table,) = read_spec(SPECS / "movies.yaml").tables
    assert table.source.key.partition == KeyAttribute("year", "N")
    assert table.source.key.sort == KeyAttribute("title", "S")
    assert table.source.item_count == 4609
    assert table.mapping.default_family == "cf"


def test_shop_global_is_a_multi_region_multi_table_instance():
    spec = read_spec(SPECS / "shop-global.yaml")
    tables = {t.id: t for t in spec.tables}
    assert list(tables) == ["orders", "carts", "customers", "events"]
    assert spec.instance.row_affinity is True
    assert spec.instance.location == Location(str(SPECS / "shop-global.yaml"), 9, 7)

    orders = tables["orders"].source
    assert orders.regions == ("us-east-1", "us-west-2", "eu-west-1")
    assert orders.replicas == (Replica("us-west-2", 6000), Replica("eu-west-1"))
    assert orders.autoscaling is not None and orders.autoscaling.target_utilization == 70.0
    assert orders.ttl is not None and orders.ttl.attribute == "expiresAt"
    assert orders.stream == "new_and_old_images" and orders.conditional_writes and orders.deletion_protection
    assert orders.point_in_time_recovery.enabled and orders.point_in_time_recovery.recovery_period_days == 35
    assert [g.name for g in orders.gsis] == ["by-status", "by-merchant"]
    assert orders.gsis[1].projection == ("status", "total", "currency")
    assert orders.tags == {"Team": "commerce", "Cost Center": "CC-4711"}

    carts = tables["carts"].source
    assert carts.billing == "on_demand" and carts.peak and carts.average and carts.reads == 0
    customers = tables["customers"].source
    assert customers.read_consistency == "strong" and customers.item_size_kb == 6.0
    events = tables["events"]
    assert events.source.storage_gb == 9000 and events.source.table_class == "standard_infrequent_access"
    assert events.mapping.salt is not None and events.mapping.salt.buckets == 8


def test_defaults_come_from_the_dataclasses(tmp_path: Path):
    spec = read_spec(spec_text(tmp_path, MINIMAL.format(instance="shop-test")))
    source = spec.tables[0].source
    assert source.billing == "provisioned" and source.item_size_kb == 1.0 and source.replicas == ()
    assert spec.instance.storage == "ssd" and spec.instance.kms_keys == {}
    assert spec.tables[0].mapping.default_family == "cf"


@pytest.mark.parametrize("text,seconds", [("90s", 90), ("45m", 2700), ("36h", 129600), ("7d", 604800), ("1w", 604800)])
def test_durations(text: str, seconds: int):
    assert parse_duration(text) == seconds


def test_gc_durations_become_seconds_and_kms_keys_load(tmp_path: Path):
    text = MINIMAL.format(instance="shop-test").replace(
        "    tables:", "      kms_keys: {us-east-1: projects/p/locations/us-east4/keyRings/r/cryptoKeys/k}\n    tables:")
    text += "        mapping:\n          families:\n            - {name: cf, gc: {max_age: 36h, max_versions: 2, mode: intersection}}\n"
    spec = read_spec(spec_text(tmp_path, text))
    assert spec.instance.kms_keys == {"us-east-1": "projects/p/locations/us-east4/keyRings/r/cryptoKeys/k"}
    assert spec.tables[0].mapping.families[0].gc == GcRule(max_versions=2, max_age_seconds=129600, mode="intersection")


def test_two_files_cannot_describe_the_same_instance(tmp_path: Path):
    a = spec_text(tmp_path, MINIMAL.format(instance="shop-test"), "a.yaml")
    b = spec_text(tmp_path, MINIMAL.format(instance="shop-test"), "b.yaml")
    with pytest.raises(InputError) as error:
        read_specs([a, b])
    (problem,) = error.value.problems
    assert (problem.file, problem.line, problem.column) == (str(b), 3, 7)
    assert f"also used by {a}:3:7" in problem.message


def test_template_fields():
    assert template_fields("{PK}#{SK}") == ("PK", "SK")
    assert template_fields("literal {{braces}}") == ()
    for bad in ("{PK", "PK}", "{}", "{n:>5}"):
        with pytest.raises(ValueError):
            template_fields(bad)


def test_yaml_positions_and_duplicate_keys(tmp_path: Path):
    path = spec_text(tmp_path, "a:\n  b: [1, {c: 2}]\n  b: 3\n")
    doc, problems = parse_yaml(path)
    assert doc is not None and doc.data == {"a": {"b": [1, {"c": 2}]}}
    assert doc.positions[("a", "b", 1, "c")] == (2, 14)
    assert doc.key_positions[("a", "b")] == (2, 3)
    assert [(p.line, p.column, p.path) for p in problems] == [(3, 3, "a.b")]


# --- stages -------------------------------------------------------------------------------

def test_every_stage_loads_and_lists_every_example_spec(tmp_path):
    root = shipped_project(tmp_path)
    assert stage_names(root) == STAGES
    for name in STAGES:
        stage = load_stage(name, root)
        assert stage.name == name and stage.file == str(root / "stacks" / f"Pulumi.{name}.yaml")
        assert sorted(stage.specs) == sorted(SHIPPED_SPECS)
        assert all(p.is_file() for p in stage.spec_paths(root))
        assert stage.location is not None and stage.location.line > 1


def test_stage_settings():
    local, dev, staging, prod = (load_stage(n, ROOT) for n in ("local", "dev", "staging", "prod"))
    assert local.emulator and local.gcp_project == "local-project" and local.regions == "home"
    assert local.load == LoadSettings(runner="local", export="exports")
    assert (local.instance_suffix, local.capacity_scale, local.autoscaling, local.failover_headroom) == \
        ("-local", 0.01, False, False)
    assert (dev.instance_suffix, dev.capacity_scale, dev.max_nodes_per_cluster, dev.deletion_protection) == \
        ("-dev", 0.1, 10, False)
    assert (staging.instance_suffix, staging.regions, staging.failover_headroom) == ("-stg", "all", True)
    assert (prod.instance_suffix, prod.capacity_scale, prod.deletion_protection) == ("", 1.0, True)
    assert prod.gcp_project == "my-project-prod" and not prod.emulator


@pytest.mark.parametrize("name", STAGES)
def test_suffixed_instance_ids_stay_valid(name: str):
    stage = load_stage(name, ROOT)
    for spec in read_specs(stage.spec_paths(ROOT)):
        assert ids.id_problem("instance", spec.instance.id + stage.instance_suffix) is None


def test_unknown_stage_lists_the_existing_ones():
    with pytest.raises(InputError) as error:
        load_stage("prd", ROOT)
    message = str(error.value)
    assert "no stage 'prd'" in message and "dev, local, pr, prod, staging" in message
    assert "did you mean 'prod'?" in message


def test_missing_spec_in_a_stage_is_located(project):
    root = project({"shop": MINIMAL.format(instance="shop-test")})
    stack = root / "stacks" / "Pulumi.test.yaml"
    stack.write_text(stack.read_text().replace("- specs/shop.yaml", "- specs/shop.yaml\n    - specs/shpo.yaml"))
    with pytest.raises(InputError) as error:
        load_stage("test", root)
    (problem,) = error.value.problems
    line = stack.read_text().splitlines().index("    - specs/shpo.yaml") + 1
    assert (problem.file, problem.line, problem.column) == (str(stack), line, 7)
    assert problem.path == "config.ddb2bigtable:stage.specs[1]"
    assert "'specs/shpo.yaml' does not exist" in problem.message and "did you mean 'specs/shop.yaml'?" in problem.message


def test_stage_schema_and_cross_check_errors_come_together(project):
    root = project({"shop": MINIMAL.format(instance="shop-test")},
                   {"regions": ["us-east-1", "eu-wset-1"], "capacity_scale": "half", "autoscalng": False,
                    "emulator": True, "load": {"runner": "dataflow"}})
    with pytest.raises(InputError) as error:
        load_stage("test", root)
    messages = [p.message for p in error.value.problems]
    assert any("expected a number, got 'half'" in m for m in messages)
    assert any("unknown key 'autoscalng'; did you mean 'autoscaling'?" in m for m in messages)
    assert any("unknown AWS region 'eu-wset-1'" in m for m in messages)
    assert any("use runner: local" in m for m in messages)


def test_stack_file_without_stage_settings(project):
    root = project({"shop": MINIMAL.format(instance="shop-test")})
    (root / "stacks" / "Pulumi.bare.yaml").write_text("config:\n  gcp:project: p\n")
    with pytest.raises(InputError, match="missing key 'ddb2bigtable:stage'"):
        load_stage("bare", root)


# --- robustness ---------------------------------------------------------------------------

EXAMPLES = sorted(SPECS.glob("*.yaml"))
VALUES = ["0", "-1", "lots", "[]", "{}", "", "true", "no", "1.5", "[a, 1]", "{a: {b: c}}", "500", "us-east-1", "7d"]


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(example=st.sampled_from(EXAMPLES), line=st.integers(min_value=0), value=st.sampled_from(VALUES),
       drop=st.booleans())
def test_any_edit_gives_a_spec_or_located_problems(tmp_path: Path, example: Path, line: int, value: str, drop: bool):
    lines = example.read_text().splitlines()
    i = line % len(lines)
    if drop:
        del lines[i]
    elif ":" in lines[i]:
        lines[i] = lines[i].split(":")[0] + ": " + value
    path = tmp_path / "edited.yaml"
    path.write_text("\n".join(lines) + "\n")
    try:
        read_spec(path)
    except InputError as error:
        assert error.problems and all(p.file == str(path) and p.line >= 1 for p in error.problems)


def test_a_templated_stage_inherits_and_gets_its_own_suffix(tmp_path):
    from ..conftest import write_project

    root = write_project(tmp_path, {"s": (SPECS / "movies.yaml").read_text()},
                         stage={"capacity_scale": 0.25, "regions": "home"}, stage_name="pr")
    stacks = root / "stacks"
    (stacks / "Pulumi.pr-7.yaml").write_text("config:\n  ddb2bigtable:stage:\n    template: pr\n    autoscaling: false\n")
    stage = load_stage("pr-7", root)
    assert (stage.instance_suffix, stage.capacity_scale, stage.regions, stage.autoscaling) == ("-pr-7", 0.25, "home", False)
    assert stage.specs == ("specs/s.yaml",) and stage.template == "pr" and stage.gcp_project == "test-project"
    (stacks / "Pulumi.pr-8.yaml").write_text("config:\n  ddb2bigtable:stage:\n    template: pr-7\n")
    with pytest.raises(InputError, match="is itself made from 'pr'"):
        load_stage("pr-8", root)
    (stacks / "Pulumi.pr-9.yaml").write_text("config:\n  ddb2bigtable:stage:\n    template: pr-9\n")
    with pytest.raises(InputError, match="cannot be its own template"):
        load_stage("pr-9", root)


def test_a_region_typo_is_reported_with_the_schema_problems_of_the_same_table(tmp_path):
    """One run shows every problem: the cross-checks of a table's source run even when
    its mapping has a schema problem (before, the region typo appeared only after it was fixed)."""
    path = tmp_path / "three.yaml"
    path.write_text(textwrap.dedent("""\
        version: 1
        instance: {id: shop-prod}
        tables:
          - id: orders
            source:
              table: Orders
              region: us-east-9
              key: {partition: {name: id, type: S}}
              billing: provisioned
              reads: 10
              writes: 10
            mapping:
              default_famly: cf
          - id: carts
            source:
              table: Carts
              region: us-east-1
              key: {partition: {name: id, type: X}}
              reads: 10
              writes: 10
        """))
    with pytest.raises(InputError) as caught:
        read_spec(path)
    assert [(p.line, p.path) for p in caught.value.problems] == [
        (7, "tables[0].source.region"), (13, "tables[0].mapping.default_famly"),
        (18, "tables[1].source.key.partition.type")]


def test_every_sound_part_is_cross_checked_beside_the_schema_problems(tmp_path):
    """Schema problems in one field of the instance or of a source do not hide the id,
    label, zone and region problems of its other fields: one run, every problem."""
    path = tmp_path / "partly.yaml"
    path.write_text(textwrap.dedent("""\
        version: 1
        instance:
          id: Shop_Prod
          storage: flash
          labels: {Team: platform}
          zones: {us-wset-2: us-west1-b}
        tables:
          - id: orders!
            source:
              table: Orders
              region: us-east-9
              replicas: [{region: eu-west-1}, {region: eu-wst-1}]
              key: {partition: {name: id, type: S}}
              billing: provisioned
              reads: ten
              writes: 10
        """))
    with pytest.raises(InputError) as caught:
        read_spec(path)
    found = [(p.line, p.path) for p in caught.value.problems]
    assert found == [
        (3, "instance.id"), (4, "instance.storage"), (5, "instance.labels.Team"), (6, "instance.zones.us-wset-2"),
        (8, "tables[0].id"), (11, "tables[0].source.region"), (12, "tables[0].source.replicas[1].region"),
        (15, "tables[0].source.reads")], found


def test_the_semantic_checks_of_a_source_run_beside_its_own_schema_problems(tmp_path):
    """The issue's spec with nine problems: one run shows all nine. Before, a source with a
    schema problem of its own (a typo, a negative size) hid its on_demand table's missing
    peak, its provisioned reads and the TTL on its partition key until the typo was fixed;
    a check that reads a broken field still waits for it (no guess from half a source)."""
    path = tmp_path / "nine.yaml"
    path.write_text(textwrap.dedent("""\
        version: 1
        instance: {id: shop-two}
        tables:
          - id: orders
            source:
              table: Orders
              region: us-east-1
              key: {partition: {name: customerId, type: S}}
              billing: on_demand
              reads: 100
              ttl: {attribute: customerId}
              item_size_kb: -2
              strem: new_image
          - id: users
            source:
              table: Users
              region: us-east-1
              key: {partition: {name: userId, type: S}}
              billing: on_demand
              writes: 5
              ttl: {attribute: userId}
            mapping:
              families: [{name: cf, gc: {max_versions: 0}}]
          - id: carts
            source:
              table: Carts
              region: us-east-1
              key: {partition: {name: cartId, type: S}}
              billing: on_demand
              peak: {reads_per_second: ten, writes_per_second: 5}
              ttl: {attribute: cartId}
        """))
    with pytest.raises(InputError) as caught:
        read_spec(path)
    found = [(p.line, p.path) for p in caught.value.problems]
    assert found == [
        (5, "tables[0].source.peak"), (10, "tables[0].source.reads"), (11, "tables[0].source.ttl.attribute"),
        (12, "tables[0].source.item_size_kb"), (13, "tables[0].source.strem"),
        (15, "tables[1].source.peak"), (20, "tables[1].source.writes"), (21, "tables[1].source.ttl.attribute"),
        (23, "tables[1].mapping.families[0].gc.max_versions"),
        (30, "tables[2].source.peak.reads_per_second"), (31, "tables[2].source.ttl.attribute")], found


def test_the_mapping_checks_of_a_table_run_beside_a_schema_problem_in_its_source(tmp_path):
    """A negative `writes` no longer hides that a rule names a family nobody declared."""
    path = tmp_path / "rules.yaml"
    path.write_text(textwrap.dedent("""\
        version: 1
        instance: {id: shop-two}
        tables:
          - id: orders
            source:
              table: Orders
              region: us-east-1
              key: {partition: {name: customerId, type: S}}
              reads: 10
              writes: -1
            mapping:
              rules:
                - {family: nope}
        """))
    with pytest.raises(InputError) as caught:
        read_spec(path)
    found = [(p.line, p.path) for p in caught.value.problems]
    assert found == [(10, "tables[0].source.writes"), (13, "tables[0].mapping.rules[0].family")], found
