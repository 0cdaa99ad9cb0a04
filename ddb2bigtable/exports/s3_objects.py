"""An export in an S3 bucket (`s3://BUCKET/PREFIX`), read with boto3's S3 client (and written,
`put`, by `export -o s3://...`).

The client is set up as every AWS client of this tool (spec/aws_endpoints.py): 5 s to
connect, 10 s for an answer, a timed-out request not retried, a refused connection tried
4 times, throttling (503 SlowDown) retried by botocore's "standard" mode, ATTEMPTS
attempts. Settings come the way boto3 takes them: the credential chain (`AWS_PROFILE`,
`AWS_ACCESS_KEY_ID`...), `AWS_REGION` (else us-east-1; botocore follows a bucket's
redirect to its own region), and the endpoint variables `AWS_ENDPOINT_URL_S3` or
`AWS_ENDPOINT_URL` (moto, MinIO; path-style addressing then, which every S3-compatible
server takes). One client per process: the load's encoders are forked, and a client
made before the fork would share its connections with the parent.

Failures: no or rejected credentials, or a malformed endpoint variable, are exit 2
(`ExportError`, what to set); a missing bucket or object, access denied, an object
changed while it was read, no answer in time are exit 1 (`ExportUnavailable`, what to
check): the export may be fine.
"""

from __future__ import annotations

import functools
import os
from collections.abc import Callable
from typing import Any, BinaryIO

from ..spec.aws_endpoints import (
    SET_CREDENTIALS,
    AwsFailures,
    bounded_retries,
    call_aws,
    check_endpoint_url,
    client_config,
)
from .errors import ExportError, ExportUnavailable
from .stores import MAX_ENTRIES, BucketStore, ranged, split

ATTEMPTS = 5
ENDPOINT_VARIABLES = ("AWS_ENDPOINT_URL_S3", "AWS_ENDPOINT_URL")  # boto3's own, the first set wins
_MISSING = {"404", "NoSuchKey", "NotFound"}
_DENIED = {"403", "AccessDenied", "AllAccessDisabled", "AccountProblem"}
_CREDENTIALS = {"InvalidAccessKeyId", "SignatureDoesNotMatch", "ExpiredToken", "InvalidToken", "TokenRefreshRequired"}
_CHANGED = {"412", "PreconditionFailed"}


@functools.cache
def _client(pid: int) -> Any:
    """This process's S3 client (`pid`: a forked child makes its own)."""
    import boto3

    endpoint = next((os.environ[v] for v in ENDPOINT_VARIABLES if v in os.environ), None)
    for variable in ENDPOINT_VARIABLES:  # "" would mean AWS itself to boto3: refused as --endpoint-url "" is
        check_endpoint_url(os.environ.get(variable), "--export", variable)
    session = boto3.session.Session()
    config = client_config(ATTEMPTS, user_agent_extra="ddb2bigtable-export",
                           s3={"addressing_style": "path"} if endpoint else {})
    return bounded_retries(session.client("s3", region_name=session.region_name or "us-east-1", config=config))


class S3Store(BucketStore):
    """Objects of S3 buckets; paths are `s3://bucket/key`."""

    def is_file(self, path: str) -> bool:
        return self._head(path) is not None

    def folders(self, path: str) -> list[str] | None:
        bucket, key = split(path)
        prefix = f"{key}/" if key else ""
        names: list[str] = []
        entries, token = 0, None
        while True:
            more: dict[str, str] = {"ContinuationToken": token} if token else {}
            page = self._call("ListObjectsV2", path, functools.partial(
                _client(os.getpid()).list_objects_v2, Bucket=bucket, Prefix=prefix, Delimiter="/", **more))
            names += [p["Prefix"][len(prefix):].rstrip("/") for p in page.get("CommonPrefixes", [])]
            entries += len(page.get("CommonPrefixes", [])) + len(page.get("Contents", []))
            if entries > MAX_ENTRIES:
                raise ExportError(f"{path}: more than {MAX_ENTRIES:,} objects and folders; give the "
                                  f"export's own folder (the one holding AWSDynamoDB/) instead")
            token = page.get("NextContinuationToken")
            if not page.get("IsTruncated") or not token:
                return names if entries else None

    def open(self, path: str) -> BinaryIO:
        head = self._head(path)
        if head is None:
            raise ExportUnavailable(f"{path}: no such object; the manifests name it: copy the whole "
                                    f"export to the bucket, data/ included")
        bucket, key = split(path)
        etag = head["ETag"]

        def fetch(first: int, last: int) -> bytes:
            def get() -> bytes:
                answer = _client(os.getpid()).get_object(Bucket=bucket, Key=key, Range=f"bytes={first}-{last}",
                                                         IfMatch=etag)
                with answer["Body"] as body:  # one byte past the range: a server ignoring Range stops here
                    data: bytes = body.read(last - first + 2)
                return data
            return self._call("GetObject", path, get)

        return ranged(fetch, int(head["ContentLength"]), path)

    def put(self, path: str, local: str) -> None:
        bucket, key = split(path)

        def put_object() -> None:
            with open(local, "rb") as body:  # botocore rewinds it for a retry
                _client(os.getpid()).put_object(Bucket=bucket, Key=key, Body=body)
        self._call("PutObject", path, put_object)

    def _head(self, path: str) -> dict[str, Any] | None:
        """HeadObject's answer, None when there is no such object (a key ending in `/` is a folder's marker)."""
        bucket, key = split(path)
        if not key or key.endswith("/"):
            return None
        try:
            head: dict[str, Any] = self._call("HeadObject", path, lambda: _client(os.getpid()).head_object(
                Bucket=bucket, Key=key), missing_is_none=True)
        except _Missing:
            return None
        return head

    def _call(self, operation: str, path: str, fn: Callable[[], Any], missing_is_none: bool = False) -> Any:
        """`fn()`, its failures as the export's errors (the module docstring); with
        `missing_is_none`, no such object raises _Missing."""
        def client_error(operation: str, code: str, message: str) -> Exception:
            return _Missing() if missing_is_none and code in _MISSING else _client_error(path, operation, code, message)

        return call_aws(operation, fn, AwsFailures(
            lambda message: ExportError(f"{path}: {message}"), lambda message: ExportUnavailable(f"{path}: {message}"),
            client_error, unreachable=f"check the network, or {' / '.join(ENDPOINT_VARIABLES)} if set, then rerun",
            silent=f"check that S3 (or the endpoint in {' / '.join(ENDPOINT_VARIABLES)}) is reachable, then rerun"))


class _Missing(Exception):
    """HeadObject found no object (the caller's answer is None)."""


def _client_error(url: str, operation: str, code: str, message: str) -> ExportError:
    said = f"{operation}: {code}{': ' + message if message else ''}"
    if code == "NoSuchBucket":
        return ExportUnavailable(f"{url}: {said}: no such bucket (or not in this account's view); check the "
                                 f"bucket name in the URL")
    if code in _MISSING:
        return ExportUnavailable(f"{url}: {said}: no such object; copy the whole export to the bucket")
    if code in _DENIED:
        return ExportUnavailable(f"{url}: {said}: access denied; the credentials need s3:ListBucket on the bucket "
                                 f"and s3:GetObject on the export's keys (s3:PutObject to write one; kms:Decrypt or "
                                 f"kms:GenerateDataKey if it is SSE-KMS)")
    if code in _CREDENTIALS:
        return ExportError(f"{url}: {said}: S3 refused the credentials; {SET_CREDENTIALS}, for this account")
    if code in _CHANGED:
        return ExportUnavailable(f"{url}: {said}: the object changed while it was read; rerun once the export "
                                 f"is copied completely")
    return ExportUnavailable(f"{url}: {said}; rerun later")
