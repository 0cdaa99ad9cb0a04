"""Instance labels: the spec's labels, the tables' DynamoDB tags, and who manages it.

GCP labels are stricter than DynamoDB tags (lowercase, `[a-z0-9_-]`, 63 characters, 64
labels), so tags are sanitised; a clash keeps the first value and says so.
"""

from __future__ import annotations

from ..spec.ids import MAX_LABELS, sanitize_label_key, sanitize_label_value
from ..spec.model import Spec
from .model import PlanWarning

Labels = tuple[tuple[str, str], ...]


def instance_labels(spec: Spec, stage_name: str, instance_id: str) -> tuple[Labels, list[PlanWarning]]:
    labels = {"managed-by": "ddb2bigtable", "stage": sanitize_label_value(stage_name)}
    labels.update(spec.instance.labels)
    warnings = []
    for table in spec.tables:
        for key, value in table.source.tags.items():
            k, v = sanitize_label_key(key), sanitize_label_value(value)
            if k in labels and labels[k] != v:
                warnings.append(PlanWarning(
                    "label-clash", instance_id, table.id,
                    f"tag {key}={value} becomes label {k}, already {labels[k]!r}: kept the first"))
                continue
            labels[k] = v
    if len(labels) > MAX_LABELS:
        warnings.append(PlanWarning("label-limit", instance_id, None,
                                    f"{len(labels)} labels; GCP allows {MAX_LABELS}: kept the first {MAX_LABELS}"))
    return tuple(sorted(labels.items())[:MAX_LABELS]), warnings
