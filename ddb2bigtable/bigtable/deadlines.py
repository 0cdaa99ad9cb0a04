"""How long a Bigtable call may take, so a Bigtable (or emulator) that accepts connections
and never answers ends a command in a bounded time with what to do, not after ten minutes.

The data client's own defaults (google-cloud-bigtable 2.50.2, `BigtableDataClientAsync.
get_table`: https://github.com/googleapis/python-bigtable/blob/v2.50.2/google/cloud/bigtable/data/_async/client.py,
read 2026-11-25) are 600 s for a ReadRows operation (20 s per attempt) and 600 s for
MutateRows (60 s per attempt). The reads here are point lookups of at most a few hundred
rows (verify, the load's resume check, cutover check), which answer in milliseconds, so
their operation is bounded by READ_SECONDS, each attempt by ATTEMPT_SECONDS; a full-table
scan (verify's count) keeps the client's 600 s, since a large table takes that long.
Writes are bounded by `writer.WriteSettings` (the load: 120 s; replicate: REPLICATE_WRITE_SECONDS).
Table admin calls keep their generated defaults (60 s; 300 s to create a table), after
a first call with 5 s (emulator) or 15 s (cloud), retries included (`admin_retry`):
`preflight.check_target` before a load or verify, a probe before `table_admin.ensure_tables`.
"""

from __future__ import annotations

from typing import Any

READ_SECONDS = 30.0  # a lookup of up to LOOKUP_BATCH rows, its retries included
ATTEMPT_SECONDS = 10.0  # one try of a lookup
SCAN_SECONDS = 600.0  # a full-table scan (the client's default, explicit: the handle's default is READ_SECONDS)
SCAN_ATTEMPT_SECONDS = 20.0  # one stream of it; the client resumes after the last row it got
REPLICATE_WRITE_SECONDS = 30.0  # one page's writes, retries included (replicate waits longer outages out)
REPLICATE_WRITE_ATTEMPT_SECONDS = 10.0


def admin_retry(seconds: float) -> Any:
    """Retries of a table-admin call's transient errors, all within `seconds`: the generated
    admin client retries for 60 s whatever `timeout=` says (a probe "within 5 s" of a
    silent emulator took 47 s), so a short deadline needs its own retry."""
    from google.api_core.retry import Retry, if_transient_error

    return Retry(predicate=if_transient_error, timeout=seconds)


def lookup_table(client: Any, instance_id: str, table_id: str, app_profile_id: str | None = None) -> Any:
    """The client's table handle, its reads bounded by READ_SECONDS (ATTEMPT_SECONDS a try)."""
    return client.get_table(instance_id, table_id, app_profile_id=app_profile_id,
                            default_read_rows_operation_timeout=READ_SECONDS,
                            default_read_rows_attempt_timeout=ATTEMPT_SECONDS,
                            default_operation_timeout=READ_SECONDS, default_attempt_timeout=ATTEMPT_SECONDS)
