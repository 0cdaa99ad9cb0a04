"""What every workload shares: boto3 clients on their defaults (retries in botocore's standard
mode, a ClientRequestToken filled in on every TransactWriteItems) that note every HTTP
attempt's answer, the three outcomes of one call, threads run until a deadline, a table of
the workload's own on either side, and the report a checker gives.

Every attempt is seen, not only the last one botocore hands back: a 500 botocore retried
silently is still a 500 serve answered, and a TransactionInProgressException on the first
attempt of a token never sent before is serve calling a fresh transaction in flight."""

from __future__ import annotations

import json
import threading
import time
import uuid
from collections import Counter
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from enum import Enum
from typing import Any

import boto3
from botocore.config import Config
from botocore.exceptions import BotoCoreError, ClientError

from .fronts import Fronts


@dataclass
class Report:
    """One checker's run on one side: what happened, counted, and every anomaly found."""

    workload: str
    side: str
    counts: Counter[str] = field(default_factory=Counter)
    anomalies: list[str] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def count(self, what: str, n: int = 1) -> None:
        with self.lock:
            self.counts[what] += n

    def anomaly(self, what: str) -> None:
        with self.lock:
            self.anomalies.append(what)

    def summary(self) -> str:
        kinds = Counter(a.split(":")[0] for a in self.anomalies)
        seen = ", ".join(f"{n} {k}" for k, n in sorted(kinds.items())) or "none"
        return f"{self.workload} on {self.side}: anomalies {seen}; " + ", ".join(
            f"{k} {n}" for k, n in sorted(self.counts.items()))


class Attempts:
    """Every HTTP attempt of every client of one run (botocore's `needs-retry` event sees each)."""

    def __init__(self, report: Report):
        self.report = report
        self.tokens: set[str] = set()
        self.lock = threading.Lock()

    def note(self, response: Any = None, caught_exception: Any = None, operation: Any = None,
             request_dict: Any = None, **_: Any) -> None:
        name = operation.name if operation is not None else "?"
        fresh = False
        if name == "TransactWriteItems" and request_dict is not None:
            token = json.loads(request_dict["body"] or b"{}").get("ClientRequestToken")
            with self.lock:
                fresh = token not in self.tokens
                self.tokens.add(token)
        if response is None:
            self.report.count(f"attempt {type(caught_exception).__name__}")
            return
        status, error = response[0].status_code, response[1].get("Error", {})
        self.report.count(f"attempt {status} {error.get('Code', '')}".rstrip())
        if status >= 500:
            self.report.anomaly(f"5xx answer: {name} {status} {error.get('Code')} {error.get('Message', '')[:400]}")
        if fresh and error.get("Code") == "TransactionInProgressException":
            self.report.anomaly(f"in progress on a fresh token: {name} {error.get('Message', '')[:400]}")


_SESSION: list[boto3.session.Session] = []
_MAKING = threading.Lock()


def client(url: str, attempts: Attempts, **config: Any) -> Any:
    """A DynamoDB client on `url` as an application makes one (boto3's defaults but for `config`),
    every attempt noted in `attempts`. One session makes them all, so botocore reads its service
    model once (the workloads make their clients before their clocks start)."""
    with _MAKING:
        if not _SESSION:
            _SESSION.append(boto3.session.Session())
        made = _SESSION[0].client("dynamodb", endpoint_url=url, region_name="us-west-2",
                                  aws_access_key_id="workload", aws_secret_access_key="workload",
                                  config=Config(**config) if config else None)
    made.meta.events.register("needs-retry.dynamodb", attempts.note)
    return made


class Kind(Enum):
    OK = "ok"  # acknowledged: applied
    REFUSED = "refused"  # a 4xx answer: not applied
    AMBIGUOUS = "ambiguous"  # a timeout, a 5xx, a connection cut: applied or not, the client cannot know


# Answers that say a transaction may still apply: its token's first request is in flight.
MAYBE_APPLIED = {"TransactionInProgressException"}


@dataclass(frozen=True)
class Outcome:
    kind: Kind
    code: str = ""
    answer: Any = None
    reasons: tuple[str, ...] = ()


def call(operation: Callable[[], Any]) -> Outcome:
    """`operation()`'s outcome as the application sees it (after botocore's own retries)."""
    try:
        return Outcome(Kind.OK, answer=operation())
    except ClientError as error:
        code = error.response["Error"]["Code"]
        status = error.response.get("ResponseMetadata", {}).get("HTTPStatusCode", 0)
        reasons = tuple(r.get("Code", "") for r in error.response.get("CancellationReasons", []))
        kind = Kind.AMBIGUOUS if status >= 500 or code in MAYBE_APPLIED else Kind.REFUSED
        return Outcome(kind, code, reasons=reasons)
    except BotoCoreError as error:  # a read timeout, a connection refused or cut
        return Outcome(Kind.AMBIGUOUS, type(error).__name__)


def together(*jobs: Callable[[], None]) -> None:
    """Each job in a thread of its own, all joined; the first exception a job raised is raised."""
    failed: list[BaseException] = []

    def run(job: Callable[[], None]) -> None:
        try:
            job()
        except BaseException as error:  # noqa: BLE001 - handed to the caller's thread
            failed.append(error)

    threads = [threading.Thread(target=run, args=(job,)) for job in jobs]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    if failed:
        raise failed[0]


def settled(operation: Callable[[], Any], seconds: float = 30.0) -> Any:
    """`operation()`'s answer once it gives one (locks a crash left settle, a pause ends)."""
    deadline = time.monotonic() + seconds
    while True:
        outcome = call(operation)
        if outcome.kind is Kind.OK:
            return outcome.answer
        if time.monotonic() > deadline:
            raise AssertionError(f"no answer within {seconds:g} s: last {outcome.code}")
        time.sleep(0.2)


@contextmanager
def workload(name: str, fronts: Fronts, keys: str = "id") -> Iterator[tuple[Report, Attempts, str]]:
    """A run of one checker on one side: its report, the attempts' recorder, and a table of its own
    (hash key `keys`, a string) made on that side and deleted afterwards. On leaving, the report
    has every traceback serve logged meanwhile as an anomaly."""
    report = Report(name, fronts.side)
    attempts = Attempts(report)
    table = f"wl_{name.replace(' ', '_')}_{uuid.uuid4().hex[:8]}"
    mark = fronts.log_mark()
    setup = client(fronts.direct(0), attempts)
    setup.create_table(TableName=table, KeySchema=[{"AttributeName": keys, "KeyType": "HASH"}],
                       AttributeDefinitions=[{"AttributeName": keys, "AttributeType": "S"}],
                       BillingMode="PAY_PER_REQUEST")
    try:
        yield report, attempts, table
    finally:
        for line in fronts.tracebacks(mark):
            report.anomaly(f"traceback in serve's log: {line[:200]}")
        settled(lambda: client(fronts.direct(0), attempts).delete_table(TableName=table))
