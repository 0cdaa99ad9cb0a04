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
# serve's findings of issue 50 not yet fixed on main: each serve case that fails because of one
# is expected to (strict: the case fails once it passes, to take the mark off).
FIVE_HUNDREDS = ("#50: a read or write meeting a lock whose ClientRequestToken record is in a table the "
                 "request does not name (the stage's first, Movies) answers 500, KeyError: 'Movies' in serve's log")
FRESH_IN_PROGRESS = ("#50: a fresh token answered TransactionInProgressException after a conflict (the abort "
                     "reports the token row); intermittent, a few of the cancelled transactions")
SWEEP = ("#50: the sweep of the session's serve process (every 60 s) fails on a table it never served, "
         "KeyError: '<table>' in serve's log; intermittent, when it runs during the case")


def _serve(why: str, strict: bool = True) -> object:
    return pytest.param("serve", marks=pytest.mark.xfail(strict=strict, reason=why))


def _passes(report: Report, least: dict[str, int]) -> None:
    """No anomaly, and at least `least[what]` of each count (a run that did too little proves nothing)."""
    print(f"\n{report.summary()}")
    assert report.anomalies == [], "\n".join(report.anomalies[:15])
    assert {what: n for what, n in least.items() if report.counts[what] < n} == {}, report.counts


@pytest.mark.parametrize("side", [_serve(FRESH_IN_PROGRESS, strict=False), LOCAL])
def test_no_write_skew(fronts, side) -> None:
    report = write_skew(fronts(side), seconds=4)
    _passes(report, {"rounds": 5})


@pytest.mark.parametrize("side", [_serve(FIVE_HUNDREDS), LOCAL])
def test_no_fractured_reads(fronts, side) -> None:
    report = fractured_reads(fronts(side), seconds=4)
    _passes(report, {"write ok": 5, "TransactGetItems ok": 5, "GetItem ok": 5})


@pytest.mark.parametrize("side", [_serve(FIVE_HUNDREDS), LOCAL])
def test_plain_adds_mixed_with_transactions_all_counted(fronts, side) -> None:
    report = mixed_counters(fronts(side), seconds=4)
    _passes(report, {"UpdateItem ok": 5, "TransactWriteItems ok": 5})


@pytest.mark.slow
@pytest.mark.parametrize("fault", ["SIGKILL", "SIGSTOP"])
@pytest.mark.parametrize("side", [_serve(FIVE_HUNDREDS), LOCAL])
def test_a_process_killed_or_paused_mid_commit(fronts, side, fault) -> None:
    report = mid_commit(fronts(side), seconds=6, fault=fault)
    _passes(report, {f"{fault}s": 1, "transfer ok": 5, "audit ok": 5})


@pytest.mark.slow
@pytest.mark.parametrize("fault", ["timeout", "SIGKILL"])
@pytest.mark.parametrize("side", [_serve(SWEEP, strict=False), LOCAL])
def test_a_retried_token_is_applied_once(fronts, side, fault) -> None:
    _passes(retried(fronts(side), seconds=4, fault=fault), {"rounds": 2})
