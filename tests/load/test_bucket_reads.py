"""How often a load downloads each data file of an export in a bucket (issue #33): on a
fresh load, the type inference's read is also its md5 check, its lines are kept for the
rows when they fit in `encoder.KEEP_BYTES`, and the spot check takes the first rows the
encoders named, so each small file is read once and a larger one twice (inference, rows,
hashed as it goes), where it was five times (two md5 checks of their own, and the spot
check's first lines)."""

from __future__ import annotations

import shutil
from collections import Counter

import pytest

from ddb2bigtable.exports import gcs_objects
from ddb2bigtable.exports.manifests import open_export
from ddb2bigtable.load import encoder
from ddb2bigtable.load.run import run_load

from ..conftest import ROOT
from ..exports.gcs_json_api import serve
from .test_load_emulator import prepare
from .test_load_faults import options

BUCKET, PREFIX = "team-exports", "dynamodb/movies"


@pytest.mark.parametrize(("keep_bytes", "reads"), [(encoder.KEEP_BYTES, 1), (0, 2)])
def test_a_fresh_load_from_a_bucket_reads_each_small_data_file_once(bigtable_emulator, tmp_path, monkeypatch,
                                                                    keep_bytes, reads):
    monkeypatch.setattr(encoder, "KEEP_BYTES", keep_bytes)  # 0: every file over the bound (forked: the encoders see it)
    shutil.copytree(ROOT / "exports" / "movies", tmp_path / "gcs" / PREFIX)
    server = serve(tmp_path / "gcs", BUCKET)
    try:
        monkeypatch.setenv(gcs_objects.EMULATOR_VARIABLE, f"http://127.0.0.1:{server.server_port}")
        gcs_objects._client.cache_clear()
        export = f"gs://{BUCKET}/{PREFIX}"
        spec, instance_id = prepare("movies.yaml")
        report = run_load(spec.tables[0], export, options(instance_id, tmp_path / "work"))
        assert report.complete and report.total("loaded") == 4609
        starts = Counter(path.rsplit("/", 1)[1] for path, byte_range in server.requests
                         if path.startswith("/download/") and "/data/" in path and (byte_range or "").startswith("bytes=0-"))
        files = [f.key.rsplit("/", 1)[1] for f in open_export(export).files]
        assert sorted(starts) == sorted(files) and set(starts.values()) == {reads}, starts
    finally:
        gcs_objects._client.cache_clear()
        server.shutdown()
        server.server_close()
