"""`export -o s3://BUCKET/PREFIX` or `gs://BUCKET/PREFIX`: the files the scan writes in its
local work folder (scan_export.py), uploaded through the readers' own stores (s3_objects,
gcs_objects: the same clients, timeouts and error wording).

The checkpoint, the lock and each data file while it is written stay in the work folder;
a finished data file is uploaded before the checkpoint records it, then deleted there. The
manifests are uploaded last, manifest-summary.json the very last, so a reader (which
starts from the summary) finds either no export or a whole one. The objects are byte for
byte the files a local export would hold.
"""

from __future__ import annotations

from pathlib import Path

from .locations import store_for
from .manifests import AWS_FOLDER
from .stores import BucketStore

# What an export folder holds besides data/, in the order they are uploaded: the summary last.
MANIFESTS = ("_started", "manifest-files.json", "manifest-files.md5", "manifest-summary.md5", "manifest-summary.json")


class BucketUpload:
    """The bucket prefix one export goes to."""

    def __init__(self, url: str):
        store, self.url = store_for(url)
        assert isinstance(store, BucketStore), "the caller gives only s3:// or gs:// as bucket"
        self._store = store

    def holds_export(self) -> bool:
        """The prefix already holds an export (a folder under AWSDynamoDB/)."""
        return self._store.folders(f"{self.url}/{AWS_FOLDER}") is not None

    def export_url(self, export_id: str) -> str:
        return f"{self.url}/{AWS_FOLDER}/{export_id}"

    def data_file(self, export_id: str, path: Path) -> None:
        """A finished data file uploaded, then deleted from the work folder (before the
        checkpoint records it: a resumed export never counts a file the bucket lacks)."""
        self._store.put(f"{self.export_url(export_id)}/data/{path.name}", str(path))
        path.unlink()

    def manifests(self, export_id: str, export_dir: Path) -> None:
        """The export's manifests, written in `export_dir`, uploaded with the summary last."""
        for name in MANIFESTS:
            self._store.put(f"{self.export_url(export_id)}/{name}", str(export_dir / name))
