"""The verify report on screen adds up: what JSON says about a chain's deletes is shown too."""

from __future__ import annotations

from rich.console import Console

from ddb2bigtable.load.verify import VerifyReport
from ddb2bigtable.render.load_report import print_verify


def _screen(report: VerifyReport) -> str:
    console = Console(record=True, width=120)
    print_verify(report, console)
    return console.export_text()


def test_a_chains_deleted_keys_explain_why_checked_exceeds_the_table():
    report = VerifyReport("movies", "exports/chain", "CHAIN", 4_609, sampled=False, checked=4_611, matched=4_611,
                          deleted_absent=2, table_items=4_609)
    text = _screen(report)
    assert "4,611" in text and "4,609" in text
    assert "matched includes 2 keys the chain deleted last" in text


def test_a_full_export_without_deletes_says_nothing_about_them():
    report = VerifyReport("movies", "exports/movies", "FULL_EXPORT", 4_609, sampled=False, checked=4_609,
                          matched=4_609, table_items=4_609)
    assert "deleted" not in _screen(report)
