"""The stage's `serve:` setting under hostile values (#29's rules): huge numbers, wrong
types, YAML aliases, unknown keys and 100 KB strings each end `validate` and `plan` with
exit 2 located at the key, in seconds, the value cut in the message and a secret never
printed."""

from __future__ import annotations

import time

import pytest

from ..conftest import write_project
from .test_stage_serve import IMAGE, LOCATED, MOVIES, cli

LONG = "9" * 100_000
SECRET = "AKIAIOSFODNN7EXAMPLE:wJalrXUtnFEMIK7MDENGbPxRfiCYEXAMPLEKEY"


@pytest.mark.parametrize(("serve", "key"), [
    ({"memory": LONG + "Gi"}, "memory"),
    ({"memory": "4294967296Gi"}, "memory"),
    ({"min_instances": 10**30}, "min_instances"),
    ({"max_instances": 1e308}, "max_instances"),
    ({"concurrency": "80"}, "concurrency"),
    ({"cpu": [1]}, "cpu"),
    ({"image": "x" * 100_000}, "image"),
    ({"image": "r.example/" + "a" * 100_000}, "image"),
    ({"keys_secret_version": LONG}, "keys_secret_version"),
    ({"signing": "keys", "keys_secret": SECRET}, "keys_secret"),
    ({"signing": "keys", "keys_secret": "s", "keys_secret_version": SECRET}, "keys_secret_version"),
    ({"invokers": ["user:" + "a" * 100_000 + "@example.com"] * 1}, "invokers"),
    ({"regions": ["us-east4"] * 2}, "regions"),
    ({"x" * 100_000: True}, "x" * 100_000),
    ({"ingress": {"nested": [1, 2]}}, "ingress"),
], ids=["memory-100k-digits", "memory-huge", "min-huge", "max-float", "concurrency-text", "cpu-list", "image-100k",
        "image-long-path", "version-100k", "secret-as-keys_secret", "secret-as-version", "invoker-100k",
        "regions-twice", "key-100k", "ingress-map"])
def test_a_hostile_value_is_located_cut_and_never_printed_whole(tmp_path, serve, key):
    root = write_project(tmp_path, {"movies": MOVIES}, {"regions": "home", "serve": {"enabled": True, "image": IMAGE}
                                                        | serve})
    for command in (["validate", "specs/movies.yaml", "--stage", "test"], ["plan", "--stage", "test"]):
        started = time.monotonic()
        run = cli(root, *command)
        assert time.monotonic() - started < 30
        assert run.returncode == 2 and "Traceback" not in run.stderr, run.stderr[-3000:]
        located = [line for line in run.stderr.splitlines() if LOCATED.match(line)]
        assert located and all(len(line) < 2_500 for line in run.stderr.splitlines()), run.stderr[:3000]
        assert key[:40] in located[0], located[0][:500]
        assert "wJalrXUtnFEMI" not in run.stdout + run.stderr


BOMB = "".join(f"    b{i}: &b{i} [{', '.join([f'*b{i - 1}'] * 9)}]\n" for i in range(1, 10))


@pytest.mark.parametrize(("yaml_text", "words"), [
    ("    a0: &b0 [user:x@example.com]\n" + BOMB + "    serve: {enabled: true, image: IMG, invokers: *b9}\n", "alias"),
    ("    serve: &s {enabled: true, image: IMG, serve: *s}\n", ""),
    ("    serve:\n      <<: {enabled: true, image: IMG}\n      signing: none\n", ""),
    ("    serve: {enabled: true, image: IMG, enabled: false}\n", "enabled"),
], ids=["alias-bomb", "recursive-alias", "merge-key", "duplicate-key"])
def test_yaml_tricks_in_the_serve_setting_are_located_exit_2(tmp_path, yaml_text, words):
    root = write_project(tmp_path, {"movies": MOVIES}, {"regions": "home"})
    stack = root / "stacks" / "Pulumi.test.yaml"
    stack.write_text(stack.read_text() + yaml_text.replace("IMG", IMAGE))
    for command in (["validate", "specs/movies.yaml", "--stage", "test"], ["plan", "--stage", "test"]):
        started = time.monotonic()
        run = cli(root, *command)
        assert time.monotonic() - started < 30
        assert run.returncode == 2 and "Traceback" not in run.stderr, run.stderr[-3000:]
        assert len(run.stderr) < 5_000 and "Pulumi.test.yaml:" in run.stderr and words in run.stderr, run.stderr
