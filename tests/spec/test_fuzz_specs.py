"""Random damage to real specs: `validate` answers 0 or 2, in time, never with a traceback.

Each example takes one of the example specs and applies a few edits a tired human or a
hostile pull request could make (delete, insert, duplicate or swap text, splice in YAML
punctuation, anchors and aliases), then runs the real command in-process. The deadline
per example is the hang guard.
"""

from __future__ import annotations

from pathlib import Path

from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ddb2bigtable.cli.app import main

from ..conftest import ROOT, SHIPPED_SPECS

SPECS = [ROOT / spec for spec in SHIPPED_SPECS]
TEXTS = [p.read_text(encoding="utf-8") for p in SPECS]
SNIPPETS = [":", "- ", "  ", "\t", "{", "}", "[", "]", "&a ", "*a", "<<: *a", "!!int ", "!!python/object ", "'", '"',
            "\n", "#", "---\n", "? ", "|", ">", "~", "null", "yes", "1e999", "-1", "0x1F", "@", "%", "\x00", "\u00e9"]


@st.composite
def damaged_specs(draw) -> str:
    text = draw(st.sampled_from(TEXTS))
    for _ in range(draw(st.integers(1, 4))):
        at = draw(st.integers(0, len(text)))
        edit = draw(st.sampled_from(["delete", "insert", "snippet", "nest", "duplicate_line", "swap_lines"]))
        if edit == "delete":
            text = text[:at] + text[at + draw(st.integers(1, 40)):]
        elif edit == "insert":
            text = text[:at] + draw(st.text(max_size=8)) + text[at:]
        elif edit == "nest":  # flow collections nested up to far past the spec's depth limit
            depth = draw(st.integers(1, 2000))
            opener, closer = draw(st.sampled_from([("[", "]"), ("{a: ", "}")]))
            text = text[:at] + opener * depth + closer * depth + text[at:]
        elif edit == "snippet":
            text = text[:at] + draw(st.sampled_from(SNIPPETS)) + text[at:]
        else:
            lines = text.splitlines(keepends=True)
            i, j = draw(st.integers(0, len(lines) - 1)), draw(st.integers(0, len(lines) - 1))
            if edit == "duplicate_line":
                lines.insert(j, lines[i])
            else:
                lines[i], lines[j] = lines[j], lines[i]
            text = "".join(lines)
    return text


@settings(max_examples=250, deadline=5000, derandomize=True, suppress_health_check=[HealthCheck.function_scoped_fixture,
                                                                   HealthCheck.too_slow])
@given(damaged_specs())
def test_a_damaged_spec_is_valid_or_a_located_error(tmp_path_factory, text):
    path = Path(tmp_path_factory.mktemp("fuzz")) / "spec.yaml"
    path.write_text(text, encoding="utf-8", errors="surrogatepass")
    result = CliRunner().invoke(main, ["validate", str(path), "--root", str(ROOT)])
    assert result.exit_code in (0, 2), (result.output, result.exception)
    if result.exception is not None:
        assert isinstance(result.exception, SystemExit), repr(result.exception)
    if result.exit_code == 2:
        assert f"{path}:" in result.output and "Traceback" not in result.output
