"""`import` on hostile files and outputs (issue #29): each ends in seconds with one line
and exit 2, reads no more than the spec reader's limits allow, and replaces nothing but a
regular file. The command runs in a subprocess with a timeout: a regression fails (a hang,
a crash, memory) instead of hanging the suite.
"""

from __future__ import annotations

import http.server
import json
import os
import stat
import subprocess
import sys
import textwrap
import threading
from pathlib import Path

import pytest

from ..conftest import ROOT
from .helpers import FIXTURES

BOOKS = FIXTURES / "cloudformation" / "DynamoDB_Secondary_Indexes.json"
TEMPLATE = textwrap.dedent("""\
    Parameters:
      Env:
        Type: String
        Default: {default}
    Resources:
      Orders:
        Type: AWS::DynamoDB::Table
        Properties:
          TableName: {name}
          AttributeDefinitions: [{{AttributeName: id, AttributeType: S}}]
          KeySchema: [{{AttributeName: id, KeyType: HASH}}]
          BillingMode: PAY_PER_REQUEST
    """)


def run_import(*args: str | Path, umask: int | None = None,
               env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "ddb2bigtable", "import", *map(str, args)], cwd=ROOT,
                          capture_output=True, text=True, timeout=60, env=env,
                          preexec_fn=None if umask is None else lambda: os.umask(umask))


def one_line(run: subprocess.CompletedProcess[str], says: str) -> str:
    """The one problem line of an exit-2 run (after any warnings), checked to say `says`."""
    assert run.returncode == 2, run.stderr[-2000:]
    assert "Traceback" not in run.stderr and not run.stdout
    problem, count = [line for line in run.stderr.splitlines() if not line.startswith("warning: ")]
    assert says in problem and count == "1 problem found; no spec was written.", run.stderr[-2000:]
    return problem


# --- B: what is read, and how much -----------------------------------------------------------

def _alias_bomb() -> str:
    lines = ["a0: &a0 [x, x, x, x, x, x, x, x, x, x]"]
    lines += [f"a{i}: &a{i} [*a{i - 1}, *a{i - 1}, *a{i - 1}, *a{i - 1}, *a{i - 1}, *a{i - 1}, *a{i - 1}, "
              f"*a{i - 1}, *a{i - 1}, *a{i - 1}]" for i in range(1, 10)]
    return "Metadata:\n" + textwrap.indent("\n".join(lines), "  ") + "\n" + TEMPLATE.format(default="prod",
                                                                                             name="Orders")


def _join(depth: int) -> str:
    """`Fn::Join` nested `depth` deep, as JSON text (json.dumps itself stops at about 1,000)."""
    return '{"Fn::Join": ["", [' * depth + '"orders"' + "]]}" * depth


def test_a_device_and_a_fifo_are_refused_unread(tmp_path):
    one_line(run_import("/dev/zero", "--instance", "shop-prod"), "/dev/zero: not a regular file")
    fifo = tmp_path / "template.yaml"
    os.mkfifo(fifo)
    one_line(run_import(fifo, "--instance", "shop-prod"), f"{fifo}: not a regular file")
    link = tmp_path / "zero.json"
    link.symlink_to("/dev/zero")
    one_line(run_import(link, "--instance", "shop-prod"), "not a regular file")


@pytest.mark.parametrize("hostile", ["fifo", "/dev/zero"])
def test_a_fifo_or_a_device_link_in_a_directory_source_is_refused(tmp_path, hostile):
    folder = tmp_path / "infra"
    folder.mkdir()
    (folder / "variables.tf").write_text('variable "env" {\n  default = "prod"\n}\n')
    if hostile == "fifo":
        os.mkfifo(folder / "main.tf")
    else:
        (folder / "main.tf").symlink_to("/dev/zero")
    one_line(run_import(folder, "--instance", "shop-prod"), f"{folder / 'main.tf'}: not a regular file")


def test_a_50_mb_template_is_refused_before_it_is_parsed(tmp_path):
    huge = tmp_path / "template.json"
    with open(huge, "wb") as f:  # sparse: nothing is written to disk
        f.truncate(50 * 1024 * 1024)
    one_line(run_import(huge, "--instance", "shop-prod"),
             "the file is 52,428,800 bytes; a source file may be at most 16,777,216")


def test_a_yaml_alias_bomb_is_refused_at_once(tmp_path):
    bomb = tmp_path / "template.yaml"
    bomb.write_text(_alias_bomb())
    assert bomb.stat().st_size < 2048
    one_line(run_import(bomb, "--instance", "shop-prod"), "aliases expand too far")


@pytest.mark.parametrize("form", ["json", "yaml"])
def test_fn_join_nested_5000_deep_is_refused_where_it_starts(tmp_path, form):
    text = '{"Resources": {"Orders": {"Type": "AWS::DynamoDB::Table", "Properties": {"TableName": ' + _join(5000) + "}}}}"
    path = tmp_path / f"template.{form}"
    path.write_text(text if form == "json" else "# YAML flow style\n" + text)
    problem = one_line(run_import(path, "--instance", "shop-prod"), "nested deeper than 64 levels")
    assert problem.startswith(f"{path}:{1 if form == 'json' else 2}:")


@pytest.mark.parametrize("name, text, where", [
    ("dup.yaml", TEMPLATE.format(default="prod", name="Orders") + "      TableName: Other\n", ":13:7:"),
    ("dup.json", '{"Resources": {"Orders": {"Type": "AWS::DynamoDB::Table",\n "Type": "AWS::S3::Bucket"}}}',
     ":2:2:"),
    ("table.json", '{"Table": {"TableName": "A", "TableName": "B", "KeySchema": []}}', ":1:30:"),
])
def test_duplicate_keys_are_refused_at_the_second(tmp_path, name, text, where):
    path = tmp_path / name
    path.write_text(text)
    problem = one_line(run_import(path, "--instance", "shop-prod"), "duplicate key")
    assert problem.startswith(f"{path}{where}") and "(first at line" in problem


# --- C: what used to be a traceback ------------------------------------------------------------

def test_a_parameter_whose_default_refers_to_itself_is_said_so(tmp_path):
    path = tmp_path / "template.yaml"
    path.write_text(TEMPLATE.format(default='!Sub "${Env}-x"', name='!Sub "${Env}-orders"'))
    problem = one_line(run_import(path, "--instance", "shop-prod"),
                       "Parameters.Env.Default: refers to the parameter Env itself (Fn::Sub)")
    assert problem.startswith(f"{path}:4:14:") and "--parameter Env=VALUE" in problem
    given = run_import(path, "--instance", "shop-prod", "--parameter", "Env=prod")
    assert given.returncode == 0 and "table: prod-orders" in given.stdout, given.stderr


def test_a_sub_variable_that_refers_to_itself_is_said_so(tmp_path):
    """It was worded "Ref X: no parameter or resource of that name", as if X were undeclared."""
    path = tmp_path / "template.yaml"
    path.write_text(TEMPLATE.format(default="prod", name='!Sub ["${X}-orders", {X: !Sub "${X}"}]'))
    run = run_import(path, "--instance", "shop-prod")
    one_line(run, "got 'X'")
    assert "the Fn::Sub variable X refers to itself; give it a value that does not use ${X}" in run.stderr


def test_a_table_name_with_format_braces_is_bad_input_named_against_the_source(tmp_path):
    """`{0}` reached str.format; the spec check's problem named `<stdout>:10:14`, a line of
    a text that was written nowhere."""
    path = tmp_path / "template.yaml"
    path.write_text(TEMPLATE.format(default="prod", name="'a{0}b'"))
    problem = one_line(run_import(path, "--instance", "shop-prod"), "expected the DynamoDB table name, got 'a{0}b'")
    assert problem.startswith(f"{path}: tables[0].source.table: the imported spec is not valid")
    assert "<stdout>" not in problem


def test_long_values_are_cut_in_messages(tmp_path):
    long_instance = run_import(BOOKS, "--instance", "i" * 100_000)
    problem = one_line(long_instance, "--instance")
    assert len(problem) < 1_000 and "more characters]" in problem
    described = {"Table": {"TableName": "Orders", "KeySchema": [{"AttributeName": "k" * 1_000_000, "KeyType": "HASH"}],
                           "AttributeDefinitions": [{"AttributeName": "id", "AttributeType": "S"}]}}
    path = tmp_path / "orders.json"
    path.write_text(json.dumps(described))
    problem = one_line(run_import(path, "--instance", "shop-prod"), "kkkk")
    assert len(problem) < 1_000 and "999,802 more characters]" in problem


# --- A: what -o may replace ----------------------------------------------------------------------

@pytest.mark.parametrize("kind", ["fifo", "folder", "link to a file", "link to a FIFO"])
def test_force_replaces_only_a_regular_file(tmp_path, kind):
    target = tmp_path / "out.yaml"
    kept = tmp_path / "kept.yaml"
    kept.write_text("mine")
    if kind == "fifo":
        os.mkfifo(target)
    elif kind == "folder":
        target.mkdir()
    elif kind == "link to a file":
        target.symlink_to(kept)
    else:
        fifo = tmp_path / "fifo"
        os.mkfifo(fifo)
        target.symlink_to(fifo)
    before = os.lstat(target)
    run = run_import(BOOKS, "--instance", "books-prod", "-o", target, "--force")
    assert run.returncode == 2 and "Traceback" not in run.stderr, run.stderr
    after = os.lstat(target)
    assert (after.st_mode, after.st_ino) == (before.st_mode, before.st_ino) and kept.read_text() == "mine"
    assert sorted(p.name for p in tmp_path.iterdir() if p.name.startswith(".")) == [], "no temporary file left"


def test_force_keeps_the_replaced_files_mode_and_a_new_file_gets_the_umasks(tmp_path):
    new = tmp_path / "new.yaml"
    assert run_import(BOOKS, "--instance", "books-prod", "-o", new, umask=0o027).returncode == 0
    assert stat.S_IMODE(new.stat().st_mode) == 0o640
    old = tmp_path / "old.yaml"
    old.write_text("mine")
    old.chmod(0o604)
    run = run_import(BOOKS, "--instance", "books-prod", "-o", old, "--force", umask=0o077)
    assert run.returncode == 0, run.stderr
    assert stat.S_IMODE(old.stat().st_mode) == 0o604 and old.read_text().startswith("# Imported")


def test_an_output_folder_that_does_not_exist_is_one_line_before_anything_is_read(tmp_path):
    out = tmp_path / "missing" / "spec.yaml"
    problem = one_line(run_import("/dev/zero", "--instance", "books-prod", "-o", out), "does not exist")
    assert problem.startswith(f"{out}: the folder {out.parent} does not exist")
    assert not out.parent.exists()


# --- C: a service that answers nonsense ---------------------------------------------------------

class _Page(http.server.BaseHTTPRequestHandler):
    """What a web server or proxy on the wrong port answers to anything: HTTP 200 and a page."""

    def do_POST(self) -> None:  # noqa: N802 (http.server's naming)
        self.rfile.read(int(self.headers.get("Content-Length", 0)))
        body = b"<html><body>Welcome to nginx!</body></html>"
        self.send_response(200)
        self.send_header("Content-Type", "text/html")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *_: object) -> None:
        pass


@pytest.mark.parametrize("url", ["aws://us-east-1/Orders", "aws://us-east-1/*"])
def test_an_endpoint_answering_200_with_html_is_a_service_error_naming_it(tmp_path, url):
    """It was a KeyError 'Table' traceback (one table), or "the region has no tables" (all)."""
    server = http.server.HTTPServer(("127.0.0.1", 0), _Page)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        endpoint = f"http://127.0.0.1:{server.server_port}"
        env = {k: v for k, v in os.environ.items() if not k.startswith("AWS_")} | {
            "AWS_ACCESS_KEY_ID": "local", "AWS_SECRET_ACCESS_KEY": "local", "AWS_EC2_METADATA_DISABLED": "true",
            "AWS_CONFIG_FILE": str(tmp_path / "none"), "AWS_SHARED_CREDENTIALS_FILE": str(tmp_path / "none")}
        run = run_import(url, "--instance", "shop-prod", "--endpoint-url", endpoint, env=env)
    finally:
        server.shutdown()
        server.server_close()
        thread.join(5)
    assert run.returncode == 1, run.stderr
    (line,) = run.stderr.splitlines()
    assert line.startswith(f"error: {url}: ") and f"{endpoint} answered HTTP 200 with text/html, not an AWS answer" \
        in line and "--endpoint-url" in line
