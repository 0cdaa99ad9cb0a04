"""A load job's delete (a stage's `pulumi destroy`, a replaced load) cancels the Dataflow job
when it still runs, against a local stand-in of Dataflow's REST API answering as it
documents (projects.locations.jobs: get gives `currentState`, update with `requestedState`
JOB_STATE_CANCELLED cancels; an unknown job is 404, a refused identity 403), through requests'
own Session."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest
import requests

from components import load_job

PATH = "/v1b3/projects/acme-dev/locations/us-east4/jobs/"


class Dataflow:
    def __init__(self, jobs: dict[str, str], refuse: int | None = None):
        self.jobs, self.refuse, self.calls = jobs, refuse, []

    def answer(self, method: str, path: str, body: dict[str, Any]) -> tuple[int, dict[str, Any]]:
        self.calls.append((method, path, body))
        if self.refuse:
            return self.refuse, {"error": {"code": self.refuse, "message": "The caller does not have permission",
                                           "status": "PERMISSION_DENIED"}}
        job = path.removeprefix(PATH)
        if not path.startswith(PATH) or job not in self.jobs:
            return 404, {"error": {"code": 404, "status": "NOT_FOUND"}}
        if method == "PUT":
            self.jobs[job] = "JOB_STATE_CANCELLING" if body == {"requestedState": "JOB_STATE_CANCELLED"} else "?"
        return 200, {"id": job, "currentState": self.jobs[job]}


@pytest.fixture
def dataflow() -> Iterator[tuple[Dataflow, str]]:
    fake = Dataflow({"running-1": "JOB_STATE_RUNNING", "done-1": "JOB_STATE_DONE"})

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args: Any) -> None:
            pass

        def reply(self, method: str) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            body = json.loads(self.rfile.read(length)) if length else {}
            code, answer = fake.answer(method, self.path, body)
            data = json.dumps(answer).encode()
            self.send_response(code)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def do_GET(self) -> None:
            self.reply("GET")

        def do_PUT(self) -> None:
            self.reply("PUT")

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield fake, f"http://127.0.0.1:{server.server_address[1]}/v1b3"
    finally:
        server.shutdown()
        server.server_close()


def test_a_running_load_is_cancelled(dataflow):
    fake, endpoint = dataflow
    assert load_job.cancel(requests.Session(), "running-1", "acme-dev", "us-east4", endpoint) == "JOB_STATE_RUNNING"
    assert fake.jobs["running-1"] == "JOB_STATE_CANCELLING"
    assert [c[0] for c in fake.calls] == ["GET", "PUT"]


@pytest.mark.parametrize("job,state", [("done-1", "JOB_STATE_DONE"), ("never-was", "gone")])
def test_an_ended_or_unknown_load_is_left_alone(dataflow, job, state):
    fake, endpoint = dataflow
    assert load_job.cancel(requests.Session(), job, "acme-dev", "us-east4", endpoint) == state
    assert [c[0] for c in fake.calls] == ["GET"]


def test_a_job_that_cannot_be_asked_about_fails_the_delete_with_what_to_do(dataflow):
    fake, endpoint = dataflow
    fake.refuse = 403
    with pytest.raises(RuntimeError, match="could not read its state, 403.*gcloud dataflow jobs cancel running-1"):
        load_job.cancel(requests.Session(), "running-1", "acme-dev", "us-east4", endpoint)


def test_the_providers_delete_cancels_the_stages_job(dataflow, monkeypatch):
    """What `pulumi destroy` calls with the resource's id and its saved props."""
    fake, endpoint = dataflow
    monkeypatch.setattr(load_job, "session", requests.Session)
    monkeypatch.setattr(load_job.cancel, "__defaults__", (endpoint,))
    load_job.LoadJobProvider().delete("running-1", {"project": "acme-dev", "region": "us-east4"})
    assert fake.jobs["running-1"] == "JOB_STATE_CANCELLING"
