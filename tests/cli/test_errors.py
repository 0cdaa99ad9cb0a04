"""One error hierarchy: every engine error reaches the user as a message and an exit code,
and problems without a line are not given an invented one."""

from __future__ import annotations

import ast
import subprocess

import click
from click.testing import CliRunner

from ddb2bigtable.cli.app import main
from ddb2bigtable.cli.output import NOT_DONE
from ddb2bigtable.spec.errors import Ddb2BigtableError, InputError, Problem, ServiceError

from ..conftest import ROOT

ROOT_CLASS = "Ddb2BigtableError"


def _exception_classes() -> dict[str, list[str]]:
    """Every class in the engine that is an exception by name or base: name -> its bases."""
    found = {}
    for path in (ROOT / "ddb2bigtable").rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ClassDef):
                bases = [ast.unparse(b).rsplit(".", 1)[-1] for b in node.bases]
                if any(b.endswith(("Error", "Exception", "Unavailable", "Died")) for b in bases):
                    found[f"{path.relative_to(ROOT)}:{node.name}"] = bases
    return found


def test_every_public_engine_exception_derives_from_the_one_root():
    classes = _exception_classes()
    names = {key.rsplit(":", 1)[1] for key in classes}
    assert {"InputError", "ServiceError", "CodecError", "ExportError", "WriteError", "EmulatorError"} <= names
    outside = [key for key, bases in classes.items()
               if not key.rsplit(":", 1)[1].startswith("_") and key.rsplit(":", 1)[1] != ROOT_CLASS
               and not any(b in names or b == ROOT_CLASS for b in bases)]
    assert outside == []


def _group_with(error: Exception) -> click.Group:
    """The real command group class with one command that fails the given way."""
    group = type(main)(name="ddb2bigtable")

    @group.command()
    def fails() -> None:
        raise error

    return group


def test_a_service_error_is_a_message_and_exit_1_without_a_traceback():
    result = CliRunner().invoke(_group_with(ServiceError("Bigtable refused the write: try again")), ["fails"])
    assert result.exit_code == 1
    assert "error: Bigtable refused the write: try again" in result.output
    assert "Traceback" not in result.output and result.exception is None or isinstance(result.exception, SystemExit)


def test_bad_input_is_every_problem_and_exit_2():
    problems = [Problem("specs/a.yaml", 3, 5, "tables", "expected a list"), Problem.about("--since", "", "no zone")]
    result = CliRunner().invoke(_group_with(InputError(problems)), ["fails"])
    assert result.exit_code == 2
    assert "specs/a.yaml:3:5: tables: expected a list" in result.output
    assert "--since: no zone" in result.output and "2 problems found" in result.output


def test_an_error_that_is_not_the_engines_still_surfaces():
    """A bug must not be hidden behind a friendly message: only engine errors are caught."""
    result = CliRunner().invoke(_group_with(KeyError("bug")), ["fails"])
    assert isinstance(result.exception, KeyError)
    assert issubclass(ServiceError, Ddb2BigtableError)


def test_a_git_ref_has_no_invented_line(tmp_path):
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    result = CliRunner().invoke(main, ["diff", "--base", "no-such-ref", "--root", str(tmp_path)])
    assert result.exit_code == 2
    assert f"{tmp_path}: unknown git ref 'no-such-ref'" in result.output
    assert ":1:1" not in result.output


def test_a_folder_that_is_not_an_export_is_named_once_after_the_option(tmp_path, monkeypatch):
    monkeypatch.setenv("BIGTABLE_EMULATOR_HOST", "127.0.0.1:1")  # never reached: the export is read first
    for command in ("load", "verify"):
        result = CliRunner().invoke(main, [command, str(ROOT / "specs" / "movies.yaml"), "--table", "movies",
                                           "--export", str(tmp_path), "--work-dir", str(tmp_path / "work"),
                                           "--root", str(ROOT)])
        assert result.exit_code == 2, result.output
        first = result.stderr.splitlines()[0]
        assert first.startswith(f"--export: {tmp_path}: no AWSDynamoDB/"), first
        assert first.count(str(tmp_path)) == 1, first


def _bad_input_runs(tmp_path) -> dict[str, list[str]]:
    """For each command, arguments that are bad input (a spec with no tables, an unknown
    stage or ref, a bad instance id): what each run is refused on."""
    bad = tmp_path / "bad.yaml"
    bad.write_text("version: 1\ninstance: {id: bad-inst}\n")
    subprocess.run(["git", "init", "-q", str(tmp_path / "repo")], check=True)
    spec, root = str(bad), ["--root", str(ROOT)]
    table = ["--table", "t", *root]
    return {
        "validate": [spec], "plan": [spec, "--stage", "prod", *root],
        "diff": ["--base", "no-such-ref", "--root", str(tmp_path / "repo")],
        "load": [spec, "--export", str(tmp_path), *table], "verify": [spec, "--export", str(tmp_path), *table],
        "up": ["--stage", "no-such-stage", "--root", str(tmp_path)], "replicate": [spec, *table],
        "cutover": ["check", spec, *table], "import": [spec, "--instance", "X"], "advise": [spec],
        "prices": ["refresh", "--regions", "nowhere-1"], "serve": ["--stage", "no-such-stage", "--root", str(tmp_path)],
        "export": ["dynamodb://us-east-1/Orders", "-o", str(tmp_path / "export")],
    }


def test_bad_input_says_what_the_command_did_not_do(tmp_path):
    """`import` writes no spec, `advise` gives no advice, `load` may have written rows
    before a problem part-way: the last line says what is true of the command refused."""
    runs = _bad_input_runs(tmp_path)
    assert set(main.commands) <= set(runs) == set(NOT_DONE)  # a new command needs its words and a run here
    last = {}
    for command in main.commands:
        result = CliRunner().invoke(main, [command, *runs[command]])
        assert result.exit_code == 2, (command, result.output)
        assert "Traceback" not in result.output
        last[command] = result.stderr.rstrip().splitlines()[-1]
        # refused before anything was written, load and up say so rather than their part-way words
        words = {"load": "nothing was loaded", "up": "nothing was created or loaded"}.get(command, NOT_DONE[command])
        assert last[command].endswith(f"found; {words}."), (command, last[command])
    assert last["import"].endswith("no spec was written.") and last["advise"].endswith("no advice was given.")
    assert last["export"].endswith("no export was finished (after a crash or Ctrl-C, the same command resumes).")
