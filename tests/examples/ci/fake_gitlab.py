"""A local stand-in of GitLab's REST API for the calls gitlab_mr.py makes (a merge request,
its notes, a commit's merge requests; the project's issues, filtered by label and state,
created, edited, commented and closed).

As GitLab documents them (REST API docs: "Pagination", "Merge requests", "Notes", read
2026-12-07): lists give `per_page` items (20 by default, 100 at most) and name the next page
in `X-Next-Page` (empty on the last); a wrong PRIVATE-TOKEN is 401 `{"message": "401
Unauthorized"}`; an unknown merge request 404 `{"message": "404 Not found"}`; notes are
created by POST and edited by PUT with a form-encoded `body`. System notes (`system: true`)
are GitLab's own ("added 1 commit") and are never a job's note. Issues (REST API docs,
"Issues", read 2026-12-07): GET /issues?labels=L&state=opened lists the open ones carrying
label L; POST /issues takes `title`, `labels` (comma-separated) and `description`; PUT
/issues/:iid edits `description` or closes with `state_event=close`; a comment is a note,
POST /issues/:iid/notes.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlsplit

TOKEN = "glpat-test"


@dataclass
class GitLab:
    merge_requests: dict[str, dict[str, Any]] = field(default_factory=dict)
    notes: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    commit_merge_requests: dict[str, list[str]] = field(default_factory=dict)  # sha -> merge requests' iids
    issues: list[dict[str, Any]] = field(default_factory=list)  # iid, title, labels, state, description, notes
    requests: list[str] = field(default_factory=list)
    next_id: int = 5000


Answer = tuple[int, Any, dict[str, str]]


def notes_page(thread: list[dict[str, Any]], query: dict[str, str]) -> Answer:
    size, page = min(int(query.get("per_page", 20)), 100), int(query.get("page", 1))
    more = page * size < len(thread)
    return 200, thread[(page - 1) * size: page * size], {"X-Page": str(page),
                                                         "X-Next-Page": str(page + 1) if more else ""}


def write_note(gitlab: GitLab, thread: list[dict[str, Any]], method: str, path: list[str], body: str) -> Answer:
    if method == "POST":
        note = {"id": gitlab.next_id, "body": body, "system": False}
        gitlab.next_id += 1
        thread.append(note)
        return 201, note, {}
    note = next((n for n in thread if str(n["id"]) == path[8]), None)
    if note is None:
        return 404, {"message": "404 Not found"}, {}
    note["body"] = body
    return 200, note, {}


def issues(gitlab: GitLab, method: str, path: list[str], query: dict[str, str], form: dict[str, str]) -> Answer:
    """/projects/1/issues[/iid[/notes]]."""
    if len(path) == 6 and method == "GET":
        labels = [label for label in query.get("labels", "").split(",") if label]
        found = [i for i in gitlab.issues if all(label in i["labels"] for label in labels)
                 and query.get("state", "all") in ("all", i["state"])]
        return 200, found, {"X-Next-Page": ""}
    if len(path) == 6 and method == "POST":
        issue = {"iid": max([i["iid"] for i in gitlab.issues], default=0) + 1, "title": form["title"],
                 "labels": form.get("labels", "").split(","), "state": "opened",
                 "description": form.get("description", ""), "notes": []}
        gitlab.issues.append(issue)
        return 201, issue, {}
    issue = next((i for i in gitlab.issues if str(i["iid"]) == path[6]), None)
    if issue is None:
        return 404, {"message": "404 Issue Not Found"}, {}
    if path[7:8] == ["notes"] and method == "POST":
        issue["notes"].append(form["body"])
        return 201, {"id": len(issue["notes"]), "body": form["body"]}, {}
    if method == "PUT":
        if form.get("state_event") == "close":
            issue["state"] = "closed"
        if "description" in form:
            issue["description"] = form["description"]
        return 200, issue, {}
    return 404, {"message": "404 Not found"}, {}


def answer(gitlab: GitLab, method: str, target: str, token: str | None, form: str) -> Answer:
    """GitLab's answer to one request (path /api/v4/projects/1/merge_requests/7[/notes[/id]])."""
    gitlab.requests.append(f"{method} {target}")
    if token != TOKEN:
        return 401, {"message": "401 Unauthorized"}, {}
    parts = urlsplit(target)
    path = parts.path.split("/")
    if path[5:6] == ["issues"]:
        return issues(gitlab, method, path, {k: v[0] for k, v in parse_qs(parts.query).items()},
                      {k: v[0] for k, v in parse_qs(form).items()})
    if path[5:7] == ["repository", "commits"] and path[8:9] == ["merge_requests"]:
        return 200, [{"iid": int(i)} for i in gitlab.commit_merge_requests.get(path[7], [])], {}
    iid = path[6] if len(path) > 6 else ""
    if path[5:6] != ["merge_requests"] or iid not in gitlab.merge_requests:
        return 404, {"message": "404 Not found"}, {}
    if len(path) == 7:
        return 200, {"iid": int(iid), **gitlab.merge_requests[iid]}, {}
    thread = gitlab.notes.setdefault(iid, [])
    if method == "GET":
        return notes_page(thread, {k: v[0] for k, v in parse_qs(parts.query).items()})
    return write_note(gitlab, thread, method, path, parse_qs(form)["body"][0])


def handler(gitlab: GitLab) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args: Any) -> None:
            pass

        def route(self, method: str) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            form = self.rfile.read(length).decode() if length else ""
            code, body, headers = answer(gitlab, method, self.path, self.headers.get("PRIVATE-TOKEN"), form)
            data = json.dumps(body).encode()
            self.send_response(code)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            for key, value in headers.items():
                self.send_header(key, value)
            self.end_headers()
            self.wfile.write(data)

        def do_GET(self) -> None:
            self.route("GET")

        def do_POST(self) -> None:
            self.route("POST")

        def do_PUT(self) -> None:
            self.route("PUT")

    return Handler


def serve(gitlab: GitLab) -> Iterator[str]:
    """The API's base URL (CI_API_V4_URL) while the server runs."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler(gitlab))
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/api/v4"
    finally:
        server.shutdown()
        server.server_close()
