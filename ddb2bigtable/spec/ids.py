"""Bigtable's naming rules, in one place, so the loader and the planner agree.

Sources (read 2026-11-21): Bigtable admin API reference for Instance, Cluster, Table,
ColumnFamily and AppProfile (`cloud.google.com/bigtable/docs/reference/admin/rpc`);
GCP label rules (`cloud.google.com/resource-manager/docs/labels-overview`).
"""

from __future__ import annotations

import re

INSTANCE_ID = re.compile(r"^[a-z][a-z0-9-]{4,31}[a-z0-9]$")  # 6-33 chars
CLUSTER_ID = re.compile(r"^[a-z][a-z0-9-]{4,28}[a-z0-9]$")  # 6-30 chars
TABLE_ID = re.compile(r"^[_a-zA-Z0-9][-_.a-zA-Z0-9]{0,49}$")  # 1-50 chars
FAMILY_NAME = re.compile(r"^[_a-zA-Z0-9][-_.a-zA-Z0-9]{0,63}$")  # 1-64 chars
APP_PROFILE_ID = re.compile(r"^[_a-zA-Z0-9][-_.a-zA-Z0-9]{0,49}$")  # 1-50 chars
VIEW_ID = re.compile(r"^[_a-zA-Z0-9][-_.a-zA-Z0-9]{0,127}$")  # materialized views
LABEL_KEY = re.compile(r"^[a-z][a-z0-9_-]{0,62}$")
LABEL_VALUE = re.compile(r"^[a-z0-9_-]{0,63}$")
MAX_LABELS = 64

RULES: dict[str, tuple[re.Pattern[str], str]] = {
    "instance": (INSTANCE_ID, "6-33 characters: lowercase letter first, then a-z, 0-9 or '-', not ending in '-'"),
    "cluster": (CLUSTER_ID, "6-30 characters: lowercase letter first, then a-z, 0-9 or '-', not ending in '-'"),
    "table": (TABLE_ID, "1-50 characters of a-z, A-Z, 0-9, '_', '-', '.', not starting with '-' or '.'"),
    "family": (FAMILY_NAME, "1-64 characters of a-z, A-Z, 0-9, '_', '-', '.', not starting with '-' or '.'"),
    "app_profile": (APP_PROFILE_ID, "1-50 characters of a-z, A-Z, 0-9, '_', '-', '.', not starting with '-' or '.'"),
    "view": (VIEW_ID, "1-128 characters of a-z, A-Z, 0-9, '_', '-', '.', not starting with '-' or '.'"),
}


def id_problem(kind: str, value: str) -> str | None:
    """The rule `value` breaks as a `kind` id, or None when it is valid."""
    pattern, rule = RULES[kind]
    if pattern.match(value):
        return None
    return f"{value!r} is not a valid Bigtable {kind.replace('_', ' ')} id: {rule}"


def sanitize_label_key(key: str) -> str:
    """A GCP label key for a DynamoDB tag key (tags allow spaces, capitals, '+=.:/@')."""
    clean = re.sub(r"[^a-z0-9_-]", "_", key.lower())
    if not clean or not clean[0].isalpha():
        clean = "t" + clean
    return clean[:63]


def sanitize_label_value(value: str) -> str:
    return re.sub(r"[^a-z0-9_-]", "_", value.lower())[:63]


def cluster_id(instance_id: str, zone: str) -> str:
    """`<instance>-<zone>`, the instance part cut so the whole fits 30 characters.

    Zones are unique within an instance, so the ids are unique; the zone makes a cluster
    recognisable in the console without a lookup.
    """
    room = 30 - len(zone) - 1
    prefix = instance_id[:room].rstrip("-")
    return f"{prefix}-{zone}" if prefix else zone
