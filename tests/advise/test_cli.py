"""`ddb2bigtable advise`: formats, --fail-on, and bad input as exit 2 without a traceback."""

from __future__ import annotations

import json

from click.testing import CliRunner

from ddb2bigtable.advise import findings as findings_module
from ddb2bigtable.cli.app import main

from ..conftest import ROOT
from .helpers import export_of, spec_file


def _run(*args: str):
    return CliRunner().invoke(main, ["advise", *args])


def _time_keyed(tmp_path) -> tuple[str, str]:
    spec = spec_file(tmp_path, ("ts", "N"))
    export = export_of(tmp_path, ({"ts": 1_740_000_000 + i, "v": i} for i in range(100)))
    return str(spec), str(export)


def test_table_fits_80_columns(tmp_path):
    spec, export = _time_keyed(tmp_path)
    result = _run(spec, "--export", export)
    assert result.exit_code == 0, result.output
    assert "time-leading-key" in result.output and "0 errors, 1 warning, 0 info" in result.output
    assert max(len(line) for line in result.output.splitlines()) <= 80


def test_fail_on(tmp_path):
    spec, export = _time_keyed(tmp_path)
    assert _run(spec, "--export", export, "--fail-on", "warning").exit_code == 1
    assert _run(spec, "--export", export, "--fail-on", "error").exit_code == 0


def test_fail_on_names_the_rule_and_findings_on_stderr_in_every_format(tmp_path):
    spec, export = _time_keyed(tmp_path)
    for fmt in ("text", "markdown", "json"):
        result = _run(spec, "--export", export, "--format", fmt, "--fail-on", "warning")
        assert result.exit_code == 1
        assert result.stderr.splitlines() == ["--fail-on warning: 1 finding at warning or worse "
                                              "(warning time-leading-key (things))"]
        assert "--fail-on" not in result.stdout
    assert _run(spec, "--export", export, "--fail-on", "error").stderr == ""


def test_json_version_1(tmp_path):
    spec, export = _time_keyed(tmp_path)
    document = json.loads(_run(spec, "--export", export, "--format", "json").output)
    assert document["version"] == 1 and document["tables"] == ["things"]
    assert document["sampled"][0] | {"seconds": 0} == {"table": "things", "export": export, "items": 100,
                                                       "export_items": 100, "files_read": 1, "files": 1,
                                                       "bad_lines": 0, "seconds": 0}
    (finding,) = document["findings"]
    assert finding["code"] == "time-leading-key" and finding["severity"] == "warning"
    assert finding["seed"] == {"file": "003_fe54338615fd5aa3.txt", "heading": "Datos basados en el tiempo",
                               "english": "Time-based data"}
    assert finding["snippet"].startswith("salt:")


def test_findings_cite_the_public_page_in_every_format(tmp_path):
    """A user follows a finding to Google's English page and section, never to a seed file
    they do not have under a Spanish heading; JSON keeps version 1's `seed` as it was."""
    spec, export = _time_keyed(tmp_path)
    url = "https://cloud.google.com/bigtable/docs/schema-design"
    table = _run(spec, "--export", export).output
    assert f"source: Schema design best practices § Time-based data: {url}" in " ".join(table.split())
    markdown = _run(spec, "--export", export, "--format", "markdown").output
    assert f"Source: [Schema design best practices § Time-based data]({url})" in markdown
    for text in (table, markdown):
        assert ".txt" not in text and "Datos basados" not in text
    (finding,) = json.loads(_run(spec, "--export", export, "--format", "json").output)["findings"]
    assert finding["source"] == {"page": "Schema design best practices", "section": "Time-based data", "url": url,
                                 "checked": "2026-11-25"}


def test_every_source_is_an_english_section_of_one_of_the_two_pages():
    sources = [v for v in vars(findings_module).values() if isinstance(v, findings_module.Source)]
    assert len(sources) == 15
    pages = {findings_module.SCHEMA_DESIGN, findings_module.DYNAMODB_USERS}
    for source in sources:
        assert source.page in pages and source.section.isascii() and source.section[0].isupper(), source
        assert source.page.url.startswith("https://cloud.google.com/bigtable/docs/")


def test_markdown(tmp_path):
    spec, export = _time_keyed(tmp_path)
    text = _run(spec, "--export", export, "--format", "markdown").output
    assert text.startswith("## ddb2bigtable advise: `things`\n\n0 errors, 1 warning, 0 info.")
    assert "| warning | time-leading-key | things |" in text and "```yaml\nsalt: {buckets: 8}" in text


def test_binary_key_is_found_from_the_spec(tmp_path):
    result = _run(str(spec_file(tmp_path, ("blob", "B"))), "--format", "json")
    (finding,) = json.loads(result.output)["findings"]
    assert finding["code"] == "binary-key" and "blob is binary" in finding["evidence"]
    assert json.loads(_run(str(spec_file(tmp_path, ("id", "S"), name="plain")), "--format", "json").output)[
        "findings"] == []


def test_missing_export_exits_2(tmp_path):
    result = _run(str(ROOT / "specs" / "movies.yaml"), "--export", str(tmp_path / "nowhere"))
    assert result.exit_code == 2 and "nowhere: no such folder" in result.output
    assert "Traceback" not in result.output


def test_bad_spec_exits_2(tmp_path):
    bad = tmp_path / "bad.yaml"
    bad.write_text("version: 1\ninstance: {id: x}\n")
    result = _run(str(bad))
    assert result.exit_code == 2 and f"{bad}:" in result.output and "Traceback" not in result.output


def test_unknown_table_and_ambiguous_export_exit_2(tmp_path):
    spec = str(ROOT / "specs" / "shop-global.yaml")
    result = _run(spec, "--table", "nope")
    assert result.exit_code == 2 and "no table 'nope'" in result.output



def test_the_export_names_its_table_and_another_tables_export_is_refused():
    """The manifest's tableArn picks the table among several; an export of a table the
    specs do not hold is exit 2, not findings about the wrong data ('key attribute missing')."""
    two = _run(str(ROOT / "specs" / "movies.yaml"), str(ROOT / "specs" / "product-catalog.yaml"),
               "--export", str(ROOT / "exports" / "movies"), "--format", "json")
    assert two.exit_code == 0, two.output
    assert json.loads(two.output)["tables"] == ["movies"]
    wrong = _run(str(ROOT / "specs" / "shop-global.yaml"), "--table", "carts", "--export",
                 str(ROOT / "exports" / "movies"))
    assert wrong.exit_code == 2, wrong.output
    assert wrong.stderr.startswith(f"--export: {ROOT / 'exports' / 'movies'} is an export of the DynamoDB table "
                                   "Movies, not of carts (Carts)")
    assert "item-not-writable" not in wrong.output


def test_bad_sample_exits_2():
    result = _run(str(ROOT / "specs" / "movies.yaml"), "--export", str(ROOT / "exports" / "movies"),
                  "--sample", "2e3")
    assert result.exit_code == 2 and "Invalid value for '--sample': give a count" in result.output


def test_too_many_families(tmp_path):
    def families(n: int, name: str) -> list[dict]:
        spec = spec_file(tmp_path, ("id", "S"), mapping={"families": [{"name": f"f{i}"} for i in range(n)],
                                                          "default_family": "f0"}, name=name)
        return json.loads(_run(str(spec), "--format", "json").output)["findings"]

    (finding,) = families(101, "wide")
    assert finding["code"] == "too-many-families" and "writes 101 column families" in finding["evidence"]
    assert families(100, "narrow") == []


def _specs_with(tmp_path, tables: dict[str, dict | None]) -> str:
    """One spec of these tables, each past one node (no `minimum-node` among what is counted)."""
    import yaml

    path = tmp_path / "many.yaml"
    path.write_text(yaml.safe_dump({"version": 1, "instance": {"id": "many-inst"}, "tables": [
        {"id": name, "source": {"table": name.title(), "region": "us-east-1", "reads": 30000, "writes": 10,
                                "key": {"partition": {"name": "id", "type": "S"}}}} | ({"mapping": m} if m else {})
        for name, m in tables.items()]}))
    return str(path)


def test_a_table_per_year_or_per_customer(tmp_path):
    by_year = _specs_with(tmp_path, {"orders_2023": None, "orders_2024": None, "payments": None})
    (finding,) = json.loads(_run(by_year, "--format", "json").output)["findings"]
    assert finding["code"] == "table-per-dataset" and finding["table"] == "orders_2023"
    assert finding["evidence"].endswith("differ only in the end of their id: orders_2023, orders_2024")
    assert finding["seed"]["heading"] == "Multiusuario"
    mapping = {"attributes": [{"name": "total", "type": "N"}]}
    by_customer = _specs_with(tmp_path, {"orders-acme": mapping, "orders-globex": mapping})
    assert [f["code"] for f in json.loads(_run(by_customer, "--format", "json").output)["findings"]] == [
        "table-per-dataset"]


def test_same_keyed_tables_of_different_data_pass(tmp_path):
    different = _specs_with(tmp_path, {"user_orders": None, "user_profiles": None, "user_sessions": None})
    assert json.loads(_run(different, "--format", "json").output)["findings"] == []
