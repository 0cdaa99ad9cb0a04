"""The alerts that tell on-call the serve endpoint is failing its callers, from Cloud Run's
own request metric (no log-based metric to create):

- `serve-errors`: more than 1 % of requests answered 5xx for 5 minutes (serve answers a
  request it cannot serve with DynamoDB's 500 InternalServerError; Bigtable throttling is
  a 400 ProvisionedThroughputExceededException the SDKs retry, so it is not counted);
- `serve-turned-away`: more than 1 % answered 429 for 5 minutes, Cloud Run's answer when
  every one of `max_instances` is busy: the plan's ceiling is too low.

Both are ratios over every request of the service in all its regions, the threshold the
instances' `errors` alert uses. The metric and its labels (`response_code`,
`response_code_class`; resource `cloud_run_revision` with `service_name`) are Google's:
<https://cloud.google.com/monitoring/api/metrics_gcp_p_z> (run.googleapis.com) and
<https://cloud.google.com/run/docs/monitoring> (read 2026-11-25).
"""

from __future__ import annotations

from .model import AlertPlan
from .operations import ERROR_RATIO

RUN_RESOURCE = "cloud_run_revision"
RUN_REQUESTS = "run.googleapis.com/request_count"
HELD_SECONDS = 300

# What each alert means and what to do (the plan's notes, the policies' documentation).
SERVE_MEANING: dict[str, str] = {
    "serve-errors": "more than 1 % of the endpoint's requests fail with a 5xx: read serve's log in Cloud Run (a "
                    "500 names its cause); Bigtable unreachable or a revision that does not start are the usual ones",
    "serve-turned-away": "more than 1 % of requests turned away with 429: every instance up to max_instances is "
                         "busy; raise serve.max_instances (or concurrency), after checking Bigtable's CPU has room",
}


def _requests(service: str, which: str = "") -> str:
    return (f'metric.type="{RUN_REQUESTS}" AND resource.type="{RUN_RESOURCE}" '
            f'AND resource.labels.service_name="{service}"' + which)


def serve_alerts(service: str, max_instances: int) -> tuple[AlertPlan, ...]:
    """The endpoint's two alert policies, ids stable across plans (`<service>-errors`, ...)."""
    every = _requests(service)
    return (
        AlertPlan(f"{service}-errors", "serve-errors", RUN_RESOURCE, RUN_REQUESTS,
                  _requests(service, ' AND metric.labels.response_code_class="5xx"'), ERROR_RATIO, HELD_SECONDS,
                  "CRITICAL", f"callers of {service} get errors: {SERVE_MEANING['serve-errors']}",
                  denominator=every, aligner="ALIGN_RATE"),
        AlertPlan(f"{service}-turned-away", "serve-turned-away", RUN_RESOURCE, RUN_REQUESTS,
                  _requests(service, ' AND metric.labels.response_code="429"'), ERROR_RATIO, HELD_SECONDS,
                  "WARNING", f"{service} runs at its ceiling of {max_instances} instances per region: "
                             f"{SERVE_MEANING['serve-turned-away']}",
                  denominator=every, aligner="ALIGN_RATE"),
    )
