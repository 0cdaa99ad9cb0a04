"""Cloud Storage's JSON API, the few calls the export reader makes, over a local folder:
objects.list (prefix, delimiter), objects.get (metadata) and the media download with a
Range header (https://cloud.google.com/storage/docs/json_api/v1/objects, read 2026-11-25).

No local Cloud Storage emulator is installed here: this checks the client's requests and
the reader's handling of the documented answers, not Cloud Storage itself. It runs in a
thread of the test process; the fixture that starts it shuts it down. `requests` keeps
the paths it was asked for, so a test can see that a data file was read in ranges.
"""

from __future__ import annotations

import http.server
import json
import threading
import urllib.parse
from pathlib import Path
from typing import Any


class JsonApi(http.server.ThreadingHTTPServer):
    folder: Path
    bucket: str
    requests: list[tuple[str, str | None]]


class _Handler(http.server.BaseHTTPRequestHandler):
    server: JsonApi

    def do_GET(self) -> None:  # noqa: N802 (http.server's name)
        url = urllib.parse.urlsplit(self.path)
        self.server.requests.append((urllib.parse.unquote(url.path), self.headers.get("Range")))
        query = dict(urllib.parse.parse_qsl(url.query))
        parts = url.path.split("/")[1:]
        media = parts[:1] == ["download"]
        parts = parts[1:] if media else parts
        if parts[:3] != ["storage", "v1", "b"] or len(parts) < 4:
            return self._json(404, {"error": {"code": 404, "message": "Not Found"}})
        if parts[3] != self.server.bucket:
            return self._json(404, {"error": {"code": 404, "message": "The specified bucket does not exist."}})
        if len(parts) == 4:
            return self._json(200, {"kind": "storage#bucket", "name": self.server.bucket, "location": "US"})
        if len(parts) == 5:
            return self._listing(query.get("prefix", ""), query.get("delimiter"))
        name = urllib.parse.unquote("/".join(parts[5:]))
        path = self.server.folder / name
        if not path.is_file():
            return self._json(404, {"error": {"code": 404, "message": "No such object: " + name}})
        if media or query.get("alt") == "media":
            return self._media(path.read_bytes())
        self._json(200, {"kind": "storage#object", "bucket": self.server.bucket, "name": name, "generation": "7",
                         "size": str(path.stat().st_size)})

    def _media(self, data: bytes) -> None:
        first, last = self.headers.get("Range", f"bytes=0-{len(data) - 1}").removeprefix("bytes=").split("-")
        body = data[int(first):int(last) + 1]
        self.send_response(206)
        self.send_header("Content-Length", str(len(body)))
        self.send_header("Content-Range", f"bytes {first}-{int(first) + len(body) - 1}/{len(data)}")
        self.end_headers()
        self.wfile.write(body)

    def _listing(self, prefix: str, delimiter: str | None) -> None:
        items, prefixes = [], set()
        for path in sorted(self.server.folder.rglob("*")):
            name = path.relative_to(self.server.folder).as_posix()
            if not path.is_file() or not name.startswith(prefix):
                continue
            rest = name[len(prefix):]
            if delimiter and delimiter in rest:
                prefixes.add(prefix + rest.split(delimiter)[0] + delimiter)
            else:
                items.append({"kind": "storage#object", "bucket": self.server.bucket, "name": name,
                              "size": str(path.stat().st_size)})
        self._json(200, {"kind": "storage#objects", "items": items, "prefixes": sorted(prefixes)})

    def _json(self, status: int, document: dict[str, Any]) -> None:
        answer_json(self, status, document)

    def log_message(self, *args: object) -> None:
        pass


def answer_json(handler: http.server.BaseHTTPRequestHandler, status: int, document: dict[str, Any]) -> None:
    """One JSON answer, as Cloud Storage's JSON API sends its documents (also for the
    hostile servers of other tests that answer its metadata requests)."""
    body = json.dumps(document).encode()
    handler.send_response(status)
    handler.send_header("Content-Type", "application/json")
    handler.send_header("Content-Length", str(len(body)))
    handler.end_headers()
    handler.wfile.write(body)


def serve(folder: Path, bucket: str) -> JsonApi:
    """The API for `bucket`, its objects the files below `folder`, on 127.0.0.1 and a free port."""
    server = JsonApi(("127.0.0.1", 0), _Handler)
    server.folder, server.bucket, server.requests = folder, bucket, []
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server
