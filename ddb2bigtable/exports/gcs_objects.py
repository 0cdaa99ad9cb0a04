"""An export in a Cloud Storage bucket (`gs://BUCKET/PREFIX`), read with google-cloud-storage.

Every request is given CONNECT_TIMEOUT_SECONDS to connect and READ_TIMEOUT_SECONDS for an
answer (as AWS calls are, spec/aws_endpoints.py; the library's own default is 60 s each)
and `RETRY`: 429 and 5xx answers and a refused or reset connection are retried with
backoff (1, 2, 4 s...) for at most RETRY_SECONDS, a request that timed out is not retried
(the library's default retries everything for 120 s). So a silent server, or one whose
body stalls half-way, ends a command after one read timeout; a refused connection after
RETRY_SECONDS.

Credentials are Application Default Credentials (`GOOGLE_APPLICATION_CREDENTIALS`, or
`gcloud auth application-default login`), read-only scope (read-write for `export -o gs://`'s
uploads, `put`); none is exit 2 saying what to set. `STORAGE_EMULATOR_HOST` (http://HOST:PORT,
the library's own variable) points the client at an emulator or test server, with
anonymous credentials. One client per process
(the load's encoders are forked). Failures are worded as in s3_objects: no or rejected
credentials exit 2, a missing bucket or object, access denied, no answer exit 1.
"""

from __future__ import annotations

import functools
import io
import os
from collections.abc import Callable
from typing import Any, BinaryIO

from ..spec.aws_endpoints import CONNECT_TIMEOUT_SECONDS, READ_TIMEOUT_SECONDS, check_endpoint_url
from ..spec.errors import redact_userinfo
from .errors import ExportError, ExportUnavailable
from .stores import MAX_ENTRIES, BucketStore, ranged, split

TIMEOUT = (CONNECT_TIMEOUT_SECONDS, READ_TIMEOUT_SECONDS)
RETRY_SECONDS = 10.0
EMULATOR_VARIABLE = "STORAGE_EMULATOR_HOST"
READ_ONLY = "https://www.googleapis.com/auth/devstorage.read_only"
READ_WRITE = "https://www.googleapis.com/auth/devstorage.read_write"  # `export -o gs://...` only
_TRANSIENT_STATUS = (429, 500, 502, 503, 504)
_SET_CREDENTIALS = ("set GOOGLE_APPLICATION_CREDENTIALS to a service account key file, or run "
                    "`gcloud auth application-default login`")


def _transient(error: BaseException) -> bool:
    """Worth another try: a 429/5xx answer or a refused/reset connection, not a timeout."""
    import requests
    from google.api_core import exceptions as api
    from google.cloud.storage.exceptions import InvalidResponse  # type: ignore[import-untyped]

    if isinstance(error, requests.Timeout):
        return False
    if isinstance(error, (api.TooManyRequests, api.InternalServerError, api.BadGateway, api.ServiceUnavailable,
                          api.GatewayTimeout, requests.ConnectionError, ConnectionError)):
        return True
    return isinstance(error, InvalidResponse) and error.response.status_code in _TRANSIENT_STATUS


@functools.cache
def _retry() -> Any:
    from google.api_core.retry import Retry

    return Retry(predicate=_transient, initial=1.0, maximum=4.0, multiplier=2.0, timeout=RETRY_SECONDS)


@functools.cache
def _client(pid: int, scope: str = READ_ONLY) -> Any:
    """This process's client (`pid`: a forked child makes its own); `scope` READ_WRITE for
    `export`'s uploads, the readers' client stays read-only."""
    from google.cloud import storage  # type: ignore[attr-defined]

    emulator = os.environ.get(EMULATOR_VARIABLE)
    if emulator is not None:
        check_endpoint_url(emulator, "--export", EMULATOR_VARIABLE)
        from google.auth.credentials import AnonymousCredentials

        return storage.Client(project=None, credentials=AnonymousCredentials())
    import google.auth
    from google.auth.exceptions import DefaultCredentialsError

    try:
        credentials, _ = google.auth.default(scopes=[scope])
    except DefaultCredentialsError as error:
        raise ExportError(f"gs://: no Google credentials ({str(error).split('.')[0]}): {_SET_CREDENTIALS}") from None
    return storage.Client(project=None, credentials=credentials)


class GcsStore(BucketStore):
    """Objects of Cloud Storage buckets; paths are `gs://bucket/key`."""

    def is_file(self, path: str) -> bool:
        return self._blob(path) is not None

    def folders(self, path: str) -> list[str] | None:
        bucket, key = split(path)
        prefix = f"{key}/" if key else ""

        def listing() -> tuple[list[str], int]:
            pages = _client(os.getpid()).list_blobs(bucket, prefix=prefix, delimiter="/", page_size=1000,
                                                    timeout=TIMEOUT, retry=_retry()).pages
            names: list[str] = []
            entries = 0
            for page in pages:
                found = sorted(page.prefixes)
                names += [p[len(prefix):].rstrip("/") for p in found]
                entries += len(found) + page.num_items
                if entries > MAX_ENTRIES:
                    raise ExportError(f"{path}: more than {MAX_ENTRIES:,} objects and folders; give "
                                      f"the export's own folder (the one holding AWSDynamoDB/) instead")
            return names, entries

        names, entries = self._call("objects.list", path, listing)
        return names if entries else None

    def open(self, path: str) -> BinaryIO:
        blob = self._blob(path)
        if blob is None:
            raise ExportUnavailable(f"{path}: no such object; the manifests name it: copy the whole "
                                    f"export to the bucket, data/ included")
        pinned = blob.bucket.blob(blob.name, generation=blob.generation)  # a replaced object is an error, not a mix

        def fetch(first: int, last: int) -> bytes:
            window = _Capped(path, last - first + 1)
            self._call("objects.get (media)", path, lambda: pinned.download_to_file(
                window, start=first, end=last, raw_download=True, checksum=None, timeout=TIMEOUT, retry=_retry()))
            return window.getvalue()

        return ranged(fetch, int(blob.size or 0), path)

    def put(self, path: str, local: str) -> None:
        bucket, key = split(path)
        self._call("objects.insert", path, lambda: _client(os.getpid(), READ_WRITE).bucket(bucket).blob(key)
                   .upload_from_filename(local, timeout=TIMEOUT, retry=_retry()))

    def _blob(self, path: str) -> Any:
        """The object's metadata (size, generation), None when there is none."""
        bucket, key = split(path)
        if not key or key.endswith("/"):
            return None
        return self._call("objects.get", path, lambda: _client(os.getpid()).bucket(bucket).get_blob(
            key, timeout=TIMEOUT, retry=_retry()))

    def _call(self, operation: str, path: str, fn: Callable[[], Any]) -> Any:
        """`fn()`, its failures as the export's errors (the module docstring)."""
        import requests
        from google.api_core import exceptions as api
        from google.auth.exceptions import GoogleAuthError
        from google.cloud.storage.exceptions import InvalidResponse
        from urllib3.exceptions import HTTPError
        from urllib3.exceptions import TimeoutError as StreamTimeout

        try:
            return fn()
        except api.RetryError as error:
            cause = error.cause or error
            raise ExportUnavailable(f"{path}: {operation}: still failing after {RETRY_SECONDS:g} s of retries "
                                    f"({_said(cause)}); check that Cloud Storage (or {EMULATOR_VARIABLE}, if set) "
                                    f"is reachable, then rerun") from None
        except api.NotFound as error:
            raise ExportUnavailable(f"{path}: {operation}: {_said(error)}: no such bucket or object; check the "
                                    f"URL, and copy the whole export to the bucket") from None
        except api.Forbidden as error:
            raise ExportUnavailable(f"{path}: {operation}: {_said(error)}: access denied; the credentials need "
                                    f"roles/storage.objectViewer on the bucket (storage.objects.list and "
                                    f"storage.objects.get; storage.objects.create to write an export)") from None
        except (api.Unauthorized, GoogleAuthError) as error:
            raise ExportError(f"{path}: {operation}: Cloud Storage refused the credentials ({_said(error)}); "
                              f"{_SET_CREDENTIALS}") from None
        except (requests.Timeout, StreamTimeout, TimeoutError) as error:  # urllib3's own while a body is read
            raise ExportUnavailable(f"{path}: {operation}: no answer within {READ_TIMEOUT_SECONDS:g} s "
                                    f"({_said(error)}): check that Cloud Storage (or {EMULATOR_VARIABLE}, if "
                                    f"set) is reachable, then rerun") from None
        except (requests.RequestException, api.GoogleAPICallError, InvalidResponse, HTTPError, OSError) as error:
            raise ExportUnavailable(f"{path}: {operation} failed ({_said(error)}); check that Cloud Storage (or "
                                    f"{EMULATOR_VARIABLE}, if set) is reachable, then rerun") from None


class _Capped(io.BytesIO):
    """One window of a download, held only up to the range asked: a server (or proxy) that
    ignores Range and answers the whole object is stopped here, not after it filled memory."""

    def __init__(self, path: str, size: int):
        super().__init__()
        self._path, self._size = path, size

    def write(self, data: Any) -> int:
        if self.tell() + len(data) > self._size:
            raise ExportUnavailable(f"{self._path}: asked for {self._size:,} bytes and the answer is longer (the "
                                    f"server ignored the Range header); read the export from Cloud Storage "
                                    f"itself, or a proxy that keeps Range")
        return super().write(data)


def _said(error: BaseException) -> str:
    """The error's first line, URLs' user-info hidden."""
    return redact_userinfo(str(error).splitlines()[0] if str(error) else type(error).__name__)
