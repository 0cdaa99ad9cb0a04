"""What a change does: two plans compared, specs read at git refs, live tables vs specs.

- `diff_run.run_diff`: plan every stage at a base ref and a head, then `diff.diff_stage` per stage.
- `git_tree`: spec and stack files as they are at a git ref (no checkout).
- `drift.drift`: where a live DynamoDB table no longer matches its spec.
"""
