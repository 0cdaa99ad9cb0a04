"""`ddb2bigtable import` through the real command line: warnings on stderr, the spec on
stdout or in -o (never over an existing file without --force), bad input exit 2 at
file:line with the resource and what to do, no traceback, nothing written."""

from __future__ import annotations

import json
import textwrap

import pytest
from click.testing import CliRunner

from ddb2bigtable.cli.app import main

from .helpers import FIXTURES

CFN = FIXTURES / "cloudformation"
TABLE = textwrap.dedent("""\
    Resources:
      Orders:
        Type: AWS::DynamoDB::Table
        Properties:
          TableName: Orders
          AttributeDefinitions: [{AttributeName: id, AttributeType: S}]
          KeySchema: [{AttributeName: id, KeyType: HASH}]
          ProvisionedThroughput:
            ReadCapacityUnits: {reads}
            WriteCapacityUnits: 5
    """)


def run(*args: str):
    return CliRunner().invoke(main, ["import", *args])


def test_stdout_gets_the_spec_and_stderr_the_warnings():
    result = run(str(CFN / "DynamoDB_Secondary_Indexes.json"), "--instance", "books-prod", "--region", "us-west-2")
    assert result.exit_code == 0, result.stderr
    assert result.stdout.startswith("# Imported by `ddb2bigtable import`")
    assert "table: TableOfBooks  # estimate:" in result.stdout
    assert "warning: TableOfBooks: item_size_kb: 1.0 is an estimate" in result.stderr
    assert "warning:" not in result.stdout


def test_output_file_is_valid_and_never_overwritten_without_force(tmp_path):
    out = tmp_path / "books.json"
    result = run(str(CFN / "DynamoDB_Secondary_Indexes.json"), "--instance", "books-prod", "-o", str(out))
    assert result.exit_code == 0, result.stderr
    data = json.loads(out.read_text())
    assert list(data) == ["version", "instance", "tables"] and data["tables"][0]["source"]["reads"] == 5
    assert f"wrote {out}" in result.stderr
    assert CliRunner().invoke(main, ["validate", str(out)]).exit_code == 0

    out.write_text("mine")
    again = run(str(CFN / "DynamoDB_Secondary_Indexes.json"), "--instance", "books-prod", "-o", str(out))
    assert again.exit_code == 2 and "pass --force" in again.stderr and out.read_text() == "mine"
    forced = run(str(CFN / "DynamoDB_Secondary_Indexes.json"), "--instance", "books-prod", "-o", str(out), "--force",
                 "--format", "yaml")
    assert forced.exit_code == 0 and out.read_text().startswith("# Imported")
    assert [p.name for p in tmp_path.iterdir()] == ["books.json"], "no temporary file left behind"


@pytest.mark.parametrize("name, text, where, says", [
    ("bad.yaml", "Resources:\n  Orders:\n    Type: AWS::DynamoDB::Table\n   Properties: {}\n", "bad.yaml:4:",
     "not valid YAML"),
    ("bad.json", '{"Table": {"KeySchema": [}\n', "bad.json:1:", "not valid JSON"),
    ("bucket.yaml", "Resources:\n  Logs:\n    Type: AWS::S3::Bucket\n", "bucket.yaml:2:", "no DynamoDB table"),
    ("other.yaml", "name: not a template\n", "other.yaml:1:", "not a source ddb2bigtable can import"),
    ("type.yaml", TABLE.replace("{reads}", "lots"), "type.yaml:9:28:",
     "Resources.Orders.Properties.ProvisionedThroughput.ReadCapacityUnits: ... must be a whole number, got 'lots'"),
    ("key.yaml", TABLE.replace("{reads}", "5").replace("AttributeName: id, KeyType", "AttributeName: pk, KeyType"),
     "key.yaml:7:", "Orders: key attribute 'pk' is not in AttributeDefinitions; add it there"),
    ("table.json", '{"Table": {"KeySchema": []}}', "table.json:1:", "TableName is missing"),
])
def test_bad_input_exits_2_with_the_location(tmp_path, name, text, where, says):
    source = tmp_path / name
    source.write_text(text)
    out = tmp_path / "out.yaml"
    result = run(str(source), "--instance", "shop-prod", "-o", str(out))
    assert result.exit_code == 2, result.output
    first = result.stderr.splitlines()[0]
    assert first.startswith(str(tmp_path / where)), first
    for part in says.split(" ... "):
        assert part in result.stderr, result.stderr
    assert "Traceback" not in result.output + result.stderr and not out.exists()
    assert result.stderr.rstrip().endswith("; no spec was written.")


def test_forced_kind_parameters_and_regions_are_checked(tmp_path):
    template = str(CFN / "DynamoDB_Table.yaml")
    wrong_kind = run(template, "--instance", "shop-prod", "--from", "describe-table")
    assert wrong_kind.exit_code == 2 and "this is not describe-table input" in wrong_kind.stderr
    bad_parameter = run(template, "--instance", "shop-prod", "--parameter", "HashKeyElementName")
    assert bad_parameter.exit_code == 2 and "is not KEY=VALUE" in bad_parameter.stderr
    unmapped = run(template, "--instance", "shop-prod", "--region", "mars-north-1")
    assert unmapped.exit_code == 2 and "the imported spec is not valid" in unmapped.stderr
    bad_instance = run(template, "--instance", "X")
    assert bad_instance.exit_code == 2 and "instance" in bad_instance.stderr
    twice = run(template, template, "--instance", "shop-prod")
    assert twice.exit_code == 2 and "is also in" in twice.stderr


def test_several_sources_make_one_spec(tmp_path):
    out = tmp_path / "all.yaml"
    result = run(str(FIXTURES / "describe-table" / "orders-global.json"), str(CFN / "sam-api-backend.yaml"),
                 "--instance", "shop-prod", "-o", str(out), "--parameter", "Unused=1")
    assert result.exit_code == 0, result.stderr
    assert "--parameter Unused is not a parameter of this template" in result.stderr
    assert CliRunner().invoke(main, ["validate", str(out)]).exit_code == 0
    assert out.read_text().count("  - id: ") == 2


def test_a_bad_instance_id_names_the_option_not_the_unwritten_spec():
    result = run(str(CFN / "DynamoDB_Table.yaml"), "--instance", "ab")
    assert result.exit_code == 2, result.output
    first = result.stderr.splitlines()[0]
    assert first.startswith("--instance: 'ab' is not a valid Bigtable instance id"), first
    assert "<stdout>" not in result.stderr and "--region/--parameter" not in result.stderr


def test_a_live_url_with_an_unknown_region_is_bad_input_before_any_call():
    result = run("aws://us-west-9/Orders", "--instance", "shop-prod", "--endpoint-url", "http://127.0.0.1:1")
    assert result.exit_code == 2, result.output
    assert "aws://us-west-9/Orders: unknown AWS region 'us-west-9'; did you mean" in result.stderr
    assert "cannot reach" not in result.stderr


def test_the_on_demand_peak_estimate_points_at_minute_sums_not_the_largest_request():
    result = run(str(CFN / "sam-api-backend.yaml"), "--instance", "shop-prod")
    assert result.exit_code == 0, result.stderr
    peak = next(line for line in result.stderr.splitlines() if "peak.reads_per_second" in line)
    assert "--statistics Sum --period 60" in peak and "Maximum" not in peak, peak
    assert "ddb2bigtable import aws://us-east-1/" in peak


def test_validate_and_plan_warn_while_imported_estimates_remain(tmp_path):
    """The plan's numbers rest on import's guesses until they are replaced: validate and plan
    say so on stderr (a spec without `# estimate:` values gets no such line)."""
    from ..conftest import ROOT

    out = tmp_path / "orders.yaml"
    assert run(str(FIXTURES / "describe-table" / "orders-global.json"), "--instance", "shop-prod", "-o",
               str(out)).exit_code == 0
    checked = CliRunner().invoke(main, ["validate", str(out)])
    assert checked.exit_code == 0 and f"ok: {out}" in checked.stdout
    assert f"warning: {out}: 4 value(s) still marked `# estimate:` by import" in checked.stderr
    planned = CliRunner().invoke(main, ["plan", "--stage", "prod", "--root", str(ROOT), str(out)])
    assert planned.exit_code == 0 and "still marked `# estimate:`" in planned.stderr
    clean = CliRunner().invoke(main, ["validate", str(ROOT / "specs" / "movies.yaml"), "--root", str(ROOT)])
    assert clean.exit_code == 0 and "estimate" not in clean.stderr


def test_an_unmeasured_peak_is_capped_at_the_tables_own_maximum(tmp_path):
    """The on-demand peak estimate (AWS's initial 12,000 RRU/s) cannot exceed the table's
    OnDemandThroughput: DynamoDB throttles above it, and a higher guess made plan warn
    peak-above-max about a number nobody measured."""
    source = tmp_path / "things.yaml"
    source.write_text(textwrap.dedent("""\
        Resources:
          Things:
            Type: AWS::DynamoDB::Table
            Properties:
              TableName: Things
              BillingMode: PAY_PER_REQUEST
              AttributeDefinitions: [{AttributeName: id, AttributeType: S}]
              KeySchema: [{AttributeName: id, KeyType: HASH}]
              OnDemandThroughput: {MaxReadRequestUnits: 500}
        """))
    out = tmp_path / "things.spec.yaml"
    result = run(str(source), "--instance", "things-prod", "--region", "us-east-1", "-o", str(out))
    assert result.exit_code == 0, result.stderr
    text = out.read_text()
    assert "reads_per_second: 500.0  # estimate:" in text and "capped at the table's max throughput 500" in text
    assert "writes_per_second: 4000.0  # estimate:" in text
    from ..conftest import ROOT

    planned = CliRunner().invoke(main, ["plan", "--stage", "prod", "--root", str(ROOT), str(out)])
    assert planned.exit_code == 0 and "peak-above-max" not in planned.stdout
