"""The price lock: what a plan prices from it, what it lacks, and a broken or old lock."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from ddb2bigtable.plan.planner import plan_files
from ddb2bigtable.plan.price_lock import lock_for, parse_lock
from ddb2bigtable.spec.errors import InputError

from ..conftest import write_project

THREE_CONTINENTS = """
    version: 1
    instance: {id: trips-global}
    tables:
      - id: trips
        source:
          table: Trips
          region: us-east-1
          key: {partition: {name: id, type: S}}
          billing: provisioned
          reads: 400
          writes: 100
          item_size_kb: 1
          storage_gb: 40
          point_in_time_recovery: {enabled: true}
          replicas: [{region: eu-west-1}, {region: ap-northeast-1}]
    """
GCP = {"us-east4": 0.72, "europe-west1": 0.71, "asia-northeast1": 0.83}
AWS = {"us-east-1": 1.0, "eu-west-1": 1.13, "ap-northeast-1": 1.14}
PAIRS = ("north_america->europe", "europe->north_america", "north_america->asia", "asia->north_america",
         "europe->asia", "asia->europe")


def _figure(price: float, sku: str) -> dict[str, Any]:
    return {"price": price, "sku": sku, "effective": "2026-10-01"}


def lock_document(gcp: dict[str, float] = GCP, fetched: str = "2026-11-25T10:00:00Z") -> dict[str, Any]:
    """A lock covering the three-continent plan (node price per region; the rest scaled)."""
    return {
        "version": 1, "fetched": fetched, "currency": "USD",
        "bigtable": {region: {"node_hour": _figure(node, f"NODE-{region}"),
                              "ssd_gib_month": _figure(round(node / 4, 4), f"SSD-{region}"),
                              "hdd_gib_month": _figure(0.03, f"HDD-{region}"),
                              "backup_gib_month": _figure(0.031, f"BKP-{region}")} for region, node in gcp.items()},
        "network": {"bigtable_replication_gib": {pair: _figure(0.05, f"NET-{pair}") for pair in PAIRS}},
        "dynamodb": {region: {"rcu_hour": _figure(round(0.00013 * k, 7), f"RCU{region}"),
                              "wcu_hour": _figure(round(0.00065 * k, 7), f"WCU{region}"),
                              "storage_gib_month": _figure(round(0.25 * k, 3), f"STO{region}"),
                              "pitr_gib_month": _figure(round(0.2 * k, 3), f"PITR{region}")}
                     for region, k in AWS.items()},
    }


def write_lock(root: Path, document: dict[str, Any], name: str = "prices.lock.json") -> Path:
    path = root / name
    path.write_text(json.dumps(document, indent=2))
    return path


def cli(root: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "ddb2bigtable", *args, "--root", str(root)],
                          capture_output=True, text=True, timeout=120)


def test_a_lock_at_the_root_makes_every_line_of_a_three_continent_plan_exact(tmp_path):
    root = write_project(tmp_path, {"trips": THREE_CONTINENTS})
    assert plan_files(root, "test").instances[0].cost.estimate  # the shipped table alone cannot
    write_lock(root, lock_document())
    (instance,) = plan_files(root, "test", lock=lock_for(root, None)).instances
    lines = (*instance.cost.bigtable, *instance.cost.dynamodb)
    assert {c.gcp_region for c in instance.clusters} == set(GCP)
    assert all(line.origin == "lock" and not line.estimate for line in lines), [
        (line.item, line.origin) for line in lines if line.origin != "lock"]
    nodes = {line.item.split(":")[0]: line for line in instance.cost.bigtable if line.unit == "node-hour"}
    for cluster in instance.clusters:
        line = nodes[cluster.id]
        assert (line.unit_price, line.sku, line.as_of) == (GCP[cluster.gcp_region], f"NODE-{cluster.gcp_region}",
                                                            "2026-10-01")
        assert "prices.lock.json (Cloud Billing Catalog API, fetched 2026-11-25T10:00:00Z)" == line.source
    replicated = [line for line in instance.cost.dynamodb if line.unit == "rWCU-hour"]
    assert {line.sku for line in replicated} == {"WCUeu-west-1", "WCUap-northeast-1"}  # rWCU = WCU (AWS rule)
    assert instance.cost.lock_gaps == ()


def test_a_lock_without_a_region_makes_only_that_region_s_lines_estimates_with_a_warning(tmp_path):
    root = write_project(tmp_path, {"trips": THREE_CONTINENTS})
    write_lock(root, lock_document(gcp={"us-east4": 0.72, "europe-west1": 0.71}))
    plan = plan_files(root, "test", lock=lock_for(root, None))
    lines = plan.instances[0].cost.bigtable
    tokyo = [line for line in lines if line.item.startswith("trips-global-asia-northeast1")]
    assert tokyo and all(line.origin == "estimate" and "not in prices.lock.json" in line.note for line in tokyo)
    others = [line for line in lines if line not in tokyo]
    assert all(line.origin == "lock" for line in others)
    warnings = [w for w in plan.warnings if w.code == "price-not-in-lock"]
    assert {w.message.split(":")[0] for w in warnings} == {
        "prices.lock.json has no bigtable node_hour for asia-northeast1",
        "prices.lock.json has no bigtable ssd_gib_month for asia-northeast1"}


def test_plan_shows_each_line_s_origin_and_sku(tmp_path):
    root = write_project(tmp_path, {"trips": THREE_CONTINENTS})
    write_lock(root, lock_document())
    out = cli(root, "plan", "--stage", "test", "--format", "markdown")
    assert out.returncode == 0, out.stderr
    assert "| price |" in out.stdout and "| lock |" in out.stdout
    assert "$0.83 per node-hour, SKU NODE-asia-northeast1, " \
           "effective 2026-10-01" in out.stdout
    document = json.loads(cli(root, "plan", "--stage", "test", "--format", "json").stdout)
    line = document["instances"][0]["cost"]["bigtable"][0]
    assert (line["origin"], line["sku"], line["estimate"]) == ("lock", "NODE-us-east4", False)


def test_without_a_lock_lines_say_table_or_estimate(tmp_path):
    root = write_project(tmp_path, {"trips": THREE_CONTINENTS})
    document = json.loads(cli(root, "plan", "--stage", "test", "--format", "json").stdout)
    origins = {line["item"].split(":")[0]: line["origin"] for line in document["instances"][0]["cost"]["dynamodb"]}
    assert origins["trips us-east-1"] == "table"
    bigtable = document["instances"][0]["cost"]["bigtable"]
    assert {line["origin"] for line in bigtable if "europe-west1" in line["item"]} == {"estimate"}


@pytest.mark.parametrize("path,value,message", [
    (("bigtable", "us-east4", "node_hour", "price"), "0.72", "bigtable.us-east4.node_hour.price: must be a number"),
    (("dynamodb", "us-east-1", "rcu_hour", "effective"), "Oct 2026", "dynamodb.us-east-1.rcu_hour.effective: must"),
    (("version",), 2, "version: must be 1"),
    (("currency",), "EUR", "currency: must be \"USD\""),
])
def test_a_malformed_lock_exits_2_at_its_json_path(tmp_path, path, value, message):
    root = write_project(tmp_path, {"trips": THREE_CONTINENTS})
    document = lock_document()
    node = document
    for part in path[:-1]:
        node = node[part]
    node[path[-1]] = value
    lock = write_lock(root, document)
    out = cli(root, "plan", "--stage", "test")
    assert out.returncode == 2 and "Traceback" not in out.stderr
    first = out.stderr.splitlines()[0]
    assert first.startswith(f"{lock}:") and message in first, first
    line = int(first.split(":")[1])  # the line of the value in the file
    assert json.dumps(value) in lock.read_text().splitlines()[line - 1]


def test_a_lock_that_is_not_json_exits_2_at_its_line(tmp_path):
    root = write_project(tmp_path, {"trips": THREE_CONTINENTS})
    lock = tmp_path / "other.json"
    lock.write_text('{"version": 1,\n  "fetched": }\n')
    out = cli(root, "plan", "--stage", "test", "--prices", str(lock))
    assert out.returncode == 2
    assert out.stderr.startswith(f"{lock}:2:14: not JSON")


def test_a_prices_file_that_is_not_a_regular_file_is_refused_unread(tmp_path):
    root = write_project(tmp_path, {"trips": THREE_CONTINENTS})
    fifo = tmp_path / "prices.fifo"
    os.mkfifo(fifo)
    for given in (fifo, Path("/dev/zero")):  # before: a FIFO hung the plan, /dev/zero read until memory ran out
        out = cli(root, "plan", "--stage", "test", "--prices", str(given))
        assert out.returncode == 2 and "cannot read the price lock (not a regular file" in out.stderr, out.stderr


def test_a_missing_prices_file_is_bad_input(tmp_path):
    root = write_project(tmp_path, {"trips": THREE_CONTINENTS})
    with pytest.raises(InputError, match="cannot read the price lock"):
        parse_lock(tmp_path / "nope.json", "nope.json")
    out = cli(root, "plan", "--stage", "test", "--prices", str(tmp_path / "nope.json"))
    assert out.returncode == 2 and "cannot read the price lock" in out.stderr


def test_a_lock_older_than_90_days_is_a_warning_not_an_error(tmp_path):
    root = write_project(tmp_path, {"trips": THREE_CONTINENTS})
    old = (datetime.now(UTC) - timedelta(days=91)).strftime("%Y-%m-%dT%H:%M:%SZ")
    write_lock(root, lock_document(fetched=old))
    out = cli(root, "plan", "--stage", "test")
    assert out.returncode == 0
    assert "days ago, more than 90" in out.stderr and "[price-lock-stale]" in out.stderr
    fresh = (datetime.now(UTC) - timedelta(days=89)).strftime("%Y-%m-%dT%H:%M:%SZ")
    write_lock(root, lock_document(fetched=fresh))
    assert "price-lock-stale" not in cli(root, "plan", "--stage", "test").stderr


def test_prices_option_overrides_the_root_lock(tmp_path):
    root = write_project(tmp_path, {"trips": THREE_CONTINENTS})
    write_lock(root, lock_document())
    other = write_lock(tmp_path, lock_document(gcp={k: v * 2 for k, v in GCP.items()}), "alt.json")
    document = json.loads(cli(root, "plan", "--stage", "test", "--format", "json", "--prices", str(other)).stdout)
    assert document["instances"][0]["cost"]["bigtable"][0]["unit_price"] == 1.44


def test_advise_reads_the_lock_too(tmp_path):
    """With --stage or without (the specs as written), advise prices the one-node minimum."""
    root = write_project(tmp_path, {"trips": THREE_CONTINENTS})
    broken = lock_document()
    broken["dynamodb"]["us-east-1"]["rcu_hour"]["sku"] = ""
    write_lock(root, broken)
    spec = str(root / "specs" / "trips.yaml")
    for stage in (["--stage", "test"], []):
        out = subprocess.run([sys.executable, "-m", "ddb2bigtable", "advise", spec, *stage, "--root", str(root)],
                             capture_output=True, text=True, timeout=120)
        assert out.returncode == 2 and "dynamodb.us-east-1.rcu_hour.sku: must name the SKU" in out.stderr
