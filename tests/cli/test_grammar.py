"""One grammar for every command (docs/cli.md, "Grammar"), read from click itself: every
option name has one row of meaning on that page, `--stage` is one stage defaulting to
`local`, `--format` speaks one vocabulary, `--export` is one export and `--exports` a folder
of them, `--sample` a count. The old spellings still work, with one `deprecated:` line on
stderr and the same stdout."""

from __future__ import annotations

import json
import re
import shutil
from collections.abc import Iterator

import click
import pytest
from click.testing import CliRunner

from ddb2bigtable.cli.app import main

from ..conftest import ROOT

CHECKING = {"validate", "diff", "advise"}  # they only read and check: --stage adds stages to check, no default
FORMATS = {"text", "markdown", "json"}
REPORTS = {"plan", "diff", "advise"}  # the outputs that are reports, also written as a pull-request comment


def _commands() -> Iterator[tuple[str, click.Command]]:
    for name, command in main.commands.items():
        if isinstance(command, click.Group):
            yield from ((f"{name} {sub}", c) for sub, c in command.commands.items())
        else:
            yield name, command


def _options(command: click.Command) -> dict[str, click.Option]:
    """Every visible option by its long name (`-o` alone where it has none)."""
    found = {}
    for param in command.params:
        if isinstance(param, click.Option) and not param.hidden and "--help" not in param.opts:
            found[max(param.opts, key=len)] = param
    return found


def _grammar_rows() -> dict[str, str]:
    section = (ROOT / "docs" / "cli.md").read_text(encoding="utf-8").split("\n## Grammar\n", 1)[1].split("\n## ", 1)[0]
    rows = re.findall(r"^\| `(-[^`]+)` \| (.+?) \|", section, re.M)
    return dict(rows)


def test_every_option_name_has_one_meaning_on_the_grammar_page():
    rows = _grammar_rows()
    used = {name for _, command in _commands() for name in _options(command)}
    assert used - set(rows) == set(), "docs/cli.md, Grammar: give these options their one meaning"
    assert set(rows) - used == set(), "docs/cli.md, Grammar: no command has these options any more"


def test_stage_is_one_stage_defaulting_to_local_where_a_command_acts():
    for name, command in _commands():
        stage = _options(command).get("--stage")
        if stage is None:
            continue
        default = stage.get_default(click.Context(command))
        if name in CHECKING:
            assert (stage.multiple or default is None) and not stage.required, name
        else:
            assert (default, stage.multiple, stage.required) == ("local", False, False), name


def test_format_speaks_one_vocabulary():
    for name, command in _commands():
        fmt = _options(command).get("--format")
        if fmt is None or name == "import":  # import writes a spec, not a report: yaml or json
            continue
        choices = list(fmt.type.choices)  # type: ignore[attr-defined]
        default = fmt.get_default(click.Context(command))
        assert set(choices) <= FORMATS and choices[0] == "text" and default == "text", (name, choices)
        assert ("markdown" in choices) == (name in REPORTS), name


def test_export_is_one_export_and_exports_a_folder_of_them():
    for name, command in _commands():
        options = _options(command)
        if "--export" in options:
            assert name in {"load", "verify", "advise", "import", "validate", "plan"}, name
        if "--exports" in options:
            assert name == "up" and isinstance(options["--exports"].type, click.Path), name


def test_sample_is_a_count():
    for name, command in _commands():
        sample = _options(command).get("--sample")
        if sample is None or name == "advise":  # advise's callback: a fraction there is deprecated (below)
            continue
        if name == "cutover check":  # 1 to 100,000, checked with the other inputs (--sample: must be at least 1)
            assert sample.type is click.INT, name
            continue
        assert isinstance(sample.type, click.IntRange) and sample.type.min == 1, name


def test_one_table_is_named_by_table_and_specs_are_arguments():
    """Issue #53: load, verify, replicate and cutover check took one `SPEC` and --table where
    the others took `SPECS...`; now every command naming specs takes `SPECS...`, and a
    command acting in a stage reads the stage's list when none are given."""
    for name, command in _commands():
        options = _options(command)
        table = options.get("--table")
        if table is not None:
            assert not table.multiple and not table.is_flag, name
        arguments = {p.name: p for p in command.params if isinstance(p, click.Argument)}
        if "--table" in options or "--stage" in options:
            assert set(arguments) <= {"specs"}, (name, list(arguments))
        if "specs" in arguments:
            assert arguments["specs"].nargs == -1, name
            assert arguments["specs"].required == (name in CHECKING), name  # the stage's list, where one acts


def test_table_without_specs_is_found_in_the_stage_s_list(monkeypatch, tmp_path):
    monkeypatch.chdir(ROOT)
    monkeypatch.delenv("BIGTABLE_EMULATOR_HOST", raising=False)
    for command in (["load", "--export", "exports/movies"], ["verify", "--export", "exports/movies"],
                    ["replicate"], ["cutover", "check"]):
        found = CliRunner().invoke(main, [*command, "--table", "movies"])
        # the table was found in the local stage's specs: what stops it is the emulator, not the table
        assert found.exit_code == 2 and "targets the emulator" in found.stderr, (command, found.output)
        named = CliRunner().invoke(main, [*command, "specs/movies.yaml", "--table", "movies"])
        assert named.stderr == found.stderr, command  # the old spelling, one spec, is the same command
        wrong = CliRunner().invoke(main, [*command, "--table", "movie"])
        assert wrong.exit_code == 2 and "no table 'movie' in these specs; their tables: " in wrong.stderr
        assert "did you mean 'movies'?" in wrong.stderr and "stage 'local' lists" in wrong.stderr, wrong.stderr


def test_a_table_id_in_two_specs_asks_for_the_spec(tmp_path, monkeypatch):
    monkeypatch.chdir(ROOT)
    twin = tmp_path / "movies-twin.yaml"
    text = (ROOT / "specs" / "movies.yaml").read_text(encoding="utf-8")
    twin.write_text(re.sub(r"(?m)^(\s*id: )(\S+)", r"\1\2-twin", text, count=1), encoding="utf-8")
    both = CliRunner().invoke(main, ["verify", "specs/movies.yaml", str(twin), "--table", "movies",
                                     "--export", "exports/movies"])
    assert both.exit_code == 2 and "table id 'movies' is in 2 specs" in both.stderr, both.output
    assert "give the spec file holding the one meant" in both.stderr


@pytest.mark.parametrize("old, new", [
    (["plan", "--stage", "dev", "--format", "table"], ["plan", "--stage", "dev", "--format", "text"]),
    (["diff", "--base", "HEAD", "--stage", "dev", "--format", "table"],
     ["diff", "--base", "HEAD", "--stage", "dev", "--format", "text"]),
    (["advise", "specs/movies.yaml", "--format", "table"], ["advise", "specs/movies.yaml", "--format", "text"]),
])
def test_an_old_spelling_works_with_one_deprecation_line(old, new, monkeypatch):
    monkeypatch.chdir(ROOT)
    monkeypatch.setenv("COLUMNS", "120")
    before, after = CliRunner().invoke(main, old), CliRunner().invoke(main, new)
    assert (before.exit_code, before.stdout) == (after.exit_code, after.stdout) and after.exit_code == 0, before.output
    assert before.stderr.count("deprecated:") == 1 and "deprecated:" not in after.stderr
    assert "`ddb2bigtable " + old[0] in before.stderr and "--format text" in before.stderr


def _sampled(stdout: str) -> dict:
    """advise's JSON without the seconds each sample took."""
    report = json.loads(stdout)
    for sampled in report["sampled"]:
        sampled.pop("seconds")
    return report


def test_a_fraction_to_advise_sample_is_the_old_spelling_of_sample_fraction(tmp_path):
    export = tmp_path / "movies"
    shutil.copytree(ROOT / "exports" / "movies", export)
    spec = str(ROOT / "specs" / "movies.yaml")
    runs = [CliRunner().invoke(main, ["advise", spec, "--export", str(export), "--format", "json", *how])
            for how in (["--sample", "0.5"], ["--sample-fraction", "0.5"], ["--sample", "3"])]
    assert [run.exit_code for run in runs] == [0, 0, 0], runs[0].output
    old, new, count = (_sampled(run.stdout) for run in runs)
    assert old == new and new["sampled"][0]["items"] == (new["sampled"][0]["export_items"] + 1) // 2
    assert count["sampled"][0]["items"] == 3
    assert "is now `ddb2bigtable advise --sample-fraction 0.5`" in runs[0].stderr
    assert "deprecated:" not in runs[1].stderr + runs[2].stderr


def test_up_export_is_the_old_spelling_of_exports(tmp_path):
    missing = str(tmp_path / "nowhere")
    old = CliRunner().invoke(main, ["up", "--root", str(ROOT), "--export", missing])
    new = CliRunner().invoke(main, ["up", "--root", str(ROOT), "--exports", missing])
    assert old.exit_code == new.exit_code == 2  # the same folder checked, before the emulator starts
    assert old.stderr.replace(new.stderr, "") == (f"deprecated: `ddb2bigtable up --export {missing}` is now "
                                                 f"`ddb2bigtable up --exports {missing}`; the old spelling goes in "
                                                 "the next release\n")
    both = CliRunner().invoke(main, ["up", "--export", missing, "--exports", missing])
    assert both.exit_code == 2 and "give --exports alone" in both.stderr


def test_region_is_import_s_and_serve_s_signing_regions_have_their_own_name(tmp_path):
    """Issue #53: `--region` was import's template region and serve's extra signing region."""
    holders = {name for name, command in _commands() if "--region" in _options(command)}
    assert holders == {"import"}
    missing = str(tmp_path / "nowhere")  # no stage there: both stop at the same check, before serving
    regions = ["eu-west-1", "ap-south-1"]
    old = CliRunner().invoke(main, ["serve", "--root", missing, *(a for r in regions for a in ("--region", r))])
    new = CliRunner().invoke(main, ["serve", "--root", missing, *(a for r in regions for a in ("--signing-region", r))])
    assert old.exit_code == new.exit_code == 2
    assert old.stderr.replace(new.stderr, "") == (
        "deprecated: `ddb2bigtable serve --region eu-west-1 --region ap-south-1` is now `ddb2bigtable serve "
        "--signing-region eu-west-1 --signing-region ap-south-1`; the old spelling goes in the next release\n")
