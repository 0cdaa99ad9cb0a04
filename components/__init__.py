"""Pulumi ComponentResources: a plan in, pulumi-gcp resources out, no decisions.

Every value here comes from `ddb2bigtable.plan` (or, for the CI pipeline's own identity,
from the caller's typed arguments); the only logic is translation into provider arguments
(string enums, durations, protection flags, principals). Rules live in the engine.
"""

from .ci_identity import CiIdentity, CiIdentityArgs
from .instance import BigtableInstance
from .load_job import LoadJob, launch_loads
from .monitoring import BigtableMonitoring
from .serve import ServeService
from .source_drift import warn_on_source_drift
from .table import BigtableTable, gc_rules_json

__all__ = ["BigtableInstance", "BigtableMonitoring", "BigtableTable", "CiIdentity", "CiIdentityArgs", "LoadJob",
           "ServeService", "gc_rules_json", "launch_loads", "warn_on_source_drift"]
