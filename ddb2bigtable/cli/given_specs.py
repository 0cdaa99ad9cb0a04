"""`serve --stage S SPEC...` (and `up --keep-running SPEC...`, which starts serve beside the
emulator): the stage with the given specs instead of its own list, so a team serves its own
table on the `local` stage without a stage file of its own, as `up SPEC...` loads it.

serve reads its tables from a project root's stage file (serve/catalog.py, in every worker
process), so the given specs become a stage file of the tool's own: the project's stage
as it is, its `specs` replaced by the given files' absolute paths, written to
`.ddb2bigtable/<stage>/given-specs/stacks/Pulumi.<stage>.yaml` (owner-only, replaced on
every run: readable, so what is served can be checked), and serve runs with that folder
as its root. Nothing else of serve reads the root.
"""

from __future__ import annotations

from pathlib import Path

import yaml

from ..load.local_stage import WORK_DIR
from ..load.work_folder import private_dir, replace_private
from ..spec.reading import read_specs
from ..spec.stage import STACKS_DIR, STAGE_KEY, load_stage, stack_path


def root_with_specs(root: Path, stage_name: str, specs: list[str]) -> Path:
    """A project root whose stage `stage_name` is the project's with `specs` as its spec
    list (every problem of the stage or the specs first, as InputError)."""
    load_stage(stage_name, root)
    read_specs(specs)
    document = yaml.safe_load(stack_path(stage_name, root).read_text(encoding="utf-8"))
    document["config"][STAGE_KEY]["specs"] = [str(Path(spec).resolve()) for spec in specs]
    given = root / WORK_DIR / stage_name / "given-specs"
    replace_private(private_dir(given / STACKS_DIR) / f"Pulumi.{stage_name}.yaml",
                    "# written by ddb2bigtable for `serve SPEC...`: the project's stage with the given specs\n"
                    + yaml.safe_dump(document, sort_keys=False))
    return given
