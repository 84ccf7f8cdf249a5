"""PATCH proposals applied the way GMS applies them (PatchItemImpl, Template, ArrayMergingTemplate).

A PATCH proposal's aspect value is JSON text in one of two shapes, both sent by the SDK's patch builders:

* a bare RFC 6902 list, ``[{"op": "add", "path": "/upstreams/urn:li:dataset:(...)", "value": {...}}]``: the
  aspect's template (``tools.embedded.patch_templates``) turns its keyed arrays into maps, the patch applies,
  and the maps turn back into arrays;
* a GenericJsonPatch envelope, ``{"arrayPrimaryKeys": {"tags": ["attribution\\u241fsource", "tag"]},
  "patch": [...]}``: when it names keys (or sets ``forceGenericPatch``), only the arrays it names become maps,
  keyed as it says, and the patch starts from an empty record when the aspect is absent; otherwise its
  ``patch`` list goes the template way.

Either way the aspect must have a template, as GMS requires. Missing intermediate objects on a patch path are
created first (TemplateUtil.populateTopLevelKeys), so adding under a new key works and removing an absent key
is a no-op. The result is checked against the aspect's schema before it is stored.
"""

from __future__ import annotations

import copy
import json
from functools import cache
from typing import Any

from avro.schema import ArraySchema, RecordSchema, Schema, UnionSchema
from datahub.emitter.aspect import ASPECT_MAP
from datahub.emitter.serialization_helper import post_json_transform, pre_json_transform
from datahub.metadata.schema_classes import _Aspect

from tools.embedded.json_patch import JsonObject, PatchError, apply_ops, check_ops
from tools.embedded.patch_templates import (
    FINE_GRAINED,
    GMS_ONLY_TEMPLATES,
    TEMPLATES,
    UNIT_SEPARATOR,
    fine_grained_to_map,
    map_to_fine_grained,
)

__all__ = ["PatchError", "apply_patch", "validated_aspect"]

_SCALARS = frozenset({"string", "int", "long", "float", "double", "boolean", "enum"})


def apply_patch(aspect_name: str, current: JsonObject | None, raw: str | bytes) -> JsonObject:
    """The aspect's new JSON value (GMS's simplified JSON) after the proposal's patch."""
    if aspect_name in GMS_ONLY_TEMPLATES:
        raise PatchError(f"embedded DataHub does not implement PATCH for aspect {aspect_name}")
    if aspect_name not in TEMPLATES:
        raise PatchError(f"Aspect: {aspect_name} does not currently support patch operations.")
    ops, generic_keys = _parse(raw)
    if generic_keys is None:
        base = copy.deepcopy(current) if current is not None else TEMPLATES[aspect_name].default()
        return _rebase(aspect_name, apply_ops(_transform(aspect_name, base), ops))
    node = copy.deepcopy(current) if current is not None else {}
    for field, keys in generic_keys.items():
        node[field] = _array_to_map(node.get(field), keys)
    node = apply_ops(node, ops)
    for field, keys in generic_keys.items():
        node[field] = _map_to_array(node.get(field), keys, _scalar_fields(aspect_name, field), field)
    return node


def validated_aspect(aspect_name: str, value: JsonObject) -> _Aspect:
    """The typed aspect, or PatchError when the JSON does not fit the aspect's schema (GMS validates too)."""
    try:
        aspect = ASPECT_MAP[aspect_name].from_obj(post_json_transform(value))
    except Exception as exc:  # avro raises several unrelated types for a value of the wrong shape
        raise PatchError(f"the patched {aspect_name} is not a valid aspect: {exc}") from exc
    if not aspect.validate():
        raise PatchError(f"the patched {aspect_name} is not a valid aspect")
    unknown = _unknown_fields(value, pre_json_transform(aspect.to_obj()), "")
    if unknown:
        raise PatchError(f"the patched {aspect_name} has fields its schema does not define: {', '.join(unknown[:5])}")
    return aspect


# ------------------------------------------------------------------------------------------ parsing


def _parse(raw: str | bytes) -> tuple[list[JsonObject], dict[str, tuple[str, ...]] | None]:
    try:
        doc = json.loads(raw)
    except (TypeError, ValueError) as exc:
        raise PatchError(f"Invalid JSON Patch: {exc}") from exc
    generic: dict[str, tuple[str, ...]] | None = None
    if isinstance(doc, dict) and "patch" in doc:
        keys = doc.get("arrayPrimaryKeys") or {}
        if not isinstance(keys, dict) or not all(
            isinstance(v, list) and all(isinstance(k, str) for k in v) for v in keys.values()
        ):
            raise PatchError(f"Invalid JSON Patch: arrayPrimaryKeys must map fields to key lists, got {keys!r}")
        if keys or doc.get("forceGenericPatch") is True:
            generic = {str(field): tuple(v) for field, v in keys.items()}
        doc = doc["patch"]
    if not isinstance(doc, list):
        raise PatchError("Invalid JSON Patch: expected a list of operations or an object with a 'patch' list")
    check_ops(doc)
    return doc, generic


# ------------------------------------------------------------------------------------------ arrays as maps


def _transform(aspect_name: str, node: JsonObject) -> JsonObject:
    template = TEMPLATES[aspect_name]
    if template.fixup:
        template.fixup(node)
    for field, keys in template.arrays:
        node[field] = _array_to_map(node.get(field), keys)
    if template.fine_grained:
        node[FINE_GRAINED] = fine_grained_to_map(node.get(FINE_GRAINED))
    for element in node[template.arrays[0][0]].values() if template.element_templates else ():
        for field, sub_template in template.element_templates:
            if isinstance(element, dict) and isinstance(element.get(field), dict):
                element[field] = _transform(sub_template, element[field])
    return node


def _rebase(aspect_name: str, node: JsonObject) -> JsonObject:
    template = TEMPLATES[aspect_name]
    for field, keys in template.arrays:
        node[field] = _map_to_array(node.get(field), keys, _scalar_fields(aspect_name, field), field)
    if template.fine_grained:
        node[FINE_GRAINED] = map_to_fine_grained(node.get(FINE_GRAINED))
    for element in node[template.arrays[0][0]] if template.element_templates else ():
        for field, sub_template in template.element_templates:
            if isinstance(element, dict) and isinstance(element.get(field), dict):
                element[field] = _rebase(sub_template, element[field])
    if template.fixup:
        template.fixup(node)
    return node


def _array_to_map(value: Any, keys: tuple[str, ...]) -> JsonObject:
    """ArrayMergingTemplate.arrayFieldToMap: nested maps, one level per key field, the element at the bottom."""
    mapped: JsonObject = {}
    for element in value if isinstance(value, list) else ():
        if not keys:
            mapped[element if isinstance(element, str) else ""] = element
            continue
        if not isinstance(element, dict):
            raise PatchError(f"cannot key the array element {element!r} by {list(keys)}")
        slot = mapped
        for key_field in keys:
            slot = slot.setdefault(_key_text(element, key_field), {})
        slot.update(copy.deepcopy(element))
    return mapped


def _key_text(element: JsonObject, key_field: str) -> str:
    *parents, last = key_field.split(UNIT_SEPARATOR)
    node: Any = element
    for part in parents:
        node = node.get(part) if isinstance(node, dict) else None
    value = node.get(last) if isinstance(node, dict) else None
    if value is None or isinstance(value, dict | list):
        return ""  # Jackson's asText() of a missing key or a container
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def _map_to_array(value: Any, keys: tuple[str, ...], scalar: frozenset[str], field: str) -> Any:
    """ArrayMergingTemplate.transformedMapToArray (an array set by the patch stays as is)."""
    if isinstance(value, list):
        return value
    if value is None:
        return []
    if not isinstance(value, dict):
        raise PatchError(f"{field} must be an object or an array after the patch, got {value!r}")
    return _merge(value, keys, scalar) if keys else list(value.values())


def _merge(node: Any, keys: tuple[str, ...], scalar: frozenset[str]) -> list[Any]:
    if not keys:
        return list(node) if isinstance(node, list) else [node]
    key_field, rest = keys[0], keys[1:]
    if not isinstance(node, dict):
        return [item for child in node for item in _merge(child, rest, scalar)] if isinstance(node, list) else []
    merged: list[Any] = []
    for key, child in node.items():
        elements = _merge(child, rest, scalar)
        if key and key_field in scalar:  # a key that only lived in the patch path goes back into the element
            for element in elements:
                if isinstance(element, dict) and key_field not in element:
                    element[key_field] = key
        merged += elements
    return merged


@cache
def _scalar_fields(aspect_name: str, array_field: str) -> frozenset[str]:
    """Primitive or enum fields of the array's element record: the key fields GMS re-injects."""
    field = ASPECT_MAP[aspect_name].RECORD_SCHEMA.fields_dict.get(array_field)
    array = _non_null(field.type) if field is not None else None
    items = _non_null(array.items) if isinstance(array, ArraySchema) else None
    if not isinstance(items, RecordSchema):
        return frozenset()
    return frozenset(f.name for f in items.fields if _non_null(f.type).type in _SCALARS)


def _non_null(schema: Schema) -> Schema:
    if isinstance(schema, UnionSchema):
        branches = [s for s in schema.schemas if s.type != "null"]
        return branches[0] if len(branches) == 1 else schema
    return schema


def _unknown_fields(given: Any, rebuilt: Any, path: str) -> list[str]:
    """Paths present in the patched JSON that did not survive the trip through the aspect class."""
    if isinstance(given, dict):
        if not isinstance(rebuilt, dict):
            return [path or "/"]
        found: list[str] = []
        for key, value in given.items():
            if key not in rebuilt:
                if value is not None:
                    found.append(f"{path}/{key}")
            else:
                found += _unknown_fields(value, rebuilt[key], f"{path}/{key}")
        return found
    if isinstance(given, list) and isinstance(rebuilt, list) and len(given) == len(rebuilt):
        pairs = enumerate(zip(given, rebuilt, strict=True))
        return [found for i, (g, r) in pairs for found in _unknown_fields(g, r, f"{path}/{i}")]
    return []
