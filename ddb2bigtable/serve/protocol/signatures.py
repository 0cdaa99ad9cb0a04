"""AWS Signature Version 4 checked on every request, against key pairs the operator gives.

An AWS SDK signs each request with the caller's access key and secret (AWS, "Signature
Version 4 signing process", https://docs.aws.amazon.com/IAM/latest/UserGuide/reference_sigv.html,
read 2026-11-25). With key pairs configured (KEYS_ENV: `ACCESS_KEY_ID:SECRET` pairs,
comma separated, from the environment so no secret is on a command line), serve computes
the same signature with botocore's own signer over the headers the request says it signed
and refuses, in DynamoDB's words, a request without one, with an unknown key, with another
signature, a body that does not match its signed hash, or a time more than 15 minutes off.
The application keeps its SDK: it only needs one of these key pairs as its credentials.
"""

from __future__ import annotations

import hashlib
import hmac
import re
from datetime import UTC, datetime, timedelta

from botocore.auth import SigV4Auth
from botocore.awsrequest import AWSRequest
from botocore.credentials import Credentials

from ..errors import ServeError

KEYS_ENV = "DDB2BIGTABLE_SERVE_KEYS"
SKEW = timedelta(minutes=15)  # DynamoDB's allowance between a request's time and its own
_AUTHORIZATION = re.compile(r"AWS4-HMAC-SHA256 Credential=([^/\s]+)/(\d{8})/([^/\s]+)/([^/\s]+)/aws4_request,\s*"
                            r"SignedHeaders=([a-z0-9;\-]+),\s*Signature=([0-9a-f]{64})")


def parse_keys(text: str) -> dict[str, str]:
    """`ID:SECRET,ID:SECRET` -> {id: secret}; ValueError saying what is wrong (never the secret)."""
    keys: dict[str, str] = {}
    for n, pair in enumerate(p.strip() for p in text.split(",")):
        key_id, sep, secret = pair.partition(":")
        if not sep or not key_id or not secret:
            raise ValueError(f"pair {n + 1} is not ACCESS_KEY_ID:SECRET")
        keys[key_id] = secret
    return keys


def _refused(name: str, message: str) -> ServeError:
    return ServeError(name, message, status=400 if name != "MissingAuthenticationTokenException" else 403)


def check(keys: dict[str, str], method: str, path: str, headers: dict[str, str], body: bytes,
          now: datetime | None = None) -> None:
    """Nothing when the request carries a valid signature by one of `keys`; else ServeError."""
    found = _AUTHORIZATION.fullmatch(headers.get("authorization", "").strip())
    if found is None:
        raise _refused("MissingAuthenticationTokenException", "Request is missing Authentication Token")
    key_id, day, region, service, signed, signature = found.groups()
    secret = keys.get(key_id)
    if secret is None:
        raise _refused("UnrecognizedClientException", "The security token included in the request is invalid.")
    stamp = headers.get("x-amz-date", "")
    try:
        when = datetime.strptime(stamp, "%Y%m%dT%H%M%SZ").replace(tzinfo=UTC)
    except ValueError:
        raise _refused("InvalidSignatureException", "X-Amz-Date is missing or not YYYYMMDDTHHMMSSZ") from None
    now = now or datetime.now(UTC)
    if abs(now - when) > SKEW or stamp[:8] != day:
        raise _refused("InvalidSignatureException", f"Signature expired: {stamp} is now earlier or later than "
                       f"{(now - SKEW):%Y%m%dT%H%M%SZ} to {(now + SKEW):%Y%m%dT%H%M%SZ}")
    names = signed.split(";")
    if "host" not in names or any(n not in headers for n in names):
        raise _refused("InvalidSignatureException", "the signed headers must include host and be present")
    claimed = headers.get("x-amz-content-sha256")
    if claimed is not None and claimed != hashlib.sha256(body).hexdigest():
        raise _refused("InvalidSignatureException", "the body does not match its signed X-Amz-Content-SHA256")
    request = AWSRequest(method=method, url=f"http://{headers['host']}{path}", data=body,
                         headers={n: headers[n] for n in names})
    request.context["timestamp"] = stamp
    signer = SigV4Auth(Credentials(key_id, secret), service, region)
    expected = signer.signature(signer.string_to_sign(request, signer.canonical_request(request)), request)
    if not hmac.compare_digest(expected, signature):
        raise _refused("InvalidSignatureException", "The request signature we calculated does not match the "
                       "signature you provided. Check your AWS Secret Access Key and signing method.")
