"""Hostile Terraform ends in seconds with one located line and exit 2 (issue #29): expressions
nested 10,000 deep, `show -json` with 3,000 nested child modules, and devices, FIFOs, huge
files and links to them wherever the evaluator opens a file (the folder's .tf files, a module
reached through a call, terraform.tfvars, --var-file, modules.json). Run as a subprocess: the
timeouts are hang guards (a FIFO opened without care blocks forever)."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
TABLE = 'resource "aws_dynamodb_table" "t" {\n  name = "Things"\n  hash_key = "id"\n  billing_mode = ' \
        '"PAY_PER_REQUEST"\n  attribute {\n    name = "id"\n    type = "S"\n  }\n}\n'


def run_import(*args: str | Path) -> tuple[subprocess.CompletedProcess[str], float]:
    started = time.monotonic()
    done = subprocess.run([sys.executable, "-m", "ddb2bigtable", "import", *map(str, args), "--instance",
                           "shop-prod", "--region", "us-east-1"], cwd=ROOT, capture_output=True, text=True,
                          timeout=60)
    return done, time.monotonic() - started


def refused(done: subprocess.CompletedProcess[str], says: str) -> str:
    assert done.returncode == 2, done.stderr
    assert "Traceback" not in done.stderr and says in done.stderr, done.stderr
    first = done.stderr.splitlines()[0]
    assert len(done.stderr.splitlines()) == 2  # the problem, then "1 problem found; no spec was written."
    return first


def test_an_expression_nested_10000_deep_is_refused_quickly(tmp_path):
    source = tmp_path / "deep.tf"
    source.write_text('resource "aws_dynamodb_table" "t" {\n  name = ' + "(" * 10_000 + '"T"' + ")" * 10_000 + "\n}\n")
    done, took = run_import(source)
    assert refused(done, "expressions nest deeper than this importer reads").startswith(str(source))
    assert took < 20


def test_show_json_with_3000_nested_child_modules_is_refused_quickly(tmp_path):
    inner = ('{"resources": [{"address": "aws_dynamodb_table.t", "mode": "managed", "type": "aws_dynamodb_table", '
             '"name": "t", "values": {"name": "Things", "hash_key": "id", "attribute": [{"name": "id", "type": "S"}]}}]}')
    source = tmp_path / "state.json"
    source.write_text('{"format_version": "1.0", "values": {"root_module": '
                      + '{"resources": [], "child_modules": [' * 3000 + inner + "]}" * 3000 + "}}")
    done, took = run_import(source)
    assert refused(done, "nest").startswith(str(source))
    assert took < 20


def _fifo(path: Path) -> Path:
    os.mkfifo(path)
    return path


@pytest.mark.parametrize("where", ["folder", "module", "tfvars", "var-file", "modules.json", "file()"])
@pytest.mark.parametrize("kind", ["fifo", "device", "link-to-fifo-outside", "huge"])
def test_every_file_the_evaluator_opens_is_bounded(tmp_path, where, kind):
    root, outside = tmp_path / "root", tmp_path / "outside"
    root.mkdir()
    outside.mkdir()
    (root / "main.tf").write_text(TABLE)
    target = {"folder": root / "extra.tf", "module": root / "db" / "main.tf", "tfvars": root / "terraform.tfvars",
              "var-file": tmp_path / "prod.tfvars", "modules.json": root / ".terraform" / "modules" / "modules.json",
              "file()": root / "tables.json"}
    hostile = target[where]
    hostile.parent.mkdir(parents=True, exist_ok=True)
    if where == "module":
        (root / "calls.tf").write_text('module "db" {\n  source = "./db"\n}\n')
    if where == "file()":
        (root / "main.tf").write_text(TABLE.replace('"Things"', 'jsondecode(file("${path.module}/tables.json")).name'))
    if kind == "fifo":
        _fifo(hostile)
    elif kind == "device":
        hostile.symlink_to("/dev/zero")
    elif kind == "link-to-fifo-outside":
        hostile.symlink_to(_fifo(outside / "elsewhere"))
    else:
        with open(hostile, "wb") as f:  # sparse: nothing is written to disk
            f.truncate(64 * 1024**2)
    done, took = run_import(root, *(["--var-file", hostile] if where == "var-file" else []))
    if where == "file()" and kind in ("device", "link-to-fifo-outside"):  # the link leads outside: not read
        assert done.returncode == 0 and "points outside the configuration's folders" in done.stderr, done.stderr
        return
    said = refused(done, "not a regular file" if kind != "huge" else "a Terraform file may be at most")
    assert said.startswith(str(hostile)), said
    assert took < 20


@pytest.mark.parametrize("locals_, says", [
    ('big = [for x in range(1000) : [for y in range(1000) : [for z in range(1000) : 1]]]',
     "evaluating the configuration takes more than 500,000 steps"),
    ("\n".join(['s0 = "abcdefghijklmnop"'] + [f's{i} = "${{local.s{i - 1}}}${{local.s{i - 1}}}"' for i in range(1, 40)]
               + ["big = local.s39"]), "a string grows past 1,048,576 characters"),
    ("\n".join(['l0 = ["a", "b"]'] + [f"l{i} = concat(local.l{i - 1}, local.l{i - 1})" for i in range(1, 40)]
               + ["big = local.l39"]), "a list or map grows past 100,000 elements"),
])
def test_an_evaluation_bomb_ends_in_seconds_with_its_place(tmp_path, locals_, says):
    source = tmp_path / "bomb.tf"
    source.write_text(f"locals {{\n{locals_}\n}}\n" + TABLE.replace('name = "Things"', 'name = "T${length(local.big)}"'))
    done, took = run_import(source)
    assert refused(done, says).startswith(f"{source}:")
    assert took < 20
