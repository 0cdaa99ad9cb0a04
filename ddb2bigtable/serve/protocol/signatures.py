"""AWS Signature Version 4 checked on every request, against key pairs the operator gives,
bound to this endpoint, to DynamoDB and to the request's operation.

An AWS SDK signs each request with the caller's access key and secret (AWS, "Signature
Version 4 signing process", https://docs.aws.amazon.com/IAM/latest/UserGuide/reference_sigv.html,
read 2026-11-25). With key pairs configured (KEYS_ENV: `ACCESS_KEY_ID:SECRET` pairs,
comma separated, from the environment so no secret is on a command line; a third field,
`ACCESS_KEY_ID:SECRET:SESSION_TOKEN`, names the `x-amz-security-token` a temporary key's
requests must carry, and a key without one refuses any), serve computes the same signature
with botocore's own signer over the headers the request says it signed.

A signature proves only what it covers, so serve requires it to cover what decides the
request (docs/security.md): `host`, `content-type` and every `x-amz-*` header the request
carries (`x-amz-target` names the operation: a GetItem signed without it could be replayed
as a DeleteItem), a credential scope of service `dynamodb` in a region the operator allows,
and a Host this endpoint answers as (two deployments sharing a key pair do not accept
each other's requests). Each refusal is DynamoDB's error and wording where DynamoDB has
one. Everything but the signature itself is decided from the headers before the body is
read (`admitted`), so a client without a key cannot make serve hold a 16 MB body; the
signature, which covers the body, is checked once it is in (`proven`), before it is parsed.
"""

from __future__ import annotations

import functools
import hashlib
import hmac
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta

from botocore.auth import SigV4Auth
from botocore.awsrequest import AWSRequest
from botocore.credentials import Credentials

from ..errors import ServeError

KEYS_ENV = "DDB2BIGTABLE_SERVE_KEYS"
SERVICE = "dynamodb"
SKEW = timedelta(minutes=15)  # DynamoDB's allowance between a request's time and its own
_AUTHORIZATION = re.compile(r"AWS4-HMAC-SHA256 Credential=([^/\s]+)/(\d{8})/([^/\s]+)/([^/\s]+)/aws4_request,\s*"
                            r"SignedHeaders=([a-z0-9;\-]+),\s*Signature=([0-9a-f]{64})")
ALWAYS_SIGNED = ("host", "content-type")  # with every x-amz-* header present


@dataclass(frozen=True)
class Signing:
    """What a request must be signed with: one of `keys` ({access key id: secret}), for a
    region of `regions`, addressed to a Host of `hosts` (lower case, `name` or `name:port`
    exactly as the client's Host header carries it)."""

    keys: dict[str, str]
    regions: frozenset[str]
    hosts: frozenset[str]  # a `*` in one stands for a run of letters, digits and '-' (no dot)
    tokens: dict[str, str] = field(default_factory=dict)  # {access key id: the session token it must carry}

    def answers_as(self, host: str) -> bool:
        return host in self.hosts or any(_pattern(h).fullmatch(host) for h in self.hosts if "*" in h)


@functools.cache
def _pattern(host: str) -> re.Pattern[str]:
    """`ddb2bigtable-dev-*.a.run.app` -> a regular expression: a Cloud Run URL's project
    number or hash is not known to the plan, the service's name is."""
    return re.compile("[a-z0-9-]+".join(re.escape(part) for part in host.split("*")))


def _entries(text: str) -> Iterator[tuple[str, str, str | None]]:
    """`ID:SECRET[:SESSION_TOKEN],...` -> (id, secret, token or None) each; ValueError saying
    which entry is wrong (never the secret). An AWS secret key or session token holds no
    ':' or ',' (base64 and '/', '+', '='), so the third field cannot be part of a secret."""
    for n, entry in enumerate(p.strip() for p in text.split(",")):
        fields = entry.split(":")
        if len(fields) not in (2, 3) or not all(fields):
            raise ValueError(f"pair {n + 1} is not ACCESS_KEY_ID:SECRET or ACCESS_KEY_ID:SECRET:SESSION_TOKEN")
        yield fields[0], fields[1], (fields[2] if len(fields) == 3 else None)


def parse_keys(text: str) -> dict[str, str]:
    """`ID:SECRET[:TOKEN],...` -> {id: secret}; ValueError saying what is wrong (never the secret)."""
    return {key_id: secret for key_id, secret, _ in _entries(text)}


def parse_tokens(text: str) -> dict[str, str]:
    """{id: the session token its requests must carry} for the keys configured with one."""
    return {key_id: token for key_id, _, token in _entries(text) if token is not None}


def answering_hosts(bind: str, port: int, public: Iterable[str]) -> frozenset[str]:
    """The Host values a client of this endpoint sends: the bind address with the port, the
    loopback names with the port (a client on the machine itself), and the public names the
    operator gives (`name` or `name:port`, as clients write them: Cloud Run's service URL
    carries no port)."""
    names = {bind, "localhost", "127.0.0.1", "[::1]"} if bind not in ("0.0.0.0", "::") else {"localhost", "127.0.0.1"}
    bracketed = {f"[{n}]" if ":" in n and not n.startswith("[") else n for n in names}
    return frozenset({f"{n}:{port}".lower() for n in bracketed} | {p.lower() for p in public})


def _refused(name: str, message: str) -> ServeError:
    return ServeError(name, message)


def _invalid(message: str) -> ServeError:
    return _refused("InvalidSignatureException", message)


@dataclass(frozen=True)
class Claim:
    """What a request's headers claim, checked as far as headers alone allow (`admitted`):
    the key, its scope, the time, the Host, what is signed. Only the signature itself is
    left, because it covers the body (`proven`)."""

    key_id: str
    secret: str
    region: str
    service: str
    stamp: str
    signature: str
    signed: dict[str, str]  # the signed headers, as sent


def admitted(signing: Signing, raw_headers: Iterable[tuple[bytes, bytes]], now: datetime | None = None) -> Claim:
    """The request's claim when its headers can carry a valid signature (module doc); else
    ServeError. Called before the body is read, so a client without a key cannot make serve
    hold a body (docs/security.md)."""
    headers: dict[str, str] = {}
    repeated: set[str] = set()
    for raw_name, raw_value in raw_headers:
        name = raw_name.decode("latin-1").lower()
        if name in headers:
            repeated.add(name)
        headers[name] = raw_value.decode("latin-1")
    authorization = headers.get("authorization")
    if authorization is None:
        raise _refused("MissingAuthenticationTokenException", "Request must contain a valid (registered) AWS "
                       "Access Key ID.")
    found = _AUTHORIZATION.fullmatch(authorization.strip())
    if found is None or "authorization" in repeated:
        raise _refused("IncompleteSignatureException", "Authorization header requires 'Credential', "
                       "'SignedHeaders' and 'Signature' parameters, once each (AWS4-HMAC-SHA256)")
    key_id, day, region, service, signed, signature = found.groups()
    secret = _secret(signing, key_id, region, service)
    stamp = headers.get("x-amz-date", "")
    try:
        when = datetime.strptime(stamp, "%Y%m%dT%H%M%SZ").replace(tzinfo=UTC)
    except ValueError:
        raise _invalid("X-Amz-Date is missing or not YYYYMMDDTHHMMSSZ") from None
    now = now or datetime.now(UTC)
    if abs(now - when) > SKEW or stamp[:8] != day:
        raise _invalid(f"Signature expired: {stamp} is now earlier or later than "
                       f"{(now - SKEW):%Y%m%dT%H%M%SZ} to {(now + SKEW):%Y%m%dT%H%M%SZ}")
    names = signed.split(";")
    _check_coverage(names, headers, repeated)
    host = headers["host"].lower()
    if not signing.answers_as(host):
        raise _invalid(f"the signed Host '{host[:100]}' is not a name this endpoint answers as: sign for the "
                       f"address the endpoint was given (serve --public-host names it)")
    _check_token(signing, key_id, headers.get("x-amz-security-token"))
    return Claim(key_id, secret, region, service, stamp, signature, {n: headers[n] for n in names})


def proven(claim: Claim, method: str, path: str, body: bytes) -> None:
    """Nothing when the claim's signature is the one its key makes over this request and
    body; else InvalidSignatureException."""
    claimed = claim.signed.get("x-amz-content-sha256")
    if claimed is not None and claimed != hashlib.sha256(body).hexdigest():
        raise _invalid("the body does not match its signed X-Amz-Content-SHA256")
    request = AWSRequest(method=method, url=f"http://{claim.signed['host']}{path}", data=body, headers=claim.signed)
    request.context["timestamp"] = claim.stamp
    signer = SigV4Auth(Credentials(claim.key_id, claim.secret), claim.service, claim.region)
    expected = signer.signature(signer.string_to_sign(request, signer.canonical_request(request)), request)
    if not hmac.compare_digest(expected, claim.signature):
        raise _invalid("The request signature we calculated does not match the signature you provided. "
                       "Check your AWS Secret Access Key and signing method.")


def check(signing: Signing, method: str, path: str, raw_headers: Iterable[tuple[bytes, bytes]], body: bytes,
          now: datetime | None = None) -> None:
    """Nothing when the request carries a valid signature that binds it (module doc); else ServeError."""
    proven(admitted(signing, raw_headers, now), method, path, body)


def _secret(signing: Signing, key_id: str, region: str, service: str) -> str:
    """The key's secret, once the credential scope is one this endpoint answers for."""
    if service != SERVICE:
        raise _invalid(f"Credential should be scoped to correct service: '{SERVICE}'. ")
    if region not in signing.regions:
        raise _invalid(f"Credential should be scoped to a valid region, not '{region[:64]}'. ")
    secret = signing.keys.get(key_id)
    if secret is None:
        raise _refused("UnrecognizedClientException", "The security token included in the request is invalid.")
    return secret


def _check_token(signing: Signing, key_id: str, token: str | None) -> None:
    """A key configured with a session token is answered only with that token, and one
    configured without any only without one, as AWS refuses temporary credentials whose
    token is wrong or missing (UnrecognizedClientException, the invalid token's words)."""
    wanted = signing.tokens.get(key_id)
    if token is None and wanted is None:
        return
    if token is None or wanted is None or not hmac.compare_digest(token.encode(), wanted.encode()):
        raise _refused("UnrecognizedClientException", "The security token included in the request is invalid.")


def _check_coverage(names: list[str], headers: dict[str, str], repeated: set[str]) -> None:
    """The signed headers are present, once each, and include every header that decides the
    request (ALWAYS_SIGNED and every x-amz-* one)."""
    if "host" not in names:
        raise _invalid("'Host' or ':authority' must be a 'SignedHeader' in the AWS Authorization.")
    for name in names:
        if name not in headers:
            raise _refused("IncompleteSignatureException",
                           f"'{name}' is named as a SignedHeader, but it does not exist in the HTTP request.")
    twice = sorted(n for n in repeated if n in names or n.startswith("x-amz-") or n in ALWAYS_SIGNED)
    if twice:
        raise _refused("IncompleteSignatureException", f"the header(s) {', '.join(twice)} appear more than once")
    unsigned = sorted(n for n in headers if (n in ALWAYS_SIGNED or n.startswith("x-amz-")) and n not in names)
    if unsigned:
        raise _invalid(f"There were headers present in the request which were not signed: {', '.join(unsigned)}")
