"""What `replicate` tells off a terminal (stderr lines): an outage's start, retries and
end, naming the side that was out, whichever side it was."""

from __future__ import annotations

import pytest

from ddb2bigtable.cli.replicate_cmd import _progress_line
from ddb2bigtable.replicate.report import ReplicateReport
from ddb2bigtable.replicate.shares import Share


@pytest.mark.parametrize("side", ["DynamoDB", "Bigtable"])
def test_the_end_of_an_outage_names_the_side_that_was_out(capsys, side):
    report = ReplicateReport("movies", "arn", 0, resumed=False)
    with _progress_line("json", Share()) as news:
        report.outage, report.outage_side = f"{side} ...; retrying in 1 s", side
        news(report)
        news(report)  # the same news: not told twice
        report.outage = None
        news(report)
    assert capsys.readouterr().err.splitlines() == [f"replicate: {side} ...; retrying in 1 s",
                                                    f"replicate: {side} answers again: resuming"]
