"""The markdown plan renders as real tables in a CommonMark + GFM-tables renderer."""

from __future__ import annotations

from markdown_it import MarkdownIt

from ddb2bigtable.plan.planner import plan_files
from ddb2bigtable.render.markdown import to_markdown
from ddb2bigtable.render.sections import instance_sections

from ..conftest import ROOT
from ..markdown_check import table_row_widths


def test_every_section_renders_as_a_complete_table():
    plan = plan_files(ROOT, "prod")
    text = to_markdown(plan)
    tables = table_row_widths(text)
    assert len(tables) == 1 + sum(len(instance_sections(i)) for i in plan.instances)
    assert all(len(set(widths)) == 1 for widths in tables), tables  # no pipe in a why broke a row


def test_pipes_in_text_are_escaped_not_table_breaks():
    html = MarkdownIt("commonmark").enable("table").render(to_markdown(plan_files(ROOT, "staging")))
    assert "<table>" in html and "shop-global-stg" in html
