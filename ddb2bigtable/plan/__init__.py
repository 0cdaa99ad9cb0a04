"""Spec + stage -> plan: sizing, topology, clusters, app profiles, GC rules, tables, labels, cost.

- `planner.plan_stage` / `planner.plan_files`: the one entry point that runs every rule module.
- `model`: the frozen plan dataclasses (`StagePlan`, `InstancePlan`, ...) every consumer reads.
- `sizing.NODE_FIGURES`: Google's per-node figures, with their source and date.
- `pricing`: dated unit prices from `data/prices.json` (`bigtable_node_hour`, `dynamodb`, ...).
"""
