"""What a boto3 client raised, as a user's code reads it."""

from __future__ import annotations

import pytest
from botocore.exceptions import ClientError


def error_of(call, **kwargs) -> tuple[str, str]:
    """The error code and message of `call(**kwargs)`, which must fail."""
    with pytest.raises(ClientError) as caught:
        call(**kwargs)
    return caught.value.response["Error"]["Code"], caught.value.response["Error"]["Message"]
