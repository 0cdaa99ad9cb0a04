"""Local stand-ins for the two price APIs, on 127.0.0.1, answering in their documented shapes.

- Cloud Billing Catalog API, REST v1: `GET /v1/services/{service}/skus?pageSize=&pageToken=`
  -> `{"skus": [...], "nextPageToken": "..."}` (https://cloud.google.com/billing/docs/reference/rest/v1/services.skus/list).
- AWS Price List Query API, JSON 1.1: `POST /` with `X-Amz-Target: AWSPriceListService.GetProducts`
  -> `{"FormatVersion": "aws_v1", "PriceList": ["<product JSON>", ...], "NextToken": "..."}`
  (https://docs.aws.amazon.com/aws-cost-management/latest/APIReference/API_pricing_GetProducts.html).

Both serve the fixtures (fixtures/README.md says where their SKUs and attributes come from)
a few per page, so paging is exercised. `mode` makes one fail: "fail" (500), "deny" (403),
"silent" (accepts the request and never answers, until the fake stops). The server runs
in a thread the fixture starts and shuts down.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

FIXTURES = Path(__file__).parent / "fixtures"
SKUS: list[dict[str, Any]] = json.loads((FIXTURES / "catalog_skus.json").read_text())
PRODUCTS: list[dict[str, Any]] = json.loads((FIXTURES / "price_list_products.json").read_text())


@dataclass
class Fake:
    """What the fake serves and what it was asked."""

    page_size: int = 5
    gcp_mode: str = "ok"
    aws_mode: str = "ok"
    skus: list[dict[str, Any]] = field(default_factory=lambda: list(SKUS))
    products: list[dict[str, Any]] = field(default_factory=lambda: list(PRODUCTS))
    gcp_requests: list[dict[str, Any]] = field(default_factory=list)
    aws_requests: list[dict[str, Any]] = field(default_factory=list)
    url: str = ""
    stopped: threading.Event = field(default_factory=threading.Event)


class _Handler(BaseHTTPRequestHandler):
    fake: Fake  # set per server by serve()

    def log_message(self, *args: Any) -> None:  # quiet test output
        pass

    def _send(self, status: int, body: dict[str, Any], content_type: str = "application/json") -> None:
        data = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self) -> None:  # noqa: N802 (http.server's name)
        url = urlsplit(self.path)
        query = {k: v[0] for k, v in parse_qs(url.query).items()}
        self.fake.gcp_requests.append({"path": url.path, "query": query,
                                  "api_key": self.headers.get("x-goog-api-key")})
        if not url.path.startswith("/v1/services/") or not url.path.endswith("/skus"):
            return self._send(404, {"error": {"code": 404, "message": "not found", "status": "NOT_FOUND"}})
        if self.fake.gcp_mode == "fail":
            return self._send(500, {"error": {"code": 500, "message": "Internal error encountered.",
                                              "status": "INTERNAL"}})
        if self.fake.gcp_mode == "deny" or not self.headers.get("x-goog-api-key"):
            return self._send(403, {"error": {"code": 403, "message": "The caller does not have permission",
                                              "status": "PERMISSION_DENIED"}})
        start = int(query.get("pageToken") or 0)
        size = min(int(query.get("pageSize") or self.fake.page_size), self.fake.page_size)
        page = self.fake.skus[start:start + size]
        body: dict[str, Any] = {"skus": page}
        if start + size < len(self.fake.skus):
            body["nextPageToken"] = str(start + size)
        self._send(200, body)

    def do_POST(self) -> None:  # noqa: N802
        length = int(self.headers.get("Content-Length") or 0)
        request = json.loads(self.rfile.read(length) or b"{}")
        self.fake.aws_requests.append({"target": self.headers.get("X-Amz-Target"), "body": request,
                                  "signed": "Credential=" in (self.headers.get("Authorization") or "")})
        kind = "application/x-amz-json-1.1"
        if self.fake.aws_mode == "silent":
            self.fake.stopped.wait(60)
            return None
        if self.fake.aws_mode == "fail":
            return self._send(500, {"__type": "InternalErrorException", "Message": "internal error"}, kind)
        if self.fake.aws_mode == "deny":
            return self._send(400, {"__type": "AccessDeniedException", "Message": "not authorized"}, kind)
        wanted = {f["Field"]: f["Value"] for f in request.get("Filters", [])}
        matching = [p for p in self.fake.products if p["serviceCode"] == request.get("ServiceCode")
                    and all(p["product"]["attributes"].get(k) == v for k, v in wanted.items())]
        start = int(request.get("NextToken") or 0)
        size = min(int(request.get("MaxResults") or self.fake.page_size), self.fake.page_size)
        body: dict[str, Any] = {"FormatVersion": "aws_v1",
                                "PriceList": [json.dumps(p) for p in matching[start:start + size]]}
        if start + size < len(matching):
            body["NextToken"] = str(start + size)
        self._send(200, body, kind)


def serve(fake: Fake) -> Iterator[Fake]:
    """Runs the fake until the generator is closed (use from a pytest fixture)."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), type("Handler", (_Handler,), {"fake": fake}))
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    fake.url = f"http://127.0.0.1:{server.server_address[1]}"
    try:
        yield fake
    finally:
        fake.stopped.set()
        server.shutdown()
        server.server_close()
        thread.join(timeout=10)
