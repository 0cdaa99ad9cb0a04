"""`ddb2bigtable diff` on temporary git repositories with two commits."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from ddb2bigtable.plan.planner import plan_files

from ..conftest import shipped_project
from ..markdown_check import figures, table_cells, table_row_widths

SNAPSHOT = Path(__file__).parents[1] / "snapshots" / "diff-example.md"


def git(repo: Path, *args: str) -> None:
    subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True)


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    """A project with the example specs and stacks, committed once."""
    shipped_project(tmp_path)
    git(tmp_path, "init", "-q", "-b", "main")
    git(tmp_path, "-c", "user.email=t@example.com", "-c", "user.name=t", "commit", "-q", "--allow-empty", "-m", "x")
    git(tmp_path, "add", ".")
    git(tmp_path, "-c", "user.email=t@example.com", "-c", "user.name=t", "commit", "-q", "-m", "base")
    return tmp_path


def change(repo: Path, path: str, old: str, new: str, commit: bool = True) -> None:
    file = repo / path
    text = file.read_text()
    assert old in text, old
    file.write_text(text.replace(old, new, 1))
    if commit:
        git(repo, "add", ".")
        git(repo, "-c", "user.email=t@example.com", "-c", "user.name=t", "commit", "-q", "-m", "change")


def run(repo: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "ddb2bigtable", "diff", "--root", str(repo), *args],
                          capture_output=True, text=True)


def diff_json(repo: Path, *args: str) -> dict:
    out = run(repo, "--base", "HEAD~1", "--head", "HEAD", "--format", "json", *args)
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout)


def stage(document: dict, name: str) -> dict:
    return next(s for s in document["stages"] if s["stage"] == name)


def test_a_capacity_increase_shows_more_nodes_and_cost_with_the_plans_numbers(repo):
    before = plan_files(repo, "prod")
    change(repo, "specs/shop-global.yaml", "      reads: 12000 ", "      reads: 24000 ")
    after = plan_files(repo, "prod")
    document = diff_json(repo)
    prod = stage(document, "prod")
    nodes_before = sum(c.nodes for i in before.instances for c in i.clusters)
    nodes_after = sum(c.nodes for i in after.instances for c in i.clusters)
    assert prod["nodes"] == {"before": nodes_before, "after": nodes_after} and nodes_after > nodes_before
    cost_before = round(sum(i.cost.bigtable_monthly_usd for i in before.instances), 2)
    cost_after = round(sum(i.cost.bigtable_monthly_usd for i in after.instances), 2)
    assert prod["cost"]["bigtable"]["before"] == cost_before and prod["cost"]["bigtable"]["after"] == cost_after
    assert prod["cost"]["bigtable"]["delta"] == round(cost_after - cost_before, 2) > 0
    east = [c for c in prod["changes"] if c["scope"] == "shop-global/cluster us-east4"]
    assert east and east[0]["what"] == "autoscaling" and not prod["destructive"]
    delta = prod["cost"]["bigtable"]["delta"]
    assert f"prod: {len(prod['changes'])} changes, Bigtable +${delta:,.0f}/month ({100 * delta / cost_before:+.0f} %), DynamoDB +" \
        in document["summary"]


def test_a_new_replica_region_adds_a_cluster_costs_more_and_warns(repo):
    change(repo, "specs/shop-global.yaml", "        - region: eu-west-1      # no reads",
           "        - region: ap-northeast-1\n        - region: eu-west-1      # no reads")
    prod = stage(diff_json(repo), "prod")
    added = [c for c in prod["changes"] if c["what"] == "cluster added"]
    assert [c["scope"] for c in added] == ["shop-global/cluster asia-northeast1"]
    assert prod["cost"]["bigtable"]["delta"] > 0
    assert any(c["what"] == "new warning: made-multi-region" for c in prod["changes"]) or \
        any("replicated" in c["why"] for c in added)


def test_a_zone_change_is_destructive(repo):
    change(repo, "specs/movies.yaml", "  id: movies-sample", "  id: movies-sample\n  zones: {us-west-2: us-west1-b}")
    document = diff_json(repo)
    prod = stage(document, "prod")
    (zone,) = [c for c in prod["changes"] if c["what"] == "zone"]
    assert zone["before"] == "us-west1-a" and zone["after"] == "us-west1-b" and zone["flag"] == "DESTRUCTIVE"
    assert "replaces the whole instance" in zone["why"] and document["destructive"] >= 1


def test_a_new_instance_is_charted_and_its_arithmetic_folded(repo):
    """A spec added to a stage: its clusters go from absent to their nodes in the comment."""
    (repo / "specs/movies2.yaml").write_text((repo / "specs/movies.yaml").read_text().replace(
        "  id: movies-sample", "  id: movies-second"))
    change(repo, "stacks/Pulumi.prod.yaml", "      - specs/movies.yaml\n", "      - specs/movies.yaml\n      - specs/movies2.yaml\n")
    prod = stage(diff_json(repo, "--stage", "prod"), "prod")
    assert [(c["what"], c["after"]) for c in prod["changes"]] == [
        ("instance added", "movies-second (tables movies, _ddb2bigtable_types)")]  # all that pulumi up makes
    assert prod["clusters"] == [{"scope": "movies-second/cluster us-west1", "nodes": {"before": None, "after": 1},
                                 "buy": {"before": None, "after": "1"}}]
    text = run(repo, "--base", "HEAD~1", "--head", "HEAD", "--stage", "prod", "--format", "markdown").stdout
    assert "%% movies-second/cluster us-west1: absent → 1 node" in text
    assert "<code>movies-second/cluster us-west1</code>: absent → 1 node, the arithmetic" in text


def test_removing_a_family_is_destructive(repo):
    spec = repo / "specs/invoices-adjacency.yaml"
    text = spec.read_text()
    start = text.index("        - partition_key_prefix: \"Invoice-\"\n          sort_key_prefix: \"Payment-\"")
    spec.write_text(text[:start].replace("        - name: Payment\n          gc: {max_versions: 1}\n", ""))
    git(repo, "add", ".")
    git(repo, "-c", "user.email=t@example.com", "-c", "user.name=t", "commit", "-q", "-m", "drop payments")
    prod = stage(diff_json(repo), "prod")
    (removed,) = [c for c in prod["changes"] if c["what"] == "family removed"]
    assert removed["scope"].endswith("table invoices/family Payment") and removed["flag"] == "DESTRUCTIVE"


def test_a_ttl_change_is_destructive(repo):
    change(repo, "specs/shop-global.yaml", "ttl: {attribute: expiresAt}          # abandoned",
           "ttl: {attribute: purgeAt}          # abandoned")
    prod = stage(diff_json(repo), "prod")
    (ttl,) = [c for c in prod["changes"] if c["what"] == "TTL attribute"]
    assert (ttl["before"], ttl["after"], ttl["flag"]) == ("expiresAt", "purgeAt", "DESTRUCTIVE")


def test_an_index_key_type_change_replaces_its_view_and_says_so(repo):
    """A number sort key is held in the view as FLOAT64 too: a type change changes the view's
    query, which pulumi can only apply by replacing the view."""
    for _ in range(2):  # both of its indexes: an attribute has one type
        change(repo, "specs/shop-global.yaml", "sort: {name: createdAt, type: N}", "sort: {name: createdAt, type: S}",
               commit=False)
    git(repo, "-c", "user.email=t@example.com", "-c", "user.name=t", "commit", "-q", "-a", "-m", "createdAt as text")
    prod = stage(diff_json(repo), "prod")
    queries = [c for c in prod["changes"] if c["what"] == "view query"]
    assert {c["scope"].rsplit("/", 1)[1] for c in queries} == {"view orders-by-status", "view orders-by-merchant"}
    assert all(c["flag"] == "RISK" and "deletes the view and builds it again" in c["why"] for c in queries)


def test_a_comment_only_change_reports_nothing(repo):
    change(repo, "specs/shop-global.yaml", "# A realistic multi-table instance", "# A realistic, commented instance")
    document = diff_json(repo)
    assert all(s["status"] == "unchanged" and not s["changes"] for s in document["stages"])
    assert document["summary"] == "; ".join(f"{s['stage']}: no change" for s in document["stages"])


def test_an_invalid_spec_at_head_exits_2_with_the_located_error(repo):
    change(repo, "specs/movies.yaml", "      reads: ", "      raeds: ")
    out = run(repo, "--base", "HEAD~1", "--head", "HEAD")
    assert out.returncode == 2 and "Traceback" not in out.stderr
    assert "HEAD:specs/movies.yaml:" in out.stderr and "did you mean 'reads'" in out.stderr
    out = run(repo, "--base", "HEAD~1")  # the working tree as head: real paths
    assert out.returncode == 2 and "specs/movies.yaml:" in out.stderr


def test_the_record_of_types_is_diffed_like_the_spec_tables(repo):
    """`_ddb2bigtable_types`, which pulumi up makes in every instance, is in the diff too: its
    protection follows the stage's like every table's (before, the diff never named it)."""
    change(repo, "stacks/Pulumi.dev.yaml", "    deletion_protection: false", "    deletion_protection: true")
    dev = stage(diff_json(repo, "--stage", "dev"), "dev")
    protected = {c["scope"] for c in dev["changes"] if c["what"] == "deletion protection"}
    instances = {i.id for i in plan_files(repo, "dev").instances}
    assert {f"{i}/table _ddb2bigtable_types" for i in instances} <= protected
    assert len(protected) == sum(len(i.tables) + 1 for i in plan_files(repo, "dev").instances)


def test_fail_on_destructive_exits_1(repo):
    change(repo, "specs/shop-global.yaml", "ttl: {attribute: expiresAt}          # abandoned",
           "ttl: {attribute: purgeAt}          # abandoned")
    assert run(repo, "--base", "HEAD~1", "--head", "HEAD", "--fail-on", "destructive").returncode == 1
    assert run(repo, "--base", "HEAD~1", "--head", "HEAD").returncode == 0
    assert run(repo, "--base", "HEAD~1", "--head", "HEAD", "--fail-on", "cost-increase:x").returncode == 2


def test_fail_on_a_cost_increase_above_a_threshold(repo):
    change(repo, "specs/shop-global.yaml", "      reads: 12000 ", "      reads: 24000 ")
    assert run(repo, "--base", "HEAD~1", "--head", "HEAD", "--fail-on", "cost-increase:1").returncode == 1
    assert run(repo, "--base", "HEAD~1", "--head", "HEAD", "--fail-on", "cost-increase:500").returncode == 0


@pytest.mark.parametrize("fmt", ["text", "markdown", "json"])
def test_fail_on_names_each_rule_that_tripped_on_stderr_in_every_format(repo, fmt):
    """A failed CI step says why: one stderr line per rule that tripped, with its figure;
    a rule that did not trip says nothing; stdout stays the report (JSON still parses)."""
    change(repo, "specs/shop-global.yaml", "ttl: {attribute: expiresAt}          # abandoned",
           "ttl: {attribute: purgeAt}          # abandoned", commit=False)
    change(repo, "specs/shop-global.yaml", "      reads: 12000 ", "      reads: 24000 ")
    out = run(repo, "--base", "HEAD~1", "--head", "HEAD", "--format", fmt, "--fail-on", "destructive",
              "--fail-on", "cost-increase:1", "--fail-on", "cost-increase:900")
    assert out.returncode == 1
    lines = out.stderr.splitlines()
    destructive = [line for line in lines if line.startswith("--fail-on destructive: ")]
    cost = [line for line in lines if line.startswith("--fail-on cost-increase:1: ")]
    assert len(destructive) == 1 and "TTL attribute" in destructive[0] and "table orders" in destructive[0]
    assert len(cost) == 1 and "prod Bigtable +" in cost[0] and "above 1 %" in cost[0]
    assert not any("cost-increase:900" in line for line in lines)
    if fmt == "json":
        assert json.loads(out.stdout)["destructive"] >= 1


def realistic_change(repo: Path) -> None:
    """The example pull request of docs/diff.md (tests/snapshots/diff-example.md): `orders` reads
    doubled, the eu-west-1 replica dropped (its cluster goes: a RISK), the TTL attribute renamed
    (DESTRUCTIVE); prod's cost falls, dev's DynamoDB cost rises, and prod's us-east4 cluster meets
    the stage's node cap (a RISK)."""
    change(repo, "specs/shop-global.yaml", "      reads: 12000 ", "      reads: 24000 ", commit=False)
    change(repo, "specs/shop-global.yaml", *REPLICA_DROPPED, commit=False)
    change(repo, "specs/shop-global.yaml", "ttl: {attribute: expiresAt}          # abandoned",
           "ttl: {attribute: purgeAt}          # abandoned")


def comment(repo: Path) -> str:
    out = run(repo, "--base", "HEAD~1", "--head", "HEAD", "--format", "markdown", "--stage", "prod", "--stage", "dev")
    assert out.returncode == 0, out.stderr
    return out.stdout


def test_the_pull_request_comment_matches_the_reviewed_snapshot(repo):
    """UPDATE_SNAPSHOTS=1 rewrites tests/snapshots/diff-example.md; read it before committing."""
    realistic_change(repo)
    text = comment(repo)
    assert text.startswith("<!-- ddb2bigtable-diff -->")
    tables = table_row_widths(text)
    assert len(tables) == 3  # overview + one changes table per changed stage
    assert all(len(set(widths)) == 1 for widths in tables), tables  # no pipe in a why broke a row
    if os.environ.get("UPDATE_SNAPSHOTS"):
        SNAPSHOT.write_text(text)
    assert text == SNAPSHOT.read_text()


def test_the_comment_reads_top_down_flagged_changes_first_one_line_each(repo):
    realistic_change(repo)
    text = comment(repo)
    top = text[:text.index("<details>")]
    assert "| prod | 38 → 44 |" in top and "| dev |" in top  # one line per stage: nodes, costs, flags
    flagged = [line for line in top.splitlines() if line.startswith("- **")]
    assert [line.split("**")[1] for line in flagged] == ["DESTRUCTIVE", "DESTRUCTIVE", "RISK", "RISK"]
    assert any("TTL attribute (expiresAt → purgeAt): cell timestamps hold" in line for line in flagged)
    assert any("cluster removed" in line and "loses its replica" in line for line in flagged)


def visible_lines(markdown: str) -> list[str]:
    """The lines GitHub shows before anything is unfolded: outside every `<details>`, plus each
    outer fold's summary line."""
    shown, depth = [], 0
    for line in markdown.splitlines():
        if line.startswith("<details"):
            shown += [line] if depth == 0 else []
            depth += 1
        elif depth == 0:
            shown.append(line)
        if line == "</details>":
            depth -= 1
    return shown


def test_the_headline_is_one_line_per_stage_and_each_cost_names_its_cloud(repo):
    """Before: one bold run-on line where commas separated both stages and items, and "same cost"
    stood beside a DynamoDB figure that changed (dev's DynamoDB cost rises here, its Bigtable cost
    does not)."""
    realistic_change(repo)
    text = comment(repo)
    assert "same cost" not in text
    headline = text.split("\n\n")[1].splitlines()
    assert [line.split(":")[0] for line in headline] == ["- prod", "- dev"]
    dev = stage(diff_json(repo, "--stage", "dev"), "dev")["cost"]["dynamodb"]
    assert dev["delta"] > 0
    assert headline[1] == (f"- dev: 2 changes, Bigtable unchanged, DynamoDB +${dev['delta']:,.0f}/month "
                           f"(+{100 * dev['delta'] / dev['before']:.0f} %), 1 DESTRUCTIVE")
    assert "Bigtable -$" in headline[0] and ", DynamoDB -$" in headline[0] and "2 RISK" in headline[0]


def test_the_first_screen_is_the_totals_and_the_flagged_changes_the_detail_is_folded(repo):
    """Every stage's changes table, chart and arithmetic are folded in one `<details>` per stage;
    what shows unfolded is the headline, the totals, the flagged changes and one summary line per
    stage (the issue's comment showed 436 lines)."""
    realistic_change(repo)
    text = comment(repo)
    shown = visible_lines(text)
    assert len([line for line in shown if line]) <= 25, shown
    assert not [line for line in shown if line.startswith("| where |") or "mermaid" in line]
    summaries = [line for line in shown if line.startswith("<details>")]
    assert summaries == ["<details><summary><b>prod</b>: 21 changes (1 DESTRUCTIVE, 2 RISK)</summary>",
                         "<details><summary><b>dev</b>: 2 changes (1 DESTRUCTIVE)</summary>"]


def test_no_table_cell_exceeds_the_limit_and_every_figure_of_the_plans_why_is_in_the_comment(repo):
    """The why of a cluster is over a thousand characters; the table shows one clause, the comment keeps all."""
    base = {i.id: i for i in plan_files(repo, "prod").instances}
    realistic_change(repo)
    head = {i.id: i for i in plan_files(repo, "prod").instances}
    text = comment(repo)
    cells = table_cells(text)
    assert cells and max(len(cell) for cell in cells) <= 120, max(cells, key=len)
    moved = [c for plan in (base, head) for c in plan["shop-global"].clusters]
    assert max(len(c.why) for c in moved) > 1000
    for c in moved:
        missing = figures(c.why + " " + (c.autoscaling.why if c.autoscaling else "")) - figures(text)
        assert not missing, (c.id, missing)
    for d in diff_json(repo, "--stage", "prod", "--stage", "dev")["stages"]:
        for c in d["changes"]:
            assert not figures(" ".join((c["why"], c["before"], c["after"]))) - figures(text), c


def test_the_nodes_chart_is_mermaid_and_reads_as_text_where_mermaid_is_not_rendered(repo):
    base = {c.gcp_region: c.nodes for i in plan_files(repo, "prod").instances if i.id == "shop-global"
            for c in i.clusters}
    realistic_change(repo)
    head = {c.gcp_region: c.nodes for i in plan_files(repo, "prod").instances if i.id == "shop-global"
            for c in i.clusters}
    text = comment(repo)
    chart = text[text.index("```mermaid\nxychart-beta"):]
    chart = chart[:chart.index("\n```\n")]
    bars = [int(n) for n in chart.split("bar [")[1].rstrip("]").split(", ")]
    assert bars == [n for region in base for n in (base[region], head.get(region, 0))]
    notes = [line.strip().removeprefix("%% ") for line in chart.splitlines() if line.strip().startswith("%%")]
    assert f"shop-global/cluster us-east4: {base['us-east4']} nodes (autoscaling 10-28) → " \
           f"{head['us-east4']} nodes (autoscaling 13-30)" in notes
    assert f"shop-global/cluster europe-west1: {base['europe-west1']} nodes (autoscaling 6-17) → removed" in notes


def test_the_emulator_stage_costs_nothing_in_a_diff(repo):
    """The local stage runs on the emulator: a capacity change moves its nodes, never a cost."""
    change(repo, "specs/movies.yaml", "reads: ", "reads: 9")  # every table's reads x ~10
    local = stage(diff_json(repo, "--stage", "local"), "local")
    assert local["nodes"]["after"] >= 1
    assert local["cost"]["bigtable"] == {"before": 0.0, "after": 0.0, "delta": 0.0, "percent": None}
    assert sum(i.cost.bigtable_monthly_usd for i in plan_files(repo, "local").instances) > 0  # what the cloud would charge
    assert run(repo, "--base", "HEAD~1", "--stage", "local", "--fail-on", "cost-increase:1").returncode == 0


def test_a_higher_autoscaling_maximum_moves_the_at_max_alert_in_the_diff(repo):
    """On-call sees in the pull request when the plan's "normal" moves."""
    before = {c.id: c.autoscaling.max_nodes for i in plan_files(repo, "prod").instances for c in i.clusters
              if i.id == "shop-global"}
    change(repo, "specs/shop-global.yaml", "max_reads: 20000", "max_reads: 40000")
    prod = stage(diff_json(repo), "prod")
    moved = {c["scope"]: (c["before"], c["after"]) for c in prod["changes"] if c["what"] == "alert threshold"}
    east = "shop-global/alert shop-global-us-east4-a-at-max"
    assert east in moved, prod["changes"]
    assert moved[east][0] == f"= {before['shop-global-us-east4-a']} nodes for 30m"
    assert int(moved[east][1].split()[1]) > before["shop-global-us-east4-a"]


def test_an_alert_threshold_reads_the_same_in_diff_and_plan(repo):
    """`> 46 %` and `30m` in both, never `> 0.46 for 1800s` in one of them (#30)."""
    from ddb2bigtable.plan.operations import duration_text, threshold_text

    alerts = {a.id: a for i in plan_files(repo, "prod").instances if i.operations for a in i.operations.alerts}
    change(repo, "specs/shop-global.yaml", *REPLICA_DROPPED)
    prod = stage(diff_json(repo), "prod")
    cpu = next(c for c in prod["changes"] if c["scope"] == "shop-global/alert shop-global-us-east4-a-cpu")
    old = alerts["shop-global-us-east4-a-cpu"]
    assert cpu["before"] == f"{threshold_text(old)} for {duration_text(old)}" == "> 46 % for 30m"
    assert cpu["after"] == "> 35 % for 30m"
    assert not any("1800s" in c["before"] + c["after"] for c in prod["changes"])


REPLICA_DROPPED = ("        - region: eu-west-1      # no reads: same RCU as the home region (AWS default)\n", "")


def test_a_warning_whose_numbers_changed_is_a_changed_line_with_both_texts(repo):
    """Dropping a replica turns "3 clusters" into "2 clusters" in warnings the base already had (#30)."""
    change(repo, "specs/shop-global.yaml", "      reads: 12000 ", "      reads: 24000 ", commit=False)
    change(repo, "specs/shop-global.yaml", *REPLICA_DROPPED)
    changes = stage(diff_json(repo), "prod")["changes"]
    assert not [c for c in changes if c["what"] == "new warning: made-multi-region"]
    changed = {c["scope"]: c for c in changes if c["what"] == "warning changed: made-multi-region"}
    assert set(changed) == {f"shop-global/table {t}" for t in ("carts", "customers", "events")}
    assert "all 3 clusters" in changed["shop-global/table carts"]["before"]
    assert "all 2 clusters" in changed["shop-global/table carts"]["after"]
    new = [c for c in changes if c["what"].startswith("new warning")]
    assert [c["what"] for c in new] == ["new warning: outside-autoscaling"]  # raised reads left the range
    cap = [c for c in changes if c["what"] == "capacity below the model's need"]
    assert [c["scope"] for c in cap] == ["shop-global/cluster us-east4"] and cap[0]["flag"] == "RISK"


def test_an_unchanged_warning_is_not_news_and_a_resolved_one_says_so(repo):
    change(repo, "specs/shop-global.yaml", "      reads: 12000 ", "      reads: 13000 ")
    changes = stage(diff_json(repo), "prod")["changes"]
    assert changes and not [c for c in changes if "warning" in c["what"]]
    change(repo, "specs/shop-global.yaml", "      reads: 13000 ", "      reads: 24000 ")
    change(repo, "specs/shop-global.yaml", "      reads: 24000 ", "      reads: 12000 ")
    resolved = [c for c in stage(diff_json(repo), "prod")["changes"] if "resolved" in c["what"]]
    assert [(c["what"], c["after"]) for c in resolved] == [("warning resolved: outside-autoscaling", "resolved")]


def test_a_change_that_only_raises_a_warning_reports_it(repo):
    """orders made Standard-IA: no node moves, but the plan now warns (HDD reads 500/s per node)."""
    change(repo, "specs/shop-global.yaml", "      table_class: standard\n", "      table_class: standard_infrequent_access\n")
    prod = stage(diff_json(repo), "prod")
    assert prod["status"] == "changed"
    assert [(c["scope"], c["what"], c["before"]) for c in prod["changes"]] == [
        ("shop-global/table orders", "new warning: infrequent-access", "none")]


def test_no_change_line_has_an_empty_side(repo):
    """JSON, table and markdown: every line says what it was and what it becomes (#30)."""
    change(repo, "specs/shop-global.yaml", "      reads: 12000 ", "      reads: 24000 ", commit=False)
    change(repo, "specs/shop-global.yaml", *REPLICA_DROPPED)
    prod = stage(diff_json(repo), "prod")
    assert prod["changes"] and all(c["before"].strip() and c["after"].strip() for c in prod["changes"])
    wide = {**os.environ, "COLUMNS": "2000"}  # one change a line, as rich would not wrap it
    table = subprocess.run([sys.executable, "-m", "ddb2bigtable", "diff", "--root", str(repo), "--base", "HEAD~1",
                            "--head", "HEAD", "--stage", "prod"], capture_output=True, text=True, env=wide).stdout
    lines = [line for line in table.splitlines() if line.startswith("  prod ")]
    assert len(lines) == len(prod["changes"]), table
    assert not [line for line in lines if "  → " in line or "→  " in line or line.rstrip().endswith("→")]
    markdown = run(repo, "--base", "HEAD~1", "--head", "HEAD", "--stage", "prod", "--format", "markdown").stdout
    cells = table_cells(markdown[markdown.index("<summary><b>prod</b>"):])
    rows = [cells[i:i + 6] for i in range(6, len(cells), 6)]  # after the header: where, what, before, after, ...
    assert len(rows) == len(prod["changes"]) and all(row[2] and row[3] for row in rows)


def test_a_comment_too_long_for_github_drops_the_folded_text_of_its_last_stages_and_says_so(repo, monkeypatch):
    from ddb2bigtable.render import diff_format
    from ddb2bigtable.review.diff_run import run_diff

    realistic_change(repo)
    diffs = run_diff(repo, "HEAD~1", "HEAD", ["prod", "dev"])
    whole = diff_format.to_markdown(diffs, "HEAD~1", "HEAD")
    monkeypatch.setattr(diff_format, "COMMENT_LIMIT", len(whole) - 10)  # dropping dev's folded text is enough
    text = diff_format.to_markdown(diffs, "HEAD~1", "HEAD")
    assert len(text) < len(whole) and text.count("<details>") < whole.count("<details>")
    assert "prod <code>shop-global/cluster us-east4</code>" in text  # the first stage keeps its arithmetic
    assert "_dev's arithmetic and full texts are left out" in text and "`ddb2bigtable diff --stage dev" in text
    assert text.index("<summary><b>dev</b>") > 0 and table_row_widths(text)[-1]  # dev's table stays
