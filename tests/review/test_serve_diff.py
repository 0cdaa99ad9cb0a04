"""`diff` shows what a change does to the stage's serve endpoint; who may call it is flagged."""

from __future__ import annotations

from .test_diff import change, diff_json, repo, stage  # noqa: F401  (repo is a fixture)

SERVE = """    deletion_protection: false
    serve:
      enabled: true
      image: us-west1-docker.pkg.dev/my-project-dev/tools/ddb2bigtable:0.1.0
      invokers: [serviceAccount:orders-app@my-project-dev.iam.gserviceaccount.com]
"""


def _changes(repo) -> dict[str, dict]:  # noqa: F811
    return {c["what"]: c for c in stage(diff_json(repo, "--stage", "dev"), "dev")["changes"] if c["scope"] == "serve"}


def test_an_endpoint_added_then_opened_to_key_pairs_and_wider_scale(repo):  # noqa: F811
    change(repo, "stacks/Pulumi.dev.yaml", "    deletion_protection: false\n", SERVE)
    added = _changes(repo)["endpoint added"]
    assert added["before"] == "absent" and "ddb2bigtable-dev (cloud-run, signing iam)" == added["after"]
    change(repo, "stacks/Pulumi.dev.yaml",
           "      invokers: [serviceAccount:orders-app@my-project-dev.iam.gserviceaccount.com]\n",
           "      signing: keys\n      keys_secret: serve-keys\n      max_instances: 40\n")
    found = _changes(repo)
    assert (found["signing"]["before"], found["signing"]["after"], found["signing"]["flag"]) == ("iam", "keys", "RISK")
    assert found["key secret"]["after"] == "serve-keys" and found["key secret"]["flag"] == "RISK"
    assert found["invokers"]["after"] == "none" and found["invokers"]["flag"] is None  # fewer callers: no risk
    assert (found["instances"]["before"], found["instances"]["after"]) == ("0-10", "0-40")


def test_removing_the_endpoint_is_a_risk_and_a_new_invoker_too(repo):  # noqa: F811
    change(repo, "stacks/Pulumi.dev.yaml", "    deletion_protection: false\n", SERVE)
    change(repo, "stacks/Pulumi.dev.yaml", "invokers: [", "invokers: [group:orders@example.com, ")
    invokers = _changes(repo)["invokers"]
    assert invokers["flag"] == "RISK" and "group:orders@example.com" in invokers["why"]
    change(repo, "stacks/Pulumi.dev.yaml", "      enabled: true\n", "      enabled: false\n")
    removed = _changes(repo)["endpoint removed"]
    assert removed["flag"] == "RISK" and removed["after"] == "removed"
