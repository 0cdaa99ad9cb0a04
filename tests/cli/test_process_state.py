"""Commands leave the process as they found it: no warning filters or environment
variables set at import for everyone else in the process (a library caller, a test run)."""

from __future__ import annotations

import subprocess
import sys

from ..conftest import ROOT

PROBE = """
import warnings
before = list(warnings.filters)
import ddb2bigtable.cli.app, ddb2bigtable.cli.load_runs, ddb2bigtable.load.beam.pipeline
added = [f for f in warnings.filters if f not in before]
print(any(f[1] is not None and f[1].pattern.startswith("Connecting to Bigtable") for f in added))
"""


def test_importing_the_data_commands_installs_no_process_wide_warning_filter():
    out = subprocess.run([sys.executable, "-c", PROBE], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "False"


def test_the_emulator_warning_is_silenced_only_inside_a_command(monkeypatch):
    import warnings

    from ddb2bigtable.bigtable.emulator import quiet_connection_warning

    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        with quiet_connection_warning():
            warnings.warn("Connecting to Bigtable emulator at 127.0.0.1:1", RuntimeWarning, stacklevel=1)
        warnings.warn("Connecting to Bigtable emulator at 127.0.0.1:1", RuntimeWarning, stacklevel=1)
    assert len(seen) == 1


def test_importing_the_engine_sets_no_environment_variable():
    probe = ("import os; before = dict(os.environ); import ddb2bigtable.load.run, ddb2bigtable.plan.planner; "
             "print(sorted(set(os.environ.items()) ^ set(before.items())))")
    env = {k: v for k, v in __import__("os").environ.items() if k != "GRPC_ENABLE_FORK_SUPPORT"}
    out = subprocess.run([sys.executable, "-c", probe], cwd=ROOT, capture_output=True, text=True, timeout=120, env=env)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "[]"


def test_the_cli_process_turns_grpc_fork_handlers_off_before_grpc_loads():
    probe = ("import sys; import ddb2bigtable.cli.app, os; "
             "print(os.environ.get('GRPC_ENABLE_FORK_SUPPORT'), 'grpc' in sys.modules)")
    env = {k: v for k, v in __import__("os").environ.items() if k != "GRPC_ENABLE_FORK_SUPPORT"}
    out = subprocess.run([sys.executable, "-c", probe], cwd=ROOT, capture_output=True, text=True, timeout=120, env=env)
    assert out.stdout.split() == ["0", "False"], out.stderr  # set, and gRPC not yet imported by then
