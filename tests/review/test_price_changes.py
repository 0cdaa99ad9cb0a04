"""`diff` tells a price change (a refreshed lock) apart from a capacity change."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from ..conftest import write_project
from ..plan.test_price_lock import GCP, THREE_CONTINENTS, lock_document, write_lock


def git(repo: Path, *args: str) -> None:
    subprocess.run(["git", "-C", str(repo), "-c", "user.email=t@example.com", "-c", "user.name=t", *args],
                   check=True, capture_output=True)


def commit(repo: Path) -> None:
    git(repo, "add", ".")
    git(repo, "commit", "-q", "-m", "x")


def diff_json(repo: Path, *args: str) -> dict:
    out = subprocess.run([sys.executable, "-m", "ddb2bigtable", "diff", "--root", str(repo), "--base", "HEAD~1",
                          "--head", "HEAD", "--format", "json", *args], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout)["stages"][0]


def test_a_refreshed_lock_shows_as_price_changes_apart_from_capacity(tmp_path):
    repo = write_project(tmp_path, {"trips": THREE_CONTINENTS})
    git(repo, "init", "-q", "-b", "main")
    write_lock(repo, lock_document())
    commit(repo)
    write_lock(repo, lock_document(gcp={**GCP, "us-east4": 0.80}))  # the refresh: one price moved
    spec = repo / "specs" / "trips.yaml"
    spec.write_text(spec.read_text().replace("writes: 100", "writes: 20000"))  # and capacity grew
    commit(repo)
    stage = diff_json(repo)
    prices = [c for c in stage["changes"] if c["what"] == "unit price"]
    assert [c["scope"] for c in prices] == ["trips-global/price bigtable.us-east4.node_hour",
                                            "trips-global/price bigtable.us-east4.ssd_gib_month"]  # SSD follows
    price = prices[0]
    assert price["before"] == "$0.72 per node-hour (lock, SKU NODE-us-east4, effective 2026-10-01)"
    assert price["after"].startswith("$0.8 per node-hour (lock")
    assert any(c["scope"] == "trips-global/cluster us-east4" and c["what"] in ("nodes", "autoscaling")
               for c in stage["changes"])  # the capacity change is reported on its own
    assert "a price change, not a capacity change" in price["why"]


def test_same_lock_same_specs_is_no_change(tmp_path):
    repo = write_project(tmp_path, {"trips": THREE_CONTINENTS})
    git(repo, "init", "-q", "-b", "main")
    write_lock(repo, lock_document())
    commit(repo)
    (repo / "README").write_text("x")
    commit(repo)
    assert diff_json(repo)["status"] == "unchanged"


def test_prices_file_prices_both_sides_alike(tmp_path):
    repo = write_project(tmp_path, {"trips": THREE_CONTINENTS})
    git(repo, "init", "-q", "-b", "main")
    write_lock(repo, lock_document())
    commit(repo)
    write_lock(repo, lock_document(gcp={**GCP, "us-east4": 0.80}))
    commit(repo)
    assert {c["what"] for c in diff_json(repo)["changes"]} == {"unit price"}
    one = write_lock(tmp_path.parent, lock_document(), "one-lock.json")
    assert diff_json(repo, "--prices", str(one))["status"] == "unchanged"


def test_a_malformed_lock_at_the_base_ref_is_named_by_its_ref(tmp_path):
    repo = write_project(tmp_path, {"trips": THREE_CONTINENTS})
    git(repo, "init", "-q", "-b", "main")
    broken = lock_document()
    broken["bigtable"]["us-east4"]["node_hour"]["price"] = -1
    write_lock(repo, broken)
    commit(repo)
    write_lock(repo, lock_document())
    commit(repo)
    out = subprocess.run([sys.executable, "-m", "ddb2bigtable", "diff", "--root", str(repo), "--base", "HEAD~1",
                          "--head", "HEAD"], capture_output=True, text=True, timeout=120)
    assert out.returncode == 2
    assert out.stderr.startswith("HEAD~1:prices.lock.json:"), out.stderr
    assert "bigtable.us-east4.node_hour.price: must be a number >= 0" in out.stderr.splitlines()[0]


def test_the_effect_of_a_price_change_keeps_the_head_s_discounts(tmp_path):
    repo = write_project(tmp_path, {"trips": THREE_CONTINENTS},
                         {"discounts": {"bigtable": {"committed_use": "3y"}}})
    git(repo, "init", "-q", "-b", "main")
    write_lock(repo, lock_document())
    commit(repo)
    write_lock(repo, lock_document(gcp={**GCP, "us-east4": 0.82}))
    commit(repo)
    node = next(c for c in diff_json(repo)["changes"] if c["scope"].endswith("bigtable.us-east4.node_hour"))
    assert node["before"].startswith("$0.72 per node-hour") and node["after"].startswith("$0.82 per node-hour")
    # 1 node x 730 h x $0.10 more list price, 40 % off with the 3-year commitment
    assert node["why"].startswith(f"+${730 * 0.10 * 0.6:,.2f}/month")
