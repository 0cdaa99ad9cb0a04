"""Every table a transaction's lock can point to, whichever request meets it: the stage's
spec tables, the tables serve created (read from the registry, created_tables.py, when this
worker does not know them yet) and serve's own token table (docs/transactions.md, "The
token table").

A lock names its primary and secondaries by table name, so a reader of one table settles a
transaction whose primary lives in another (a ClientRequestToken's record, another table of
the same transaction). The token table, `_ddb2bigtable_tokens` in the instance that holds
created tables (the stage's first spec's), keeps one row per ClientRequestToken: row key
the token, only the reserved family. It is a table of its own because it must exist on
every stage, whichever tables are planned or created, and no user key can reach it; it is
created on demand, once per worker, by the first transaction under a token, as the
registry is.
"""

from __future__ import annotations

import asyncio

from ...bigtable.table_admin import ensure_planned_table
from ...plan.model import FamilyPlan, GcPolicy, TablePlan
from ...spec.errors import ServiceError
from ..errors import ServeError, internal
from ..session import Session
from ..store import Store
from ..tables import created_tables
from ..transactions import cells
from ..transactions.driver import Place, Rows

TOKENS_ID = "_ddb2bigtable_tokens"
TOKENS_PLAN = TablePlan(
    id=TOKENS_ID, source_table="", source_regions=(), change_stream_retention_hours=None, backup=None,
    families=(FamilyPlan(cells.FAMILY, GcPolicy(None, 1), "one version: a lock and a record are rewritten whole"),),
    deletion_protection=False, materialized_views=(), storage_gib=0.0, ttl_attribute=None,
    why="serve's ClientRequestToken records, each the primary row of its transaction")


def token_store(session: Session) -> Store:
    home = session.catalog.home
    if home is None:
        raise internal("the stage lists no spec table, so serve has no instance to keep ClientRequestTokens in")
    return session.table_store(home.instance_id, TOKENS_ID, home.consistent_profile, TOKENS_ID)


async def tokens_ready(session: Session) -> None:
    """The token table exists: found by a read (no admin call once any worker made it), else
    created. Requests or workers creating it at the same moment may fail but one: a failed
    creation after which the table is there is no failure."""
    if session.tokens_ready:
        return
    home = session.catalog.home
    if not await _there(session) and home is not None:
        try:
            await asyncio.to_thread(ensure_planned_table, session.catalog.project, home.instance_id, TOKENS_PLAN)
        except ServiceError as error:
            if not await _there(session):
                raise internal(f"serve could not create its ClientRequestToken table {TOKENS_ID}: "
                               f"{error}") from None
    session.tokens_ready = True


async def _there(session: Session) -> bool:
    """Whether the token table exists (a read of one row that no token has)."""
    try:
        await token_store(session).read_row(b"\x00")
    except ServeError as error:
        if error.name == "ResourceNotFoundException":
            return False
        raise
    return True


async def place(session: Session, name: str) -> Place | None:
    """The table named `name` in a lock (None: no such table, or one deleted since)."""
    if name == cells.TOKENS:
        return Place(token_store(session), ())
    table = session.catalog.tables.get(name)
    if table is None:
        await created_tables.resolve_names(session, {name})
        table = session.catalog.created.get(name)
    return Place(session.store(table, consistent=True), table.families) if table is not None else None


def rows_of(session: Session, until: float | None = None) -> Rows:
    """Rows of every table a lock can name, through their transactional profiles; `until`, the
    request's deadline (a monotonic clock) for a single-item write's tries."""
    return Rows(lambda name: place(session, name), until)
