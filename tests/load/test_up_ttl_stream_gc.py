"""A spec table with both a TTL and a stream: its TTL families get no max_age (plan/gc_rules.py),
so Bigtable's GC never collects an expired item before serve's TTL sweep deletes it with its
REMOVE record (docs/streams.md, "TTL"); a TTL table without a stream keeps the one-second
expiration pattern. `up` on the session's emulator, the families' rules read back from it."""

from __future__ import annotations

import datetime

from google.cloud.bigtable import Client, column_family

from ddb2bigtable.load.local_stage import up
from ddb2bigtable.plan.planner import plan_files
from ddb2bigtable.render.json_format import to_json

from ..conftest import write_project

TABLE = """
  - id: {id}
    source:
      table: {name}
      region: us-west-2
      key: {{partition: {{name: pk, type: S}}}}
      billing: provisioned
      reads: 10
      writes: 10
      item_size_kb: 1
      storage_gb: 0.001
      ttl: {{attribute: expiresAt}}
      stream: {stream}
"""
SPEC = "version: 1\ninstance: {id: ttlgc-test, display_name: TTL GC test}\ntables:" + \
    TABLE.format(id="streamed", name="Streamed", stream="new_image") + \
    TABLE.format(id="plain", name="Plain", stream="none")


def test_ttl_families_of_a_table_with_a_stream_have_no_max_age(bigtable_emulator, tmp_path) -> None:
    write_project(tmp_path, {"ttlgc": SPEC}, {"emulator": True, "regions": "home", "deletion_protection": False,
                                              "autoscaling": False}, stage_name="ttlgc")
    tables = {t["id"]: t for i in to_json(plan_files(tmp_path, "ttlgc"))["instances"] for t in i["tables"]}
    streamed = {f["name"]: f for f in tables["streamed"]["families"]}["cf"]
    assert streamed["gc"] == {"max_age_seconds": None, "max_versions": 1, "mode": "union"}
    assert "no max_age" in streamed["why"] and "REMOVE record" in streamed["why"]
    assert {f["name"]: f for f in tables["plain"]["families"]}["cf"]["gc"]["max_age_seconds"] == 1
    assert up(tmp_path, "ttlgc").ok
    instance = Client(project="test-project", admin=True).instance("ttlgc-test")
    made = {t: instance.table(t).list_column_families()["cf"].gc_rule for t in ("streamed", "plain")}
    assert made["streamed"] == column_family.MaxVersionsGCRule(1)  # before: max_age 1s union max_versions 1
    assert made["plain"] == column_family.GCRuleUnion([column_family.MaxAgeGCRule(datetime.timedelta(seconds=1)),
                                                       column_family.MaxVersionsGCRule(1)])
