"""RFC 6902 JSON Patch over plain JSON values, with GMS's one addition: missing parent objects are created.

GMS (TemplateUtil.populateTopLevelKeys) creates every missing object on an operation's path before applying
the patch, all but the last key for most operations and all of them for a remove, so an `add` under a key the
aspect does not have yet works and a `remove` of an absent key is a no-op. Pointers use RFC 6901 escaping
(`~1` for `/`, `~0` for `~`), which the SDK applies to every path component.
"""

from __future__ import annotations

import copy
import json
import re
from typing import Any

from tools.errors import BadRequest

JsonObject = dict[str, Any]

OPS = ("add", "remove", "replace", "move", "copy", "test")
_BAD_ESCAPE = re.compile(r"~(?![01])")


class PatchError(BadRequest, ValueError):
    """A patch GMS would refuse; the endpoint answers it with HTTP 422 and this message."""


def check_ops(ops: list[Any]) -> None:
    """Refuse what GMS cannot parse as a JSON Patch (TemplateUtil.validatePatch and JSON-P)."""
    for op in ops:
        if not isinstance(op, dict) or op.get("op") not in OPS or not isinstance(op.get("path"), str):
            raise PatchError(f"Unsupported PATCH operation: {op!r}")
        if op["op"] in ("add", "replace", "test") and "value" not in op:
            raise PatchError(f"PATCH operation without a value: {op!r}")
        if op["op"] in ("move", "copy") and not isinstance(op.get("from"), str):
            raise PatchError(f"PATCH operation without 'from': {op!r}")


def apply_ops(doc: JsonObject, ops: list[JsonObject]) -> JsonObject:
    for op in ops:
        _populate(doc, op)
    result: Any = doc
    for op in ops:
        result = _apply_op(result, op)
    if not isinstance(result, dict):
        raise PatchError("the patch replaced the aspect with a non-object")
    return result


def _tokens(pointer: str) -> list[str]:
    if pointer == "":
        return []
    if not pointer.startswith("/") or _BAD_ESCAPE.search(pointer):
        raise PatchError(f"invalid JSON pointer {pointer!r}")
    return [t.replace("~1", "/").replace("~0", "~") for t in pointer[1:].split("/")]


def _populate(doc: JsonObject, op: JsonObject) -> None:
    """Create missing intermediate objects along the path (all of it for a remove)."""
    tokens = _tokens(op["path"])
    node: Any = doc
    for token in tokens if op["op"] == "remove" else tokens[:-1]:
        if isinstance(node, dict):
            node = node.setdefault(token, {})
        elif isinstance(node, list) and token.isdigit() and int(token) < len(node):
            node = node[int(token)]
        else:
            return


def _apply_op(doc: Any, op: JsonObject) -> Any:
    name, path = op["op"], op["path"]
    if name == "add":
        return _add(doc, _tokens(path), copy.deepcopy(op["value"]))
    if name == "remove":
        return _remove(doc, _tokens(path), path)
    if name == "replace":
        _get(doc, _tokens(path), path)
        return _add(_remove(doc, _tokens(path), path), _tokens(path), copy.deepcopy(op["value"]))
    if name == "test":
        if _canonical(_get(doc, _tokens(path), path)) != _canonical(op["value"]):
            raise PatchError(f"test failed at {path}")
        return doc
    source = op["from"]
    value = copy.deepcopy(_get(doc, _tokens(source), source))
    if name == "move":
        if path.startswith(source + "/"):
            raise PatchError(f"cannot move {source} into itself")
        doc = _remove(doc, _tokens(source), source)
    return _add(doc, _tokens(path), value)


def _get(doc: Any, tokens: list[str], path: str) -> Any:
    node = doc
    for token in tokens:
        if isinstance(node, dict) and token in node:
            node = node[token]
        elif isinstance(node, list):
            node = node[_index(token, len(node), path)]
        else:
            raise PatchError(f"no value at {path}")
    return node


def _add(doc: Any, tokens: list[str], value: Any) -> Any:
    if not tokens:
        return value
    parent, last = _get(doc, tokens[:-1], "/".join(tokens[:-1])), tokens[-1]
    if isinstance(parent, dict):
        parent[last] = value
    elif isinstance(parent, list):
        parent.insert(len(parent) if last == "-" else _index(last, len(parent) + 1, last), value)
    else:
        raise PatchError(f"cannot add {last!r} under a {type(parent).__name__}")
    return doc


def _remove(doc: Any, tokens: list[str], path: str) -> Any:
    if not tokens:
        raise PatchError("cannot remove the whole aspect")
    parent, last = _get(doc, tokens[:-1], path), tokens[-1]
    if isinstance(parent, dict) and last in parent:
        del parent[last]
    elif isinstance(parent, list):
        parent.pop(_index(last, len(parent), path))
    else:
        raise PatchError(f"no value at {path}")
    return doc


def _index(token: str, size: int, path: str) -> int:
    if not re.fullmatch(r"0|[1-9][0-9]*", token) or int(token) >= size:
        raise PatchError(f"no array index {token!r} at {path}")
    return int(token)


def _canonical(value: Any) -> str:
    return json.dumps(value, sort_keys=True)
