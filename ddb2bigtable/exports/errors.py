"""The two ways an export cannot be read, by who can fix it.

`ExportError` (exit 2): the export itself is wrong (a damaged manifest, a key that is a
path, a file that is not a regular file); copying or fixing it is the user's part.
`ExportUnavailable` (exit 1): the bucket the export is in failed to answer as asked (no
such bucket or object, access denied, no answer within the timeouts); the export may be
fine and a rerun, or a fixed permission, may read it. It is an `ExportError` too, so what
reads an export one data file at a time (the load's encoders) stops that file the same
way, and a `ServiceError`, so the command line exits 1.
"""

from __future__ import annotations

from ..spec.errors import EXIT_BAD_INPUT, EXIT_FAILED, Ddb2BigtableError, ServiceError


class ExportError(Ddb2BigtableError):
    """The export cannot be read: names the file, what is wrong and what to do."""

    exit_code = EXIT_BAD_INPUT


class ExportUnavailable(ExportError, ServiceError):
    """The export's bucket did not serve a request: names the URL (user-info hidden), the
    cause and what to check."""

    exit_code = EXIT_FAILED
