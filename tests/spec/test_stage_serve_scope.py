"""The stage's `serve.signing_regions` and `serve.public_hosts`: what a SigV4 signature may be
scoped to besides the tables' regions and Cloud Run's URLs (issue 43). A bad value is a
located error with exit 2 at the list item; good ones reach the plan's serve command."""

from __future__ import annotations

import json

import pytest

from ddb2bigtable.plan.planner import plan_files

from ..conftest import write_project
from .test_stage_serve import IMAGE, LOCATED, MOVIES, cli

KEYS = {"enabled": True, "image": IMAGE, "signing": "keys", "keys_secret": "serve-keys"}


@pytest.mark.parametrize(("serve", "key", "written", "words"), [
    ({"signing_regions": ["eu-west-1"]}, "signing_regions", "signing_regions:",
     "with signing: iam Cloud Run checks callers"),
    ({"public_hosts": ["ddb.example.com"]}, "public_hosts", "public_hosts:", "or set signing: keys"),
    (KEYS | {"signing_regions": ["eu-west-1", "eu-wset-1"]}, "signing_regions[1]", "- eu-wset-1",
     "did you mean 'eu-west-1'?"),
    (KEYS | {"signing_regions": ["local"]}, "signing_regions[0]", "- local", "the application's SDK signs for"),
    (KEYS | {"public_hosts": ["ddb.example.com", "https://ddb.example.com/"]}, "public_hosts[1]",
     "- https://ddb.example.com/", "without scheme or path"),
    (KEYS | {"public_hosts": ["*.com"]}, "public_hosts[0]", "- '*.com'", "less than two labels"),
    (KEYS | {"public_hosts": ["ddb.example.com:70000"]}, "public_hosts[0]", "- ddb.example.com:70000", "1-65535"),
    (KEYS | {"public_hosts": ["ddb_example com"]}, "public_hosts[0]", "- ddb_example com", "not a host name"),
    (KEYS | {"public_hosts": ["a" * 100_000 + ".example.com"]}, "public_hosts[0]", "- aaaa", "not a host name"),
    (KEYS | {"public_hosts": "ddb.example.com"}, "public_hosts", "public_hosts:", "expected a list"),
], ids=["regions-behind-iam", "hosts-behind-iam", "region-typo", "region-not-aws", "host-url", "host-wildcard-tld",
        "host-port", "host-characters", "host-100k", "hosts-not-a-list"])
def test_a_bad_scope_setting_is_located_at_its_item_exit_2(tmp_path, serve, key, written, words):
    root = write_project(tmp_path, {"movies": MOVIES}, {"regions": "home", "serve": {"enabled": True, "image": IMAGE}
                                                        | serve})
    for command in (["validate", "specs/movies.yaml", "--stage", "test"], ["plan", "--stage", "test"]):
        run = cli(root, *command)
        assert run.returncode == 2 and "Traceback" not in run.stderr, run.stderr[-2000:]
        (line,) = [line for line in run.stderr.splitlines() if LOCATED.match(line)]
        assert f"stage.serve.{key}:" in line and words in line and len(line) < 2_500, line[:600]
        stack = (root / "stacks" / "Pulumi.test.yaml").read_text().splitlines()
        assert stack[int(LOCATED.match(line)["line"]) - 1].strip().startswith(written), line[:300]


def test_the_plan_s_serve_command_carries_the_stage_s_regions_and_hosts(tmp_path):
    root = write_project(tmp_path, {"movies": MOVIES}, {"regions": "home", "serve": KEYS | {
        "signing_regions": ["eu-west-1", "ap-south-1"], "public_hosts": ["DDB.example.com", "*.ddb.example.com:8443"]}})
    serve = plan_files(root, "test").serve
    assert serve is not None
    command = list(serve.command)
    flags = [(flag, value) for flag, value in zip(command, command[1:], strict=False)
             if flag in ("--signing-region", "--public-host")]
    region = serve.regions[0]
    assert flags == [("--public-host", f"ddb2bigtable-test-*.{region}.run.app"),
                     ("--public-host", "ddb2bigtable-test-*.a.run.app"),
                     ("--signing-region", "eu-west-1"), ("--signing-region", "ap-south-1"),
                     ("--public-host", "ddb.example.com"), ("--public-host", "*.ddb.example.com:8443")]
    why = dict(serve.reasons)["signed for"]
    assert "eu-west-1, ap-south-1 (serve.signing_regions: --signing-region)" in why
    assert "ddb.example.com, *.ddb.example.com:8443 (serve.public_hosts: --public-host)" in why
    run = cli(root, "plan", "--stage", "test", "--format", "json")
    assert run.returncode == 0, run.stderr[-2000:]
    shown = json.loads(run.stdout)["serve"]
    assert shown["command"] == command and {"figure": "signed for", "why": why} in shown["reasons"]
    shown = cli(root, "plan", "--stage", "test").stdout  # the table's notes say why
    assert "signed for: " in shown and "serve.public_hosts" in " ".join(shown.split())


def test_the_emulator_stage_takes_them_for_serve_on_this_machine(tmp_path):
    root = write_project(tmp_path, {"movies": MOVIES}, {"regions": "home", "emulator": True, "serve": {
        "enabled": True, "signing": "none", "signing_regions": ["eu-west-1"], "public_hosts": ["ddb.test"]}})
    serve = plan_files(root, "test").serve
    assert serve is not None and serve.where == "local"
    assert serve.command == ("ddb2bigtable", "serve", "--stage", "test", "--signing-region", "eu-west-1",
                             "--public-host", "ddb.test")
    assert dict(serve.reasons)["signed for"].startswith("with key pairs in DDB2BIGTABLE_SERVE_KEYS, ")
