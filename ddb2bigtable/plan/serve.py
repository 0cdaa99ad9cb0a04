"""Stage -> `serve` on Cloud Run: the service, its identity, its size and who may call it.

The stage's `serve:` setting (spec/serve_settings.py) says what the platform engineer
chose; this module fills in what follows from the rest of the plan and says why:

- a service per region, each serving every table of every spec the stage lists (`serve
  --stage S` serves exactly those): by default in the region of the first instance's
  home cluster, with `regions: all` in every region the stage has a cluster in, so an
  application in each region reaches a nearby endpoint, and that endpoint's reads (the
  `serving` profile routes to the nearest cluster) cross no region;
- its own service account with `roles/bigtable.user` on the stage's instances and nothing
  else (data reads and writes, no admin), so the endpoint's rights are reviewable;
- one worker process per vCPU (serve is Python: a process per core uses the cores);
- IAM signing: Cloud Run checks a Google ID token and `serve --unsigned` trusts it; keys
  signing: Cloud Run's IAM check is off and serve checks every SigV4 signature against
  key pairs Cloud Run puts in its environment from Secret Manager, so the secret never
  passes through the plan or Pulumi's state; never `allUsers`.
"""

from __future__ import annotations

import re

from ..spec.ids import sanitize_label_value
from ..spec.stage import Stage
from .app_profiles import LOAD_PROFILE
from .model import InstancePlan, PlanWarning, ServePlan
from .serve_alerts import serve_alerts

# The variable serve reads its key pairs from (serve/signatures.KEYS_ENV; the plan may not
# import serve, so tests/components/test_serve.py keeps the two equal).
KEYS_ENV = "DDB2BIGTABLE_SERVE_KEYS"
SERVING_PROFILE = "serving"
PORT = 8080  # Cloud Run's default container port, given explicitly: Cloud Run expands no $PORT in args
SERVICE_NAME_MAX = 49  # Cloud Run service names: a-z, 0-9, '-', at most 49 characters
ACCOUNT_ID_MAX = 30  # service account ids: 6-30 characters, a-z, 0-9, '-'


def _name(prefix: str, stage: str, limit: int) -> str:
    """`prefix-stage` in the characters GCP names allow, cut to `limit`, never ending in '-'."""
    text = re.sub(r"[^a-z0-9-]+", "-", f"{prefix}-{stage}".lower())
    return text[:limit].rstrip("-")


def _home_region(instance: InstancePlan) -> str:
    """The region of the cluster the load profile targets: the first table's home region."""
    load = next((p for p in instance.app_profiles if p.id == LOAD_PROFILE), None)
    home = next((c for c in instance.clusters if load is not None and c.id in load.cluster_ids), instance.clusters[0])
    return home.gcp_region


def _regions(choice: str | tuple[str, ...], instances: tuple[InstancePlan, ...]) -> tuple[str, ...]:
    """`home`: the first instance's home region; `all`: every cluster's region, home first."""
    if isinstance(choice, tuple):
        return choice
    home = _home_region(instances[0])
    if choice == "home":
        return (home,)
    return tuple(dict.fromkeys([home, *(c.gcp_region for i in instances for c in i.clusters)]))


def _public_hosts(service: str, regions: tuple[str, ...]) -> list[str]:
    """The names a client signs for when it calls the service (serve refuses a signature for
    another Host): Cloud Run's URLs, `SERVICE-PROJECT_NUMBER.REGION.run.app` and the older
    `SERVICE-HASH-REGION_CODE.a.run.app` (Google, "Invoke with an HTTPS request", service URL,
    https://cloud.google.com/run/docs/triggering/https-request, read 2026-11-29), whose
    number and hash the plan cannot know, as patterns (serve/protocol/signatures.py)."""
    return [flag for pattern in (*(f"{service}-*.{r}.run.app" for r in regions), f"{service}-*.a.run.app")
            for flag in ("--public-host", pattern)]


def _scope_flags(regions: tuple[str, ...], hosts: tuple[str, ...]) -> list[str]:
    """The stage's `serve.signing_regions` and `serve.public_hosts` as serve's flags."""
    return [*(f for r in regions for f in ("--signing-region", r)), *(f for h in hosts for f in ("--public-host", h))]


def plan_serve(stage: Stage, instances: tuple[InstancePlan, ...]) -> tuple[ServePlan | None, list[PlanWarning]]:
    """The stage's serve plan (None when `serve.enabled` is off) and what it warns about."""
    s = stage.serve
    if not s.enabled or not instances:
        return None, []
    local = stage.emulator
    regions = _regions(s.regions, instances)
    signing = s.signing if not local or s.signing == "keys" else "none"
    command = ["ddb2bigtable", "serve", "--stage", stage.name]
    service = _name("ddb2bigtable", stage.name, SERVICE_NAME_MAX)
    if not local:
        command += ["--host", "0.0.0.0", "--port", str(PORT), "--workers", str(s.cpu)]
        command += ["--unsigned"] if signing == "iam" else _public_hosts(service, regions)
    if signing != "iam":  # the spec refuses these settings behind IAM, where serve checks no signature
        command += _scope_flags(s.signing_regions, s.public_hosts)
    protected = True if stage.deletion_protection is None else stage.deletion_protection
    reasons = _reasons(stage, regions, signing) + _scope_reason(stage, signing)
    watched = stage.alerts.enabled and not local
    plan = ServePlan(
        where="local" if local else "cloud-run", service=service,
        project=stage.gcp_project, regions=regions, image=s.image or "", command=tuple(command), port=PORT,
        workers=s.cpu, cpu=s.cpu, startup_cpu_boost=not local,
        memory=s.memory, concurrency=s.concurrency, min_instances=s.min_instances, max_instances=s.max_instances,
        signing=signing, invokers=s.invokers if signing == "iam" else (), keys_env=KEYS_ENV,
        keys_secret=s.keys_secret if signing == "keys" else None, keys_secret_version=s.keys_secret_version,
        ingress=s.ingress, service_account_id=_name("serve", stage.name, ACCOUNT_ID_MAX),
        instances=tuple(i.id for i in instances), app_profile=SERVING_PROFILE, deletion_protection=protected,
        labels=(("managed-by", "ddb2bigtable"), ("stage", sanitize_label_value(stage.name))),
        why=(f"`ddb2bigtable serve` beside the emulator (`up --stage {stage.name} --keep-running`); no Cloud Run"
             if local else f"`ddb2bigtable serve` on Cloud Run in {', '.join(regions)}: every table of the stage's "
                           f"{len(instances)} instance(s), as the DynamoDB API"),
        reasons=reasons, alerts=serve_alerts(service, s.max_instances) if watched else (),
        alert_channels=stage.alerts.channels if watched else ())
    if local:
        return plan, []
    nobody = [PlanWarning("serve-no-invokers", instances[0].id, None,
                          "serve signs with iam and lists no invokers: only the project's owners, editors and Cloud "
                          "Run admins may call it; add the application's principal to serve.invokers")
              ] if signing == "iam" and not s.invokers else []
    return plan, nobody


def _reasons(stage: Stage, regions: tuple[str, ...], signing: str) -> tuple[tuple[str, str], ...]:
    s = stage.serve
    if stage.emulator:
        return (("listens", "on 127.0.0.1 at a free port, started by `up --keep-running`, which prints its "
                            "endpoint_url; only this machine reaches it"),
                ("signing", "SigV4 with the key pairs in DDB2BIGTABLE_SERVE_KEYS" if signing == "keys" else
                 "none: loopback only (Cloud Run IAM does not exist on a laptop)"))
    sized = {"home": "the first instance's home cluster's region",
             "all": "every region the stage has a cluster in, a service in each"}.get(str(s.regions),
                                                                                     "as the stage lists")
    scale = (f"{s.min_instances}-{s.max_instances} instances" + (" in each region" if len(regions) > 1 else "")
             + (": scales to zero, the first request after an idle spell waits for an instance to start"
                if s.min_instances == 0 else f": {s.min_instances} kept warm (billed while idle), no cold start"))
    who = {"iam": "Cloud Run checks each caller's Google ID token (header Authorization, or "
                  "X-Serverless-Authorization beside the SDK's SigV4 Authorization) and roles/run.invoker "
                  f"({', '.join(s.invokers) or 'nobody listed yet: grant it to the application'}); "
                  "serve runs --unsigned behind it",
           "keys": f"Cloud Run's IAM check is off; serve checks every request's SigV4 signature against the key "
                   f"pairs Cloud Run puts in {KEYS_ENV} from Secret Manager secret {s.keys_secret} "
                   f"(version {s.keys_secret_version}); the secret never enters the plan or Pulumi's state"}[signing]
    return (
        ("regions", f"{', '.join(regions)}: {sized}; each service's eventually consistent reads go to the "
                    f"nearest cluster"),
        ("instances", scale),
        ("size", f"{s.cpu} vCPU and {s.memory} per instance, {s.cpu} worker process(es) (one per vCPU: serve is "
                 f"Python); up to {s.concurrency} requests at once per instance; startup CPU boost on, since a "
                 f"request that starts an instance waits for serve to import and plan the stage (3.2 s to listen "
                 f"with one worker on this project's shared 2-core test machine, 2026-11-25; Google: "
                 f"https://cloud.google.com/run/docs/configuring/services/cpu, startup CPU boost)"),
        ("identity", "a service account of its own with roles/bigtable.user on the stage's instances only (data "
                     "reads and writes, no admin)" + (", and roles/secretmanager.secretAccessor on the key secret"
                                                      if signing == "keys" else "")),
        ("signing", f"{signing}: {who}"),
        ("app profile", f"{SERVING_PROFILE} for eventually consistent reads (multi-cluster, nearest cluster); "
                        f"ConsistentRead and writes through the txn-<region> profile of the table's home region, which "
                        f"the plan makes on every instance for serve (CheckAndMutateRow needs single-cluster routing)"),
        ("types", "attribute types come from the specs' declarations, and from the loads' work folder only if "
                  f"the image carries it (.ddb2bigtable/{stage.name}/): declare every attribute's type in the "
                  "mapping, or reads of undeclared ones fail"),
    )


def _scope_reason(stage: Stage, signing: str) -> tuple[tuple[str, str], ...]:
    """What a signature must be scoped to, where serve checks signatures."""
    s = stage.serve
    if signing == "iam" or not (signing == "keys" or s.signing_regions or s.public_hosts):
        return ()
    regions = (f", and {', '.join(s.signing_regions)} (serve.signing_regions: --signing-region)"
               if s.signing_regions else "")
    own = "127.0.0.1 and localhost with the port" if stage.emulator else "the service's Cloud Run URLs"
    hosts = f", and {', '.join(s.public_hosts)} (serve.public_hosts: --public-host)" if s.public_hosts else ""
    checked = f"with key pairs in {KEYS_ENV}, " if signing == "none" else ""
    return (("signed for", f"{checked}a credential scope in the AWS regions of the stage's tables{regions}; a Host of "
                           f"{own}{hosts}: serve refuses any other (another deployment's capture signed with a "
                           f"shared key pair). In the command as well as read from the stage by serve, so the "
                           f"deployed arguments show them and take effect without a rebuilt image"),)
