"""How often a load downloads each data file of an export in a bucket (issue #33): on a
fresh load, the type inference's read is also its md5 check, the rows' read is hashed
as it goes, and the spot check takes the first rows the encoders named, so each file is
read twice (inference, rows), where it was five times (two md5 checks of their own, and
the spot check's first lines)."""

from __future__ import annotations

import shutil
from collections import Counter

from ddb2bigtable.exports import gcs_objects
from ddb2bigtable.exports.manifests import open_export
from ddb2bigtable.load.run import run_load

from ..conftest import ROOT
from ..exports.gcs_json_api import serve
from .test_load_emulator import prepare
from .test_load_faults import options

BUCKET, PREFIX = "team-exports", "dynamodb/movies"


def test_a_fresh_load_from_a_bucket_reads_each_data_file_twice(bigtable_emulator, tmp_path, monkeypatch):
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
        assert sorted(starts) == sorted(files) and set(starts.values()) == {2}, starts
    finally:
        gcs_objects._client.cache_clear()
        server.shutdown()
        server.server_close()
