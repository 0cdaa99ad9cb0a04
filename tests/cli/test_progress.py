"""The load's progress bar knows its total and shows a readable rate."""

from __future__ import annotations

from types import SimpleNamespace

from rich.console import Console

from ddb2bigtable.cli.load_runs import _Rate, progress_bars


def test_the_bar_takes_the_manifests_total():
    console = Console(force_terminal=True, width=120, record=True)
    with progress_bars(console) as bars:
        advance = bars("movies-local/movies")
        advance(0, total=4609)
        advance(2000)
    assert "2000/4609" in console.export_text()  # was 2000/?


def test_the_rate_is_a_whole_number():
    assert _Rate().render(SimpleNamespace(speed=17525.819581525215)).plain == "17,526 items/s"
    assert _Rate().render(SimpleNamespace(speed=None)).plain == "- items/s"
