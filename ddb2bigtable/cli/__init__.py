"""The `ddb2bigtable` command line (exit codes: 0 ok, 1 a check failed, 2 bad input).

- `app.main`: the click group and the spec and plan commands (`validate`, `plan`, `diff`).
- `load`: what `load`, `verify` and `up` run behind their options.
"""
