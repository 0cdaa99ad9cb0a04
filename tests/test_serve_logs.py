"""The suite's check of serve's logs (tests/conftest.py `serve_logs_without_tracebacks`):
what it must find in a log as uvicorn writes one, and what it must let pass."""

from __future__ import annotations

from .local_servers import logged_tracebacks

ANSWERED = """INFO:     Started server process [4242]
INFO:     Uvicorn running on http://127.0.0.1:8000 (Press CTRL+C to quit)
INFO:     127.0.0.1:50312 - "POST / HTTP/1.1" 400 Bad Request
"""

# uvicorn's log of an exception the application let through (the 500 issue 50 found), with
# the exception it was raised while handling.
UNANSWERED = """ERROR:    Exception in ASGI application
Traceback (most recent call last):
  File "/srv/ddb2bigtable/serve/items/locked_rows.py", line 40, in rows_of
    table = tables[name]
            ~~~~~~^^^^^^
KeyError: 'Invoices'

During handling of the above exception, another exception occurred:

Traceback (most recent call last):
  File "/srv/uvicorn/protocols/http/h11_impl.py", line 403, in run_asgi
    result = await app(self.scope, self.receive, self.send)
RuntimeError: settling failed
INFO:     127.0.0.1:50314 - "POST / HTTP/1.1" 500 Internal Server Error
"""


def test_each_traceback_is_named_by_what_it_raised():
    assert logged_tracebacks(ANSWERED + UNANSWERED) == ["KeyError: 'Invoices'", "RuntimeError: settling failed"]


def test_a_log_of_answered_requests_has_none():
    assert logged_tracebacks(ANSWERED) == []
