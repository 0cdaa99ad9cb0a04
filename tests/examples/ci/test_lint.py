"""Every file of examples/ci passes its JSON Schema (check-jsonschema's vendored schemas)
and zizmor, offline, in its `auditor` persona (every audit, the pedantic ones too), with no
finding at medium severity or above; every action is pinned."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from ...conftest import ROOT
from .steps import CI, EXPRESSION, load

GITHUB = ["bigtable-pr.yml", "bigtable-deploy.yml", "bigtable-pr-stage.yml", "bigtable-drift.yml", "prices-refresh.yml"]
SCHEMAS = {**{name: "vendor.github-workflows" for name in GITHUB},
           "gitlab-ci.yml": "vendor.gitlab-ci", "dependabot.yml": "vendor.dependabot"}
BIN = Path(sys.executable).parent


def test_every_yaml_file_of_the_folder_has_its_schema_here():
    assert {p.name for p in CI.glob("*.yml")} == set(SCHEMAS)


def check_jsonschema(schema: str, *files: Path) -> subprocess.CompletedProcess:
    return subprocess.run([BIN / "check-jsonschema", "--builtin-schema", schema, *map(str, files)],
                          capture_output=True, text=True, timeout=120)


@pytest.mark.parametrize("name", sorted(SCHEMAS))
def test_the_file_validates_against_its_schema(name):
    out = check_jsonschema(SCHEMAS[name], CI / name)
    assert out.returncode == 0, out.stdout + out.stderr


@pytest.mark.parametrize("schema,good,bad", [("vendor.github-workflows", "runs-on: ubuntu-latest", "runs_on: ubuntu-latest"),
                                            ("vendor.gitlab-ci", "diff:\n  stage: review", "diff:\n  stgae: review")])
def test_the_schema_check_refuses_a_misspelt_key(tmp_path, schema, good, bad):
    name = next(n for n, s in SCHEMAS.items() if s == schema)
    text = (CI / name).read_text()
    assert good in text
    (tmp_path / name).write_text(text.replace(good, bad, 1))
    assert check_jsonschema(schema, tmp_path / name).returncode == 1


def zizmor(*files: Path) -> list[dict]:
    out = subprocess.run([BIN / "zizmor", "--offline", "--persona", "auditor", "--min-severity", "medium", "--format", "json",
                          "--no-progress", *map(str, files)], capture_output=True, text=True, timeout=120)
    assert out.returncode in (0, 11, 12, 13, 14), out.stderr  # 1x: findings, by their highest severity
    return json.loads(out.stdout)


def test_zizmor_as_auditor_finds_nothing_at_medium_severity_or_above():
    findings = zizmor(*(CI / name for name in [*GITHUB, "dependabot.yml"]))
    assert [(f["ident"], f["locations"][0]["symbolic"]["key"]) for f in findings] == []


def test_zizmor_does_find_what_the_workflows_avoid(tmp_path):
    text = (CI / "bigtable-pr.yml").read_text().replace('"origin/$BASE_REF"', '"origin/${{ github.head_ref }}"', 1)
    text = text.replace("    environment: preview ", "    # no environment ", 1)  # its secret read outside one
    (tmp_path / "bigtable-pr.yml").write_text(re.sub(r"actions/checkout@[0-9a-f]{40}", "actions/checkout@v4", text))
    found = {f["ident"] for f in zizmor(tmp_path / "bigtable-pr.yml")}
    assert {"template-injection", "unpinned-uses", "secrets-outside-env"} <= found


@pytest.mark.parametrize("name", GITHUB)
def test_every_action_is_pinned_to_a_commit_with_its_tag_beside_it(name):
    lines = [line for line in (CI / name).read_text().splitlines() if re.match(r"\s*(- )?uses:", line)]
    assert lines
    for line in lines:
        assert re.search(r"uses: [\w.-]+/[\w.-]+@[0-9a-f]{40} # v\d+\.\d+\.\d+$", line), line


@pytest.mark.parametrize("name", GITHUB)
def test_no_expression_in_a_script_and_least_privilege(name):
    workflow = load(name)
    assert workflow["permissions"] == {}
    for job_id, job in workflow["jobs"].items():
        assert "permissions" in job, job_id
        for s in job["steps"]:
            assert not EXPRESSION.search(s.get("run", "")), (job_id, s.get("name"))
            if s.get("uses", "").startswith("actions/checkout@"):
                assert s["with"]["persist-credentials"] is False, job_id


def test_the_readme_records_every_pinned_commit_with_its_tag():
    readme = (CI / "README.md").read_text()
    recorded = set(re.findall(r"^\| ([\w.-]+/[\w.-]+) \| (v[\d.]+) \| `([0-9a-f]{40})` \|", readme, re.MULTILINE))
    pinned = {m for name in GITHUB for m in re.findall(r"uses: ([\w.-]+/[\w.-]+)@([0-9a-f]{40}) # (v[\d.]+)",
                                                       (CI / name).read_text())}
    assert {(action, tag, sha) for action, sha, tag in pinned} == recorded


def scripts() -> list[tuple[str, str, str]]:
    """(file, where, script) of every GitHub `run:` and every GitLab job's scripts."""
    found = [(name, f"{job_id}/{s.get('name', s.get('run', '')[:30])}", s["run"]) for name in GITHUB
             for job_id, job in load(name)["jobs"].items() for s in job["steps"] if "run" in s]
    gitlab = load("gitlab-ci.yml")
    found += [("gitlab-ci.yml", f"{job_id}/{key}", "\n".join(body[key])) for job_id, body in gitlab.items()
              if isinstance(body, dict) for key in ("before_script", "script", "after_script") if key in body]
    return found


@pytest.mark.parametrize("name,where,script", scripts(), ids=[f"{n}:{w}" for n, w, _ in scripts()])
def test_every_script_is_valid_bash(tmp_path, name, where, script):
    """The scripts no test runs (the `pulumi` ones) are at least read by bash."""
    (tmp_path / "step.sh").write_text(script)
    out = subprocess.run(["bash", "-n", str(tmp_path / "step.sh")], capture_output=True, text=True, timeout=30)
    assert out.returncode == 0, out.stderr


def shellcheck(*files: Path) -> subprocess.CompletedProcess:
    """Debian's shellcheck 0.9.0 (scripts/test.sh installs it: scripts/shellcheck.sh); a machine without it fails
    here with what to install: a lint that silently did not run would pass anything."""
    found = shutil.which("shellcheck")
    assert found, "shellcheck is needed for the pipelines' scripts: apt-get install shellcheck (Debian's 0.9.0)"
    return subprocess.run([found, "--shell", "bash", "--external-sources", "--source-path", "SCRIPTDIR", "--format", "gcc", *map(str, files)],
                          cwd=ROOT, capture_output=True, text=True, timeout=120)


def test_shellcheck_finds_nothing_in_any_script_of_the_pipelines_or_the_project(tmp_path):
    """Every GitHub `run:` and GitLab script as bash runs it (each file named for its job and
    step), the README's `sh` blocks, examples/ci's and scripts/' shell files and .ci/run, at
    every severity (style too)."""
    readme = [("README.md", f"sh-block-{n}", "\n".join(line.removeprefix("  ") for line in block.splitlines()))
              for n, block in enumerate(re.findall(r"```sh\n(.*?)```", (CI / "README.md").read_text(), re.DOTALL))]
    assert len(readme) >= 2  # the resource groups' loop, the identity's variables
    files = []
    for number, (name, where, script) in enumerate([*scripts(), *readme]):
        path = tmp_path / f"{number:02d}-{name}-{re.sub(r'[^A-Za-z0-9]+', '-', where)[:60]}.sh"
        path.write_text(script)
        files.append(path)
    own = [*sorted(CI.glob("*.sh")), *sorted((ROOT / "scripts").glob("*.sh")), ROOT / ".ci" / "run"]
    out = shellcheck(*files, *own)
    assert out.returncode == 0 and not out.stdout, out.stdout + out.stderr


def test_shellcheck_does_find_what_the_scripts_avoid(tmp_path):
    """A GitLab script with its paths unquoted again, and an unused variable: both reported."""
    (script,) = [s for name, where, s in scripts() if where == "diff/script"]
    bad = script.replace('"${paths[@]}"', "$REVIEW_PATHS", 1) + "\nunused=1\n"
    (tmp_path / "diff.sh").write_text(bad)
    out = shellcheck(tmp_path / "diff.sh")
    assert out.returncode == 1 and "SC2086" in out.stdout and "SC2034" in out.stdout, out.stdout
