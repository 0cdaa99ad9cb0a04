"""A live global table's replicas each have their own point-in-time recovery
(DescribeContinuousBackups answers per region): read in the replica's region, kept where it
differs from the table's, and a warning when it cannot be read (never assumed silently)."""

from __future__ import annotations

from typing import Any

from ddb2bigtable.sources.aws.replicas import _own_pitr
from ddb2bigtable.sources.model import Notice, ReplicaDef, TableDefinition, given
from ddb2bigtable.spec.errors import InputError, Problem


class _Region:
    """A replica region's clients answering DescribeContinuousBackups with `answer`."""

    def __init__(self, answer: Any):
        self.answer = answer
        self.dynamodb = self

    def describe_continuous_backups(self, **_: Any) -> Any:
        return self.answer

    def optional(self, operation: str, fn: Any, **kwargs: Any) -> tuple[Any, str | None]:
        if isinstance(self.answer, Exception):
            raise self.answer
        if self.answer is None:
            return None, f"{operation} is not served by this endpoint"
        return fn(**kwargs), None


def _table() -> TableDefinition:
    return TableDefinition(name=given("Orders", "t"), region=given("us-east-1", "t"),
                           partition=given(None, "t"), sort=None, billing=given("on_demand", "t"),
                           pitr=given(True, "home"), pitr_days=given(35, "home"))  # type: ignore[arg-type]


def _backups(status: str, days: int | None = None) -> dict:
    described: dict[str, Any] = {"PointInTimeRecoveryStatus": status}
    if days:
        described["RecoveryPeriodInDays"] = days
    return {"ContinuousBackupsDescription": {"PointInTimeRecoveryDescription": described}}


def test_a_replica_without_pitr_says_so_and_one_like_the_table_adds_nothing():
    replica = ReplicaDef(given("eu-west-1", "r"))
    notices: list[Notice] = []
    off = _own_pitr(_Region(_backups("DISABLED")), _table(), replica, notices)  # type: ignore[arg-type]
    assert off.pitr is not None and off.pitr.value is False and "in eu-west-1" in off.pitr.origin
    same = _own_pitr(_Region(_backups("ENABLED", 35)), _table(), replica, notices)  # type: ignore[arg-type]
    assert same == replica and notices == []
    shorter = _own_pitr(_Region(_backups("ENABLED", 7)), _table(), replica, notices)  # type: ignore[arg-type]
    assert shorter.pitr_days is not None and shorter.pitr_days.value == 7


def test_a_replica_pitr_that_cannot_be_read_is_a_warning():
    replica = ReplicaDef(given("eu-west-1", "r"))
    for answer in (None, InputError([Problem.about("aws://eu-west-1/Orders", "", "not found")])):
        notices: list[Notice] = []
        assert _own_pitr(_Region(answer), _table(), replica, notices) == replica  # type: ignore[arg-type]
        (notice,) = notices
        assert notice.code == "not-in-source" and "replica eu-west-1" in notice.message
        assert "describe-continuous-backups --table-name Orders --region eu-west-1" in notice.message
