"""The markdown plan renders as real tables in a CommonMark + GFM-tables renderer."""

from __future__ import annotations

from markdown_it import MarkdownIt

from ddb2bigtable.planner import plan_files
from ddb2bigtable.render.markdown import to_markdown
from ddb2bigtable.render.sections import instance_sections

from .conftest import ROOT


def test_every_section_renders_as_a_complete_table():
    plan = plan_files(ROOT, "prod")
    text = to_markdown(plan)
    tokens = MarkdownIt("commonmark").enable("table").parse(text)
    tables = [i for i, t in enumerate(tokens) if t.type == "table_open"]
    expected_sections = 1 + sum(len(instance_sections(i)) for i in plan.instances)
    assert len(tables) == expected_sections
    # every row has as many cells as its header: no pipe in a why broke a row
    for start in tables:
        end = next(i for i in range(start, len(tokens)) if tokens[i].type == "table_close")
        widths, cells = [], 0
        for tok in tokens[start:end]:
            if tok.type == "tr_open":
                cells = 0
            elif tok.type in ("th_open", "td_open"):
                cells += 1
            elif tok.type == "tr_close":
                widths.append(cells)
        assert len(set(widths)) == 1, widths


def test_pipes_in_text_are_escaped_not_table_breaks():
    html = MarkdownIt("commonmark").enable("table").render(to_markdown(plan_files(ROOT, "staging")))
    assert "<table>" in html and "shop-global-stg" in html
