"""A DynamoDB export chain for the Movies spec, generated with the export writer.

No AWS export chain can be committed under a licence we may use, so this one is built the
way AWS lays it out (`exports/writer.py`): one full export and two incremental exports
(NEW_AND_OLD_IMAGES) of table Movies side by side under one prefix, each incremental
starting where the previous export ends. Incremental 1 adds attributes the full export
never had (`bin_update`, a list; `blob`, binary; `tagline`, text), updates and inserts
items and deletes one; incremental 2 deletes the item incremental 1 inserted, updates one
incremental 1 updated and deletes one of the full export's. `final` is the table the
whole chain describes, by (year, title); `states` the table after each export.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path

from ddb2bigtable.codec.items import Item
from ddb2bigtable.exports.writer import IncrementalChange, write_export, write_incremental_export

ARN = "arn:aws:dynamodb:us-west-2:123456789012:table/Movies"
FULL_TIME = datetime(2026, 11, 20, 9, tzinfo=UTC)
INC1_TIME = FULL_TIME + timedelta(hours=1)
INC2_TIME = FULL_TIME + timedelta(hours=2)


@dataclass(frozen=True)
class Chain:
    prefix: Path  # the folder holding all three exports (AWS's layout)
    full: Path
    inc1: Path
    inc2: Path
    states: tuple[dict[tuple[str, str], Item], ...]  # (year, title) -> item, after each export in order

    @property
    def exports(self) -> tuple[Path, Path, Path]:
        return self.full, self.inc1, self.inc2

    @property
    def final(self) -> dict[tuple[str, str], Item]:
        """The table the whole chain describes."""
        return self.states[-1]


def movie(year: int, title: str, rank: int, **extra: dict) -> Item:
    return {"year": {"N": str(year)}, "title": {"S": title}, "info": {"M": {"rank": {"N": str(rank)}}}, **extra}


def _keys(item: Item) -> Item:
    return {"year": item["year"], "title": item["title"]}


def _change(when: datetime, old: Item | None, new: Item | None) -> IncrementalChange:
    micros = (when - datetime(1970, 1, 1, tzinfo=UTC)) // timedelta(microseconds=1) - 1
    return IncrementalChange(keys=_keys(new or old or {}), write_time_micros=micros, new_image=new, old_image=old)


def build_chain(prefix: Path) -> Chain:
    full_items = [movie(2000 + i, f"Movie {i}", i) for i in range(12)]
    updated = {**full_items[0], "bin_update": {"L": [{"S": "0000"}, {"S": "0001"}]},
               "blob": {"B": b"\x00\xffbinary"}, "tagline": {"S": "the best"}}
    inserted = movie(2030, "Sequel", 99, tagline={"S": "twice"})
    again = {**updated, "bin_update": {"L": [{"S": "0002"}]}, "tagline": {"S": "still the best"}}
    inc1 = [_change(INC1_TIME, full_items[0], updated), _change(INC1_TIME, None, inserted),
            _change(INC1_TIME, full_items[1], None)]
    inc2 = [_change(INC2_TIME, updated, again), _change(INC2_TIME, inserted, None),
            _change(INC2_TIME, full_items[2], None)]
    full = write_export(prefix, ARN, full_items, export_time=FULL_TIME, items_per_file=5)
    first = write_incremental_export(prefix, ARN, inc1,
                         export_time=INC1_TIME, export_from_time=FULL_TIME)
    second = write_incremental_export(prefix, ARN, inc2,
                          export_time=INC2_TIME, export_from_time=INC1_TIME)
    states = [{}]
    for changes in ([_change(FULL_TIME, None, item) for item in full_items], inc1, inc2):
        state = dict(states[-1])
        for change in changes:
            key = (change.keys["year"]["N"], change.keys["title"]["S"])
            if change.new_image is None:
                state.pop(key, None)
            else:
                state[key] = change.new_image
        states.append(state)
    return Chain(prefix, full, first, second, tuple(states[1:]))
