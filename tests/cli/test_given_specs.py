"""`serve --stage S SPEC...`: the stage served with the given specs instead of its list
(cli/given_specs.py), everything else of the stage as it is."""

from __future__ import annotations

import shutil
import stat

import pytest

from ddb2bigtable.cli.given_specs import root_with_specs
from ddb2bigtable.spec.errors import InputError
from ddb2bigtable.spec.stage import load_stage

from ..conftest import ROOT


def test_the_served_stage_is_the_stage_with_the_given_specs(tmp_path):
    for folder in ("stacks", "specs"):
        shutil.copytree(ROOT / folder, tmp_path / folder)
    mine = tmp_path / "elsewhere" / "orders.yaml"
    mine.parent.mkdir()
    shutil.copy(ROOT / "specs" / "product-catalog.yaml", mine)
    given = root_with_specs(tmp_path, "local", [str(mine)])
    stage, original = load_stage("local", given), load_stage("local", tmp_path)
    assert stage.spec_paths(given) == [mine.resolve()]  # only the given spec, wherever it is
    assert (stage.instance_suffix, stage.emulator, stage.capacity_scale) == \
        (original.instance_suffix, original.emulator, original.capacity_scale)
    written = given / "stacks" / "Pulumi.local.yaml"
    assert stat.S_IMODE(written.stat().st_mode) == 0o600 and given.is_relative_to(tmp_path / ".ddb2bigtable")


def test_a_given_spec_that_is_not_there_is_refused_before_anything_is_written(tmp_path):
    for folder in ("stacks", "specs"):
        shutil.copytree(ROOT / folder, tmp_path / folder)
    with pytest.raises(InputError):
        root_with_specs(tmp_path, "local", [str(tmp_path / "missing.yaml")])
    assert not (tmp_path / ".ddb2bigtable").exists()
