"""Markdown of a stack's outputs after `pulumi up`: a deploy's job summary, a pull request's stage comment.

    pulumi stack output --stack dev --json > outputs.json
    python3 ci/stack_summary.py outputs.json >> "$GITHUB_STEP_SUMMARY"
    python3 ci/stack_summary.py outputs.json --marker '<!-- ddb2bigtable-stage -->' > comment.md

It reads what `__main__.py` exports (`stage`, `instances`, `monthly_estimate_usd`, and when
present `serve_endpoint_urls` and `load_jobs`) and shows what a reviewer or the person on
call looks for after a deploy: the instances, the serve URL an SDK points at, and the ids of
the Dataflow loads the deploy launched. Standard library only, so it runs on the runner's own
python3 before (or without) the project's environment. Copy it to `ci/` of the repository
that holds your specs; the workflows in examples/ci call it there.
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any


def _clusters(clusters: list[dict[str, Any]]) -> str:
    """`us-east4-b: 3 nodes` or `us-east4-b: 2-6 nodes` (autoscaled), one per cluster."""
    parts = []
    for c in clusters:
        nodes = c.get("nodes")
        size = f"{nodes} node{'s' if nodes != 1 else ''}" if nodes is not None else \
            f"{c.get('min_nodes')}-{c.get('max_nodes')} nodes"
        parts.append(f"{c.get('zone')}: {size}")
    return ", ".join(parts)


def _instances(instances: dict[str, Any]) -> list[str]:
    lines = ["| instance | clusters | tables | monthly estimate |", "|---|---|---|---:|"]
    for name, i in sorted(instances.items()):
        tables = ", ".join(i.get("tables", []))
        lines.append(f"| `{name}` | {_clusters(i.get('clusters', []))} | {tables} | "
                     f"${i.get('monthly_estimate_usd', 0):,.2f} |")
    return lines


def _serve(urls: dict[str, str]) -> list[str]:
    if not urls:
        return ["No serve endpoint (the stage has no `serve: {enabled: true}`)."]
    lines = ["Serve endpoint (DynamoDB's API: an AWS SDK's `endpoint_url`):", "",
             "| region | URL |", "|---|---|"]
    lines += [f"| {region} | {url} |" for region, url in sorted(urls.items())]
    return lines


def _loads(jobs: dict[str, str]) -> list[str]:
    if not jobs:
        return ["No load launched: the stage has no `load` with `runner: dataflow`, or no table was "
                "created or replaced by this deploy."]
    lines = ["Post-deploy loads (Dataflow job ids; `gcloud dataflow jobs describe <id> --region <region>` "
             "follows one):", "", "| table | job id |", "|---|---|"]
    lines += [f"| `{table}` | `{job}` |" for table, job in sorted(jobs.items())]
    return lines


def summary(outputs: dict[str, Any], marker: str = "") -> str:
    """The markdown: a heading with the stage and its estimate, then instances, serve, loads."""
    stage = outputs.get("stage", "?")
    heading = f"### Stage `{stage}` deployed: ${outputs.get('monthly_estimate_usd', 0):,.2f}/month (Bigtable estimate)"
    lines = ([marker] if marker else []) + [heading, ""]
    lines += _instances(outputs.get("instances", {})) + [""]
    lines += _serve(outputs.get("serve_endpoint_urls") or {}) + [""]
    lines += _loads(outputs.get("load_jobs") or {})
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("outputs", help="the file `pulumi stack output --json` wrote")
    parser.add_argument("--marker", default="", help="a first line that finds the comment again (an HTML comment)")
    args = parser.parse_args(argv)
    try:
        with open(args.outputs, encoding="utf-8") as file:
            outputs = json.load(file)
    except (OSError, ValueError) as error:
        print(f"{args.outputs}: not the JSON of `pulumi stack output --json` ({error}); "
              "rerun `pulumi stack output --stack <stack> --json > outputs.json` after `pulumi up`", file=sys.stderr)
        return 2
    if not isinstance(outputs, dict):
        print(f"{args.outputs}: expected a JSON object of stack outputs", file=sys.stderr)
        return 2
    sys.stdout.write(summary(outputs, args.marker))
    return 0


if __name__ == "__main__":
    sys.exit(main())
