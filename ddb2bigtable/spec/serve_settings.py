"""The stage's `serve:` setting: whether and how `pulumi up` deploys `ddb2bigtable serve`
to Cloud Run, and the checks only the combination of its fields can break.

Typed inputs with safe defaults, as Google's cloud-foundation-fabric modules take them:
off unless `enabled: true`; once on, callers are authenticated by Cloud Run IAM (the
invoker role, granted only to the principals listed) unless the stage chooses SigV4 key
pairs from Secret Manager; `signing: none` (whoever reaches the port may read and write)
only on the emulator stage. The schema (stage-v1.schema.json, `serve`) checks each field
alone; `serve_problems` checks them together.

Cloud Run's figures (read 2026-11-25):
- memory 512 MiB by default, 512 MiB at least (second generation), 32 GiB at most; more
  than 4/8/16/24 GiB needs 2/4/6/8 vCPUs:
  <https://cloud.google.com/run/docs/configuring/services/memory-limits>
- CPU 1 by default; 4 vCPUs need 2 GiB, 6 and 8 need 4 GiB:
  <https://cloud.google.com/run/docs/configuring/services/cpu>
- concurrency 80 requests per instance by default, 1,000 at most:
  <https://cloud.google.com/run/docs/about-concurrency>
- no maximum of instances by default but the region's CPU and memory quota, hence a
  default here: <https://cloud.google.com/run/docs/configuring/max-instances-limits>

An image reference or an invoker longer than LONGEST_TEXT is refused: the distribution
spec lets clients limit a repository name with its registry host to 255 characters and a
tag to 128 (a digest is 71),
<https://github.com/opencontainers/distribution-spec/blob/main/spec.md#pulling-manifests>,
and an e-mail address, a principal's longest part, is at most 254 (RFC 5321, 4.5.3.1.3;
both read 2026-11-25); the schema's patterns alone let 100 KB through into the plan.

`signing_regions` and `public_hosts` widen what a SigV4 signature may be scoped to (serve
refuses a credential scope of another region and a Host it does not answer as, issue 43):
they matter only where serve checks signatures, so with `signing: iam` outside the emulator
(serve runs `--unsigned` behind Cloud Run's check) they are refused as settings that do nothing.
A public host is a Host header value, `name[:port]`, as clients send it; a `*` stands for one
run of letters, digits and `-` (serve/protocol/signatures.py) and must leave at least two
labels of the name after it, so `*.example.com` is a subdomain pattern and `*.com` is refused.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal

from .checks import region_problem
from .errors import Problem, clip
from .yaml_source import JsonPath

MIB_PER_GIB = 1024
MIN_MEMORY_MIB = 512
MAX_MEMORY_MIB = 32 * MIB_PER_GIB
# (memory above this many MiB, the vCPUs it needs), largest first
CPUS_FOR_MEMORY = ((24 * MIB_PER_GIB, 8), (16 * MIB_PER_GIB, 6), (8 * MIB_PER_GIB, 4), (4 * MIB_PER_GIB, 2))
MEMORY_FOR_CPUS = {4: 2 * MIB_PER_GIB, 6: 4 * MIB_PER_GIB, 8: 4 * MIB_PER_GIB}  # vCPUs -> MiB at least
_MEMORY = re.compile(r"^([1-9][0-9]*)(Mi|Gi)$")
_MEMORY_DIGITS = 9  # more is far past Cloud Run's 32Gi (and Python will not read 4,300 digits as a number)
LONGEST_TEXT = 512
# A Host header value: a DNS name (labels of letters, digits, '-' and '*'), an IPv4 address or a
# bracketed IPv6 one, then an optional port; the name 253 characters at most (RFC 1035, 2.3.4)
_HOST = re.compile(r"^(?:(?:[a-z0-9*](?:[a-z0-9*-]{0,61}[a-z0-9*])?\.)*[a-z0-9*](?:[a-z0-9*-]{0,61}[a-z0-9*])?"
                   r"|\[[0-9a-f:.]+\])(?::(?P<port>[0-9]{1,5}))?$")
_LONGEST_HOST = 253 + len(":65535")

Signing = Literal["iam", "keys", "none"]


@dataclass(frozen=True)
class ServeSettings:
    """`serve:` of a stage; the defaults are what a stage that says only `enabled: true` gets."""

    enabled: bool = False
    image: str | None = None  # the container image with ddb2bigtable and this project's stacks/ and specs/
    regions: str | tuple[str, ...] = "home"  # home | all (every cluster's region) | GCP regions: a service in each
    min_instances: int = 0  # scale to zero: nothing paid while idle, a cold start on the first request
    max_instances: int = 10  # caps the bill and the load a runaway client puts on Bigtable
    cpu: int = 1
    memory: str = "512Mi"
    concurrency: int = 80
    signing: Signing = "iam"
    invokers: tuple[str, ...] = ()  # signing iam: principals given roles/run.invoker
    keys_secret: str | None = None  # signing keys: the Secret Manager secret holding the key pairs
    keys_secret_version: str = "latest"
    ingress: Literal["all", "internal", "internal-and-cloud-load-balancing"] = "all"
    signing_regions: tuple[str, ...] = ()  # AWS regions a signature may name besides the tables' own
    public_hosts: tuple[str, ...] = ()  # Host values clients send besides Cloud Run's URLs: custom domains


def serve_settings(data: dict[str, Any]) -> ServeSettings:
    """The settings of a schema-valid `serve:` mapping."""
    fields = dict(data)
    if isinstance(fields.get("regions"), list):
        fields["regions"] = tuple(fields["regions"])
    for key in ("invokers", "signing_regions"):
        if key in fields:
            fields[key] = tuple(fields[key])
    if "public_hosts" in fields:
        fields["public_hosts"] = tuple(h.lower() for h in fields["public_hosts"])  # Host is case-insensitive
    if "keys_secret_version" in fields:
        fields["keys_secret_version"] = str(fields["keys_secret_version"])
    return ServeSettings(**fields)


def memory_mib(text: str) -> int:
    """`512Mi` -> 512, `2Gi` -> 2048 (the schema admits only these two units)."""
    match = _MEMORY.match(text)
    if match is None:
        raise ValueError(f"memory {text!r} is not a number of Mi or Gi")
    digits = match.group(1)
    number = int(digits) if len(digits) <= _MEMORY_DIGITS else 10**_MEMORY_DIGITS
    return number * (MIB_PER_GIB if match.group(2) == "Gi" else 1)


def serve_problems(data: dict[str, Any], emulator: bool, problem: Callable[[JsonPath, str], Problem]
                   ) -> list[Problem]:
    """What the fields of a schema-valid `serve:` mapping break together; `problem(path, message)`
    locates a message at a key under `serve`."""
    s = serve_settings(data)
    out: list[Problem] = []
    if s.signing == "none" and not emulator:
        out.append(problem(("signing",), "signing: none lets whoever reaches the service read and write every "
                                         "table; it is for the emulator stage only (emulator: true). Use iam "
                                         "(Cloud Run checks the caller's identity: list them in invokers) or keys "
                                         "(SigV4 key pairs from Secret Manager: keys_secret)"))
    if s.signing == "keys" and s.keys_secret is None:
        out.append(problem(("signing",), "signing: keys needs keys_secret: the Secret Manager secret whose value "
                                         "is ACCESS_KEY_ID:SECRET[,...] (serve reads it as DDB2BIGTABLE_SERVE_KEYS)"))
    for key, wanted in (("keys_secret", "keys"), ("keys_secret_version", "keys"), ("invokers", "iam")):
        if key in data and s.signing != wanted:
            out.append(problem((key,), f"{key} applies to signing: {wanted} only, and this stage signs with "
                                       f"{s.signing}: remove it or set signing: {wanted}"))
    if s.enabled and not emulator and s.image is None:
        out.append(problem(("enabled",), "serve.enabled needs serve.image: the container image Cloud Run runs "
                                         "(ddb2bigtable installed, this project's stacks/ and specs/ in its working "
                                         "directory; see docs/serve.md, 'Deploying serve')"))
    if s.min_instances > s.max_instances:
        out.append(problem(("min_instances",), f"min_instances {s.min_instances} is above max_instances "
                                               f"{s.max_instances}: raise max_instances or lower min_instances"))
    for key, values in (("image", [s.image or ""]), ("invokers", list(s.invokers))):
        if any(len(v) > LONGEST_TEXT for v in values):
            out.append(problem((key,), f"{key} holds a value of more than {LONGEST_TEXT} characters, longer than "
                                       f"any image reference or principal: check it"))
    out += _size_problems(s, data, problem)
    return out + _scope_problems(s, data, emulator, problem)


def _scope_problems(s: ServeSettings, data: dict[str, Any], emulator: bool,
                    problem: Callable[[JsonPath, str], Problem]) -> list[Problem]:
    """`signing_regions` and `public_hosts`: each value one a signature can name (module doc)."""
    out: list[Problem] = []
    for key in ("signing_regions", "public_hosts"):
        if key in data and s.signing == "iam" and not emulator:
            out.append(problem((key,), f"{key} applies where serve checks SigV4 signatures (signing: keys); with "
                                       f"signing: iam Cloud Run checks callers and serve runs --unsigned: remove "
                                       f"it or set signing: keys"))
    for n, region in enumerate(s.signing_regions):
        if why := region_problem(region[:64]):
            out.append(problem(("signing_regions", n), f"{why}: name the AWS region the application's SDK signs "
                                                      f"for (its region_name)"))
    for n, host in enumerate(s.public_hosts):
        if why := _host_problem(host):
            out.append(problem(("public_hosts", n), f"{clip(host, 80)!r} {why}"))
    return out


def _host_problem(host: str) -> str | None:
    """Why `host` (lower case) is not a Host header value a client of serve could send, or None."""
    if "://" in host or "/" in host:
        return ("is a URL; give the name clients reach serve by as their Host header carries it, without "
                "scheme or path: api.example.com, or api.example.com:8443")
    found = _HOST.match(host) if len(host) <= _LONGEST_HOST else None
    if found is None or not 0 < int(found["port"] or 1) <= 65535:
        return ("is not a host name, IP address or [IPv6 address], with an optional :PORT (1-65535), of at most "
                f"{_LONGEST_HOST} characters: api.example.com")
    if "*" in host and host.split(":")[0].rsplit("*", 1)[1].count(".") < 2:
        return ("leaves less than two labels after its last '*', so it would match names nobody here owns: "
                "write the domain out, as in *.ddb.example.com")
    return None


def _size_problems(s: ServeSettings, data: dict[str, Any], problem: Callable[[JsonPath, str], Problem]
                   ) -> list[Problem]:
    """Cloud Run's bounds on memory and its pairing with CPU (figures in the module docstring)."""
    mib = memory_mib(s.memory)
    where = ("memory",) if "memory" in data else ("cpu",)
    if not MIN_MEMORY_MIB <= mib <= MAX_MEMORY_MIB:
        return [problem(("memory",), f"memory {clip(s.memory, 20)} is outside Cloud Run's 512Mi-32Gi; "
                                     f"give a value in that range")]
    needs_cpus = next((cpus for above, cpus in CPUS_FOR_MEMORY if mib > above), 1)
    if s.cpu < needs_cpus:
        return [problem(where, f"memory {s.memory} needs at least {needs_cpus} vCPUs on Cloud Run (cpu is {s.cpu}); "
                               f"raise cpu or lower memory")]
    needs_mib = MEMORY_FOR_CPUS.get(s.cpu, 0)
    if mib < needs_mib:
        return [problem(where, f"cpu {s.cpu} needs at least {needs_mib // MIB_PER_GIB}Gi of memory on Cloud Run "
                               f"(memory is {s.memory}); raise memory or lower cpu")]
    return []
