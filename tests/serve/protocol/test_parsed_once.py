"""Issue 42's rule: a body is read once, at the edge. Every operation `app.OPERATIONS`
dispatches to takes a typed request of serve/requests.py, made by a reader in
serve/protocol/, never the JSON body."""

import inspect

from ddb2bigtable.serve import requests
from ddb2bigtable.serve.protocol import app

# every operation takes a typed request now
STILL_BODY: set[str] = set()


def _request_annotation(run):
    parameters = list(inspect.signature(run).parameters.values())
    assert len(parameters) == 2, run
    return parameters[1].annotation


def test_operations_take_typed_requests_made_in_protocol():
    for name, (parse, run) in app.OPERATIONS.items():
        if name in STILL_BODY:
            continue
        annotation = _request_annotation(run)
        assert "dict" not in str(annotation), f"{name}: {run.__module__}.{run.__name__} takes the body"
        assert isinstance(getattr(requests, str(annotation), None), type), \
            f"{name}: {run.__name__} takes {annotation}, not a request of serve/requests.py"
        assert parse.__module__.startswith("ddb2bigtable.serve.protocol."), name
        assert str(inspect.signature(parse).return_annotation) == str(annotation), name


def test_the_list_of_operations_still_reading_bodies_only_shrinks():
    still = {name for name, (_, run) in app.OPERATIONS.items() if "dict" in str(_request_annotation(run))}
    assert still <= STILL_BODY, still - STILL_BODY
    assert still == STILL_BODY, f"{STILL_BODY - still} take typed requests now: remove them from STILL_BODY"
