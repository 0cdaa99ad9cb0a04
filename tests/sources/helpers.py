"""What every importer test checks: the spec validates and plans, every value says where it
came from, and every estimate is also a warning."""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from ddb2bigtable.plan.model import StagePlan
from ddb2bigtable.plan.planner import plan_stage
from ddb2bigtable.sources.detect import read_sources
from ddb2bigtable.sources.emit import Document, build, to_yaml
from ddb2bigtable.sources.model import Notice, Options
from ddb2bigtable.spec.model import Spec
from ddb2bigtable.spec.reading import read_spec
from ddb2bigtable.spec.stage import load_stage

from ..conftest import ROOT

FIXTURES = ROOT / "tests" / "fixtures"


@dataclass(frozen=True)
class Imported:
    text: str
    data: dict[str, Any]
    notices: tuple[Notice, ...]
    spec: Spec
    plan: StagePlan

    def table(self, name: str) -> dict[str, Any]:
        return next(t["source"] for t in self.data["tables"] if t["source"]["table"] == name)

    def codes(self, code: str) -> list[str]:
        return [n.message for n in self.notices if n.code == code]


def import_files(tmp: Path, *paths: Path, instance: str = "imported", **options: Any) -> Imported:
    """Import, write the YAML, load it with the spec loader and plan it in the prod stage."""
    found = read_sources([str(p) for p in paths], Options(**options))
    doc: Document = build(instance, [t for i in found for t in i.tables], [str(p) for p in paths])
    text = to_yaml(doc)
    out = tmp / "imported.yaml"
    out.write_text(text)
    spec = read_spec(out)
    notices = tuple(n for i in found for n in i.notices) + doc.notices
    check_comments_and_estimates(text, notices)
    return Imported(text, yaml.safe_load(text), notices, spec, plan_stage(load_stage("prod", ROOT), [spec]))


def check_comments_and_estimates(text: str, notices: tuple[Notice, ...]) -> None:
    """Every line holding a value has a comment; each `# estimate:` has its warning."""
    estimates = 0
    for line in text.splitlines():
        if line.startswith("#") or re.fullmatch(r"\s*(- )?[^:#]+:", line):
            continue
        assert "  # " in line, f"no origin comment: {line!r}"
        estimates += "  # estimate: " in line
    assert estimates == sum(n.code == "estimate" for n in notices)
    for notice in notices:
        if notice.code == "estimate":
            assert notice.message.split(" is an estimate: ")[1] in text
