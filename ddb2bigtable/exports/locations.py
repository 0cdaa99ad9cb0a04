"""Export locations as users write them: a local folder, `file://`, `s3://` or `gs://`.

Which store (stores.py) reads a location, and the check of a bucket URL before any
request is made. The bucket stores import their client libraries only when first used.
"""

from __future__ import annotations

import os

from .errors import ExportError
from .gcs_objects import GcsStore
from .s3_objects import S3Store
from .stores import LocalStore, Store


def store_for(location: str) -> tuple[Store, str]:
    """The store of `location` (a local folder, `file://`, `s3://` or `gs://`) and the
    path in it without a trailing `/` (absolute, or the bucket URL); ExportError (exit 2)
    for any other URL."""
    scheme, sep, rest = location.partition("://")
    if not sep:
        return LocalStore(), os.path.abspath(location).rstrip("/") or "/"
    if scheme == "file":
        return LocalStore(), os.path.abspath(rest).rstrip("/") or "/"
    if scheme == "s3":
        return S3Store(), bucket_path(location, rest)
    if scheme == "gs":
        return GcsStore(), bucket_path(location, rest)
    raise ExportError(f"{location}: {scheme}:// is not a place exports are read from; give a local folder, "
                      f"s3://BUCKET/PREFIX or gs://BUCKET/PREFIX")


def bucket_path(location: str, rest: str) -> str:
    """`location` without a trailing `/`; ExportError (exit 2) unless the bucket is a name
    both S3 and GCS could have (3-222 characters of a-z, 0-9, `.`, `-`, `_`; no user-info,
    port, query or fragment: `s3://key:secret@bucket` is refused, its secret never shown)."""
    bucket = rest.split("/", 1)[0]
    if not 3 <= len(bucket) <= 222 or not set(bucket) <= set("abcdefghijklmnopqrstuvwxyz0123456789.-_") \
            or "?" in rest or "#" in rest or "//" in rest:
        raise ExportError(f"{location}: not a bucket URL: give {location.split('://', 1)[0]}://BUCKET/PREFIX "
                          f"(a bucket name is 3-63 lowercase letters, digits, '.', '-' or '_'; no query, "
                          f"user or port)")
    return location.rstrip("/")
