"""Personal data in row keys and family ids (seeds 003, "Privacidad"): each kind on a
small real export, and near misses that must not be reported."""

from __future__ import annotations

from ddb2bigtable.advise.privacy import is_person_name_attribute, personal_kind

from .helpers import codes, findings, spec_file

FIRST = ["Ana", "Bruno", "Chloé", "Dmitri", "Eva", "Farid", "Grace", "Hiro", "Ines", "Jonas"]
LAST = ["Smith", "García", "O'Neil", "Müller", "Okafor", "Rossi", "Tanaka", "Kowalski"]


def _people(n: int) -> list[dict]:
    return [{"first_name": FIRST[i % 10], "last_name": LAST[i % 8], "tenant": f"org-{i % 12}"} for i in range(n)]


def test_personal_data_in_key(tmp_path):
    items = [{"account": f"org-{i % 3}", "user": f"person{i}@example.com"} for i in range(20)]
    found = findings(tmp_path, items, ("account", "S"), ("user", "S"))
    assert codes(found) == ["personal-data-key", "sample-too-small"]
    (pii,) = [f for f in found if f.code == "personal-data-key"]
    assert "personal data (e-mail) in 100 % of 20" in pii.evidence and pii.source.section == "Privacy"


def test_personal_data_in_cells_only_passes(tmp_path):
    items = [{"account": f"org-{i % 3}", "user": f"u-{i}", "email": f"person{i}@example.com"} for i in range(20)]
    assert codes(findings(tmp_path, items, ("account", "S"), ("user", "S"))) == ["sample-too-small"]


def test_personal_kinds():
    assert personal_kind("a.b@example.org") == "e-mail" and personal_kind("+14155550100") == "phone"
    assert personal_kind("10.1.2.3") == "IP address" and personal_kind("2001:db8::1") == "IP address"
    assert personal_kind("20200501") is None and personal_kind("tablet") is None


def test_person_names_in_the_key(tmp_path):
    """A rule keys people by `{tenant}#{last_name}#{first_name}#{i}`: the item says those are names."""
    items = [{**p, "pk": p["tenant"], "sk": f"{p['last_name']}#{p['first_name']}#{i}"} for i, p in enumerate(_people(60))]
    found = findings(tmp_path, items, ("pk", "S"), ("sk", "S"))
    (pii,) = [f for f in found if f.code == "personal-data-key"]
    assert pii.evidence.startswith("row keys carry personal data (a person's name: the item's `first_name`")
    assert "in 100 % of 60 sampled items" in pii.evidence


def test_a_full_name_in_a_partition_key(tmp_path):
    items = [{"customerName": f"{FIRST[i % 10]} {LAST[i % 8]}", "order": f"o-{i:04d}"} for i in range(60)]
    found = findings(tmp_path, items, ("customerName", "S"), ("order", "S"))
    assert "personal-data-key" in codes(found)


def test_names_kept_in_cells_pass(tmp_path):
    """Near miss: the same people keyed by an opaque id, their names in cells."""
    items = [{**p, "pk": p["tenant"], "sk": f"user-{i:04d}"} for i, p in enumerate(_people(60))]
    assert codes(findings(tmp_path, items, ("pk", "S"), ("sk", "S"))) == []


def test_product_names_are_not_person_names(tmp_path):
    """Near miss: a bare `name` (and `username`) in the key is not taken for a person's name."""
    items = [{"name": f"{FIRST[i % 10]} lamp", "username": LAST[i % 8], "sku": f"s{i:03d}"} for i in range(60)]
    found = findings(tmp_path, items, ("name", "S"), ("username", "S"))
    assert "personal-data-key" not in codes(found)


def test_person_name_attributes():
    assert all(map(is_person_name_attribute, ["first_name", "lastName", "Full-Name", "surname", "customer_name"]))
    assert not any(map(is_person_name_attribute, ["name", "username", "product_name", "filename", "hostname"]))


def test_family_named_by_an_ip_address(tmp_path):
    from ddb2bigtable.advise.run import advise
    from ddb2bigtable.spec.reading import read_spec

    mapping = {"families": [{"name": "10.1.2.3"}], "attributes": [{"name": "hits", "type": "N", "family": "10.1.2.3"}]}
    (found,) = advise([read_spec(spec_file(tmp_path, ("pk", "S"), mapping=mapping))]).findings
    assert found.code == "personal-data-family" and "`10.1.2.3` (IP address)" in found.evidence


def test_families_named_by_what_they_hold_pass(tmp_path):
    from ddb2bigtable.advise.run import advise
    from ddb2bigtable.spec.reading import read_spec

    mapping = {"families": [{"name": "contact"}], "attributes": [{"name": "email", "type": "S", "family": "contact"}]}
    assert advise([read_spec(spec_file(tmp_path, ("pk", "S"), mapping=mapping))]).findings == ()
