"""Columns and families after the mapping (seeds 003, "Columnas", "Familias de columnas"):
many cells in one row, long family names, families mixing retention needs."""

from __future__ import annotations

from .helpers import codes, findings

PAYMENTS = {"families": [{"name": "Payment", "gc": {"max_versions": 1}}],
            "rules": [{"row_key": "{PK}", "family": "Payment", "qualifier": "{SK}", "value": "amount"}]}


def test_a_row_gathering_1200_items_as_columns(tmp_path):
    items = [{"PK": "inv-1" if i < 1200 else f"inv-{i}", "SK": f"pay-{i:05d}", "amount": i} for i in range(1260)]
    found = findings(tmp_path, items, ("PK", "S"), ("SK", "S"), mapping=PAYMENTS)
    (many,) = [f for f in found if f.code == "many-columns"]
    assert many.severity == "warning" and many.source.section == "Columns"
    assert many.evidence == "row `inv-1` keeps 1,200 cells in 1,200 columns from 1,200 sampled items"


def test_projected_from_a_partial_sample(tmp_path):
    items = [{"PK": "inv-1", "SK": f"pay-{i:05d}", "amount": i} for i in range(1500)]
    found = findings(tmp_path, items, ("PK", "S"), ("SK", "S"), mapping=PAYMENTS, sample="0.2", per_file=100)
    (many,) = [f for f in found if f.code == "many-columns"]
    assert many.severity == "info" and "so the whole row may keep 1,500" in many.evidence


def test_a_map_spread_over_columns(tmp_path):
    mapping = {"attributes": [{"name": "scores", "type": "M", "layout": "family", "family": "scores"}],
               "families": [{"name": "scores"}]}
    items = [{"pk": f"p{i:03d}", "scores": {f"k{j}": j for j in range(1100 if i == 0 else 10)}} for i in range(60)]
    (many,) = [f for f in findings(tmp_path, items, ("pk", "S"), mapping=mapping) if f.code == "many-columns"]
    assert many.snippet == "attributes:\n  - {name: scores, layout: json}   # one cell for the whole value"


def test_versions_capped_by_gc_are_not_counted(tmp_path):
    """Near miss: 1,200 comments as versions of one column, GC keeping 500 (the seeds' design)."""
    mapping = {"families": [{"name": "UserComments", "gc": {"max_versions": 500}}],
               "rules": [{"row_key": "{VideoId}", "family": "UserComments", "qualifier": "Content",
                          "value": "Content", "timestamp": "PostedAt"}]}
    items = [{"VideoId": "v1", "SK": f"c#{i:05d}", "Content": "nice", "PostedAt": 1_700_000_000 + i}
             for i in range(1200)]
    assert "many-columns" not in codes(findings(tmp_path, items, ("VideoId", "S"), ("SK", "S"), mapping=mapping))


def test_long_family_name_with_small_values(tmp_path):
    mapping = {"default_family": "customer_shipping_addresses"}
    items = [{"pk": f"c{i:03d}", "city": "Oslo", "zip": "0150"} for i in range(60)]
    (long,) = findings(tmp_path, items, ("pk", "S"), mapping=mapping)
    assert long.code == "long-family-name" and long.severity == "info"
    assert long.evidence.startswith("family `customer_shipping_addresses` (27 characters) is ")
    assert long.snippet == "default_family: csa   # was customer_shipping_addresses"


def test_long_family_name_with_big_values_costs_nothing(tmp_path):
    mapping = {"default_family": "customer_shipping_addresses"}
    items = [{"pk": f"c{i:03d}", "notes": "x" * 2000} for i in range(60)]
    assert codes(findings(tmp_path, items, ("pk", "S"), mapping=mapping)) == []


def test_short_family_names_pass(tmp_path):
    items = [{"pk": f"c{i:03d}", "city": "Oslo"} for i in range(60)]
    assert codes(findings(tmp_path, items, ("pk", "S"), mapping={"default_family": "stats_summary"})) == []


def test_a_list_kept_as_versions_beside_attributes_written_in_place(tmp_path):
    """`history` in the timestamps layout makes the default family keep every version, and
    the profile's other attributes live there too."""
    mapping = {"attributes": [{"name": "history", "type": "L", "layout": "timestamps"}]}
    items = [{"pk": f"u{i:03d}", "email_opt_in": True, "plan": "pro", "history": ["a", "b"]} for i in range(60)]
    (mixed,) = findings(tmp_path, items, ("pk", "S"), mapping=mapping)
    assert mixed.code == "mixed-retention" and mixed.severity == "warning"
    assert mixed.evidence.startswith("family `cf` keeps every version for `history` (60 sampled items)")
    assert mixed.source.section == "Column families"
    assert "  - {name: history, type: L, layout: timestamps, family: history}" in mixed.snippet


def test_a_list_in_its_own_family_passes(tmp_path):
    mapping = {"families": [{"name": "history"}],
               "attributes": [{"name": "history", "type": "L", "layout": "timestamps", "family": "history"}]}
    items = [{"pk": f"u{i:03d}", "plan": "pro", "history": ["a", "b"]} for i in range(60)]
    assert codes(findings(tmp_path, items, ("pk", "S"), mapping=mapping)) == []


def _sessions(tmp_path, family_for_events: str):
    mapping = {"families": [{"name": "ev"}],
               "rules": [{"sort_key_prefix": "event#", "row_key": "{pk}", "family": family_for_events,
                          "qualifier": "{sk}", "value": "what", "timestamp": "at"},
                         {"sort_key_prefix": "session", "row_key": "{pk}", "qualifier": "session", "value": "token"}]}
    items = []
    for u in range(30):
        items.append({"pk": f"u{u:02d}", "sk": "session", "token": f"t{u}", "expires": 4_000_000_000})
        items.append({"pk": f"u{u:02d}", "sk": f"event#{u}", "what": "login", "at": 1_750_000_000 + u})
    import yaml

    from ddb2bigtable.advise.run import advise
    from ddb2bigtable.spec.reading import read_spec

    from .helpers import export_of, spec_file

    path = spec_file(tmp_path, ("pk", "S"), ("sk", "S"), mapping=mapping)
    data = yaml.safe_load(path.read_text())
    data["tables"][0]["source"]["ttl"] = {"attribute": "expires"}
    path.write_text(yaml.safe_dump(data))
    return advise([read_spec(path)], export=str(export_of(tmp_path, items))).findings


def test_expiring_sessions_beside_timed_events(tmp_path):
    found = [f for f in _sessions(tmp_path, "cf") if f.code == "mixed-retention"]
    (mixed,) = found
    assert mixed.evidence.startswith("family `cf` holds cells of 30 sampled items that expire by `expires`")
    assert "(plan: ttl-not-enforced)" in mixed.evidence


def test_timed_events_in_their_own_family_pass(tmp_path):
    assert "mixed-retention" not in codes(_sessions(tmp_path, "ev"))


def test_long_family_name_from_the_spec_alone_gives_way_to_the_data(tmp_path):
    from ddb2bigtable.advise.run import advise
    from ddb2bigtable.spec.reading import read_spec

    from .helpers import spec_file

    spec = read_spec(spec_file(tmp_path, ("pk", "S"), mapping={"default_family": "customer_shipping_addresses"}))
    (guess,) = advise([spec]).findings
    assert guess.code == "long-family-name" and "spec only" in guess.evidence


def test_a_list_in_the_default_family_from_the_spec_alone(tmp_path):
    from ddb2bigtable.advise.run import advise
    from ddb2bigtable.spec.reading import read_spec

    from .helpers import spec_file

    mapping = {"attributes": [{"name": "history", "type": "L", "layout": "timestamps"}]}
    (guess,) = advise([read_spec(spec_file(tmp_path, ("pk", "S"), mapping=mapping))]).findings
    assert guess.code == "mixed-retention" and "spec only" in guess.evidence
    own = {"families": [{"name": "history"}],
           "attributes": [{"name": "history", "type": "L", "layout": "timestamps", "family": "history"}]}
    assert advise([read_spec(spec_file(tmp_path, ("pk", "S"), mapping=own, name="other"))]).findings == ()
