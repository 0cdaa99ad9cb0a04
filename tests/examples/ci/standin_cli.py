"""Stand-ins for `pulumi` and `gh`, answering as the real CLIs do on success and failure.

One program, called as `standin_cli.py <cli> <args...>` by the shims standins.py puts on
PATH. The world they answer from (stacks, pull requests, comments, tokens) is a JSON file
named by STANDIN_WORLD; every call is appended to its `calls`, and what a call changes
(a stack created, destroyed or removed, a comment posted) is written back, so a test sees
what a job did. The words and exit codes are the real CLIs', from where each is noted:

- pulumi: every failure is `error: <message>` on stderr and exit 255 (`Command failed with
  exit code 255: pulumi stack select ... error: no stack named 'kettleos/dev' found`,
  pulumi/actions#777, 2022); no token in a non-interactive session: `error: PULUMI_ACCESS_TOKEN
  must be set for login during non-interactive CLI sessions` (pulumi/pulumi#13293, 3.71); a
  token the service refuses: `error: problem logging in: invalid access token`
  (pulumi/pulumi#16509, 3.99); a stack still holding resources refuses `stack rm`; an update
  already running is the service's `[409] Conflict: Another update is currently in progress.`;
  `preview --expect-no-changes` with changes: `error: no changes were expected but changes
  were proposed` (the CLI's wording for the flag).
- gh: exit 1 for a failed command, 4 when authentication is required (`gh help exit-codes`,
  cli.github.com/manual/gh_help_exit-codes); no GH_TOKEN in Actions: its message naming
  GH_TOKEN; a refused token: `HTTP 401: Bad credentials (https://api.github.com/graphql)`; a
  read-only token writing: `HTTP 403: Resource not accessible by integration`; an unknown pull
  request: `GraphQL: Could not resolve to a PullRequest with the number of N.
  (repository.pullRequest)`. REST lists are 30 a page unless `per_page` says otherwise (GitHub
  REST docs, "Using pagination in the REST API"); `--paginate` follows every page and `--jq`
  filters each page (`gh api --help`), strings printed raw.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any, NoReturn
from urllib.parse import parse_qs, urlsplit

PULUMI_EXIT = 255
PAGE = 30


class Refused(Exception):
    def __init__(self, message: str, code: int):
        super().__init__(message)
        self.code = code


def world_path() -> Path:
    return Path(os.environ["STANDIN_WORLD"])


def fail(message: str, code: int) -> NoReturn:
    raise Refused(message, code)


# ------------------------------------------------------------------------------------ pulumi


def pulumi_login(world: dict[str, Any]) -> None:
    token = os.environ.get("PULUMI_ACCESS_TOKEN", "")
    if not token:
        fail("error: PULUMI_ACCESS_TOKEN must be set for login during non-interactive CLI sessions", PULUMI_EXIT)
    if token not in world["pulumi"].get("tokens", ["token"]):
        fail("error: problem logging in: invalid access token", PULUMI_EXIT)
    outage = world["pulumi"].get("outage")
    if outage:
        fail(f"error: {outage}", PULUMI_EXIT)


def option(args: list[str], name: str) -> str | None:
    return args[args.index(name) + 1] if name in args else None


def positional(args: list[str], takes_value: tuple[str, ...] = ("--stack", "-s", "--plan", "--save-plan", "--type")) -> list[str]:
    out, skip = [], False
    for a in args:
        if skip:
            skip = False
        elif a in takes_value:
            skip = True
        elif not a.startswith("-"):
            out.append(a)
    return out


def the_stack(world: dict[str, Any], args: list[str], name: str | None = None) -> tuple[str, dict[str, Any]]:
    stack = name or option(args, "--stack") or option(args, "-s") or world["pulumi"].get("selected")
    if stack is None:
        fail("error: no stack selected; please use `pulumi stack select` to choose one", PULUMI_EXIT)
    stacks = world["pulumi"]["stacks"]
    if stack not in stacks:
        fail(f"error: no stack named '{stack}' found", PULUMI_EXIT)
    if stack in world["pulumi"].get("locked", []):
        fail("error: [409] Conflict: Another update is currently in progress.", PULUMI_EXIT)
    return stack, stacks[stack]


def write_config(stack: str, key: str, value: str, path: bool, kind: str | None) -> None:
    """What `pulumi config set` leaves in stacks/Pulumi.<stack>.yaml (Pulumi.yaml's
    stackConfigDir), with --path and --type read as Pulumi documents them (steps.py)."""
    sys.path.insert(0, str(Path(__file__).resolve().parents[3]))
    import yaml

    from tests.examples.ci.steps import _set_path, _typed

    file = Path("stacks") / f"Pulumi.{stack}.yaml"
    document = yaml.safe_load(file.read_text()) if file.exists() else {}
    config = document.setdefault("config", {})
    if path:
        _set_path(config, key, _typed(value, kind))
    else:
        config[key] = value
    file.write_text(yaml.safe_dump(document, sort_keys=False))


def stack_select(world: dict[str, Any], args: list[str], words: list[str]) -> str:
    state = world["pulumi"]
    name = words[2] if len(words) > 2 else option(args, "--stack")
    assert name, "stack select needs a name"
    if name not in state["stacks"]:
        if "--create" not in args and "-c" not in args:
            fail(f"error: no stack named '{name}' found", PULUMI_EXIT)
        state["stacks"][name] = {"resources": 0}
        state["selected"] = name
        return f"Created stack '{name}'\n"
    state["selected"] = name
    return ""


def stack_ls(world: dict[str, Any], args: list[str], _words: list[str]) -> str:
    assert "--json" in args, "the jobs read `stack ls --json`"
    state = world["pulumi"]
    org = state.get("org")
    return json.dumps([{"name": f"{org}/{state.get('project', 'bigtable')}/{n}" if org else n,
                        "current": n == state.get("selected"), "updateInProgress": n in state.get("locked", []),
                        "resourceCount": s["resources"]} for n, s in sorted(state["stacks"].items())], indent=4) + "\n"


def stack_rm(world: dict[str, Any], args: list[str], words: list[str]) -> str:
    stack, body = the_stack(world, args, words[2] if len(words) > 2 else None)
    if body["resources"] and "--force" not in args:
        fail(f"error: '{stack}' still has resources; removal rejected. Possible actions:\n"
             f"- Make sure that '{stack}' is the stack that you want to destroy\n"
             f"- Run `pulumi destroy` to delete the resources, then run `pulumi stack rm`\n"
             f"- Run `pulumi stack rm --force` to override this error", PULUMI_EXIT)
    del world["pulumi"]["stacks"][stack]
    return f"Stack '{stack}' has been removed!\n"


def stack_output(world: dict[str, Any], args: list[str], _words: list[str]) -> str:
    _, body = the_stack(world, args)
    return json.dumps(body.get("outputs", {}), indent=4) + "\n"


def config_set(world: dict[str, Any], args: list[str], words: list[str]) -> str:
    stack, _ = the_stack(world, args)
    write_config(stack, words[2], words[3], "--path" in args, option(args, "--type"))
    return ""


def destroy(world: dict[str, Any], args: list[str], _words: list[str]) -> str:
    stack, body = the_stack(world, args)
    deleted, body["resources"] = body["resources"], 0
    return f"Destroying ({stack})\n\nResources:\n    - {deleted} deleted\n\nDuration: 1s\n"


def up(world: dict[str, Any], args: list[str], _words: list[str]) -> str:
    stack, body = the_stack(world, args)
    state = world["pulumi"]
    if state.get("up_fails"):
        fail(f"error: {state['up_fails']}", PULUMI_EXIT)
    body["resources"] = max(body["resources"], 12)
    body["outputs"] = state.get("outputs_after_up", {}).get(stack, body.get("outputs", {}))
    return f"Updating ({stack})\n\nResources:\n    + 12 created\n\nDuration: 1s\n"


def preview(world: dict[str, Any], args: list[str], _words: list[str]) -> str:
    stack, body = the_stack(world, args)
    changes = body.get("drift", False) or body["resources"] == 0
    text = f"Previewing update ({stack})\n\nResources:\n    " + ("~ 1 to update\n" if changes else "12 unchanged\n")
    if "--expect-no-changes" in args and changes:
        sys.stdout.write(text)
        fail("error: no changes were expected but changes were proposed", PULUMI_EXIT)
    return text


PULUMI = {("stack", "select"): stack_select, ("stack", "ls"): stack_ls, ("stack", "rm"): stack_rm,
          ("stack", "output"): stack_output, ("config", "set"): config_set, ("destroy",): destroy, ("up",): up,
          ("preview",): preview}


def pulumi(world: dict[str, Any], args: list[str]) -> str:
    pulumi_login(world)
    words = positional(args)
    command = PULUMI.get(tuple(words[:2])) or PULUMI.get(tuple(words[:1]))
    if command is None:
        fail(f"stand-in pulumi: `pulumi {' '.join(args)}` is not modelled", 99)
    return command(world, args, words)


# ---------------------------------------------------------------------------------------- gh


def gh_auth(world: dict[str, Any], write: bool = False) -> None:
    token = os.environ.get("GH_TOKEN") or os.environ.get("GITHUB_TOKEN")
    if not token:
        fail("gh: To use GitHub CLI in a GitHub Actions workflow, set the GH_TOKEN environment variable. Example:\n"
             "  env:\n    GH_TOKEN: ${{ github.token }}", 4)
    kind = world["gh"].get("tokens", {}).get(token)
    if kind is None:
        fail("HTTP 401: Bad credentials (https://api.github.com/graphql)", 1)
    if write and kind != "write":
        fail("HTTP 403: Resource not accessible by integration (https://api.github.com/)", 1)


def jq(filter_: str, value: Any) -> str:
    """gh's --jq: the filter over the JSON, strings raw (the real jq does the filtering)."""
    out = subprocess.run(["jq", "-r", filter_], input=json.dumps(value), capture_output=True, text=True, check=True)
    return out.stdout


def the_pull(world: dict[str, Any], number: str) -> dict[str, Any]:
    pull = world["gh"]["pulls"].get(number)
    if pull is None:
        fail(f"GraphQL: Could not resolve to a PullRequest with the number of {number}. (repository.pullRequest)", 1)
    return pull


def gh_pr_view(world: dict[str, Any], args: list[str]) -> str:
    gh_auth(world)
    number = positional(args, ("--repo", "-R", "--json", "--jq", "-q"))[2]
    pull = the_pull(world, number)
    fields = (option(args, "--json") or "").split(",")
    value = {"state": pull["state"], "labels": [{"name": n} for n in pull.get("labels", [])],
             "number": int(number), "headRefName": pull.get("head", f"branch-{number}")}
    value = {k: v for k, v in value.items() if k in fields}
    filter_ = option(args, "--jq") or option(args, "-q")
    return jq(filter_, value) if filter_ else json.dumps(value) + "\n"


def gh_api(world: dict[str, Any], args: list[str]) -> str:
    method = (option(args, "--method") or option(args, "-X") or "GET").upper()
    gh_auth(world, write=method != "GET")
    endpoint = positional(args, ("--method", "-X", "-F", "-f", "--field", "--raw-field", "--jq", "-q", "-H"))[1]
    fields: dict[str, str] = {}
    for i, a in enumerate(args):
        if a in ("-F", "-f", "--field", "--raw-field"):
            key, _, value = args[i + 1].partition("=")
            fields[key] = Path(value[1:]).read_text() if a in ("-F", "--field") and value.startswith("@") else value
    parts = urlsplit(endpoint)
    path = parts.path.strip("/").split("/")
    query = {k: v[0] for k, v in parse_qs(parts.query).items()}
    comments = world["gh"].setdefault("comments", {})
    filter_ = option(args, "--jq") or option(args, "-q")
    if path[:1] == ["repos"] and path[3:4] == ["issues"] and len(path) == 6 and path[5] == "comments":
        number = path[4]
        the_pull(world, number)
        if method == "POST":
            comment = {"id": world["gh"].setdefault("next_id", 1000), "body": fields["body"]}
            world["gh"]["next_id"] += 1
            comments.setdefault(number, []).append(comment)
            return json.dumps(comment) + "\n"
        listed = comments.get(number, [])
        size = int(query.get("per_page", PAGE))
        pages = [listed[i:i + size] for i in range(0, len(listed), size)] or [[]]
        pages = pages if "--paginate" in args else pages[int(query.get("page", 1)) - 1:][:1]
        return "".join(jq(filter_, page) if filter_ else json.dumps(page) + "\n" for page in pages)
    if path[:1] == ["repos"] and path[3:4] == ["commits"] and path[5:6] == ["pulls"]:
        found = [{"number": int(n)} for n in world["gh"].get("commit_pulls", {}).get(path[4], [])]
        return jq(filter_, found) if filter_ else json.dumps(found) + "\n"
    if path[:1] == ["repos"] and path[3:5] == ["issues", "comments"] and method == "PATCH":
        for thread in comments.values():
            for comment in thread:
                if str(comment["id"]) == path[5]:
                    comment["body"] = fields["body"]
                    return json.dumps(comment) + "\n"
        fail(f"HTTP 404: Not Found (https://api.github.com/{endpoint})", 1)
    fail(f"stand-in gh: `gh api {endpoint}` ({method}) is not modelled", 99)


def gh_issue(world: dict[str, Any], args: list[str]) -> str:
    """`gh issue list/create/edit/close`, as gh prints them (a created issue's URL)."""
    verb = args[1]
    gh_auth(world, write=verb != "list")
    issues = world["gh"].setdefault("issues", [])
    if verb == "list":
        label, state = option(args, "--label"), option(args, "--state") or "open"
        found = [{"number": i["number"]} for i in issues if (label is None or label in i["labels"]) and i["state"] == state]
        filter_ = option(args, "--jq")
        return jq(filter_, found) if filter_ else json.dumps(found) + "\n"
    if verb == "create":
        label = option(args, "--label")
        if label not in world["gh"].get("labels", [label]):
            fail(f"could not add label: '{label}' not found", 1)
        number = len(issues) + 1
        issues.append({"number": number, "title": option(args, "--title"), "labels": [label], "state": "open",
                       "body": Path(option(args, "--body-file") or "").read_text(), "comments": []})
        return f"https://github.com/{option(args, '--repo')}/issues/{number}\n"
    issue = next((i for i in issues if str(i["number"]) == args[2]), None)
    if issue is None:
        fail(f"GraphQL: Could not resolve to an issue or pull request with the number of {args[2]}. "
             f"(repository.issue)", 1)
    if verb == "edit":
        issue["body"] = Path(option(args, "--body-file") or "").read_text()
    elif verb == "close":
        issue["state"] = "closed"
        issue["comments"].append(option(args, "--comment"))
    else:
        fail(f"stand-in gh: `gh issue {verb}` is not modelled", 99)
    return f"https://github.com/{option(args, '--repo')}/issues/{issue['number']}\n"


def gh(world: dict[str, Any], args: list[str]) -> str:
    if args[:2] == ["pr", "view"]:
        return gh_pr_view(world, args)
    if args[:1] == ["issue"]:
        return gh_issue(world, args)
    if args[:1] == ["api"]:
        return gh_api(world, args)
    fail(f"stand-in gh: `gh {' '.join(args)}` is not modelled", 99)


def main() -> int:
    cli, args = sys.argv[1], sys.argv[2:]
    path = world_path()
    world = json.loads(path.read_text())
    world.setdefault("calls", []).append([cli, *args])
    code = 0
    try:
        sys.stdout.write({"pulumi": pulumi, "gh": gh}[cli](world, args))
    except Refused as refused:
        sys.stderr.write(f"{refused}\n")
        code = refused.code
    path.write_text(json.dumps(world, indent=1))
    return code


if __name__ == "__main__":
    sys.exit(main())
