"""What the model checker proves is what serve runs: every conditional write of an item's row
goes through the protocol's driver (serve/transactions/driver.py), which runs the machines
tests/serve/transactions/test_model_check.py checks (SingleWrite, BlindWrite, the
transaction's), never through a loop of its own.

Read with `ast` over serve's every module: which module calls Bigtable's conditional write
(`check_and_mutate_row`) and the store's (`write_if_unchanged`), and that no store method
writes a row unless locked outside the driver (`write_unless`, gone with its loop).
"""

from __future__ import annotations

import ast
from collections import defaultdict
from pathlib import Path

SERVE = Path(__file__).resolve().parents[3] / "ddb2bigtable" / "serve"
WRITES = {"check_and_mutate_row", "write_if_unchanged", "write_unless"}
# module -> the conditional writes it may call, and why
ALLOWED = {
    "transactions/driver.py": {"check_and_mutate_row"},  # every step of every machine, items' rows all
    "store.py": {"check_and_mutate_row"},  # write_if_unchanged itself, for the two registries below
    "tables/created_tables.py": {"write_if_unchanged"},  # the registry of created tables: no item lives there
    "streams/registry.py": {"write_if_unchanged"},  # the registry of streams: no item lives there
    "streams/cloud_shards.py": {"write_if_unchanged"},  # a stream's partitions, in that registry too
}


def calls() -> dict[str, set[str]]:
    """Module (relative to serve/) -> the conditional writes it calls."""
    found: dict[str, set[str]] = defaultdict(set)
    for path in sorted(SERVE.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in WRITES:
                found[path.relative_to(SERVE).as_posix()].add(node.func.attr)
    return dict(found)


def test_only_the_driver_writes_item_rows_conditionally() -> None:
    strays = {module: sorted(names - ALLOWED.get(module, set())) for module, names in calls().items()}
    assert {m: n for m, n in strays.items() if n} == {}, (
        "a conditional write of an item row outside serve/transactions/driver.py: run a machine of "
        "serve/transactions (resolve.SingleWrite, BlindWrite) through driver.run instead")


def test_the_check_reads_the_calls_it_is_about() -> None:
    """The walk finds the calls it guards (it would pass vacuously on a renamed method)."""
    found = calls()
    assert "check_and_mutate_row" in found["transactions/driver.py"]
    assert "write_if_unchanged" in found["tables/created_tables.py"]
