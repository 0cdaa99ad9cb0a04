"""`prices refresh` against local fakes of the Cloud Billing Catalog API and the AWS Price List
Query API: the lock it writes, what a plan makes of it, and every way it can fail."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from ddb2bigtable.plan.planner import plan_files
from ddb2bigtable.plan.price_lock import lock_for

from ..conftest import write_project
from ..plan.test_price_lock import THREE_CONTINENTS
from .fakes import Fake, serve

REGIONS = "us-east-1,eu-west-1,ap-northeast-1"


@pytest.fixture
def fake():
    yield from serve(Fake())


def environment(tmp: Path, gcp_key: bool = True, aws_keys: bool = True, **extra: str) -> dict[str, str]:
    """The process environment with no credentials but the ones the test gives."""
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("AWS_", "GOOGLE_", "CLOUDSDK_", "DDB2BIGTABLE_GCP"))}
    env.update({"AWS_CONFIG_FILE": str(tmp / "none"), "AWS_SHARED_CREDENTIALS_FILE": str(tmp / "none"),
                "AWS_EC2_METADATA_DISABLED": "true", "CLOUDSDK_CONFIG": str(tmp / "gcloud"),
                "GOOGLE_APPLICATION_CREDENTIALS": str(tmp / "no-adc.json"), "NO_PROXY": "127.0.0.1"})
    if gcp_key:
        env["DDB2BIGTABLE_GCP_API_KEY"] = "test-key"
    if aws_keys:
        env.update({"AWS_ACCESS_KEY_ID": "testing", "AWS_SECRET_ACCESS_KEY": "testing"})
    env.update(extra)
    return env


def refresh(root: Path, fake: Fake, *args: str, env: dict[str, str] | None = None,
            aws_option: bool = True) -> subprocess.CompletedProcess[str]:
    command = [sys.executable, "-m", "ddb2bigtable", "prices", "refresh", "--root", str(root),
               "--gcp-endpoint", fake.url, *(["--aws-endpoint", fake.url] if aws_option else []), *args]
    return subprocess.run(command, capture_output=True, text=True, timeout=180,
                          env=env if env is not None else environment(root))


def test_a_refreshed_lock_makes_a_us_east4_europe_west1_asia_northeast1_plan_exact(tmp_path, fake):
    root = write_project(tmp_path, {"trips": THREE_CONTINENTS})
    out = refresh(root, fake, "--regions", REGIONS)
    assert out.returncode == 0, out.stderr
    assert out.stdout.startswith(f"wrote {root / 'prices.lock.json'}: ")
    (instance,) = plan_files(root, "test", lock=lock_for(root, None)).instances
    lines = (*instance.cost.bigtable, *instance.cost.dynamodb)
    assert {c.gcp_region for c in instance.clusters} == {"us-east4", "europe-west1", "asia-northeast1"}
    assert [line.item for line in lines if line.origin != "lock"] == []
    assert not instance.cost.estimate and instance.cost.lock_gaps == ()
    # paged: more than one page from each API, each with the API's own paging token
    assert sum(1 for r in fake.gcp_requests if r["query"].get("pageToken")) >= 5
    assert all(r["api_key"] == "test-key" and r["path"] == "/v1/services/C3BE-24A5-0975/skus"
               for r in fake.gcp_requests)
    assert any("NextToken" in r["body"] for r in fake.aws_requests)
    assert all(r["target"] == "AWSPriceListService.GetProducts" and r["signed"] for r in fake.aws_requests)
    assert {f["Value"] for r in fake.aws_requests for f in r["body"]["Filters"]} == set(REGIONS.split(","))


def test_the_lock_holds_each_figure_with_its_sku_term_and_date(tmp_path, fake):
    root = tmp_path
    assert refresh(root, fake, "--regions", REGIONS).returncode == 0
    lock = json.loads((root / "prices.lock.json").read_text())
    assert lock["version"] == 1 and lock["currency"] == "USD" and lock["fetched"].endswith("Z")
    tokyo = lock["bigtable"]["asia-northeast1"]
    # not Google's Enterprise Plus node SKU listed just before it, nor the Commit1Yr or Data Boost SKU
    assert tokyo["node_hour"] == {"price": 0.836, "sku": tokyo["node_hour"]["sku"], "effective": "2026-10-01",
                                  "description": "Server Node in asia-northeast1 region"}
    assert set(tokyo) == {"node_hour", "ssd_gib_month", "hdd_gib_month", "backup_gib_month"}
    # the regional backup SKU, not the region-less "Backup storage" SKU listed first for many regions
    assert (tokyo["backup_gib_month"]["sku"], tokyo["backup_gib_month"]["price"]) == ("614D-1275-EAAC", 0.0338)
    routes = lock["network"]["bigtable_replication_gib"]
    assert set(routes) >= {"north_america->europe", "asia->europe", "europe->asia", "europe->europe"}
    assert routes["asia->europe"]["sku"] == routes["europe->asia"]["sku"]  # one "between Asia and Europe" SKU
    assert routes["north_america->europe"]["price"] == 0.05  # the list rate, not the 10 TiB volume tier's 0.03
    ireland = lock["dynamodb"]["eu-west-1"]
    assert ireland["rcu_hour"] == {"price": 0.000147, "sku": "J7FH9ZNSN6J2RR9Q", "effective": "2026-09-01",
                                   "term": "JRTCKXETXF", "description": "EU-ReadCapacityUnit-Hrs"}
    assert ireland["read_request_million"]["price"] == 0.1415  # per request in the API, per million in the lock
    assert ireland["storage_gib_month"]["price"] == 0.283  # the tier beyond the free 25 GB
    virginia = lock["dynamodb"]["us-east-1"]
    assert virginia["storage_ia_gib_month"]["price"] == 0.1
    assert virginia["rcu_hour"]["price"] == 0.00013  # Standard, not the IA table's RCU
    assert virginia["wcu_hour"]["price"] == 0.00065  # nor the IA table's WCU, listed before it
    assert virginia["pitr_gib_month"]["description"] == "USE1-TimedPITRStorage-ByteHrs"  # us-east-1 prefixed


def test_aws_endpoint_url_pricing_is_honoured(tmp_path, fake):
    env = environment(tmp_path, AWS_ENDPOINT_URL_PRICING=fake.url)
    out = refresh(tmp_path, fake, "--regions", "eu-west-1", env=env, aws_option=False)
    assert out.returncode == 0, out.stderr
    assert fake.aws_requests and "eu-west-1" in json.loads((tmp_path / "prices.lock.json").read_text())["dynamodb"]


def test_a_region_the_apis_do_not_price_is_a_warning_and_the_plan_says_estimate(tmp_path, fake):
    fake.skus = [s for s in fake.skus if "asia-northeast1" not in s["serviceRegions"]]
    root = write_project(tmp_path, {"trips": THREE_CONTINENTS})
    out = refresh(root, fake, "--regions", REGIONS)
    assert out.returncode == 0, out.stderr
    assert "warning: bigtable asia-northeast1 node_hour: not in the price APIs' answers" in out.stderr
    plan = plan_files(root, "test", lock=lock_for(root, None))
    estimates = {line.item.split(":")[0] for line in plan.instances[0].cost.bigtable if line.origin == "estimate"}
    assert estimates == {"trips-global-asia-northeast1-b"} or estimates == {
        c.id for c in plan.instances[0].clusters if c.gcp_region == "asia-northeast1"}
    assert any(w.code == "price-not-in-lock" and "asia-northeast1" in w.message for w in plan.warnings)


@pytest.mark.parametrize("side", ["gcp", "aws"])
def test_a_failing_api_exits_1_saying_what_to_do_and_keeps_the_lock(tmp_path, fake, side):
    (tmp_path / "prices.lock.json").write_text("the committed lock\n")
    setattr(fake, f"{side}_mode", "fail")
    out = refresh(tmp_path, fake, "--regions", "us-east-1")
    assert out.returncode == 1, out.stderr
    api = "Cloud Billing Catalog API" if side == "gcp" else "AWS Price List Query API"
    assert f"error: the {api} at {fake.url} failed" in out.stderr
    assert "nothing was written" in out.stderr and "Rerun `ddb2bigtable prices refresh` later" in out.stderr
    assert "Traceback" not in out.stderr
    assert (tmp_path / "prices.lock.json").read_text() == "the committed lock\n"


def test_no_google_credentials_exits_2_saying_so(tmp_path, fake):
    out = refresh(tmp_path, fake, "--regions", "us-east-1", env=environment(tmp_path, gcp_key=False))
    assert out.returncode == 2
    assert "Google credentials: no Google Cloud credentials for the Cloud Billing Catalog API" in out.stderr
    assert "DDB2BIGTABLE_GCP_API_KEY" in out.stderr and not (tmp_path / "prices.lock.json").exists()


def test_no_aws_credentials_exits_2_saying_so(tmp_path, fake):
    out = refresh(tmp_path, fake, "--regions", "us-east-1", env=environment(tmp_path, aws_keys=False))
    assert out.returncode == 2
    assert "AWS credentials: no AWS credentials for the Price List Query API" in out.stderr
    assert not (tmp_path / "prices.lock.json").exists()


@pytest.mark.parametrize("side,words", [("gcp", "Google credentials: the Cloud Billing Catalog API"),
                                        ("aws", "AWS credentials: the Price List Query API")])
def test_refused_credentials_exit_2(tmp_path, fake, side, words):
    setattr(fake, f"{side}_mode", "deny")
    out = refresh(tmp_path, fake, "--regions", "us-east-1")
    assert out.returncode == 2 and words in out.stderr, out.stderr


def test_only_a_regular_file_is_replaced(tmp_path, fake):
    folder = tmp_path / "lock-folder"
    folder.mkdir()
    out = refresh(tmp_path, fake, "--regions", "us-east-1", "-o", str(folder))
    assert out.returncode == 2 and "is a directory" in out.stderr
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    out = refresh(tmp_path, fake, "--regions", "us-east-1", "-o", str(fifo))
    assert out.returncode == 2 and "replaces only a regular file" in out.stderr
    assert fifo.exists() and not fifo.is_file()
    assert not fake.gcp_requests and not fake.aws_requests  # refused before any API was asked
    assert [p.name for p in tmp_path.iterdir() if p.name.endswith(".tmp")] == []


def test_a_refresh_keeps_the_replaced_file_s_permissions(tmp_path, fake):
    lock = tmp_path / "prices.lock.json"
    lock.write_text("{}")
    lock.chmod(0o640)
    assert refresh(tmp_path, fake, "--regions", "us-east-1").returncode == 0
    assert lock.stat().st_mode & 0o777 == 0o640 and json.loads(lock.read_text())["version"] == 1


def test_an_unknown_region_is_bad_input(tmp_path, fake):
    out = refresh(tmp_path, fake, "--regions", "us-east-9")
    assert out.returncode == 2 and "us-east-9: not a region the tool maps" in out.stderr
    assert not fake.gcp_requests and not fake.aws_requests


@pytest.mark.parametrize("option", ["--gcp-endpoint", "--aws-endpoint"])
def test_an_empty_endpoint_is_bad_input_not_the_real_api(tmp_path, fake, option):
    command = [sys.executable, "-m", "ddb2bigtable", "prices", "refresh", "--root", str(tmp_path), option, ""]
    out = subprocess.run(command, capture_output=True, text=True, timeout=60, env=environment(tmp_path))
    assert out.returncode == 2 and f"{option}: '' is not an endpoint URL" in out.stderr


@pytest.mark.slow  # waits out the 10 s read timeout
def test_an_api_that_never_answers_ends_in_its_timeout_with_exit_1(tmp_path, fake):
    fake.aws_mode = "silent"
    started = time.monotonic()
    out = refresh(tmp_path, fake, "--regions", "us-east-1")
    assert out.returncode == 1 and "AWS Price List Query API" in out.stderr and "Read timeout" in out.stderr
    assert time.monotonic() - started < 40  # one 10 s read timeout, not retried (plus start-up)
    assert len(fake.aws_requests) == 1
