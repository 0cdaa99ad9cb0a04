"""A column that changes form is announced: which attribute, why, how many items, the fix.

One item with `rating: "unrated"` among numbers makes type inference store the whole
`rating` column as typed DynamoDB JSON. The load says so, with the count of items of each
type and the mapping line that pins the type (after which that item is a dead letter).
"""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime

from rich.console import Console

from ddb2bigtable.exports.writer import write_export
from ddb2bigtable.load.beam.direct import run_beam_load
from ddb2bigtable.load.forms import form_sentences
from ddb2bigtable.load.run import run_load
from ddb2bigtable.render.load_report import print_load
from ddb2bigtable.spec.model import AttributeMapping

from .test_load_emulator import options, prepare

ARN = "arn:aws:dynamodb:us-west-2:123456789012:table/Movies"
WHEN = datetime(2026, 11, 1, tzinfo=UTC)


def _export(tmp_path):
    items = [{"year": {"N": str(1990 + i % 20)}, "title": {"S": f"film {i}"}, "rating": {"N": f"{i % 10}.5"}}
             for i in range(300)]
    items[137]["rating"] = {"S": "unrated"}
    folder = tmp_path / "export"
    write_export(folder, ARN, items, export_time=WHEN, items_per_file=100)
    return folder


def test_the_load_says_which_attribute_changed_form_and_how_many_items_did_it(bigtable_emulator, tmp_path):
    spec, instance_id = prepare("movies.yaml")
    export = _export(tmp_path)
    report = run_load(spec.tables[0], str(export), options(instance_id, tmp_path / "work"))
    assert report.complete and report.total("loaded") == 300
    (sentence,) = report.typed_json
    assert sentence.startswith("rating is stored as typed DynamoDB JSON, not as N")
    assert "N in 299 items, S in 1 item" in sentence
    assert "declare mapping.attributes: [{name: rating, type: N}] (the 1 other item then become" in sentence
    console = Console(record=True, width=200)
    print_load(report, console)
    assert "form changed: rating is stored as typed DynamoDB JSON" in console.export_text()
    # A resumed load still knows: the counts live with the finished files in the state.
    again = run_load(spec.tables[0], str(export), options(instance_id, tmp_path / "work"))
    assert [f.status for f in again.files] == ["resumed: already loaded"] * 3
    assert again.typed_json == report.typed_json


def test_pinning_the_type_keeps_the_column_a_number_and_dead_letters_the_odd_item(bigtable_emulator, tmp_path):
    spec, instance_id = prepare("movies.yaml")
    table = spec.tables[0]
    pinned = replace(table, mapping=replace(table.mapping, attributes=(
        *table.mapping.attributes, AttributeMapping(name="rating", type="N"))))
    report = run_load(pinned, str(_export(tmp_path)), options(instance_id, tmp_path / "work"))
    assert report.typed_json == []
    assert report.total("loaded") == 299 and report.total("dead_lettered") == 1 and report.complete


def test_values_plain_json_cannot_hold_are_the_other_reason():
    (sentence,) = form_sentences({"tags": {"M": 12}})
    assert sentence == ("tags is stored as typed DynamoDB JSON (M in 12 items) because some of its values hold "
                        "sets, binary or numbers that plain JSON cannot keep")


def test_the_beam_load_says_the_same(bigtable_emulator, tmp_path):
    spec, instance_id = prepare("movies.yaml")
    report = run_beam_load(spec.tables[0], str(_export(tmp_path)), options(instance_id, tmp_path / "work"))
    assert report.complete
    (sentence,) = report.typed_json
    assert "(N in 299 items, S in 1 item)" in sentence
