"""Fuzz: whatever a CloudFormation template or a describe-table output holds (random
intrinsics nested at random depth, random values where the reader expects numbers, lists
or names, garbage text), `import` ends with exit 0 or with exit 2 and one line per
problem; never a traceback (#29: the reader met RecursionError, KeyError and str.format
errors on such input)."""

from __future__ import annotations

import json
import re
import tempfile
from pathlib import Path
from typing import Any

import yaml
from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ddb2bigtable.cli.app import main

FUNCTIONS = ["Ref", "Condition", "Fn::Join", "Fn::Sub", "Fn::If", "Fn::Select", "Fn::Split", "Fn::FindInMap",
             "Fn::Equals", "Fn::Not", "Fn::And", "Fn::Or", "Fn::GetAtt", "Fn::ImportValue", "Fn::Base64"]
NAMES = ["Env", "Orders", "Small", "AWS::Region", "AWS::NoValue", "AWS::AccountId", "id", "{0}", "${Env}",
         "${Env}-orders", "${!Literal}", "${Orders.Arn}", "{}", "%s", "PAY_PER_REQUEST", "PROVISIONED", "HASH",
         "RANGE", "S", "N", "5", "-1", "1e400", ""]
PROPERTIES = ["TableName", "AttributeDefinitions", "KeySchema", "BillingMode", "ProvisionedThroughput",
              "GlobalSecondaryIndexes", "LocalSecondaryIndexes", "TimeToLiveSpecification", "StreamSpecification",
              "Replicas", "SSESpecification", "PointInTimeRecoverySpecification", "TableClass",
              "OnDemandThroughput", "WarmThroughput", "DeletionProtectionEnabled", "PrimaryKey"]
KEYS = st.sampled_from(FUNCTIONS + PROPERTIES + ["AttributeName", "AttributeType", "KeyType", "IndexName",
                                                 "ReadCapacityUnits", "WriteCapacityUnits", "Region", "Default",
                                                 "Type"]) | st.text(max_size=8)
LEAVES = (st.sampled_from(NAMES) | st.text(max_size=12) | st.integers(-10**20, 10**20)
          | st.floats(allow_nan=False, allow_infinity=False) | st.booleans() | st.none())
VALUES = st.recursive(LEAVES, lambda inner: st.lists(inner, max_size=4) | st.dictionaries(KEYS, inner, max_size=4)
                      | st.builds(lambda f, a: {f: a}, st.sampled_from(FUNCTIONS), inner), max_leaves=30)


DEEP = "__deep__"
VALID = {"TableName": "orders", "BillingMode": "PAY_PER_REQUEST",
         "AttributeDefinitions": [{"AttributeName": "id", "AttributeType": "S"}],
         "KeySchema": [{"AttributeName": "id", "KeyType": "HASH"}]}


def nest(inner: str, function: str, depth: int) -> str:
    """`inner` (JSON text) wrapped in `function` `depth` times, as text: json.dumps and
    yaml.safe_dump themselves stop near 1,000 levels."""
    if function == "Fn::Sub":
        return f'{{"{function}": [' * depth + inner + ", {}]}" * depth
    return f'{{"{function}": ["", [' * depth + inner + "]]}" * depth


@st.composite
def templates(draw: Any) -> tuple[dict[str, Any], str]:
    """A template of one table: a valid one with some properties replaced by anything (one
    may be DEEP, a value nested 0 to 3,000 levels), and the text that replaces DEEP."""
    properties = dict(VALID)
    properties.update(draw(st.dictionaries(st.sampled_from(PROPERTIES), VALUES | st.just(DEEP), max_size=4)))
    resource = {"Type": draw(st.sampled_from(["AWS::DynamoDB::Table", "AWS::DynamoDB::GlobalTable",
                                              "AWS::Serverless::SimpleTable"])), "Properties": properties}
    if draw(st.booleans()):
        resource["Condition"] = draw(st.sampled_from(["IsProd", "Missing"]))
    parameter = st.fixed_dictionaries({"Type": st.just("String")}, optional={"Default": VALUES})
    template = {"Parameters": draw(st.dictionaries(st.sampled_from(["Env", "Small"]), parameter, max_size=2)),
                "Conditions": draw(st.dictionaries(st.sampled_from(["IsProd"]), VALUES, max_size=1)),
                "Mappings": draw(st.dictionaries(st.sampled_from(["M"]), VALUES, max_size=1)),
                "Resources": {"Orders": resource}}
    depth = draw(st.sampled_from([0, 63, 64, 65, 400, 3000]) | st.integers(0, 3000))
    function = draw(st.sampled_from(["Fn::Join", "Fn::Select", "Fn::If", "Fn::Sub"]))
    return template, nest(json.dumps(draw(VALUES)), function, depth)


def _import(text: str, suffix: str) -> None:
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / f"template{suffix}"
        path.write_text(text, encoding="utf-8")
        result = CliRunner().invoke(main, ["import", str(path), "--instance", "shop-prod", "--region", "us-east-1"])
    assert result.exception is None or isinstance(result.exception, SystemExit), repr(result.exception)
    assert result.exit_code in (0, 2), result.output
    if result.exit_code == 2:
        *problems, count = [line for line in result.stderr.splitlines() if not line.startswith("warning: ")]
        assert problems and re.fullmatch(r"\d+ problems? found; no spec was written\.", count), result.stderr
        assert all(len(p) < 2_500 for p in problems)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(templates(), st.sampled_from([".json", ".yaml"]))
def test_any_template_is_read_or_refused_in_one_line_per_problem(drawn, suffix):
    template, deep = drawn
    text = json.dumps(template) if suffix == ".json" else yaml.safe_dump(template, width=10**6)
    _import(text.replace(json.dumps(DEEP) if suffix == ".json" else DEEP, deep), suffix)


@settings(max_examples=100, deadline=None)
@given(st.text(alphabet=st.sampled_from("{}[]:,\"'&*!- \n\tabcRef#|>%@`"), max_size=200))
def test_garbage_text_is_refused_in_one_line_per_problem(text):
    _import(text, ".yaml")


DESCRIBED_FIELDS = ["TableName", "TableArn", "KeySchema", "AttributeDefinitions", "BillingModeSummary",
                    "ProvisionedThroughput", "OnDemandThroughput", "WarmThroughput", "GlobalSecondaryIndexes",
                    "LocalSecondaryIndexes", "Replicas", "GlobalTableWitnesses", "MultiRegionConsistency",
                    "StreamSpecification", "SSEDescription", "TableClassSummary", "TableSizeBytes", "ItemCount",
                    "DeletionProtectionEnabled"]
DESCRIBED_VALID = {"TableName": "Orders", "TableArn": "arn:aws:dynamodb:us-east-1:123456789012:table/Orders",
                   "KeySchema": [{"AttributeName": "id", "KeyType": "HASH"}],
                   "AttributeDefinitions": [{"AttributeName": "id", "AttributeType": "S"}],
                   "BillingModeSummary": {"BillingMode": "PAY_PER_REQUEST"}}
DESCRIBED_VALUES = st.recursive(
    LEAVES | st.sampled_from(["PROVISIONED", "PAY_PER_REQUEST", "ALL", "INCLUDE", "STRONG", "us-west-2"]),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.sampled_from(DESCRIBED_FIELDS + [
        "AttributeName", "AttributeType", "KeyType", "IndexName", "Projection", "ProjectionType", "RegionName",
        "ReadCapacityUnits", "WriteCapacityUnits", "BillingMode", "StreamEnabled", "StreamViewType"]), inner,
        max_size=4), max_leaves=25)


@settings(max_examples=100, deadline=None)
@given(st.dictionaries(st.sampled_from(DESCRIBED_FIELDS), DESCRIBED_VALUES, max_size=5))
def test_any_table_description_is_read_or_refused_in_one_line_per_problem(replaced):
    _import(json.dumps({"Table": DESCRIBED_VALID | replaced}), ".json")
