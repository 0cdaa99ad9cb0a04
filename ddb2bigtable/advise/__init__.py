"""`advise`: the schema-design seeds applied to a spec and a sample of its export (issue #16).

- `run.advise`: spec checks, then a bounded sample's, then a stage's cost, as one `run.Report`.
- `sample.take_sample`: the first items of each data file in turn, stopping at the limit.
- `static`, `keys`, `habits`, `key_numbers`, `limits`, `retention`, `cost`: the checks, pure
  functions returning `findings.Finding`s; `privacy` says what is personal data.
- `report.to_json` / `report.to_markdown` / `report.sections`: the report three ways.
"""
