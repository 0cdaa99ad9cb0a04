"""serve and a spec declaring a type the table's record holds otherwise: serve refuses to
start (exit 2) at the declaration's line, as load, replicate and verify do
(codec/type_inference.py `held_types`; tests/load/test_table_record.py for those)."""

from __future__ import annotations

import shutil
import subprocess
import sys

from ddb2bigtable.codec.type_inference import UNNAMED

from ..conftest import STAGE
from .test_types_record import SCRATCH_INSTANCE, _record


def test_serve_refuses_a_spec_declaring_another_type_than_the_table_holds(served, tmp_path):
    client = served.client()
    client.put_item(TableName="Scratch", Item={"pk": {"S": "grade-1"}, "sk": {"N": "1"}, "grade": {"N": "7"}})
    record = _record(SCRATCH_INSTANCE, "scratch")  # serve wrote it first: self-describing, its name not recorded
    assert "grade" not in record and record[UNNAMED] == "mixed"
    root = tmp_path / "declares-grade"  # the same project, its spec now declaring grade as N
    shutil.copytree(served.root, root, ignore=shutil.ignore_patterns("serve.log"))
    spec = root / "specs" / "scratch.yaml"
    text = spec.read_text()
    assert "        - {name: hits, type: counter, family: counters}\n" in text
    spec.write_text(text + "        - {name: grade, type: N}\n")
    line = len(text.splitlines()) + 1
    out = subprocess.run([sys.executable, "-m", "ddb2bigtable", "serve", "--stage", STAGE, "--root", str(root),
                          "--port", "1"], capture_output=True, text=True, timeout=120)
    assert out.returncode == 2 and "Traceback" not in out.stderr, out.stderr
    assert f"{spec}:{line}:" in out.stderr and "tables.scratch.mapping.attributes[1].type" in out.stderr
    assert "declares grade as N, but the table's record of its types (row scratch of serve-scratch/" \
           "_ddb2bigtable_types) names no type for it and holds every attribute it does not name as mixed" \
           in out.stderr, out.stderr
    assert "drop its type here (they are self-describing: any type reads back) to keep them" in out.stderr
    # the project as it was still serves grade as written
    assert client.get_item(TableName="Scratch", Key={"pk": {"S": "grade-1"}, "sk": {"N": "1"}})["Item"]["grade"] == \
        {"N": "7"}
