"""`serve`: the DynamoDB-compatible endpoint over the stage's Bigtable tables (ddb2bigtable/serve/)."""

from __future__ import annotations

import asyncio
import ipaddress
import os
from collections.abc import Sequence
from pathlib import Path

import click

from ..serve.protocol.limits import Exposure, Guard
from .grammar import DEFAULT_STAGE, renamed_option
from .output import echo_warning

GUARD = Guard()  # the defaults of the connection options


@click.command()
@click.argument("specs", nargs=-1)
@click.option("--stage", default=DEFAULT_STAGE, show_default=True,
              help="The stage whose specs' tables are served (its plan names instances and tables); SPEC "
                   "arguments replace its list.")
@click.option("--host", default="127.0.0.1", show_default=True,
              help="Address to listen on. Loopback by default; any other address needs key pairs in "
                   "DDB2BIGTABLE_SERVE_KEYS (every request then signed with one) or --unsigned.")
@click.option("--port", type=click.IntRange(1, 65535), default=8000, show_default=True, help="TCP port.")
@click.option("--workers", type=click.IntRange(1, 64), default=1, show_default=True,
              help="Worker processes sharing the port (each with its own Bigtable client).")
@click.option("--unsigned", is_flag=True,
              help="Accept unsigned requests on a non-loopback --host: only behind an authenticating proxy "
                   "(Cloud Run IAM).")
@click.option("--public-host", "public_hosts", multiple=True, metavar="NAME[:PORT]",
              help="A name clients reach this endpoint by (a DNS name, a load balancer's, Cloud Run's service "
                   "URL host), as their Host header carries it, besides the stage's serve.public_hosts; "
                   "repeatable. Signed requests must name one of these, the --host address with --port, "
                   "localhost or 127.0.0.1.")
@click.option("--signing-region", "regions", multiple=True, metavar="AWS_REGION",
              help="An AWS region a signature's credential scope may name besides the regions of the stage's "
                   "tables and its serve.signing_regions (the region the application's SDK is configured with); "
                   "repeatable.")
@renamed_option("--region", "--signing-region", "regions", multiple=True, metavar="AWS_REGION")
@click.option("--header-timeout", type=click.FloatRange(0.1, 3600), default=GUARD.header_seconds,
              show_default=True, help="Seconds a request has to send its headers, from its first byte.")
@click.option("--body-timeout", type=click.FloatRange(0.1, 3600), default=GUARD.body_seconds,
              show_default=True, help="Seconds a request has to send its body, once its headers are in.")
@click.option("--idle-timeout", type=click.IntRange(1, 3600), default=GUARD.idle_seconds, show_default=True,
              help="Seconds a kept-alive connection may wait for its next request.")
@click.option("--max-connections", type=click.IntRange(1, 1_000_000), default=GUARD.max_connections,
              show_default=True, help="Open connections per worker; past it the one waiting longest for a "
                                      "request is closed.")
@click.option("--txn-sweep-seconds", type=click.FloatRange(1, 86400), default=60.0, show_default=True,
              help="How often (times a random 0.5-1.5) each worker sweeps its tables' transaction locks: a "
                   "lock past its expiry that no request met is settled by its transaction's fate, and "
                   "ClientRequestToken records past 10 minutes are deleted (docs/transactions.md).")
@click.option("--root", type=click.Path(file_okay=False, path_type=Path), default=Path("."), show_default=True,
              help="Project root holding stacks/ and specs/.")
def serve(specs: tuple[str, ...], stage: str, host: str, port: int, workers: int, unsigned: bool,
          public_hosts: tuple[str, ...], regions: tuple[str, ...], header_timeout: float, body_timeout: float,
          idle_timeout: int, max_connections: int, txn_sweep_seconds: float, root: Path) -> None:
    """Answer DynamoDB's API (JSON 1.0) over Bigtable: point an AWS SDK's endpoint_url here.

    Without SPEC arguments, the tables of the specs the stage lists."""
    from ..bigtable.emulator import quiet_connection_warning
    from ..serve.protocol.server import run
    from ..serve.protocol.signatures import answering_hosts

    given = [str(Path(spec).resolve()) for spec in specs]  # served instead of the stage's list
    keys = _keys()
    loopback = ipaddress.ip_address(_literal(host)).is_loopback
    if not loopback and keys is None and not unsigned:
        from ..serve.protocol.signatures import KEYS_ENV
        from ..spec.errors import InputError, Problem

        raise InputError([Problem.about("--host", "", f"{host} is not a loopback address and no key pairs are set: "
                                        f"set {KEYS_ENV}=ACCESS_KEY_ID:SECRET[,...] (every request must then be "
                                        f"signed with one) or, behind an authenticating proxy, pass --unsigned")])
    project, types, names = _tables(root, stage, given)
    where = f"http://{host if ':' not in host else f'[{host}]'}:{port}"

    def listening() -> None:
        click.echo(f"serving {', '.join(sorted(names))} (stage {stage}) at {where}: use it as endpoint_url; "
                   f"{workers} worker(s); Ctrl-C stops", err=True)
        if keys is not None:
            click.echo(f"every request must be signed (SigV4) with one of {len(keys)} key pair(s)", err=True)
        elif not loopback:
            echo_warning(f"warning: listening on {host} without checking signatures (--unsigned): whoever reaches "
                         f"this address can read and write these tables unless a proxy authenticates them")

    stage_regions, stage_hosts = _signed_for(root, stage, given)
    exposure = Exposure(frozenset({*stage_regions, *regions}),
                        answering_hosts(host, port, (*stage_hosts, *public_hosts)),
                        Guard(header_timeout, body_timeout, idle_timeout, max_connections))
    with quiet_connection_warning():
        run(root, stage, project, types, host=host, port=port, workers=workers, exposure=exposure,
            listening=listening, sweep_seconds=txn_sweep_seconds, given=given)


def _signed_for(root: Path, stage_name: str, given: Sequence[str] = ()) -> tuple[set[str], tuple[str, ...]]:
    """The AWS regions of the served tables the stage keeps (home and replicas, as the plan
    keeps them) with the stage's `serve.signing_regions`, and its `serve.public_hosts`: what
    a signature may be scoped to without a flag, so `serve --stage S` on a laptop answers as
    the deployed one does."""
    from ..plan.topology import kept_regions
    from ..serve.catalog import served_specs

    stage, specs = served_specs(root, stage_name, given)
    tables = {region for spec in specs for table in spec.tables for region in kept_regions(table.source, stage)}
    return tables | set(stage.serve.signing_regions), stage.serve.public_hosts


def _keys() -> dict[str, str] | None:
    """The key pairs of DDB2BIGTABLE_SERVE_KEYS, or None; a malformed value is bad input that
    names the variable and the pair, never a secret."""
    from ..serve.protocol.signatures import KEYS_ENV, parse_keys
    from ..spec.errors import InputError, Problem

    text = os.environ.get(KEYS_ENV)
    if not text:
        return None
    try:
        return parse_keys(text)
    except ValueError as error:
        raise InputError([Problem.about(KEYS_ENV, "", f"{error}; give ACCESS_KEY_ID:SECRET pairs, comma "
                                        f"separated")]) from None


def _literal(host: str) -> str:
    """The host as an IP address (a name like `localhost` counts as loopback only if it is one)."""
    if host == "localhost":
        return "127.0.0.1"
    try:
        ipaddress.ip_address(host)
    except ValueError:
        return "0.0.0.0"  # a host name: treated as reachable from the network
    return host


def _tables(root: Path, stage_name: str,
            given: Sequence[str] = ()) -> tuple[str, dict[str, dict[str, str]], list[str]]:
    """The Bigtable project, each table's attribute types (its record in the instance, and the
    loads' work folders where present, which must agree) and the DynamoDB names served."""
    from ..bigtable.emulator import EMULATOR_ENV, quiet_connection_warning
    from ..bigtable.table_types import held_by_table
    from ..load.local_stage import DEFAULT_PROJECT, WORK_DIR
    from ..load.state import STATE_FILE, LoadState, target
    from ..plan.planner import plan_stage
    from ..serve.catalog import served_specs
    from ..spec.errors import InputError, Problem
    from ..spec.model import TableSpec

    stage, specs = served_specs(root, stage_name, given)
    if stage.emulator and not os.environ.get(EMULATOR_ENV):
        raise InputError([Problem.about(stage.file, "emulator",
                                        f"stage {stage.name!r} targets the emulator: set "
                                        f"{EMULATOR_ENV}=127.0.0.1:<port> "
                                        f"(`ddb2bigtable up --stage {stage.name} --keep-running` prints it)")])
    project = stage.gcp_project or DEFAULT_PROJECT
    folders: dict[tuple[str, str], tuple[TableSpec, Path, dict[str, str]]] = {}
    names = []
    for spec, instance in zip(specs, plan_stage(stage, specs).instances, strict=True):
        for table in spec.tables:
            state = root / WORK_DIR / stage.name / instance.id / table.id / STATE_FILE
            folders[instance.id, table.id] = (table, state, LoadState.open(state, "", target(
                project, instance.id, table.id))[0].table_types)
            names.append(table.source.table)
    with quiet_connection_warning():
        records = asyncio.run(_records(project, list(folders)))
    types = {table_id: held_by_table(table, folder, records[instance_id, table_id], state, instance_id)
             for (instance_id, table_id), (table, state, folder) in folders.items()}
    return project, types, names


async def _records(project: str, tables: list[tuple[str, str]]) -> dict[tuple[str, str], dict[str, str]]:
    """Each table's record of its types (bigtable/table_types.py), read before serving: the
    authority, with or without a work folder beside serve (Cloud Run has none)."""
    from google.cloud.bigtable.data import BigtableDataClientAsync

    from ..bigtable.table_types import read_types

    async with BigtableDataClientAsync(project=project) as client:
        return {(instance_id, table_id): await read_types(client, instance_id, table_id)
                for instance_id, table_id in tables}


def start_beside(root: Path, stage: str, emulator: str, specs: list[str] | None = None) -> tuple[int, str, Path]:
    """`serve` for an emulator stage (with `specs` instead of its list, when given) in the
    background, beside the emulator `up --keep-running` leaves: a process in a session of
    its own (it outlives this command, as the emulator does) on a free loopback port, its
    output in .ddb2bigtable/<stage>/serve.log (owner only). (pid, endpoint_url, log);
    ServiceError with the log when it does not listen."""
    import subprocess
    import sys

    from ..bigtable.emulator import EMULATOR_ENV, EmulatorError, free_port, wait_for_port
    from ..load.local_stage import WORK_DIR
    from ..load.work_folder import private_dir
    from ..spec.errors import ServiceError

    port = free_port()
    log_path = private_dir(root / WORK_DIR / stage) / "serve.log"
    log = os.fdopen(os.open(log_path, os.O_WRONLY | os.O_CREAT | os.O_APPEND | os.O_NOFOLLOW, 0o600), "ab")
    with log:
        given = [str(Path(spec).resolve()) for spec in specs or ()]
        process = subprocess.Popen([sys.executable, "-m", "ddb2bigtable", "serve", "--stage", stage, "--root",
                                    str(root), "--port", str(port), *given], stdin=subprocess.DEVNULL, stdout=log,
                                   stderr=log, env={**os.environ, EMULATOR_ENV: emulator}, start_new_session=True)
    try:
        wait_for_port("127.0.0.1", port, 60.0, process, "serve")
    except EmulatorError as error:
        process.kill()
        said = log_path.read_text(errors="replace").strip().splitlines()[-5:]
        raise ServiceError("\n".join([f"{error}; its output is in {log_path}", *said])) from None
    return process.pid, f"http://127.0.0.1:{port}", log_path
