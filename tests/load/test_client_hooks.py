"""The writer's two hooks into the Bigtable client's internals: present on the locked
version (this test fails loudly when an upgrade moves them), and a safe public path when
they are not."""

from __future__ import annotations

import asyncio
import tomllib

import pytest
from google.cloud.bigtable.data import BigtableDataClientAsync, mutations

from ddb2bigtable.codec.mutations import DeleteCells, DeleteRow, RowMutation, SetCell
from ddb2bigtable.load import client_hooks, writer

from ..conftest import ROOT
from .test_load_emulator import PROJECT, prepare, read_all


def test_the_tested_version_is_the_locked_one_and_its_hooks_are_where_the_writer_expects_them(bigtable_emulator):
    pins = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["dependencies"]
    assert f"google-cloud-bigtable=={client_hooks.TESTED_VERSION}" in pins
    assert client_hooks.hooks_off() is None
    assert callable(getattr(mutations.RowMutationEntry, "_to_pb", None))

    async def gapic_has_mutate_rows() -> bool:
        async with BigtableDataClientAsync(project=PROJECT) as client:
            return callable(getattr(getattr(client, "_gapic_client", None), "mutate_rows", None))
    assert asyncio.run(gapic_has_mutate_rows()), "the client's _gapic_client.mutate_rows moved"
    entry = writer.row_entry(RowMutation(b"k", (SetCell("cf", b"q", b"v", 1000),)), writer.Source("f", 1))
    assert isinstance(entry, client_hooks.RawEntry)


@pytest.fixture
def unknown_client_version(monkeypatch):
    monkeypatch.setattr(client_hooks.metadata, "version", lambda name: "9.9.9")
    client_hooks.hooks_off.cache_clear()
    with pytest.warns(RuntimeWarning, match="9.9.9 is not the tested"):
        assert "9.9.9" in client_hooks.hooks_off()
    yield
    client_hooks.hooks_off.cache_clear()


def test_another_client_version_writes_through_the_public_api(bigtable_emulator, unknown_client_version):
    spec, instance_id = prepare("movies.yaml")
    row = RowMutation(b"r1", (DeleteRow(), SetCell("cf", b"a", b"1", 2000), SetCell("cf", b"b", b"2", 2000),
                              DeleteCells("cf", b"b", 0, 3000)))
    entries = [writer.row_entry(row, writer.Source("data/a.json.gz", 1)),
               writer.row_entry(RowMutation(b"r2", (SetCell("cf", b"a", b"x", 1000),)), writer.Source("a", 2))]
    assert all(type(e) is client_hooks.PublicEntry for e in entries)
    assert entries[0].source == writer.Source("data/a.json.gz", 1)

    async def chunks():
        yield entries

    async def go():
        async with writer.Writer(PROJECT, instance_id, "movies", None, writer.WriteSettings()) as w:
            call = w._client._gapic_client.mutate_rows
            assert "read_responses_raw" not in getattr(call, "__qualname__", "")  # the client's own
            await w.write(chunks(), lambda source, reason: None)

    asyncio.run(go())
    rows = {r.row_key: {(c.qualifier, c.value) for c in r.cells} for r in read_all(instance_id, "movies")}
    assert rows == {b"r1": {(b"a", b"1")}, b"r2": {(b"a", b"x")}}  # the range delete took b's cell


def _chunk() -> tuple[bytes, list[int], list[int]]:
    packer = writer.Packer()
    packer.add(RowMutation(b"r1", (SetCell("cf", b"a", b"1", 2000),)), 7)
    packer.add(RowMutation(b"r2", (DeleteRow(), SetCell("cf", b"b", b"22", 3000))), 9)
    return packer.take()


def test_a_chunk_unpacks_to_raw_entries_of_the_sizes_the_encoder_shipped():
    packed, lines, sizes = _chunk()
    entries = writer.unpack(packed, "data/a.json.gz", lines, sizes)
    assert all(type(e) is client_hooks.RawEntry for e in entries)
    assert [(e.row_key, e.size(), e.source) for e in entries] == [
        (m.row_key, m.ByteSize(), writer.Source("data/a.json.gz", line))
        for m, line in zip(writer._REQUEST.FromString(packed).entries, lines, strict=True)]


def test_another_client_version_unpacks_a_chunk_to_public_entries(unknown_client_version):
    packed, lines, sizes = _chunk()
    entries = writer.unpack(packed, "data/a.json.gz", lines, sizes)
    assert all(type(e) is client_hooks.PublicEntry for e in entries)
    assert [(e.row_key, len(e.mutations), e.source) for e in entries] == [
        (b"r1", 1, writer.Source("data/a.json.gz", 7)), (b"r2", 2, writer.Source("data/a.json.gz", 9))]
