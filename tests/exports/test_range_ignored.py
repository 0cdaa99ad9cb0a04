"""A bucket endpoint (or a proxy before it) that ignores the Range header answers a window's
request with the whole object: the reader keeps one window and a byte, then stops with
exit 1's error, instead of holding the object in memory (a 10 GB data file would have
ended the process). Both servers run in a thread of the test on 127.0.0.1."""

from __future__ import annotations

import http.server
import threading
from collections.abc import Iterator

import pytest

from ddb2bigtable.exports.errors import ExportUnavailable
from ddb2bigtable.exports.stores import WINDOW

from .gcs_json_api import answer_json

OBJECT = 3 * WINDOW  # what HEAD / the metadata says
ANSWER = 12 * WINDOW  # what every GET streams, whatever Range asked (96 MiB)


class _IgnoresRange(http.server.BaseHTTPRequestHandler):
    """S3's HeadObject/GetObject and Cloud Storage's objects.get (metadata, media) for any
    object, each GET answered 200 with ANSWER bytes."""

    protocol_version = "HTTP/1.1"

    def do_HEAD(self) -> None:  # noqa: N802 (http.server's name)
        self.send_response(200)
        self.send_header("Content-Length", str(OBJECT))
        self.send_header("ETag", '"e"')
        self.end_headers()

    def do_GET(self) -> None:  # noqa: N802
        if "alt=media" not in self.path and "/storage/v1/" in self.path:  # Cloud Storage's metadata
            answer_json(self, 200, {"kind": "storage#object", "bucket": "b", "name": "k", "generation": "7",
                                    "size": str(OBJECT)})
            return
        self.send_response(200)
        self.send_header("Content-Length", str(ANSWER))
        self.send_header("ETag", '"e"')
        self.end_headers()
        chunk = b"\0" * (1 << 20)
        try:
            for _ in range(ANSWER >> 20):
                self.wfile.write(chunk)
        except OSError:  # the reader stopped listening: what the test wants
            pass

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def endpoint() -> Iterator[str]:
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _IgnoresRange)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_port}"
    server.shutdown()
    server.server_close()


def test_s3_reads_one_window_and_a_byte_of_an_answer_that_ignored_range(endpoint, monkeypatch):
    from ddb2bigtable.exports import s3_objects

    monkeypatch.setenv("AWS_ENDPOINT_URL_S3", endpoint)
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "local")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "local")
    monkeypatch.setenv("AWS_REGION", "us-east-1")
    s3_objects._client.cache_clear()
    try:
        with pytest.raises(ExportUnavailable, match=f"asked for bytes 0-{WINDOW - 1}, got {WINDOW + 1}"):
            s3_objects.S3Store().open("s3://b/AWSDynamoDB/x/data/a.json.gz").read(1024)
    finally:
        s3_objects._client.cache_clear()


def test_cloud_storage_stops_an_answer_longer_than_its_range(endpoint, monkeypatch):
    from ddb2bigtable.exports import gcs_objects

    monkeypatch.setenv("STORAGE_EMULATOR_HOST", endpoint)
    gcs_objects._client.cache_clear()
    try:
        with pytest.raises(ExportUnavailable, match=f"asked for {WINDOW:,} bytes and the answer is longer"):
            gcs_objects.GcsStore().open("gs://b/AWSDynamoDB/x/data/a.json.gz").read(1024)
    finally:
        gcs_objects._client.cache_clear()
