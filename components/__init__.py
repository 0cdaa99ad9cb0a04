"""Pulumi ComponentResources: a plan in, pulumi-gcp resources out, no decisions.

Every value here comes from `ddb2bigtable.plan`; the only logic is translation into
provider arguments (string enums, durations, protection flags). Rules live in the engine.
"""

from .instance import BigtableInstance
from .source_drift import warn_on_source_drift
from .table import BigtableTable, gc_rules_json

__all__ = ["BigtableInstance", "BigtableTable", "gc_rules_json", "warn_on_source_drift"]
