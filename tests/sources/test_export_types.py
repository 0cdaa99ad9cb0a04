"""`import --export PATH`: attribute types sampled from a real DynamoDB export (the
project's Movies export, through the live import of a DynamoDB Local table) and from
exports with disagreeing or self-describing attributes, written into mapping.attributes."""

from __future__ import annotations

from datetime import UTC, datetime

import yaml
from click.testing import CliRunner

from ddb2bigtable.cli.app import main
from ddb2bigtable.exports.writer import item_from_plain, write_export
from ddb2bigtable.spec.reading import read_spec

from ..conftest import ROOT
from .aws.test_aws_live import REGION, _key

MOVIES = ROOT / "exports" / "movies"
TABLE = """\
Resources:
  Things:
    Type: AWS::DynamoDB::Table
    Properties:
      TableName: Things
      AttributeDefinitions: [{AttributeName: id, AttributeType: S}]
      KeySchema: [{AttributeName: id, KeyType: HASH}]
      ProvisionedThroughput: {ReadCapacityUnits: 5, WriteCapacityUnits: 5}
      TimeToLiveSpecification: {AttributeName: expires, Enabled: true}
"""


def test_the_movies_export_types_a_live_movies_table(tmp_path, aws_env, dynamodb_local_server, moto):
    dynamodb_local_server.client().create_table(
        TableName="Movies", AttributeDefinitions=[{"AttributeName": "year", "AttributeType": "N"},
                                                  {"AttributeName": "title", "AttributeType": "S"}],
        KeySchema=_key("year", "HASH") + _key("title", "RANGE"), BillingMode="PAY_PER_REQUEST")
    out = tmp_path / "movies.yaml"
    result = CliRunner().invoke(main, [
        "import", f"aws://{REGION}/Movies", "--instance", "movies-prod", "-o", str(out), "--export", str(MOVIES),
        "--sample", "500", "--endpoint-url", dynamodb_local_server.endpoint, "--metrics-endpoint-url", moto.endpoint])
    assert result.exit_code == 0, result.output
    text = out.read_text()
    table = yaml.safe_load(text)["tables"][0]
    assert table["mapping"] == {"attributes": [{"name": "info", "type": "M"}]}, "the keys keep their key types"
    assert f"type: M  # every one of the 500 items sampled from {MOVIES} (of 4,609) that has it holds M" in text
    assert "warning: Movies: 1 attribute type(s) recorded in mapping.attributes from 500 of 4,609 items" \
        in result.stderr
    spec = read_spec(out)
    assert [(a.name, a.type) for a in spec.tables[0].mapping.attributes] == [("info", "M")]


def test_disagreeing_and_self_describing_attributes_are_left_to_the_load(tmp_path):
    items = [{"id": f"t{i}", "price": i if i % 2 else str(i), "name": f"thing {i}", "expires": 1800000000 + i,
              "flags": [True, None]} for i in range(40)]
    typed = [item_from_plain(i) for i in items]
    for item in typed[:3]:
        item["dims"] = {"M": {"sizes": {"NS": ["1", "2"]}}}  # a set inside a map: stored self-describing
    export = write_export(tmp_path / "export", "arn:aws:dynamodb:us-east-1:123456789012:table/Things", typed,
                          export_time=datetime(2026, 11, 1, tzinfo=UTC), items_per_file=10)
    template = tmp_path / "things.yaml"
    template.write_text(TABLE)
    result = CliRunner().invoke(main, ["import", str(template), "--instance", "things-prod", "--region",
                                       "us-east-1", "--export", str(export), "--sample", "20"])
    assert result.exit_code == 0, result.output
    mapping = yaml.safe_load(result.stdout)["tables"][0]["mapping"]
    assert mapping == {"attributes": [{"name": "expires", "type": "N"}, {"name": "flags", "type": "L"},
                                      {"name": "name", "type": "S"}]}
    assert "from 20 of 40 items" in result.stderr, "5 items from each of the 4 data files"
    assert "left to the load's inference (types vary, or stored self-describing): dims, price" in result.stderr


def test_an_export_of_another_table_or_no_export_exits_2(tmp_path):
    template = tmp_path / "things.yaml"
    template.write_text(TABLE)
    result = CliRunner().invoke(main, ["import", str(template), "--instance", "things-prod", "--region",
                                       "us-east-1", "--export", str(MOVIES)])
    assert result.exit_code == 2 and "this export is of table Movies, not of an imported table (Things)" in \
        result.stderr
    result = CliRunner().invoke(main, ["import", str(template), "--instance", "things-prod", "--region",
                                       "us-east-1", "--export", str(tmp_path / "nothing")])
    assert result.exit_code == 2 and "Traceback" not in result.output
    first = result.stderr.splitlines()[0]
    assert first.startswith(f"--export: {tmp_path / 'nothing'}: no such folder"), first
    assert first.count(str(tmp_path / "nothing")) == 1, "the folder is named once"
