"""The conformance run's results: the plugin's outcome lines (benchmarks/conformance_plugin.py)
read into one outcome per test, compared between DynamoDB Local and serve per test file,
and the tests DynamoDB Local passes and serve does not grouped by their cause on serve.

Pure functions over text, so the parsing is tested on a small saved log
(tests/serve/test_conformance_report.py) without running the suite.
"""

from __future__ import annotations

import json
import re
from collections import defaultdict
from dataclasses import dataclass

BASELINE, SUBJECT = "dynamodb_local", "serve"
_CLIENT_ERROR = re.compile(r"An error occurred \((\w+)\) when calling the (\w+) operation(?: \([^)]*\))?: ([^'\"\n]*)")
_VARYING = re.compile(r"\b\d+\b")  # sizes and positions in messages: grouped as one cause


@dataclass(frozen=True)
class Outcome:
    """One test's result on one endpoint: passed, failed, error (setup or teardown), skipped."""

    test: str  # file::name[params]
    status: str
    message: str = ""


def outcomes(log: str) -> dict[str, Outcome]:
    """One outcome per test from the plugin's JSON lines. A test passed if its call passed
    and its teardown did not fail; an xfail the suite marked counts as failed, an
    unexpected pass (XPASS) as passed: the suite's marks are about Scylla, not these endpoints."""
    found: dict[str, Outcome] = {}
    for line in log.splitlines():
        if not line.strip():
            continue
        record = json.loads(line)
        test = record["nodeid"].rpartition("/")[2]
        status = record["outcome"]
        if record["xfail"]:
            status = "passed" if status == "passed" else "failed"
        elif record["when"] != "call" and status == "failed":
            status = "error"
        if status == "passed" and test in found:
            continue  # a later phase that passed changes nothing
        if test not in found or found[test].status == "passed":
            found[test] = Outcome(test, status, record["message"])
    return found


def cause(message: str) -> str:
    """A failure's cause, short enough to group by: DynamoDB's error code, the operation
    and the message's start (numbers and quoted names left out), or the kind of assertion."""
    first = message.strip().splitlines()[0] if message.strip() else ""
    match = _CLIENT_ERROR.search(message)
    error = ""
    if match:
        code, operation, text = match.groups()
        error = f"{code} on {operation}: {re.sub(_VARYING, '_', text)[:100]}"
    if "Regex pattern did not match" in first:
        return f"another error than DynamoDB's: {error}" if error else "another error message than DynamoDB's"
    if error:
        return error
    if "DID NOT RAISE" in first:
        return "accepted a request DynamoDB refuses (no error raised)"
    if "timed out after" in first:
        return "timed out"
    if first.startswith(("AssertionError", "assert ")):
        return "answered differently from DynamoDB (assertion)"
    return first.split(":")[0][:60] or "failed"


@dataclass(frozen=True)
class FileResult:
    file: str
    tests: int
    baseline_passed: int
    subject_passed: int
    both_passed: int

    @property
    def ratio(self) -> float | None:
        """serve's passes among DynamoDB Local's (the issue's measure)."""
        return self.both_passed / self.baseline_passed if self.baseline_passed else None


def compare(file: str, baseline: dict[str, Outcome], subject: dict[str, Outcome]) -> FileResult:
    passed_b = {t for t, o in baseline.items() if o.status == "passed"}
    passed_s = {t for t, o in subject.items() if o.status == "passed"}
    return FileResult(file, len(set(baseline) | set(subject)), len(passed_b), len(passed_s), len(passed_b & passed_s))


def regressions(baseline: dict[str, Outcome], subject: dict[str, Outcome]) -> dict[str, list[str]]:
    """Tests DynamoDB Local passes and serve does not, by serve's cause (not run on serve: `not run`)."""
    groups: dict[str, list[str]] = defaultdict(list)
    for test, outcome in sorted(baseline.items()):
        if outcome.status != "passed":
            continue
        mine = subject.get(test)
        if mine is None:
            groups["not run on serve (the file stopped or timed out)"].append(test)
        elif mine.status != "passed":
            groups[cause(mine.message) if mine.status != "skipped" else "skipped on serve"].append(test)
    return dict(sorted(groups.items(), key=lambda kv: (-len(kv[1]), kv[0])))


def markdown(results: list[FileResult], groups: dict[str, list[str]], header: str) -> str:
    """The table docs/serve.md publishes, then the failing tests by cause."""
    lines = [header, "", "| test file | tests | DynamoDB Local passed | serve passed | serve / DynamoDB Local |",
             "|---|---:|---:|---:|---:|"]
    for r in results:
        ratio = f"{r.ratio:.0%}" if r.ratio is not None else "n/a"
        lines.append(f"| `{r.file}` | {r.tests} | {r.baseline_passed} | {r.both_passed} | {ratio} |")
    total = FileResult("all", sum(r.tests for r in results), sum(r.baseline_passed for r in results),
                       sum(r.subject_passed for r in results), sum(r.both_passed for r in results))
    ratio = f"{total.ratio:.0%}" if total.ratio is not None else "n/a"
    lines += [f"| **all** | {total.tests} | {total.baseline_passed} | {total.both_passed} | **{ratio}** |", "",
              "Passed on DynamoDB Local, not on serve, by serve's answer:", ""]
    for name, tests in groups.items():
        lines.append(f"- {name} ({len(tests)}): " + ", ".join(f"`{t.partition('::')[2] or t}`" for t in tests))
    return "\n".join(lines) + "\n"


def against_expected(groups: dict[str, list[str]], expected: list[str],
                     ran: set[str]) -> tuple[list[str], list[str]]:
    """(new failures, fixed): tests DynamoDB Local passes that serve now fails and the
    expected-failures list does not name, and listed tests of the files that ran that serve
    now passes (take them off the list). Tests of files not run are neither."""
    failing = {test for tests in groups.values() for test in tests}
    listed = set(expected)
    fixed = [t for t in sorted(listed - failing) if t.partition("::")[0] in ran]
    return sorted(failing - listed), fixed
