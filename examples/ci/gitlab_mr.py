"""What gitlab-ci.yml asks of GitLab's REST API about a merge request: its labels as they are
now, its state, and one note updated in place; and the drift check's one issue.

    python3 ci/gitlab_mr.py labels                         # one label a line
    python3 ci/gitlab_mr.py state 42                       # opened, closed, merged or locked
    python3 ci/gitlab_mr.py note --marker '<!-- x -->' FILE
    python3 ci/gitlab_mr.py reviewed SHA                   # the merge request of SHA, and its review's fingerprint
    python3 ci/gitlab_mr.py issue --label L --title T FILE # the open issue labelled L: opened or updated
    python3 ci/gitlab_mr.py issue --label L --close TEXT   # ... closed with a comment, if there is one

Why not the pipeline's variables or a new note: CI_MERGE_REQUEST_LABELS is fixed when the
pipeline is created (a label added since, then the job retried, would not count), and a note
posted on every pipeline buries the review. The note is found among all the merge request's
notes, page after page (GitLab's lists give 20 a page by default, at most 100, and say the next
page in the `X-Next-Page` header: REST API docs, "Pagination"), by its first line.
Standard library only (the job's image has python3). Reads CI_API_V4_URL, CI_PROJECT_ID,
CI_MERGE_REQUEST_IID and the token DDB2BIGTABLE_GITLAB_TOKEN (a project access token with the
`api` scope). Exit 1, with what GitLab answered, when it cannot be asked: a job never takes
"no answer" for "nothing there".
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import urllib.error
import urllib.parse
import urllib.request
from typing import Any

TIMEOUT = 30  # seconds, each request


class Unanswered(Exception):
    """GitLab did not answer what was asked (refused token, unknown merge request, outage)."""


def call(method: str, path: str, data: dict[str, str] | None = None) -> tuple[Any, dict[str, str]]:
    url = f"{os.environ['CI_API_V4_URL'].rstrip('/')}/projects/{os.environ['CI_PROJECT_ID']}/{path}"
    body = urllib.parse.urlencode(data).encode() if data is not None else None
    request = urllib.request.Request(url, data=body, method=method,
                                     headers={"PRIVATE-TOKEN": os.environ.get("DDB2BIGTABLE_GITLAB_TOKEN", "")})
    try:
        with urllib.request.urlopen(request, timeout=TIMEOUT) as answer:
            return json.load(answer), dict(answer.headers)
    except urllib.error.HTTPError as error:
        raise Unanswered(f"{method} {url}: {error.code} {error.read().decode(errors='replace')[:300]}") from error
    except (urllib.error.URLError, TimeoutError) as error:
        raise Unanswered(f"{method} {url}: {error}") from error


def merge_request(iid: str) -> dict[str, Any]:
    found, _ = call("GET", f"merge_requests/{iid}")
    return found


def notes(iid: str) -> list[dict[str, Any]]:
    """Every note of the merge request, following X-Next-Page to the last page."""
    found, page = [], "1"
    while page:
        batch, headers = call("GET", f"merge_requests/{iid}/notes?per_page=100&page={page}")
        found += batch
        page = headers.get("X-Next-Page", "")
    return found


def reviewed(sha: str, marker: str) -> tuple[str, str]:
    """The merge request that brought commit `sha` and the `reviewed-inputs` its review note
    recorded ("" for either when there is none)."""
    found, _ = call("GET", f"repository/commits/{sha}/merge_requests")
    if not found:
        return "", ""
    iid = str(found[0]["iid"])
    for note in notes(iid):
        body = note.get("body", "")
        if body.startswith(marker):
            for line in body.splitlines():
                if line.startswith("<!-- reviewed-inputs: ") and line.endswith(" -->"):
                    return iid, line.removeprefix("<!-- reviewed-inputs: ").removesuffix(" -->")
    return iid, ""


def upsert_note(iid: str, marker: str, body: str) -> str:
    mine = next((n for n in notes(iid) if not n.get("system") and n.get("body", "").startswith(marker)), None)
    if mine is not None:
        call("PUT", f"merge_requests/{iid}/notes/{mine['id']}", {"body": body})
        return f"note {mine['id']} updated"
    created, _ = call("POST", f"merge_requests/{iid}/notes", {"body": body})
    return f"note {created['id']} posted"


def open_issue(label: str) -> str:
    """The iid of the open issue labelled `label` ("" when none): the oldest, should two exist."""
    found, _ = call("GET", f"issues?labels={urllib.parse.quote(label)}&state=opened&sort=asc&per_page=100")
    return str(found[0]["iid"]) if found else ""


def upsert_issue(label: str, title: str, body: str) -> str:
    iid = open_issue(label)
    if iid:
        call("PUT", f"issues/{iid}", {"description": body})
        return f"issue {iid} updated"
    created, _ = call("POST", "issues", {"title": title, "labels": label, "description": body})
    return f"issue {created['iid']} opened"


def close_issue(label: str, comment: str) -> str:
    iid = open_issue(label)
    if not iid:
        return f"no open issue labelled {label}"
    call("POST", f"issues/{iid}/notes", {"body": comment})
    call("PUT", f"issues/{iid}", {"state_event": "close"})
    return f"issue {iid} closed"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)
    sub.add_parser("labels", help="the merge request's labels now, one a line")
    state = sub.add_parser("state", help="a merge request's state")
    state.add_argument("iid")
    note = sub.add_parser("note", help="post FILE as the merge request's note starting with MARKER, or update it")
    note.add_argument("--marker", required=True)
    note.add_argument("file")
    review = sub.add_parser("reviewed", help="a commit's merge request and its review's reviewed-inputs, tab-separated")
    review.add_argument("sha")
    review.add_argument("--marker", default="<!-- ddb2bigtable-diff -->")
    issue = sub.add_parser("issue", help="open or update the one open issue labelled LABEL with FILE, or --close it")
    issue.add_argument("--label", required=True)
    issue.add_argument("--title")
    issue.add_argument("--close", metavar="COMMENT")
    issue.add_argument("file", nargs="?")
    args = parser.parse_args(argv)
    if args.command == "issue" and (args.close is None) == (args.file is None or args.title is None):
        parser.error("issue: give --title and FILE, or --close COMMENT")
    iid = os.environ.get("CI_MERGE_REQUEST_IID", "")
    try:
        if args.command == "labels":
            print("\n".join(merge_request(iid)["labels"]))
        elif args.command == "state":
            print(merge_request(args.iid)["state"])
        elif args.command == "reviewed":
            print("\t".join(reviewed(args.sha, args.marker)))
        elif args.command == "issue":
            if args.close is not None:
                print(close_issue(args.label, args.close))
            else:
                with open(args.file, encoding="utf-8") as file:
                    print(upsert_issue(args.label, args.title, file.read()))
        else:
            with open(args.file, encoding="utf-8") as file:
                body = file.read()
            if not body.startswith(args.marker):
                print(f"{args.file}: its first line must be the marker {args.marker}", file=sys.stderr)
                return 2
            print(upsert_note(iid, args.marker, body))
    except Unanswered as error:
        print(f"GitLab did not answer: {error}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
