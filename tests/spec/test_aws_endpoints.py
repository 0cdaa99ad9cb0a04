"""Endpoint URLs on the command line: an empty or malformed one is refused (boto3 takes an
empty endpoint for AWS itself), and the user-info of any URL never reaches a message,
however long the message and wherever the URL sits in it."""

from __future__ import annotations

import pytest
from botocore.exceptions import ClientError, EndpointConnectionError, NoCredentialsError, ReadTimeoutError
from hypothesis import given
from hypothesis import strategies as st

from ddb2bigtable.spec.aws_endpoints import AwsFailures, call_aws, check_endpoint_url
from ddb2bigtable.spec.errors import InputError, Problem, clip_message


@pytest.mark.parametrize("value", ["", " ", "127.0.0.1:8000", "ftp://host", "http://", "http://:8000",
                                   "http://[::1", "http://host:port"])
def test_an_empty_or_malformed_endpoint_is_refused_with_what_to_give(value):
    with pytest.raises(InputError) as refused:
        check_endpoint_url(value, "replicate")
    assert str(refused.value).startswith("replicate: --endpoint-url: ")
    assert "give http(s)://HOST[:PORT]" in str(refused.value)


def test_a_real_endpoint_or_none_passes_as_it_is():
    assert check_endpoint_url(None, "import") is None
    for url in ("http://127.0.0.1:8000", "https://dynamodb.us-east-1.amazonaws.com", "http://u:p@[::1]:9"):
        assert check_endpoint_url(url, "import") == url


def test_a_password_in_a_refused_endpoint_is_not_echoed():
    with pytest.raises(InputError) as refused:
        check_endpoint_url("ftp://admin:hunter2@host", "import", "--metrics-endpoint-url")
    assert "hunter2" not in str(refused.value) and "'ftp://***@host'" in str(refused.value)


@given(secret=st.text(st.characters(blacklist_characters="/@ \t\n\r\x0b\x0c\x1c\x1d\x1e\x1f\x85\xa0"),
                      min_size=1, max_size=300),
       before=st.text(max_size=300), padding=st.integers(0, 3000))
def test_no_message_shows_a_urls_user_info_however_it_is_cut(secret, before, padding):
    """Every printed message goes through clip_message (Problem.__str__, the CLI's errors)."""
    url = f"http://user:{secret}@127.0.0.1:{padding}/" + "x" * padding
    message = f"{before} cannot reach {url}: is the endpoint running?"
    for shown in (clip_message(message), str(Problem.about(url, "--endpoint-url", message))):
        assert f"user:{secret}" not in shown and "http://***@127.0.0.1" in shown


class _BadInput(Exception):
    pass


class _Unavailable(Exception):
    pass


_FAILURES = AwsFailures(lambda m: _BadInput(f"where: {m}"), lambda m: _Unavailable(f"where: {m}"),
                        lambda operation, code, message: _BadInput(f"{operation} said {code}: {message}"),
                        unreachable="is it running?", silent="check the endpoint")


def _raise(error: Exception):
    def fn():
        raise error
    return fn


@pytest.mark.parametrize(("error", "kind", "said"), [
    (NoCredentialsError(), _BadInput, "where: GetThing: Unable to locate credentials: set AWS_PROFILE"),
    (EndpointConnectionError(endpoint_url="http://u:secret@127.0.0.1:9"), _BadInput,  # the local servers stopped
     "where: GetThing: cannot reach http://***@127.0.0.1:9, nothing answers there: start the local servers: "
     "`bash scripts/local-servers.sh start` (from the repository's root), or check the endpoint's port"),
    (EndpointConnectionError(endpoint_url="https://dynamodb.example:9"), _Unavailable,
     "where: GetThing: cannot reach https://dynamodb.example:9: is it running?"),
    (ReadTimeoutError(endpoint_url="http://127.0.0.1:9"), _Unavailable,
     "where: GetThing: no answer within 10 s (Read timeout on endpoint URL: \"http://127.0.0.1:9\"): "
     "check the endpoint"),
    (ClientError({"Error": {"Code": "Nope", "Message": "no such thing"}}, "GetThing"), _BadInput,
     "GetThing said Nope: no such thing"),
    (ConnectionResetError("reset while a body was read"), _Unavailable,
     "where: GetThing failed: reset while a body was read; rerun later"),
])
def test_one_mapping_of_aws_failures_to_the_callers_two_kinds(error, kind, said):
    """Import and the S3 export reader share this mapping, each with its own error kinds
    and reading of AWS's error codes; the endpoint's user-info never reaches the message."""
    with pytest.raises(kind) as caught:
        call_aws("GetThing", _raise(error), _FAILURES)
    assert str(caught.value).startswith(said)
    assert call_aws("GetThing", lambda: {"Thing": 1}, _FAILURES) == {"Thing": 1}
