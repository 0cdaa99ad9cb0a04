"""A family holding counters is an aggregate (int64 Sum) family and holds nothing else (#35):
`validate` says where a spec mixes them, all at once, located (tests/broken_specs 84-86
run the three common cases through the CLI)."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from ddb2bigtable.spec.errors import InputError
from ddb2bigtable.spec.reading import read_spec

HEAD = """\
version: 1
instance:
  id: video-library
tables:
  - id: videos
    source:
      table: Videos
      region: us-west-2
      key:
        partition: {name: VideoId, type: S}
        sort: {name: SK, type: S}
      billing: provisioned
      reads: 100
      writes: 50
"""


def problems(tmp_path: Path, mapping: str) -> list[tuple[int, str, str]]:
    path = tmp_path / "spec.yaml"
    path.write_text(HEAD + textwrap.indent(textwrap.dedent(mapping), "    "))
    with pytest.raises(InputError) as caught:
        read_spec(path)
    return [(p.line, p.path, p.message) for p in caught.value.problems]


def test_every_way_of_mixing_a_counter_family_is_located_at_once(tmp_path):
    found = problems(tmp_path, """\
        mapping:
          families:
            - {name: Stats, gc: {max_age: 7d}}
            - {name: Video}
          attributes:
            - {name: Count, type: counter}
            - {name: Shares, type: counter, family: Stats}
            - {name: Title, type: S, family: Stats}
          rules:
            - sort_key_prefix: VideoStatsLikes
              family: Stats
              qualifier: Likes
              value: Count
            - sort_key_prefix: VideoMeta
              family: Stats
            - sort_key_prefix: VideoStatsViews
              qualifier: Views
              value: Count
        """)
    paths = {path: (line, message) for line, path, message in found}
    assert set(paths) == {
        "tables[0].mapping.rules[2].value", "tables[0].mapping.attributes[2].family",
        "tables[0].mapping.rules[1].family", "tables[0].mapping.families[0].gc"}
    line, message = paths["tables[0].mapping.rules[2].value"]
    assert line == 32 and "it is the default family" in message
    assert "family 'Stats' holds counters (attributes[1])" in paths["tables[0].mapping.attributes[2].family"][1]
    assert "this rule writes other cells" in paths["tables[0].mapping.rules[1].family"][1]
    assert "max_age would collect the counters" in paths["tables[0].mapping.families[0].gc"][1]


def test_the_video_design_and_a_counter_family_with_ttl_timestamps_pass(tmp_path):
    path = tmp_path / "spec.yaml"
    path.write_text(HEAD.replace("      writes: 50\n", "      writes: 50\n      ttl: {attribute: expires}\n")
                    + textwrap.indent(textwrap.dedent("""\
        mapping:
          families: [{name: Stats}]
          attributes:
            - {name: Count, type: counter}
          rules:
            - sort_key_prefix: VideoStatsLikes
              family: Stats
              qualifier: Likes
              value: Count
              timestamp: ttl
        """), "    "))
    assert read_spec(path).tables[0].mapping.rules[0].timestamp == "ttl"
