"""Before a load starts: Bigtable answers, the table exists and holds the mapping's families.

Without this, a missing table or a stopped emulator showed up as thousands of failed
rows and "rerun the load" (which fixes neither) after the client's retries gave up, up to
two minutes later, and a missing table's rows were first counted as loaded. One admin
call with a short deadline tells the cause and the fix in seconds (exit 2: the target,
not the data, is wrong). The same goes for a counter family created as a plain one (by
an older plan): every AddToCell would fail, and the emulator answers that with UNKNOWN,
which the client retries for minutes.
"""

from __future__ import annotations

import os

from google.api_core import exceptions
from google.auth.exceptions import DefaultCredentialsError
from google.cloud.bigtable import Client
from google.cloud.bigtable_admin_v2.types import Type

from ..plan.model import INT64_SUM
from ..spec.errors import InputError, Problem
from ..spec.families import counter_families, family_names
from ..spec.model import TableSpec
from .deadlines import admin_retry
from .emulator import EMULATOR_ENV

DEADLINE_SECONDS = 15.0  # Bigtable in the cloud: a new connection, maybe a token to fetch first
EMULATOR_DEADLINE_SECONDS = 5.0  # an emulator on this machine answers in milliseconds


def family_kind(value_type: Type) -> str | None:
    """A family's type as the plan names it: None (plain), `int64_sum`, or the aggregate's
    own name for kinds the plan never makes (max, min, hllpp)."""
    if "aggregate_type" not in value_type:
        return None
    aggregate = value_type.aggregate_type
    kind = next(k for k in ("sum", "min", "max", "hllpp_unique_count") if k in aggregate)
    return INT64_SUM if kind == "sum" and "int64_type" in aggregate.input_type else f"aggregate {kind}"


def check_target(project: str, instance_id: str, table: TableSpec) -> None:
    """InputError naming the cause and the fix, unless the table is there with its families."""
    endpoint = os.environ.get(EMULATOR_ENV)
    where = f"the Bigtable emulator at {endpoint}" if endpoint else f"Bigtable (project {project})"
    name = f"projects/{project}/instances/{instance_id}/tables/{table.id}"
    deadline = EMULATOR_DEADLINE_SECONDS if endpoint else DEADLINE_SECONDS
    try:
        admin = Client(project=project, admin=True).table_admin_client
        found = admin.get_table(request={"name": name, "view": "SCHEMA_VIEW"}, timeout=deadline,
                                retry=admin_retry(deadline))
    except DefaultCredentialsError:
        raise _problem(table, f"no Google credentials to reach {where}: run `gcloud auth application-default "
                              f"login`, or set GOOGLE_APPLICATION_CREDENTIALS to a service account key file "
                              f"(or {EMULATOR_ENV} for the emulator)") from None
    except exceptions.NotFound:
        raise _problem(table, f"table {instance_id}/{table.id} does not exist on {where}: create it with "
                              f"`load --create-tables` (or `pulumi up` for a cloud stage)") from None
    except exceptions.PermissionDenied as error:
        raise _problem(table, f"not allowed to read table {instance_id}/{table.id} on {where} ({error.message}): "
                              f"the load's identity needs roles/bigtable.user on the instance") from None
    except (exceptions.ServiceUnavailable, exceptions.DeadlineExceeded, exceptions.RetryError) as error:
        fix = ("start it (`bash scripts/local-servers.sh start`, or `ddb2bigtable up --stage local "
               f"--keep-running`) or point {EMULATOR_ENV} at the running one") if endpoint \
            else "check the network and the project"
        raise _problem(table, f"cannot reach {where} within {deadline:.0f} s "
                              f"({type(error).__name__}): {fix}") from None
    missing = [f for f in family_names(table) if f not in found.column_families]
    if missing:
        raise _problem(table, f"table {instance_id}/{table.id} on {where} lacks the column families "
                              f"{', '.join(missing)} that the mapping writes: `load --create-tables` adds them")
    counters = counter_families(table)
    for name in family_names(table):
        kind, needed = family_kind(found.column_families[name].value_type), INT64_SUM if name in counters else None
        if kind != needed:
            raise _problem(table, f"family {name} of {instance_id}/{table.id} on {where} is {kind or 'a plain family'}"
                                  f", the mapping needs {needed or 'a plain family'}"
                                  f"{' (it holds counters)' if needed else ''}; Bigtable cannot convert a family's "
                                  f"type: delete the family (`cbt deletefamily {table.id} {name}`), then "
                                  f"`load --create-tables` creates it anew")


def _problem(table: TableSpec, message: str) -> InputError:
    where = table.location
    return InputError([Problem.at(where, "spec", f"tables.{table.id}", message)])
