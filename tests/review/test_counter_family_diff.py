"""`diff` on a pull request that changes a family's type (#35): the video design's counters
become plain numbers, so `Stats` stops being an aggregate family, which Bigtable cannot
convert in place: DESTRUCTIVE, and `--fail-on destructive` fails the check."""

from __future__ import annotations

from .test_diff import change, diff_json, repo, run, stage  # noqa: F401 - repo is a fixture


def test_a_family_type_change_is_flagged_destructive_in_every_stage_that_has_it(repo):  # noqa: F811
    change(repo, "specs/video-single-table.yaml", "{name: Count, type: counter}", "{name: Count, type: N}")
    document = diff_json(repo)
    dev = stage(document, "dev")
    (flagged,) = [c for c in dev["changes"] if c["what"] == "family type"]
    assert flagged["scope"] == "video-library-dev/table videos/family Stats"
    assert (flagged["before"], flagged["after"], flagged["flag"]) == ("int64_sum", "plain", "DESTRUCTIVE")
    assert "deletes every cell in it" in flagged["why"] and dev["destructive"]
    assert run(repo, "--base", "HEAD~1", "--head", "HEAD", "--fail-on", "destructive").returncode == 1
