"""The pieces of a pull-request comment: cells that fit, text that stays text, charts that read unrendered."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st
from markdown_it import MarkdownIt

from ddb2bigtable.render.markdown_blocks import CELL_LIMIT, clip, contrast, escape, nodes_chart, table

from ..markdown_check import table_cells, table_row_widths


@given(st.text(alphabet=st.characters(codec="utf-8", exclude_categories=("Cs",)), max_size=600))
def test_a_clipped_cell_never_exceeds_the_limit_and_is_marked_when_cut(text):
    cell, cut = clip(text)
    assert len(cell) <= CELL_LIMIT
    assert cut == (len(escape(text)) > CELL_LIMIT) and (cell.endswith("…") if cut else cell == escape(text))


@given(st.lists(st.text(alphabet="ab|`_*<>\\[] ~x", max_size=200), min_size=3, max_size=3))
def test_any_text_stays_one_table_row_of_the_right_width(cells):
    lines, _ = table(("a", "b", "c"), [cells])
    assert table_row_widths("\n".join(lines)) == [[3, 3]]
    assert all(len(cell) <= CELL_LIMIT for cell in table_cells("\n".join(lines)))


def test_escaped_text_renders_as_the_same_text_and_code_spans_stay_code():
    html = MarkdownIt("commonmark").render(escape("max_versions *1* <b> [x] ~2 add `mapping.salt: {buckets: N}`"))
    assert "max_versions *1* &lt;b&gt; [x] ~2 add <code>mapping.salt: {buckets: N}</code>" in html


def test_clipping_cuts_at_a_clause_boundary():
    text = "autoscaling held at its maximum of 30 nodes for 30 min: the capacity plan is too low; " \
           "raise the spec's capacity (or max_nodes_per_cluster)"
    assert clip(text) == ("autoscaling held at its maximum of 30 nodes for 30 min: the capacity plan is too low…", True)


def test_two_long_texts_that_differ_in_one_word_show_that_word():
    a = "Carts lives only in us-east-1, but replication is instance-wide: it is copied to all 3 clusters (more"
    b = a.replace("all 3", "all 2")
    assert contrast(a + " storage, cross-region writes)", b + " storage, cross-region writes)") == (
        "…copied to all 3 clusters (more storage,…", "…copied to all 2 clusters (more storage,…")


def test_the_chart_lists_its_numbers_as_comments_before_the_mermaid_lines():
    lines = nodes_chart("prod: nodes", [("us-east4 before", 16), ("us-east4 after", 30)], ["us-east4: 16 → 30"])
    assert lines[:3] == ["```mermaid", "xychart-beta", "    %% us-east4: 16 → 30"]
    assert '    x-axis ["us-east4 before", "us-east4 after"]' in lines and "    bar [16, 30]" in lines
