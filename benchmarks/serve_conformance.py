"""Conformance: ScyllaDB's Alternator test suite (pytest + boto3, written to run against
any DynamoDB endpoint) run against DynamoDB Local and against `serve` on the Bigtable
emulator, file by file, side by side; the pass rates and the failing tests by cause.

The suite is not in this repository: at the pinned commit below its tests are AGPL-3.0
(the next commit relicensed ScyllaDB to a source-available licence), so it is extracted
at run time into a cache outside the repository from a clone of scylladb/scylladb
(`--suite-git`), or read from an extracted copy (`--suite`), and never copied here.

One run starts DynamoDB Local, the Bigtable emulator and `serve` on 127.0.0.1 (each
stopped by its PID), with a stage of one planned table (its instance is where serve's
CreateTable puts the tables the suite's fixtures create), then runs each test file first against
DynamoDB Local, then against serve, each in its own pytest process with a per-test and
a per-file time limit. Writes results.json, results.md and the raw outcome logs to
`--out`. Not part of the test suite (minutes per file). Run:

    uv run python benchmarks/serve_conformance.py --suite-git /path/to/scylladb/.git [--files core]
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import shutil
import signal
import subprocess
import sys
import tarfile
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from benchmarks.conformance_report import (  # noqa: E402
    BASELINE,
    SUBJECT,
    FileResult,
    against_expected,
    compare,
    markdown,
    outcomes,
    regressions,
)
from ddb2bigtable.bigtable import emulator  # noqa: E402
from ddb2bigtable.bigtable.emulator import stop_process  # noqa: E402
from ddb2bigtable.load.local_stage import up  # noqa: E402
from tests.conftest import write_project  # noqa: E402
from tests.replicate import dynamodb_local  # noqa: E402
from tests.serve.conftest import start_serve  # noqa: E402

SUITE_REPO = "scylladb/scylladb"
SUITE_COMMIT = "1a717f3014bcb0b45c664c93a3f2ef7310b251fe"  # 2024-12-11, the last commit before the relicensing
SUITE_LICENSE = "AGPL-3.0-or-later"
SUITE_PATH = "test/alternator"
CACHE = Path.home() / ".cache" / "ddb2bigtable" / f"alternator-{SUITE_COMMIT[:12]}"
CORE = ["test_item.py", "test_query.py", "test_scan.py", "test_batch.py", "test_condition_expression.py",
        "test_update_expression.py", "test_projection_expression.py", "test_filter_expression.py",
        "test_key_condition_expression.py", "test_number.py", "test_nested.py"]  # the goal
MORE = ["test_returnvalues.py", "test_limits.py", "test_describe_table.py", "test_table.py", "test_gsi.py",
        "test_ttl.py", "test_expected.py", "test_key_conditions.py", "test_query_filter.py", "test_lsi.py",
        "test_manual_requests.py", "test_returnconsumedcapacity.py", "test_gsi_updatetable.py"]
STAGE = "conformance"
EXPECTED = Path(__file__).with_name("serve_conformance_expected.json")
# The stage's one spec: serve creates tables in the instance of the stage's first spec.
HOME_SPEC = """version: 1
instance: {id: conformance, display_name: Conformance}
tables:
  - id: home
    source:
      table: conformance_home
      region: us-east-1
      key: {partition: {name: p, type: S}}
      billing: provisioned
      reads: 10
      writes: 10
      item_size_kb: 1
      storage_gb: 0.001
"""


def suite_dir(suite: Path | None, suite_git: Path | None) -> Path:
    """The extracted suite: `--suite`, or the cache filled from `--suite-git` at the pinned commit."""
    if suite is not None:
        return suite
    if (CACHE / SUITE_PATH / "conftest.py").is_file():
        return CACHE
    if suite_git is None:
        sys.exit(f"the suite is not in {CACHE}: pass --suite-git <a clone of github.com/{SUITE_REPO}>'s git "
                 f"directory (holding commit {SUITE_COMMIT}) or --suite <a folder holding {SUITE_PATH}/>")
    partial = CACHE.with_name(CACHE.name + ".partial")
    partial.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryFile() as archive:
        subprocess.run(["git", f"--git-dir={suite_git}", "archive", SUITE_COMMIT, SUITE_PATH], stdout=archive,
                       check=True, timeout=300)
        archive.seek(0)
        with tarfile.open(fileobj=archive) as tar:
            tar.extractall(partial, filter="data")
    (partial / "test" / "__init__.py").touch()  # `test.alternator` is a package, as in the suite's repository
    partial.rename(CACHE)  # whole or absent
    return CACHE


def run_file(suite: Path, file: str, endpoint: str, log: Path, *, test_timeout: int, file_timeout: int) -> str:
    """One test file against one endpoint in its own pytest process; '' or why it stopped early."""
    log.parent.mkdir(parents=True, exist_ok=True)
    log.unlink(missing_ok=True)
    env = {k: v for k, v in os.environ.items() if not k.startswith("AWS_")}
    env.update(AWS_ENDPOINT_URL=endpoint, AWS_ACCESS_KEY_ID="local", AWS_SECRET_ACCESS_KEY="local",
               AWS_DEFAULT_REGION="us-east-1", AWS_MAX_ATTEMPTS="1", AWS_CONFIG_FILE=os.devnull,
               AWS_SHARED_CREDENTIALS_FILE=os.devnull, CONFORMANCE_LOG=str(log),
               CONFORMANCE_TIMEOUT=str(test_timeout), PYTHONPATH=str(Path(__file__).parent))
    # --aws: boto3 finds the endpoint in AWS_ENDPOINT_URL (the suite's local mode logs in over CQL)
    command = [sys.executable, "-m", "pytest", "-p", "conformance_plugin", "-p", "no:cacheprovider", "-c", os.devnull,
               "--rootdir", str(suite), "--aws", "-q", "--no-header", "-rN", f"{SUITE_PATH}/{file}"]
    with open(log.with_suffix(".out"), "wb") as out:
        process = subprocess.Popen(command, cwd=suite, env=env, stdout=out, stderr=subprocess.STDOUT,
                                   start_new_session=True)
        try:
            process.wait(timeout=file_timeout)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)  # its own session: pytest and nothing else
            process.wait(timeout=30)
            return f"stopped after {file_timeout} s"
        except BaseException:  # Ctrl-C or SIGTERM reach this process only (the child has its own session)
            os.killpg(process.pid, signal.SIGKILL)
            raise
    log.touch()
    return "" if process.returncode in (0, 1) else f"pytest exit status {process.returncode}"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--suite", type=Path, help=f"a folder holding {SUITE_PATH}/ (already extracted)")
    parser.add_argument("--suite-git", type=Path,
                        help=f"git directory of a {SUITE_REPO} clone holding the pinned commit")
    parser.add_argument("--files", default="core", help="core (the issue's eleven files), more, all, or file names, "
                        "comma-separated")
    parser.add_argument("--test-timeout", type=int, default=60, help="seconds per test phase")
    parser.add_argument("--file-timeout", type=int, default=1200, help="seconds per file and endpoint")
    parser.add_argument("--out", type=Path, default=ROOT / ".ddb2bigtable" / "conformance")
    parser.add_argument("--expected", type=Path, default=EXPECTED,
                        help="the tests serve is known to fail (DynamoDB Local passing them); exit 1 on any other")
    parser.add_argument("--write-expected", action="store_true",
                        help="rewrite --expected with this run's failures (after a fix, or a new file run)")
    args = parser.parse_args(argv)
    named = {"core": CORE, "more": MORE, "all": CORE + MORE}
    files = [f for part in args.files.split(",") for f in named.get(part, [part])]
    suite = suite_dir(args.suite, args.suite_git)
    signal.signal(signal.SIGTERM, lambda *_: sys.exit("stopped (SIGTERM)"))  # so the servers below are stopped
    started = datetime.datetime.now(datetime.UTC)
    local = dynamodb_local.start()
    bigtable = emulator.start()
    serve, project = None, None
    try:
        os.environ[emulator.EMULATOR_ENV] = bigtable.address
        project = Path(tempfile.mkdtemp(prefix="conformance-"))
        write_project(project, {"conformance": HOME_SPEC}, {"emulator": True, "regions": "home",
                                                             "deletion_protection": False, "autoscaling": False},
                      stage_name=STAGE)
        up(project, STAGE, keep_running=True)
        serve, serve_endpoint = start_serve(project, STAGE)
        results: list[FileResult] = []
        groups: dict[str, list[str]] = {}
        notes: dict[str, str] = {}
        for file in files:
            logs = {side: args.out / "raw" / side / f"{file}.jsonl" for side in (BASELINE, SUBJECT)}
            for side, endpoint in ((BASELINE, local.endpoint), (SUBJECT, serve_endpoint)):
                note = run_file(suite, file, endpoint, logs[side], test_timeout=args.test_timeout,
                                file_timeout=args.file_timeout)
                if note:
                    notes[f"{file} on {side}"] = note
            baseline, subject = (outcomes(logs[s].read_text(encoding="utf-8")) for s in (BASELINE, SUBJECT))
            results.append(compare(file, baseline, subject))
            for name, tests in regressions(baseline, subject).items():
                groups.setdefault(name, []).extend(tests)
            print(f"{file}: {results[-1]}", file=sys.stderr, flush=True)
        write(args.out, started, results, groups, notes)
        return judged(args.expected, groups, {r.file for r in results}, rewrite=args.write_expected)
    finally:
        if serve is not None:
            stop_process(serve)
            args.out.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(project / "serve.log", args.out / "serve.log")  # the causes of its 500s
        bigtable.stop()
        local.stop()
        if project is not None:
            shutil.rmtree(project, ignore_errors=True)


def judged(path: Path, groups: dict[str, list[str]], ran: set[str], *, rewrite: bool) -> int:
    """0 if serve failed only the tests the expected-failures list names, else 1 with the others.
    The list is the published run's failures: a change to serve that breaks a test that
    passed shows here, and one that fixes tests says to take them off."""
    expected = json.loads(path.read_text(encoding="utf-8")) if path.is_file() else []
    if rewrite:
        kept = [t for t in expected if t.partition("::")[0] not in ran]  # files this run did not cover
        failing = [t for tests in groups.values() for t in tests]
        path.write_text(json.dumps(sorted(kept + failing), indent=1) + "\n", encoding="utf-8")
        print(f"{path}: {len(kept) + len(failing)} expected failures", file=sys.stderr)
        return 0
    new, fixed = against_expected(groups, expected, ran)
    if fixed:
        print(f"now passing on serve (take them off {path.name}, or run with --write-expected): "
              + ", ".join(fixed), file=sys.stderr)
    if new:
        print(f"failing on serve, passing on DynamoDB Local, not in {path.name}: " + ", ".join(new), file=sys.stderr)
    return 1 if new else 0


def write(out: Path, started: datetime.datetime, results: list[FileResult], groups: dict[str, list[str]],
          notes: dict[str, str]) -> None:
    groups = dict(sorted(groups.items(), key=lambda kv: (-len(kv[1]), kv[0])))
    header = (f"Alternator tests of {SUITE_REPO} at {SUITE_COMMIT[:12]} ({SUITE_LICENSE}), run "
              f"{started:%Y-%m-%d %H:%M} UTC" + (f"; stopped early: {notes}" if notes else ""))
    out.mkdir(parents=True, exist_ok=True)
    (out / "results.md").write_text(markdown(results, groups, header), encoding="utf-8")
    document = {"suite": {"repository": SUITE_REPO, "commit": SUITE_COMMIT, "path": SUITE_PATH,
                          "license": SUITE_LICENSE},
                "started": started.isoformat(timespec="seconds"), "notes": notes,
                "files": [{**r.__dict__, "ratio": r.ratio} for r in results], "failing_on_serve": groups}
    (out / "results.json").write_text(json.dumps(document, indent=2) + "\n", encoding="utf-8")
    print((out / "results.md").read_text(encoding="utf-8"))


if __name__ == "__main__":
    sys.exit(main())
