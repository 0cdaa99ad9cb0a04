"""The markdown plan renders as real tables in a CommonMark + GFM-tables renderer."""

from __future__ import annotations

from markdown_it import MarkdownIt

from ddb2bigtable.plan.planner import plan_files
from ddb2bigtable.render.markdown import to_markdown
from ddb2bigtable.render.sections import instance_sections

from ..conftest import ROOT
from ..markdown_check import figures, table_cells, table_row_widths


def test_every_section_renders_as_a_complete_table():
    plan = plan_files(ROOT, "prod")
    text = to_markdown(plan)
    tables = table_row_widths(text)
    assert len(tables) == 1 + sum(len(instance_sections(i)) for i in plan.instances)
    assert all(len(set(widths)) == 1 for widths in tables), tables  # no pipe in a why broke a row


def test_pipes_in_text_are_escaped_not_table_breaks():
    html = MarkdownIt("commonmark").enable("table").render(to_markdown(plan_files(ROOT, "staging")))
    assert "<table>" in html and "shop-global-stg" in html


def test_the_plan_reads_like_the_pull_request_comment():
    """Totals and warnings first, a chart of nodes, short cells, each cluster's arithmetic folded whole (#34)."""
    plan = plan_files(ROOT, "prod")
    text = to_markdown(plan)
    first_instance = text.index("### Instance ")
    assert text.index("warnings**") < text.index("```mermaid") < first_instance
    chart = text[text.index("```mermaid"):]
    chart = chart[:chart.index("\n```\n")]
    clusters = [c for i in plan.instances for c in i.clusters]
    assert chart.split("bar [")[1].rstrip("]") == ", ".join(str(c.nodes) for c in clusters)
    assert "%% shop-global/cluster us-east4: 16 nodes (autoscaling 10-28)" in chart  # readable unrendered
    cells = table_cells(text)
    assert max(len(cell) for cell in cells) <= 120, max(cells, key=len)
    for c in clusters:
        assert f"<summary><code>{c.id}</code>" in text
        assert not figures(c.why + " " + (c.autoscaling.why if c.autoscaling else "")) - figures(text), c.id
