"""Property: whatever expressions a configuration holds, the Terraform import ends in a spec or in
exit-2 problems, never in an exception (the evaluator met `for` over a number, a resource
referring to itself, and functions given the wrong types this way)."""

from __future__ import annotations

import tempfile
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ddb2bigtable.sources.detect import read_sources
from ddb2bigtable.sources.model import Options
from ddb2bigtable.sources.terraform.functions import FUNCTIONS
from ddb2bigtable.spec.errors import InputError

LEAVES = st.sampled_from(['"abc"', "1", "2.5", "true", "null", "var.x", "var.m", "var.l", "local.a", "each.key",
                          "count.index", "data.x.y.z", "aws_dynamodb_table.t.name", "module.m.o", "[]", "{}",
                          '"${var.x}-y"'])
NAMES = st.sampled_from([*sorted(FUNCTIONS), "try", "can", "file", "nosuch"])


def _extend(inner: st.SearchStrategy[str]) -> st.SearchStrategy[str]:
    return st.one_of(
        st.builds(lambda f, a: f"{f}({', '.join(a)})", NAMES, st.lists(inner, max_size=3)),
        st.builds(lambda c, a, b: f"{c} ? {a} : {b}", inner, inner, inner),
        st.builds(lambda c, b: f"[for k, v in {c} : {b}]", inner, inner),
        st.builds(lambda c, b, w: f"{{for k, v in {c} : tostring(k) => {b} if {w}}}", inner, inner, inner),
        st.builds(lambda a, i: f"{a}[{i}]", inner, inner),
        st.builds(lambda a: f"{a}.foo", inner),
        st.builds(lambda a, o, b: f"({a} {o} {b})", inner, st.sampled_from(list("+-*/%<>") + ["==", "&&", "||"]),
                  inner),
        st.builds(lambda a, b: f'{{ a = {a}, ("b") = {b} }}', inner, inner),
        st.builds(lambda a: f"{a}[*].x", inner),
        st.builds(lambda a: f"!{a}", inner),
    )


EXPRESSIONS = st.recursive(LEAVES, _extend, max_leaves=12)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(EXPRESSIONS, min_size=6, max_size=6))
def test_any_expressions_end_in_a_spec_or_exit_2_problems(values):
    local, name, billing, reads, tags, indexes = values
    text = f"""variable "x" {{ default = "q" }}
variable "m" {{ default = {{ a = 1 }} }}
variable "l" {{ default = ["a", "b"] }}
locals {{ a = {local} }}
resource "aws_dynamodb_table" "t" {{
  count         = 1
  name          = {name}
  billing_mode  = {billing}
  hash_key      = "id"
  read_capacity = {reads}
  tags          = {tags}
  attribute {{
    name = "id"
    type = "S"
  }}
  dynamic "global_secondary_index" {{
    for_each = {indexes}
    content {{
      name            = global_secondary_index.key
      hash_key        = "id"
      projection_type = "ALL"
    }}
  }}
}}
"""
    with tempfile.TemporaryDirectory() as folder:
        (Path(folder) / "main.tf").write_text(text)
        try:
            read_sources([folder], Options(region="us-east-1"))
        except InputError as error:
            assert error.problems
