"""Text ION lines of an export's data files (`$ion_1_0 {Item:{...}}`), in AWS's mapping of
DynamoDB types onto ION (sets as annotated lists)."""

from __future__ import annotations

from typing import Any, TypeGuard

from amazon.ion import simpleion
from amazon.ion.core import IonType
from amazon.ion.exceptions import IonException
from amazon.ion.simple_types import IonPyNull

from ..codec.items import AttributeValue, Item
from .json_lines import MAX_NESTING, BadLine, Decoded, dynamodb_number_text, whole_micros


def ion_full(line: bytes) -> Decoded:
    return _ion_item(_ion_line(line).get("Item"), "Item"), None, None, None


def ion_incremental(line: bytes) -> Decoded:
    record = _ion_line(line)
    metadata = record.get("Metadata")
    stamp = metadata.get("WriteTimestampMicros") if _is_ion(metadata, IonType.STRUCT) else None
    # AWS documents no ION incremental line: accept the number itself (N maps to an ION
    # decimal) or the DynamoDB JSON shape {N: "..."}.
    text = stamp.get("N") if _is_ion(stamp, IonType.STRUCT) else stamp
    if _is_ion(text, IonType.DECIMAL) or _is_ion(text, IonType.INT):
        text = dynamodb_number_text(text)
    elif _is_ion(text, IonType.STRING):
        text = str(text)
    write_time = whole_micros(text, stamp)
    keys = _ion_item(record.get("Keys"), "Keys")
    old = record.get("OldImage")
    if old is not None and not _is_ion(old, IonType.STRUCT):
        raise BadLine("OldImage is not a struct")
    image = record.get("NewImage")
    return ((None if image is None else _ion_item(image, "NewImage")), keys, write_time,
            None if old is None else _ion_item(old, "OldImage"))


def _ion_line(line: bytes) -> Any:
    try:
        record = simpleion.loads(line.decode("utf-8"))
    except UnicodeDecodeError as err:
        raise BadLine(f"not valid UTF-8: {err}") from None
    except IonException as err:
        raise BadLine(f"not valid ION: {err}") from None
    except RecursionError:
        raise BadLine(f"nested deeper than DynamoDB's {MAX_NESTING} levels of maps and lists") from None
    if not _is_ion(record, IonType.STRUCT):
        raise BadLine("expected one ION struct after $ion_1_0")
    return record


def _is_ion(value: object, ion_type: IonType) -> TypeGuard[Any]:
    return not isinstance(value, IonPyNull) and getattr(value, "ion_type", None) is ion_type


def _ion_item(value: Any, name: str) -> Item:
    if not _is_ion(value, IonType.STRUCT) or not value:
        raise BadLine(f"{name} is missing, empty or not a struct")
    return {attr: _ion_value(v, f"{name}.{attr}") for attr, v in value.items()}


_ION_SETS = {"$dynamodb_SS": "SS", "$dynamodb_NS": "NS", "$dynamodb_BS": "BS"}


def _ion_value(value: Any, path: str, depth: int = 1) -> AttributeValue:
    """AWS's mapping: string S, decimal N, blob B, bool BOOL, null NULL, struct M, list L,
    and sets as lists annotated `$dynamodb_SS`/`$dynamodb_NS`/`$dynamodb_BS`."""
    if isinstance(value, IonPyNull):
        return {"NULL": True}
    ion_type = value.ion_type
    if ion_type is IonType.STRING:
        return {"S": str(value)}
    if ion_type in (IonType.DECIMAL, IonType.INT):
        return {"N": dynamodb_number_text(value)}
    if ion_type is IonType.BOOL:
        return {"BOOL": bool(value)}
    if ion_type is IonType.BLOB:
        return {"B": bytes(value)}
    if ion_type in (IonType.STRUCT, IonType.LIST) and depth > MAX_NESTING:
        raise BadLine(f"{path}: nested deeper than DynamoDB's {MAX_NESTING} levels of maps and lists")
    if ion_type is IonType.STRUCT:
        return {"M": {k: _ion_value(v, f"{path}.{k}", depth + 1) for k, v in value.items()}}
    if ion_type is IonType.LIST:
        annotations = [getattr(a, "text", a) for a in value.ion_annotations]
        if not annotations:
            return {"L": [_ion_value(v, f"{path}[{i}]", depth + 1) for i, v in enumerate(value)]}
        tag = _ION_SETS.get(annotations[0]) if len(annotations) == 1 else None
        if tag is None:
            raise BadLine(f"{path}: list annotated {annotations}, expected one of {sorted(_ION_SETS)}")
        members = [_ion_value(v, f"{path}[{i}]") for i, v in enumerate(value)]
        if not members or any(next(iter(m)) != tag[0] for m in members):
            raise BadLine(f"{path}: a {tag} set must be a non-empty list of {tag[0]} values")
        return {tag: [m[tag[0]] for m in members]}
    raise BadLine(f"{path}: ION {ion_type.name.lower()} has no DynamoDB type")
