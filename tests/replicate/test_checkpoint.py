"""The checkpoint file: private, atomic, and refused when it cannot be trusted."""

from __future__ import annotations

import pytest

from ddb2bigtable.replicate.checkpoint import Checkpoint, load_checkpoint, resume_problem, save_checkpoint
from ddb2bigtable.spec.errors import InputError

TARGET = {"project": "p", "instance": "i", "table": "t", "endpoint": "127.0.0.1:1"}


def test_a_checkpoint_round_trips_and_is_its_owners_only(tmp_path):
    path = tmp_path / "work" / "replicate.json"
    saved = Checkpoint("arn:stream", TARGET, 1_000, 2_000).advanced("shardId-1", "42", False, 3_000)
    saved = saved.advanced("shardId-0", None, True, 4_000)
    save_checkpoint(path, saved)
    assert load_checkpoint(path) == saved and saved.after == {"shardId-1": "42"}
    assert saved.finished == {"shardId-0"} and saved.saved_micros == 4_000
    assert path.stat().st_mode & 0o777 == 0o600 and path.parent.stat().st_mode & 0o777 == 0o700
    assert not path.with_suffix(".tmp").exists() and load_checkpoint(tmp_path / "none.json") is None


def test_a_damaged_checkpoint_is_bad_input_that_says_what_to_do(tmp_path):
    path = tmp_path / "replicate.json"
    path.write_text('{"stream_arn": "arn", "after": ')
    with pytest.raises(InputError, match="damaged.*delete it and rerun with --since"):
        load_checkpoint(path)


def test_another_target_or_another_stream_is_not_resumed(tmp_path):
    checkpoint = Checkpoint("arn:old-stream", TARGET, 1_000)
    path = tmp_path / "replicate.json"
    assert resume_problem(checkpoint, path, "arn:old-stream", TARGET) is None
    assert "was written for" in resume_problem(checkpoint, path, "arn:old-stream", TARGET | {"instance": "j"})
    moved = resume_problem(checkpoint, path, "arn:new-stream", TARGET)
    assert "disabled and enabled again" in moved and "Re-export" in moved


def test_the_lag_times_round_trip_and_older_checkpoints_have_none(tmp_path):
    """`cutover check` reads the newest applied record and the last catch-up from here."""
    import json
    from dataclasses import replace

    path = tmp_path / "replicate.json"
    saved = Checkpoint("arn:stream", TARGET, 1_000).advanced("shardId-1", "42", False, 3_000, 2_500)
    saved = replace(saved.advanced("shardId-1", "43", False, 4_000, None), caught_up_micros=3_900)
    assert (saved.newest_micros, saved.caught_up_micros) == (2_500, 3_900)  # never goes back
    save_checkpoint(path, saved)
    assert load_checkpoint(path) == saved
    older = {k: v for k, v in json.loads(path.read_text()).items() if k not in ("newest_micros", "caught_up_micros")}
    path.write_text(json.dumps(older))
    assert load_checkpoint(path) == replace(saved, newest_micros=None, caught_up_micros=None)


@pytest.mark.parametrize("field, written, says", [
    ("newest_micros", "Infinity", "newest_micros: the replication checkpoint is damaged: Infinity is not a time"),
    ("start_micros", "NaN", "NaN is not a time in microseconds"),
    ("saved_micros", "1e400", "Infinity is not a time in microseconds"),
    ("caught_up_micros", "-5", "-5 is not a time in microseconds"),
    ("after", '{"shardId-1": "4x2"}', 'after.shardId-1: the replication checkpoint is damaged: "4x2" is not a DynamoDB'),
    ("finished", '"shardId-0"', "finished: the replication checkpoint is damaged: expected a list of shard ids"),
])
def test_a_value_no_save_writes_is_refused_at_its_line_and_column(tmp_path, field, written, says):
    """Infinity or NaN raised OverflowError (a traceback in replicate and cutover check)."""
    path = tmp_path / "replicate.json"
    save_checkpoint(path, Checkpoint("arn:stream", TARGET, 1_000, 2_000, newest_micros=5, caught_up_micros=6))
    lines = path.read_text().splitlines()
    line = next(n for n, text in enumerate(lines, 1) if f'"{field}"' in text)
    lines[line - 1] = f' "{field}": {written},'
    path.write_text("\n".join(lines))
    with pytest.raises(InputError) as refused:
        load_checkpoint(path)
    (problem,) = refused.value.problems
    assert (problem.file, problem.line) == (str(path), line) and problem.column is not None
    assert says in str(problem) and str(problem).endswith("delete it and rerun with --since the export you loaded")


def test_a_fifo_in_the_checkpoints_place_is_refused_without_waiting_for_a_writer(tmp_path):
    import os

    path = tmp_path / "replicate.json"
    os.mkfifo(path)
    with pytest.raises(InputError, match="not a regular file"):
        load_checkpoint(path)
