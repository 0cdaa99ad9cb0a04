"""Where an export's files are read from: a local folder, an S3 bucket or a GCS bucket.

`locations.store_for(location)` names the store and the path in it; the manifests and the reader
then ask only what this module's `Store` offers (is this a file, which folders are below,
open it), so each store's guard stays in one place:
- local (`LocalStore`): only regular files are opened, with O_NOFOLLOW on the path the
  links lead to, after a check that it stays inside the export's folder (`inside`);
  a FIFO or device is refused without blocking on it;
- S3 and GCS (`s3_objects`, `gcs_objects`): every request has a connect and a read
  timeout and a bounded retry; objects are read in ranged windows of `WINDOW` bytes of
  the version seen when the file was opened, so memory never holds a whole file and a
  file replaced half-way is an error, not a mix of two.
Paths are `/abs/path` locally and the URL (`s3://bucket/key`) in a bucket: every message
names a file as the user would write it.
"""

from __future__ import annotations

import os
import stat
from abc import ABC, abstractmethod
from collections.abc import Callable
from typing import Any, BinaryIO, cast

from .errors import ExportError, ExportUnavailable

WINDOW = 8 * 1024 * 1024  # bytes per ranged GET of a bucket object
MAX_ENTRIES = 10_000  # entries (objects and folders) one folder may list while exports are looked for


class Store(ABC):
    """A place an export's files are read from."""

    @abstractmethod
    def is_file(self, path: str) -> bool:
        """Whether a file is at `path` (ExportError when something that is not a regular file is)."""

    @abstractmethod
    def folders(self, path: str) -> list[str] | None:
        """The names of the folders directly below `path`, None when there is no such folder;
        ExportError past MAX_ENTRIES entries (give the export's own folder then)."""

    @abstractmethod
    def open(self, path: str) -> BinaryIO:
        """`path` to read in pieces (FileNotFoundError when it is missing)."""

    @abstractmethod
    def inside(self, root: str, path: str, where: str) -> None:
        """ExportError when `path` leads outside the export's folder `root`."""


class BucketStore(Store):
    """The objects of a bucket (S3, Cloud Storage): keys have no links, so the manifests'
    key check is the whole rule of `inside`."""

    def inside(self, root: str, path: str, where: str) -> None:
        """Nothing to follow: a key names its object."""

    @abstractmethod
    def put(self, path: str, local: str) -> None:
        """Upload the local file `local` as the object `path` (`export -o s3://...`, `gs://...`),
        through the same client, timeouts and error wording as the reads."""


def split(path: str) -> tuple[str, str]:
    """(bucket, key) of a bucket URL."""
    bucket, _, key = path.partition("://")[2].partition("/")
    return bucket, key


class RangedReader:
    """A bucket object read window by window with `fetch(first, last)` (inclusive byte
    offsets): at most WINDOW bytes are held, whatever the object's size."""

    def __init__(self, fetch: Callable[[int, int], bytes], size: int, where: str, window: int):
        self._fetch, self._size, self._where, self._window = fetch, size, where, window
        self._buffer, self._at, self._offset = b"", 0, 0

    def read(self, n: int) -> bytes:
        """Up to `n` bytes (fewer only at the end), b"" at the end."""
        pieces: list[bytes] = []
        while n > 0:
            if self._at == len(self._buffer):
                if self._offset >= self._size:
                    break
                end = min(self._offset + self._window, self._size)
                self._buffer, self._at = self._fetch(self._offset, end - 1), 0
                if len(self._buffer) != end - self._offset:
                    raise ExportUnavailable(f"{self._where}: asked for bytes {self._offset}-{end - 1}, got "
                                            f"{len(self._buffer)}; the object changed or the connection broke: rerun")
                self._offset = end
            piece = self._buffer[self._at:self._at + n]
            self._at += len(piece)
            n -= len(piece)
            pieces.append(piece)
        return b"".join(pieces)

    def __enter__(self) -> RangedReader:
        return self

    def __exit__(self, *_: object) -> None:
        self._buffer = b""


def ranged(fetch: Callable[[int, int], bytes], size: int, where: str) -> BinaryIO:
    """A `RangedReader` as the binary stream its callers read (`read(n)`, `with`)."""
    return cast(BinaryIO, RangedReader(fetch, size, where, WINDOW))


# --- local folders --------------------------------------------------------------------------

def not_regular(path: str) -> ExportError:
    return ExportError(f"{path}: not a regular file (a device, FIFO or folder); an export holds only files: "
                       f"copy the export folder again")


class LocalStore(Store):
    """A folder on this machine. A FIFO would block a read until someone writes to it and a
    device (`/dev/zero`) would never end: only regular files are opened, links followed
    only where `inside` allows."""

    def is_file(self, path: str) -> bool:
        try:
            mode = os.stat(path).st_mode
        except OSError:
            return False
        if not stat.S_ISREG(mode):
            raise not_regular(path)
        return True

    def folders(self, path: str) -> list[str] | None:
        if not os.path.isdir(path):
            return None
        names: list[str] = []
        with os.scandir(path) as entries:
            for count, entry in enumerate(entries, 1):
                if count > MAX_ENTRIES:
                    raise ExportError(f"{path}: more than {MAX_ENTRIES:,} entries; give the export's own "
                                      f"folder (the one holding AWSDynamoDB/) instead")
                if entry.is_dir():
                    names.append(entry.name)
        return names

    def open(self, path: str) -> BinaryIO:
        """The file the links of `path` lead to, opened with O_NOFOLLOW (a link put there
        after `inside` looked is refused, not followed) and O_NONBLOCK (a FIFO does not
        block the open), then checked to be a regular file on the open descriptor."""
        if os.path.exists(path) and not os.path.isfile(path):
            raise not_regular(path)
        real = os.path.realpath(path)
        try:
            fd = os.open(real, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
        except FileNotFoundError:
            raise
        except OSError as err:
            raise ExportError(f"{path}: cannot open it ({err.strerror}); an export holds only regular files: "
                              f"copy the export folder again") from None
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            os.close(fd)
            raise not_regular(path)
        os.set_blocking(fd, True)
        return os.fdopen(fd, "rb")

    def inside(self, root: str, path: str, where: str) -> None:
        """`path` after following links must stay below the export's folder: a data file
        that is a link to /etc/shadow is not part of the export."""
        real_root = os.path.realpath(root)
        real = os.path.realpath(path)
        if os.path.commonpath([real_root, real]) != real_root:
            raise ExportError(f"{where}: {path} leads to {real}, outside the export folder {real_root} (a link?); "
                              f"copy the export's files themselves, not links to them")


def read_at_most(stream: Any, limit: int) -> bytes:
    """The first `limit` bytes of `stream` (fewer at its end)."""
    pieces, left = [], limit
    while left > 0 and (piece := stream.read(min(left, 1 << 20))):
        pieces.append(piece)
        left -= len(piece)
    return b"".join(pieces)
