"""The AWS side of `import aws://REGION/TABLE`: boto3 clients for one region, and every call
turned into the engine's errors (never a botocore traceback).

Settings come the way boto3 takes them (the credential chain, `AWS_PROFILE`, and the
standard endpoint variables `AWS_ENDPOINT_URL_DYNAMODB`, `AWS_ENDPOINT_URL_CLOUDWATCH`,
`AWS_ENDPOINT_URL_APPLICATION_AUTO_SCALING`), plus `--endpoint-url` (DynamoDB) and
`--metrics-endpoint-url` (CloudWatch and Application Auto Scaling) on the command line,
so the same command runs against DynamoDB Local and moto. The region is the URL's.

A local rehearsal never reaches AWS by accident: when DynamoDB's endpoint is not an AWS
name (DynamoDB Local, moto) and CloudWatch's or Application Auto Scaling's would be AWS's
own (no endpoint was given for it), that service is not asked at all (`NotAsked`: the
import says so and keeps its estimates), so credentials in the shell never query the real
account for a table that lives on this machine.

What the user can fix is `InputError` (exit 2): no or rejected credentials, a missing
permission, an unknown table. What may pass on a rerun is `ServiceError` (exit 1):
throttling after botocore's retries, an endpoint that does not answer (within the
timeouts of spec/aws_endpoints.py), a server error.
An operation the endpoint does not implement (DynamoDB Local has no tags or backups) is
`Unsupported`, which the readers turn into a warning and an estimate.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from ...spec.aws_endpoints import AwsFailures, bounded_retries, call_aws, check_endpoint_url, client_config
from ...spec.errors import EXIT_BAD_INPUT, Ddb2BigtableError, InputError, Problem, ServiceError, redact_userinfo

DEFAULT_DAYS = 14
_DENIED = {"AccessDeniedException", "AccessDenied", "UnauthorizedOperation"}
_CREDENTIALS = {"UnrecognizedClientException", "InvalidClientTokenId", "ExpiredTokenException", "ExpiredToken",
                "InvalidSignatureException", "SignatureDoesNotMatch", "MissingAuthenticationToken",
                "IncompleteSignature", "AuthFailure"}
_THROTTLED = {"ThrottlingException", "Throttling", "LimitExceededException", "RequestLimitExceeded",
              "ProvisionedThroughputExceededException", "TooManyRequestsException", "RequestThrottled"}
_UNSUPPORTED = {"UnknownOperationException", "UnsupportedOperation", "NotImplemented", "InvalidAction"}


@dataclass(frozen=True)
class LiveOptions:
    """What the command line adds to a live source."""

    days: int = DEFAULT_DAYS                 # CloudWatch window
    endpoint_url: str | None = None          # DynamoDB; None: boto3's (AWS_ENDPOINT_URL_DYNAMODB, else AWS)
    metrics_endpoint_url: str | None = None  # CloudWatch and Application Auto Scaling

    def __post_init__(self) -> None:  # "" would mean AWS itself to boto3: refused (spec/aws_endpoints.py)
        check_endpoint_url(self.endpoint_url, "import")
        check_endpoint_url(self.metrics_endpoint_url, "import", "--metrics-endpoint-url")


class Unsupported(ServiceError):
    """The endpoint does not implement this operation (DynamoDB Local: tags, backups)."""


class NotAsked(Unsupported):
    """A metrics service left alone: DynamoDB is local and this service's endpoint would be AWS's."""


AWS_DOMAINS = (".amazonaws.com", ".amazonaws.com.cn", ".api.aws")  # AWS's endpoint names (botocore's endpoints)
METRICS_VARIABLES = {"cloudwatch": "AWS_ENDPOINT_URL_CLOUDWATCH",
                     "application-autoscaling": "AWS_ENDPOINT_URL_APPLICATION_AUTO_SCALING"}


def is_aws(endpoint: str) -> bool:
    """An endpoint URL on one of AWS's own names."""
    from urllib.parse import urlsplit

    host = (urlsplit(endpoint).hostname or "").lower().rstrip(".")
    return host.endswith(AWS_DOMAINS) or host in ("amazonaws.com", "api.aws")


class Denied(Ddb2BigtableError):
    """The credentials may not call this operation; for optional calls, a warning."""

    exit_code = EXIT_BAD_INPUT


def _refuse_nonsense(client: Any, url: str) -> None:
    """Make a success answer that is not AWS's kind of body a `ServiceError` naming the
    endpoint: a web server or proxy answering HTTP 200 with a page (botocore would parse it
    as an empty answer, and the import would go on as if the table had no fields).
    JSON protocols answer an object; XML ones never an HTML page."""
    endpoint = redact_userinfo(str(client.meta.endpoint_url))

    def check(operation_model: Any, response_dict: dict[str, Any], **_: Any) -> None:
        body = response_dict.get("body")
        if not isinstance(body, bytes) or not (body := body.lstrip()) \
                or not 200 <= int(response_dict.get("status_code", 0)) < 300:
            return  # a streamed body, an empty one, or an error (botocore words those)
        kind = str(response_dict.get("headers", {}).get("content-type", "no content type"))
        json_protocol = operation_model.metadata.get("protocol") in ("json", "rest-json")
        if (json_protocol and not body.startswith(b"{")) or body[:15].lower().startswith((b"<!doctype html", b"<html")):
            raise ServiceError(f"{url}: {operation_model.name}: {endpoint} answered HTTP "
                               f"{response_dict.get('status_code')} with {kind}, not an AWS answer "
                               f"({body[:60].decode('utf-8', 'replace')!r}...): check that --endpoint-url / "
                               "--metrics-endpoint-url (or AWS_ENDPOINT_URL_*) names DynamoDB, DynamoDB Local "
                               "or moto, not a web server or proxy")

    client.meta.events.register("before-parse", check)


class Clients:
    """One region's clients, made on first use (an import of a provisioned table with no
    metrics endpoint never opens CloudWatch)."""

    def __init__(self, url: str, region: str, options: LiveOptions):
        self.url, self.region, self.options = url, region, options
        self._made: dict[str, Any] = {}
        self._failures = AwsFailures(
            self._input, lambda message: ServiceError(f"{url}: {message}"), self._client_error,
            unreachable="is the endpoint (--endpoint-url / --metrics-endpoint-url) running?",
            silent="check that the endpoint (--endpoint-url / --metrics-endpoint-url) is running and reachable, "
                   "then rerun")

    def _client(self, service: str, endpoint: str | None) -> Any:
        if service not in self._made:
            import boto3

            config = client_config(5, user_agent_extra="ddb2bigtable-import")  # timeouts: spec/aws_endpoints.py
            try:
                self._made[service] = bounded_retries(boto3.session.Session().client(
                    service, region_name=self.region, endpoint_url=endpoint, config=config))
            except Exception as error:  # botocore: a malformed endpoint URL, an unreadable profile
                raise InputError([Problem.about(self.url, "", f"cannot set up the {service} client: "
                                                f"{redact_userinfo(str(error))}")]) from None
            _refuse_nonsense(self._made[service], self.url)
        made = self._made[service]
        if service in METRICS_VARIABLES and is_aws(made.meta.endpoint_url) \
                and not is_aws(local := self.dynamodb.meta.endpoint_url):
            raise NotAsked(f"{service} was not asked: DynamoDB is {redact_userinfo(local)}, not AWS, and no "
                           f"{service} endpoint was given (--metrics-endpoint-url, {METRICS_VARIABLES[service]} or "
                           f"AWS_ENDPOINT_URL), so nothing was sent to {made.meta.endpoint_url}")
        return made

    @property
    def dynamodb(self) -> Any:
        return self._client("dynamodb", self.options.endpoint_url)

    @property
    def cloudwatch(self) -> Any:
        return self._client("cloudwatch", self.options.metrics_endpoint_url)

    @property
    def autoscaling(self) -> Any:
        return self._client("application-autoscaling", self.options.metrics_endpoint_url)

    def call(self, operation: str, fn: Callable[..., Any], **kwargs: Any) -> Any:
        """`fn(**kwargs)`, its failures as the engine's errors (see the module docstring)."""
        return call_aws(operation, functools.partial(fn, **kwargs), self._failures)

    def _client_error(self, operation: str, code: str, message: str) -> Exception:
        if code in _UNSUPPORTED:
            return Unsupported(f"{operation} is not served by this endpoint ({code}: {message})")
        if code in _DENIED:
            return Denied(f"{operation} was denied ({message}): the credentials need permission for it")
        if code in _CREDENTIALS:
            return self._input(f"{operation}: AWS refused the credentials ({code}: {message}); check AWS_PROFILE "
                               "or the access keys, and that they are for this account")
        if code == "ResourceNotFoundException":
            return self._input(f"{operation}: {message or 'not found'}; list the region's tables with "
                               f"`aws dynamodb list-tables --region {self.region}`, or import aws://{self.region}/*")
        if code in _THROTTLED:
            return ServiceError(f"{self.url}: {operation} was throttled ({code}) after 5 attempts; rerun later "
                                "or import fewer tables at once")
        if code == "ValidationException":
            return self._input(f"{operation}: {message}")
        return ServiceError(f"{self.url}: {operation} failed ({code or 'no code'}: {message}); rerun later")

    def _input(self, message: str) -> InputError:
        return InputError([Problem.about(self.url, "", message)])

    def best_effort(self, operation: str, fn: Callable[..., Any], absent: str = "",
                    **kwargs: Any) -> tuple[Any, str | None]:
        """For a check that only adds a warning: (response, None), or ({}, None) when the
        error code is `absent` (PolicyNotFoundException: nothing to report), or (None, why)
        on any other failure; refused credentials stop the import as everywhere."""
        from botocore.exceptions import ClientError

        def attempt() -> Any:
            try:
                return fn(**kwargs)
            except ClientError as error:
                if absent and error.response.get("Error", {}).get("Code") == absent:
                    return {}
                raise

        try:
            return self.call(operation, attempt), None
        except (Unsupported, Denied, ServiceError) as failed:
            return None, f"{operation} could not be checked ({failed})"

    def optional(self, operation: str, fn: Callable[..., Any], **kwargs: Any) -> tuple[Any, str | None]:
        """(response, None), or (None, why) when the endpoint lacks it or the call is denied."""
        try:
            return self.call(operation, fn, **kwargs), None
        except (Unsupported, Denied) as error:
            return None, str(error)
