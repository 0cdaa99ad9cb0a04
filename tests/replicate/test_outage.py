"""Waiting out DynamoDB out of reach (replicate/outage.py): announced pauses that double
up to a cap, a stop that cuts a pause short, and a `ServiceError` saying "rerun to
resume" once the outage lasted the limit."""

from __future__ import annotations

import asyncio
import time

import pytest

from ddb2bigtable.replicate import outage
from ddb2bigtable.replicate.outage import Outage, answer
from ddb2bigtable.replicate.stream import Unavailable
from ddb2bigtable.spec.errors import ServiceError

DOWN = Unavailable("DynamoDB table Movies (http://127.0.0.1:9)", "cannot be reached: refused")


def test_pauses_double_up_to_the_cap_are_announced_and_the_limit_ends_it(monkeypatch):
    monkeypatch.setattr(outage, "FIRST_PAUSE", 0.05)
    monkeypatch.setattr(outage, "LONGEST_PAUSE", 0.1)
    said: list[str | None] = []
    waits = Outage(0.4, said.append, "the checkpoint keeps its place")
    began = time.monotonic()

    async def down_for_good() -> None:
        while True:
            await waits.wait(DOWN, began, lambda: False)
    with pytest.raises(ServiceError, match=r"127\.0\.0\.1:9\) cannot be reached: refused; gave up after 0 s of "
                                           r"retries: rerun to resume \(the checkpoint keeps its place\)"):
        asyncio.run(down_for_good())
    assert 0.4 <= time.monotonic() - began < 2.0
    assert said[0] is not None and "retrying in 0 s (out for 0 s, giving up after 0 s)" in said[0]
    assert waits.count == 1 and waits.tries >= 5  # 0.05, 0.1, 0.1, 0.1, ... (capped)


def test_a_stop_cuts_a_pause_short_and_answer_returns_once_it_answers(monkeypatch):
    monkeypatch.setattr(outage, "FIRST_PAUSE", 30.0)
    said: list[str | None] = []
    waits = Outage(60.0, said.append, "")
    began = time.monotonic()
    asyncio.run(waits.wait(DOWN, began, lambda: time.monotonic() - began > 0.3))
    assert time.monotonic() - began < 2.0  # not the 30 s pause

    calls = []

    def flaky() -> str:
        calls.append(1)
        if len(calls) < 3:
            raise DOWN
        return "answer"
    monkeypatch.setattr(outage, "FIRST_PAUSE", 0.01)
    again = Outage(60.0, said.append, "")
    assert asyncio.run(answer(flaky, again, lambda: False)) == "answer"
    assert len(calls) == 3 and said[-1] is None and again.began is None and again.count == 1
