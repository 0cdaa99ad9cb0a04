"""benchmarks/conformance_report.py on a small saved log of the conformance plugin: what the
published pass rates are computed from (the suite itself takes minutes a file, so it is
run by benchmarks/serve_conformance.py, not here)."""

from __future__ import annotations

import json

from benchmarks.conformance_report import against_expected, compare, markdown, outcomes, regressions

F = "test/alternator/test_item.py::"
DENIED = ("botocore.exceptions.ClientError: An error occurred (ValidationException) when calling the UpdateItem "
          "operation (reached max retries: 0): the legacy parameter AttributeUpdates is not supported by "
          "ddb2bigtable serve: use its expression form")


def lines(*records: tuple[str, str, str, bool, str]) -> str:
    return "\n".join(json.dumps({"nodeid": F + test, "when": when, "outcome": outcome, "xfail": xfail,
                                 "message": message}) for test, when, outcome, xfail, message in records) + "\n"


LOCAL = lines(("test_put", "call", "passed", False, ""),
              ("test_legacy", "call", "passed", False, ""),
              ("test_legacy_2", "call", "passed", False, ""),
              ("test_nan", "call", "passed", False, ""),
              ("test_slow", "call", "passed", False, ""),
              ("test_scylla_bug", "call", "passed", True, ""),  # XPASS: the suite's mark is about Scylla
              ("test_cql", "setup", "skipped", False, "Scylla-only"))
SERVE = lines(("test_put", "call", "passed", False, ""),
              ("test_put", "teardown", "failed", False, "ResourceInUseException"),
              ("test_legacy", "call", "failed", False, DENIED),
              ("test_legacy_2", "call", "failed", False, DENIED),
              ("test_nan", "call", "failed", False, "Failed: DID NOT RAISE <class 'ClientError'>"),
              ("test_scylla_bug", "call", "skipped", True, "xfail"),  # XFAIL counts as a failure
              ("test_cql", "setup", "skipped", False, "Scylla-only"))


def test_outcomes_count_a_failed_teardown_and_the_suites_xfail_marks_as_failures():
    local, serve = outcomes(LOCAL), outcomes(SERVE)
    assert local["test_item.py::test_scylla_bug"].status == "passed"
    assert serve["test_item.py::test_scylla_bug"].status == "failed"
    assert serve["test_item.py::test_put"].status == "error"
    assert local["test_item.py::test_cql"].status == "skipped"


def test_the_ratio_is_serves_passes_among_dynamodb_locals():
    result = compare("test_item.py", outcomes(LOCAL), outcomes(SERVE))
    assert (result.tests, result.baseline_passed, result.both_passed) == (7, 6, 0)
    assert result.ratio == 0


def test_failures_are_grouped_by_serves_answer_and_a_test_never_run_says_so():
    groups = regressions(outcomes(LOCAL), outcomes(SERVE))
    legacy = next(name for name in groups if name.startswith(
        "ValidationException on UpdateItem: the legacy parameter AttributeUpdates is not supported"))
    assert groups[legacy] == ["test_item.py::test_legacy", "test_item.py::test_legacy_2"]
    assert groups["accepted a request DynamoDB refuses (no error raised)"] == ["test_item.py::test_nan"]
    assert groups["not run on serve (the file stopped or timed out)"] == ["test_item.py::test_slow"]
    assert list(groups)[0] == legacy  # the largest group first


def test_the_markdown_table_has_a_row_per_file_and_the_total():
    text = markdown([compare("test_item.py", outcomes(LOCAL), outcomes(SERVE))],
                    regressions(outcomes(LOCAL), outcomes(SERVE)), "run")
    assert "| `test_item.py` | 7 | 6 | 0 | 0% |" in text
    assert "| **all** | 7 | 6 | 0 | **0%** |" in text
    assert "(2): `test_legacy`, `test_legacy_2`" in text


def test_the_expected_failures_list_flags_a_new_failure_and_a_fix_in_the_files_that_ran():
    groups = regressions(outcomes(LOCAL), outcomes(SERVE))
    expected = ["test_item.py::test_legacy", "test_item.py::test_legacy_2", "test_item.py::test_nan",
                "test_item.py::test_slow", "test_item.py::test_fixed_since", "test_scan.py::test_not_run_now"]
    new, fixed = against_expected(groups, expected, {"test_item.py"})
    assert new == ["test_item.py::test_put", "test_item.py::test_scylla_bug"]  # the list names neither
    assert fixed == ["test_item.py::test_fixed_since"]
