"""AWS endpoints as every command that talks to AWS takes them (`import aws://`, `replicate`,
`cutover check`): the `--endpoint-url` check, and the client settings that bound a call to
an endpoint that accepts connections and never answers. (A password in an endpoint URL is
kept out of every message by `errors.clip_message`, which every printed message goes
through.)

It lives in `spec`, beside the errors, because `sources` (import), `exports` (an export in
S3) and `replicate` all need it and share no other package. `call_aws` is the one mapping
of botocore's failures to the engine's errors: each caller gives its two error kinds (what
the user fixes, exit 2; what may pass on a rerun, exit 1) and its own reading of AWS's
error codes.

Bounds, per AWS call (boto3's own defaults are a 60 s connect and a 60 s read timeout,
each attempt retried, so a silent endpoint held a command for many minutes):
- a connection is given CONNECT_TIMEOUT_SECONDS, an answer READ_TIMEOUT_SECONDS
  (DynamoDB answers in milliseconds; a server silent for 10 s is not going to answer);
- an attempt that timed out is not tried again within the call: the caller decides
  (replicate waits the outage out, up to --outage-limit; the others stop with exit 1);
- a refused or reset connection is tried CONNECTION_ATTEMPTS times (botocore's backoff
  between: at most 1, 2 and 4 s), so a blip costs no round;
- throttling and 5xx answers keep botocore's "standard" retries (the caller's attempts).
So one call against a silent endpoint ends within READ_TIMEOUT_SECONDS (plus the
connect), against a refused one within about 7 s.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, TypeVar
from urllib.parse import urlsplit

from .errors import InputError, Problem, redact_userinfo

CONNECT_TIMEOUT_SECONDS = 5.0
READ_TIMEOUT_SECONDS = 10.0
CONNECTION_ATTEMPTS = 4  # a refused or reset connection: the first try and 3 retries
SET_CREDENTIALS = "set AWS_PROFILE, or AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY (boto3's credential chain)"
# A refused connection to this machine is an endpoint setting pointing at nothing (the local
# servers stopped), which the user fixes: bad input (exit 2), with how to start them.
LOCAL_SERVERS = "start the local servers: `bash scripts/local-servers.sh start` (from the repository's root)"
LOOPBACK = ("127.0.0.1", "localhost", "::1")
Answer = TypeVar("Answer")

def check_endpoint_url(value: str | None, command: str, option: str = "--endpoint-url") -> str | None:
    """`value` when it is an http(s) URL with a host, None when not given; an empty or
    malformed one is refused (InputError): boto3 takes an empty endpoint as none at all,
    so `--endpoint-url ""` (an unset variable in a script) would silently reach real AWS."""
    if value is None:
        return None
    if not _http_host(value):
        shown = redact_userinfo(value)[:200]
        raise InputError([Problem.about(command, option, f"{shown!r} is not an endpoint URL: give "
                                        f"http(s)://HOST[:PORT] (DynamoDB Local: http://127.0.0.1:8000), or leave "
                                        f"the option out for its AWS_ENDPOINT_URL_* variable, else AWS itself")])
    return value


def _http_host(value: str) -> str | None:
    """The URL's host when it is http(s), has a host and a port that is a number (or none)."""
    try:
        parts = urlsplit(value)
        port_ok = parts.port is None or parts.port > 0  # .port raises ValueError on "host:port"
    except ValueError:  # a bad port or IPv6 literal
        return None
    return parts.hostname if parts.scheme in ("http", "https") and port_ok else None


def client_config(attempts: int, **settings: Any) -> Any:
    """botocore's Config with the timeouts above and "standard" retries of `attempts`
    attempts (throttling, 5xx); `settings` adds others (max_pool_connections, user_agent_extra)."""
    from botocore.config import Config

    return Config(connect_timeout=CONNECT_TIMEOUT_SECONDS, read_timeout=READ_TIMEOUT_SECONDS,
                  retries={"mode": "standard", "max_attempts": attempts}, **settings)


def bounded_retries(client: Any) -> Any:
    """`client`, its retries of failed connections bounded as the module docstring says:
    a timed-out attempt ends the call, a refused or reset one is tried CONNECTION_ATTEMPTS
    times. botocore asks its `needs-retry` handlers in order and retries on the first
    answer; this one, asked first, ends the call by raising the attempt's own error."""
    from botocore.exceptions import ConnectionError as ConnectionFailed
    from botocore.exceptions import ConnectTimeoutError, HTTPClientError, ReadTimeoutError

    def give_up(attempts: int, caught_exception: Exception | None = None, **_: Any) -> None:
        if isinstance(caught_exception, (ReadTimeoutError, ConnectTimeoutError)):
            raise caught_exception
        if isinstance(caught_exception, (ConnectionFailed, HTTPClientError)) and attempts >= CONNECTION_ATTEMPTS:
            raise caught_exception

    client.meta.events.register_first("needs-retry", give_up)
    return client


def timed_out(error: Exception) -> bool:
    """A botocore error of an endpoint that did not answer (or connect) in time."""
    from botocore.exceptions import ConnectTimeoutError, ReadTimeoutError

    return isinstance(error, (ReadTimeoutError, ConnectTimeoutError))


@dataclass(frozen=True)
class AwsFailures:
    """How one command words the failures of its AWS calls. `bad_input` and `unavailable`
    make its two error kinds from a message (they add where: the URL or path); `client_error`
    makes its error for an AWS error code (operation, code, message); `unreachable` and
    `silent` say what to check when the endpoint refuses connections or does not answer."""

    bad_input: Callable[[str], Exception]
    unavailable: Callable[[str], Exception]
    client_error: Callable[[str, str, str], Exception]
    unreachable: str
    silent: str


def call_aws(operation: str, fn: Callable[[], Answer], failures: AwsFailures) -> Answer:
    """`fn()`, a call to AWS, its failures as the caller's errors: no credentials is bad
    input, and so is a loopback endpoint that refuses connections (the local servers are
    not running: LOCAL_SERVERS says how to start them); any other endpoint that refuses
    connections, does not answer in time (botocore's timeouts, or urllib3's while a
    streamed body is read) or fails otherwise is unavailable;
    an error code is the caller's to read. Never a botocore traceback."""
    from botocore.exceptions import (
        BotoCoreError,
        ClientError,
        EndpointConnectionError,
        NoCredentialsError,
        PartialCredentialsError,
    )
    from urllib3.exceptions import HTTPError
    from urllib3.exceptions import TimeoutError as StreamTimeout

    try:
        return fn()
    except (NoCredentialsError, PartialCredentialsError) as error:
        raise failures.bad_input(f"{operation}: {error}: {SET_CREDENTIALS}") from None
    except EndpointConnectionError as error:
        endpoint = redact_userinfo(str(error.kwargs.get("endpoint_url")))
        if urlsplit(endpoint).hostname in LOOPBACK:
            raise failures.bad_input(f"{operation}: cannot reach {endpoint}, nothing answers there: "
                                     f"{LOCAL_SERVERS}, or check the endpoint's port") from None
        raise failures.unavailable(f"{operation}: cannot reach {endpoint}: {failures.unreachable}") from None
    except ClientError as error:
        info = error.response.get("Error", {})
        raise failures.client_error(operation, str(info.get("Code", "")), str(info.get("Message", ""))) from None
    except (BotoCoreError, HTTPError, OSError) as error:
        said = redact_userinfo(str(error))
        if timed_out(error) or isinstance(error, (StreamTimeout, TimeoutError)):
            raise failures.unavailable(f"{operation}: no answer within {READ_TIMEOUT_SECONDS:g} s ({said}): "
                                       f"{failures.silent}") from None
        raise failures.unavailable(f"{operation} failed: {said}; rerun later") from None
