"""The workload suite (issue 50), short: each checker for a few seconds on serve and on
DynamoDB Local, every client on boto3's defaults (a ClientRequestToken on every
TransactWriteItems). DynamoDB Local passing proves the checker right; serve must pass the
same. Every checker also counts any 5xx attempt and any traceback in serve's log as an
anomaly. The long run is benchmarks/serve_workload.py."""

from __future__ import annotations

import pytest

from .counters import mixed_counters
from .crashes import mid_commit
from .fractures import fractured_reads
from .harness import Report
from .retries import retried
from .skew import write_skew

LOCAL = "dynamodb-local"
SIDES = ["serve", LOCAL]


def _passes(report: Report, least: dict[str, int]) -> None:
    """No anomaly, and at least `least[what]` of each count (a run that did too little proves nothing)."""
    print(f"\n{report.summary()}")
    assert report.anomalies == [], "\n".join(report.anomalies[:15])
    assert {what: n for what, n in least.items() if report.counts[what] < n} == {}, report.counts


@pytest.mark.parametrize("side", SIDES)
def test_no_write_skew(fronts, side) -> None:
    report = write_skew(fronts(side), seconds=4)
    _passes(report, {"rounds": 5})


@pytest.mark.parametrize("side", SIDES)
def test_no_fractured_reads(fronts, side) -> None:
    report = fractured_reads(fronts(side), seconds=4)
    _passes(report, {"write ok": 5, "TransactGetItems ok": 5, "GetItem ok": 5})


@pytest.mark.parametrize("side", SIDES)
def test_plain_adds_mixed_with_transactions_all_counted(fronts, side) -> None:
    report = mixed_counters(fronts(side), seconds=4)
    _passes(report, {"UpdateItem ok": 5, "TransactWriteItems ok": 5})


@pytest.mark.slow
@pytest.mark.parametrize("side", SIDES)
def test_plain_adds_and_transactions_through_a_kill_all_counted(fronts, side) -> None:
    report = mixed_counters(fronts(side), seconds=6, kill=True)
    _passes(report, {"SIGKILLs": 1, "UpdateItem ok": 5, "TransactWriteItems ok": 5})


@pytest.mark.slow
@pytest.mark.parametrize("fault", ["SIGKILL", "SIGSTOP"])
@pytest.mark.parametrize("side", SIDES)
def test_a_process_killed_or_paused_mid_commit(fronts, side, fault) -> None:
    report = mid_commit(fronts(side), seconds=6, fault=fault)
    _passes(report, {f"{fault}s": 1, "transfer ok": 5, "audit ok": 5})


@pytest.mark.slow
@pytest.mark.parametrize("fault", ["timeout", "SIGKILL"])
@pytest.mark.parametrize("side", SIDES)
def test_a_retried_token_is_applied_once(fronts, side, fault) -> None:
    _passes(retried(fronts(side), seconds=4, fault=fault), {"rounds": 2})


def test_the_checkers_find_what_they_look_for(fronts) -> None:
    """The checkers themselves, on DynamoDB Local: without the ConditionCheck on the other doctor
    both go off call, and three UpdateItems in place of one transaction are read half-done."""
    local = fronts(LOCAL)
    skewed = write_skew(local, seconds=3, guarded=False)
    assert any(a.startswith("write skew:") for a in skewed.anomalies), skewed.summary()
    fractured = fractured_reads(local, seconds=3, atomic=False)
    assert any(a.startswith("fractured TransactGetItems") for a in fractured.anomalies), fractured.summary()
    assert any(a.startswith("fractured GetItems") for a in fractured.anomalies), fractured.summary()
