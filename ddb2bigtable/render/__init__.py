"""Plan renderers: JSON (stable, documented in docs/json-formats.md), markdown (PRs), terminal."""
