"""Pulumi ComponentResources: a plan in, pulumi-gcp resources out, no decisions.

Every value here comes from `ddb2bigtable.plan`; the only logic is translation into
provider arguments (string enums, durations, protection flags). Rules live in the engine.
"""

from .instance import BigtableInstance
from .load_job import LoadJob, launch_loads
from .monitoring import BigtableMonitoring
from .serve import ServeService
from .source_drift import warn_on_source_drift
from .table import BigtableTable, gc_rules_json

__all__ = ["BigtableInstance", "BigtableMonitoring", "BigtableTable", "LoadJob", "ServeService", "gc_rules_json",
           "launch_loads", "warn_on_source_drift"]
