"""`replicate --outage-limit` through the CLI, with DynamoDB out of reach from the start
(nothing listens on the endpoint, so no server is needed): the limit given is how long the
run waits before exit 1; a bad value is exit 2 with a message and no traceback."""

from __future__ import annotations

import time

import pytest
from click.testing import CliRunner

from ddb2bigtable.cli.app import main
from ddb2bigtable.replicate import outage, stream
from ddb2bigtable.replicate.outage import limit_for

from ..conftest import ROOT

NOBODY = "http://127.0.0.1:9"  # the discard port: connections are refused at once


@pytest.fixture
def unreachable(monkeypatch):
    """boto3 gives up at once and pauses stay short, so the run's own waiting is what is timed."""
    monkeypatch.setattr(stream, "MAX_ATTEMPTS", 1)
    monkeypatch.setattr(outage, "LONGEST_PAUSE", 0.5)
    monkeypatch.setattr(outage, "FIRST_PAUSE", 0.5)
    for name, value in (("AWS_ACCESS_KEY_ID", "local"), ("AWS_SECRET_ACCESS_KEY", "local"),
                        ("BIGTABLE_EMULATOR_HOST", "127.0.0.1:9")):
        monkeypatch.setenv(name, value)


def replicate(tmp_path, *args: str):
    return CliRunner().invoke(main, ["replicate", str(ROOT / "specs" / "movies.yaml"), "--table", "movies",
                                     "--root", str(ROOT), "--work-dir", str(tmp_path / "work"),
                                     "--endpoint-url", NOBODY, *args])


@pytest.mark.parametrize("limit", [1.5, 4.0])
def test_the_outage_limit_is_how_long_an_outage_is_waited_out(unreachable, tmp_path, limit):
    began = time.monotonic()
    out = replicate(tmp_path, "--outage-limit", str(limit))
    waited = time.monotonic() - began
    assert out.exit_code == 1, out.output
    assert limit <= waited < limit + 10
    assert f"giving up after {limit:,.0f} s" in out.output and "retrying in" in out.output
    assert "gave up after" in out.output and "rerun to resume" in out.output and "Traceback" not in out.output


def test_without_the_option_the_mode_decides():
    assert limit_for(follow=True) == outage.FOLLOW_LIMIT == 900
    assert limit_for(follow=False) == outage.CAUGHT_UP_LIMIT == 60
    assert limit_for(follow=True, limit=5.0) == limit_for(follow=False, limit=5.0) == 5.0


@pytest.mark.parametrize(("value", "says"), [("0", "--outage-limit: must be a number of seconds above 0, not 0"),
                                             ("-5", "--outage-limit: must be a number of seconds above 0, not -5"),
                                             ("nan", "--outage-limit: must be a number of seconds above 0, not nan"),
                                             ("soon", "'soon' is not a valid float")])
def test_a_bad_outage_limit_is_exit_2_with_a_message(unreachable, tmp_path, value, says):
    out = replicate(tmp_path, "--outage-limit", value)
    assert out.exit_code == 2 and says in out.output and "Traceback" not in out.output, out.output
    assert "cannot be reached" not in out.output  # refused before anything was read
