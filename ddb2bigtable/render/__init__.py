"""Plan renderers: JSON (stable, documented in the README), markdown (PRs), terminal."""
