"""The spec and stage models, read from located YAML, checked, or every problem at once.

- `reading.read_specs` / `reading.read_spec`: spec files in, trusted `model.Spec` out.
- `stage.load_stage`: a `stacks/Pulumi.<stage>.yaml` file in, a `stage.Stage` out.
- `errors.InputError`: bad input, every `Problem` located at file:line:column (exit 2).
- `regions.gcp_for`: the AWS region -> GCP region -> Bigtable zones table a spec may use.
- `ids`: Bigtable's naming rules, shared by the checks and the planner.
"""
