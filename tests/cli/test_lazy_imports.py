"""A command imports only what it runs (issue #53: every CLI process imported every
command's engine, about a second of CPU a run on this machine; the tests run the CLI
as a subprocess hundreds of times). What a command's process has imported is read from
sys.modules after it ran; the CPU it saves is measured in benchmarks/README.md."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from ..conftest import ROOT

HEAVY = ("grpc", "google.cloud", "boto3", "botocore", "apache_beam", "uvicorn", "pyarrow")


def _imported(*args: str) -> set[str]:
    code = ("import json, sys\nfrom ddb2bigtable.cli.app import main\ntry:\n    main(sys.argv[1:])\n"
            "except SystemExit:\n    pass\nprint(json.dumps(sorted(sys.modules)), file=sys.stderr)")
    done = subprocess.run([sys.executable, "-c", code, *args], cwd=ROOT, capture_output=True, text=True, timeout=120)
    return set(json.loads(done.stderr.strip().splitlines()[-1]))


def _heavy(modules: set[str]) -> list[str]:
    return sorted(m for m in modules if m.split(".")[0] in HEAVY or any(m.startswith(h + ".") for h in HEAVY))


@pytest.mark.parametrize("args", [["--help"], ["verify", "--help"], ["replicate", "--help"],
                                  ["validate", "specs/movies.yaml"], ["cutover", "check", "--help"]])
def test_a_light_command_imports_no_client_library(args):
    modules = _imported(*args)
    assert _heavy(modules) == [], args
    if args != ["--help"]:  # the one command asked for, not its siblings' modules
        assert not {"ddb2bigtable.cli.import_cmd", "ddb2bigtable.cli.export_cmd", "ddb2bigtable.cli.serve_cmd",
                    "ddb2bigtable.cli.advise_cmd"} & modules, args
