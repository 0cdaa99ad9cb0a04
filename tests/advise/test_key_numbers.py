"""Numbers as text in row keys (seeds 003, "clave(s) de fila": pad integers, 3 > 20 as text):
what triggers `unsorted-number-key` and the near misses that must not."""

from __future__ import annotations

from ddb2bigtable.advise.key_numbers import split_number

from .helpers import codes, findings


def _readings(n_devices: int, per: int, form: str = "r-{n}") -> list[dict]:
    return [{"device": f"dev-{d:03d}", "seq": form.format(n=n), "v": n} for d in range(n_devices)
            for n in range(1, per + 1)]


def test_sequence_numbers_after_the_device(tmp_path):
    """Readings 1..12 per device as `r-1`..`r-12`: `r-10` sorts before `r-9` within a device."""
    found = findings(tmp_path, _readings(10, 12), ("device", "S"), ("seq", "S"))
    (number,) = found
    assert number.code == "unsorted-number-key" and number.severity == "info"
    assert "the row key's 2nd field `seq` holds a number as text in 100 % of 120 sampled items" in number.evidence
    assert "`r-12` sorts before `r-2`" in number.evidence and "`r-02`" in number.suggestion
    assert number.source.section == "Row keys"


def test_numeric_ids_kept_as_text(tmp_path):
    """A partition key of type S holding numbers: the table's order is not the ids' order."""
    items = [{"id": str((i * 7919) % 100_000), "v": i} for i in range(200)]
    found = findings(tmp_path, items, ("id", "S"))
    assert codes(found) == ["unsorted-number-key"]
    assert "1st field `id`" in found[0].evidence


def test_negative_numbers_as_text(tmp_path):
    items = [{"sensor": f"s{d}", "offset": str(n), "v": n} for d in range(10) for n in range(-6, 0)]
    (number,) = findings(tmp_path, items, ("sensor", "S"), ("offset", "S"))
    assert number.code == "unsorted-number-key" and "`-1` before `-2`" in number.suggestion


def test_padded_numbers_pass(tmp_path):
    assert codes(findings(tmp_path, _readings(10, 12, "r-{n:03d}"), ("device", "S"), ("seq", "S"))) == []


def test_number_keys_pass_the_codec_orders_them(tmp_path):
    """Near miss: the same readings with an N sort key: written in the order-preserving form."""
    items = [{"device": f"dev-{d:03d}", "seq": n} for d in range(10) for n in range(1, 13)]
    assert codes(findings(tmp_path, items, ("device", "S"), ("seq", "N"))) == []


def test_ids_from_one_counter_are_not_sequences(tmp_path):
    """Near miss: `order-<global id>` under each customer: ids, not counts; nobody reads them by range."""
    items = [{"customer": f"c{i % 20:02d}", "order": f"order-{i}"} for i in range(400)]
    assert codes(findings(tmp_path, items, ("customer", "S"), ("order", "S"))) == []


def test_split_number():
    assert split_number("r-10") == ("r-", "10") and split_number("-3") == ("", "-3")
    assert split_number("x#-5") == ("x#", "-5") and split_number("1.2.3") is None and split_number("abc") is None
