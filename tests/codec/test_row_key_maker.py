"""The compiled encoder's row key maker (`row_key_maker`, #33) gives the key the template
gives: `KeyTemplate.render` of each key attribute's part (`number_key` for a number), the
salt prefix before it, over random key values; and None, or the same exception, wherever
the general path would be asked instead."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from ddb2bigtable.codec.compiled import compile_mapping
from ddb2bigtable.codec.limits import ROW_KEY_MAX
from ddb2bigtable.codec.row_key_maker import row_key_maker
from ddb2bigtable.codec.row_keys import number_key, salt_prefix
from ddb2bigtable.codec.scalars import is_number

from .test_codec import table
from .test_row_keys import dynamo_numbers

DELIMITERS = ["#", "::", "|", "\\", "%", "é", "\\#", "%x", "🙂"]

# Text with what escaping must handle: the delimiters, both escape characters, runs of them,
# unicode, a lone surrogate (not UTF-8: the general path's CodecError or UnicodeEncodeError)
texts = st.one_of(
    st.text(max_size=8),
    st.lists(st.sampled_from(["#", "\\", "%", ":", "|", "é", "🙂", "x", "\\#", "%#"]), min_size=1, max_size=8).map("".join),
    st.sampled_from(["\ud800", "a\udfff#"]),
)
# Every shape `number_key` takes or refuses: DynamoDB numbers in any notation, whole numbers
# either side of 25 digits (its fast case), leading zeros, signs, out of range, not numbers
number_texts = st.one_of(
    dynamo_numbers(),
    st.integers(1, 10**30).map(str),
    st.sampled_from(["0", "007", "-0", "+5", "1e400", "1E-200", "", "abc", "١٢", "1.", ".5", "5" * 25, "5" * 26,
                     "1" + "0" * 24, "9" * 38]),
)
long_texts = st.integers(ROW_KEY_MAX - 8, ROW_KEY_MAX + 2).map(lambda n: "k" * n)


def key_values(key_type: str):
    """A key attribute's value as an export may hold it: well-formed, another tag, not a
    typed value, two tags, or missing (None)."""
    inner = {"S": st.one_of(texts, long_texts), "N": number_texts, "B": texts}[key_type]
    return st.one_of(
        inner.map(lambda x: {key_type: x}),
        st.one_of(texts, number_texts).map(lambda x: {"N" if key_type == "S" else "S": x}),
        st.sampled_from([None, "text", 5, [], {}, {"S": "a", "N": "1"}, {"S": None}, {"N": 5}, {"S": 1}]),
    )


def _part(value: object, key_type: str) -> bytes | None:
    """A key part as the compiled encoder made it before: S text, N `number_key`; None for
    anything the general path must answer (binary included)."""
    if type(value) is not dict or len(value) != 1:
        return None
    inner = value.get(key_type)
    if key_type == "S" and type(inner) is str:
        return inner.encode()
    if key_type == "N" and is_number(inner):
        return number_key(inner).encode()
    return None


def _reference(mapping, item: dict) -> bytes | None:
    parts: dict[str, bytes] = {}
    for name, key in mapping.keys.items():
        part = _part(item.get(name), key.type)
        if part is None:
            return None
        parts[name] = part
    row = mapping.plans[0].row.render(parts)
    if mapping.salt:
        row = salt_prefix(parts[mapping.pk.name], mapping.salt, mapping.delimiter) + row
    return row if row and len(row) <= ROW_KEY_MAX else None


def _outcome(make, *args: object) -> object:
    try:
        return make(*args)
    except Exception as error:  # the same exception either way (CodecError, UnicodeEncodeError)
        return ("raised", type(error).__name__, str(error))


@settings(max_examples=500, deadline=None)
@given(st.data(), st.sampled_from("SNB"), st.sampled_from(["S", "N", "B", None]), st.sampled_from(DELIMITERS),
       st.sampled_from([None, 4, 97, 1000]))
def test_the_key_maker_renders_what_the_template_renders(data, pk, sk, delimiter, salt):
    mapping = compile_mapping(table(pk, sk, salt=salt, delimiter=delimiter), {})
    make = row_key_maker(mapping)
    assert make is not None
    for _ in range(5):
        item = {"other": {"S": "x"}}
        for name, key_type in (("pk", pk), ("sk", sk)):
            value = data.draw(key_values(key_type)) if key_type else None
            if value is not None:
                item[name] = value
        assert _outcome(make, item) == _outcome(_reference, mapping, item), item


def test_delimiters_and_escapes_in_the_partition_are_escaped():
    mapping = compile_mapping(table("S", "N"), {})
    make = row_key_maker(mapping)
    assert make is not None
    assert make({"pk": {"S": "a#b\\c"}, "sk": {"N": "2013"}}) == b"a\\#b\\\\c#d2013"
    assert make({"pk": {"S": "hats"}, "sk": {"N": "-5"}}) == b"hats#-a4~"
    assert make({"pk": {"S": "hats"}, "sk": {"S": "5"}}) is None  # another type: the general path says so
