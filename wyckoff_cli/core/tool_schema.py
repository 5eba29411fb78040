"""JSON Schemas made acceptable to each vendor's function calling.

Anthropic accepts nearly all of JSON Schema; Gemini accepts an OpenAPI-like subset; OpenAI
rejects composition at the root, and its strict mode wants every property required and
`additionalProperties: false` everywhere. Built-in tools are written to pass everywhere;
external (MCP) tools are not, so their schemas go through `clean_schema` for the vendor the
request is for. `clean_schema` is pure and idempotent; a schema that cannot be made valid
raises `SchemaUnusable` naming the reason, and the tool is dropped before any request.

Local references (`#/$defs/X`, `#/definitions/X`) are inlined for Gemini and OpenAI; a
recursive or dangling reference makes the schema unusable there.
"""

from __future__ import annotations

import copy
from typing import Any, Literal

Vendor = Literal["anthropic", "openai", "openai-strict", "gemini"]
VENDORS: tuple[Vendor, ...] = ("anthropic", "openai", "gemini")

_MAX_DEPTH = 24
_META_KEYS = ("$schema", "$id", "$comment", "$anchor", "$vocabulary", "$dynamicAnchor")
# Gemini (OpenAPI 3.0 subset) keeps these keys of a schema and drops the rest.
_GEMINI_KEYS = frozenset(
    {
        "type", "format", "description", "nullable", "enum", "properties", "required", "items",
        "anyOf", "minItems", "maxItems", "minimum", "maximum", "minLength", "maxLength", "pattern",
        "title", "propertyOrdering", "minProperties", "maxProperties",
    }
)  # fmt: skip
_GEMINI_FORMATS = frozenset({"enum", "date-time", "int32", "int64", "float", "double"})
_COMPOSITION = ("anyOf", "oneOf", "allOf", "not", "enum", "const")


class SchemaUnusable(ValueError):
    """A schema that no cleaning makes valid for a vendor."""


def clean_schema(schema: Any, vendor: str) -> dict[str, Any]:
    """`schema` rewritten for `vendor` (`anthropic`, `openai`, `openai-strict`, `gemini`)."""
    if not isinstance(schema, dict):
        raise SchemaUnusable("the input schema is not a JSON object")
    root = copy.deepcopy(schema)
    for key in _META_KEYS:
        root.pop(key, None)
    if root.get("type") is None and ("properties" in root or not any(k in root for k in _COMPOSITION)):
        root["type"] = "object"
    if root.get("type") != "object":
        raise SchemaUnusable(f"the input schema's root type is {root.get('type')!r}, not 'object'")
    defs = {**_as_dict(root.get("definitions")), **_as_dict(root.get("$defs"))}
    if vendor == "anthropic":
        if any(k in root for k in ("anyOf", "oneOf", "allOf")):
            raise SchemaUnusable("Anthropic does not accept anyOf/oneOf/allOf at the root of an input schema")
        _check_refs(root, defs, 0)
        root.setdefault("properties", {})
        return root
    inlined: dict[str, Any] = _inline(root, defs, (), 0)
    for key in ("anyOf", "oneOf", "allOf", "not", "enum"):
        if key in inlined:
            raise SchemaUnusable(f"{vendor} does not accept {key} at the root of a tool's parameters")
    inlined.setdefault("properties", {})
    if vendor == "openai":
        return inlined
    if vendor == "openai-strict":
        strict: dict[str, Any] = _strict(inlined)
        return strict
    if vendor == "gemini":
        gemini: dict[str, Any] = _gemini(inlined, 0)
        return gemini
    raise ValueError(f"unknown vendor {vendor!r}")


def usable_for(schema: Any, vendors: tuple[str, ...] = VENDORS) -> str | None:
    """None when `schema` can be cleaned for every vendor in `vendors`, else why not."""
    for vendor in vendors:
        try:
            clean_schema(schema, vendor)
        except SchemaUnusable as exc:
            return f"{vendor}: {exc}"
    return None


def _as_dict(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _inline(node: Any, defs: dict[str, Any], seen: tuple[str, ...], depth: int) -> Any:
    if depth > _MAX_DEPTH:
        raise SchemaUnusable(f"the schema is nested deeper than {_MAX_DEPTH} levels")
    if isinstance(node, list):
        return [_inline(item, defs, seen, depth + 1) for item in node]
    if not isinstance(node, dict):
        return node
    ref = node.get("$ref")
    if isinstance(ref, str):
        name = _ref_name(ref)
        if name is None or name not in defs:
            raise SchemaUnusable(f"the reference {ref!r} cannot be resolved")
        if name in seen:
            raise SchemaUnusable(f"the reference {ref!r} is recursive")
        target = _inline(defs[name], defs, (*seen, name), depth + 1)
        extra = {k: v for k, v in node.items() if k != "$ref"}
        return {**target, **_inline(extra, defs, seen, depth + 1)} if isinstance(target, dict) else target
    out: dict[str, Any] = {}
    for key, value in node.items():
        if key in _META_KEYS or key in ("$defs", "definitions"):
            continue
        if key == "properties" and isinstance(value, dict):
            out[key] = {name: _inline(sub, defs, seen, depth + 1) for name, sub in value.items()}
        else:
            out[key] = _inline(value, defs, seen, depth + 1)
    return out


def _check_refs(node: Any, defs: dict[str, Any], depth: int) -> None:
    """Every `$ref` names a local definition (recursion is fine where refs are kept)."""
    if depth > _MAX_DEPTH:
        raise SchemaUnusable(f"the schema is nested deeper than {_MAX_DEPTH} levels")
    if isinstance(node, list):
        for item in node:
            _check_refs(item, defs, depth + 1)
    elif isinstance(node, dict):
        ref = node.get("$ref")
        if isinstance(ref, str) and (_ref_name(ref) is None or _ref_name(ref) not in defs):
            raise SchemaUnusable(f"the reference {ref!r} cannot be resolved")
        for value in node.values():
            _check_refs(value, defs, depth + 1)


def _ref_name(ref: str) -> str | None:
    for prefix in ("#/$defs/", "#/definitions/"):
        if ref.startswith(prefix) and "/" not in ref[len(prefix) :]:
            return ref[len(prefix) :]
    return None


def _strict(node: Any) -> Any:
    """OpenAI strict mode: objects close (`additionalProperties: false`) and list every
    property as required; a property that was optional becomes nullable instead."""
    if isinstance(node, list):
        return [_strict(item) for item in node]
    if not isinstance(node, dict):
        return node
    out = {k: _strict(v) for k, v in node.items() if k not in ("default", "format", "examples")}
    if out.get("type") == "object" or "properties" in out:
        props = out.get("properties") or {}
        required = set(out.get("required") or [])
        for name, sub in list(props.items()):
            if name not in required and isinstance(sub, dict):
                props[name] = _nullable(sub)
        out["properties"] = props
        out["required"] = list(props)
        out["additionalProperties"] = False
    return out


def _nullable(sub: dict[str, Any]) -> dict[str, Any]:
    kind = sub.get("type")
    if isinstance(kind, str) and kind != "null":
        return {**sub, "type": [kind, "null"]}
    if isinstance(kind, list):
        return sub if "null" in kind else {**sub, "type": [*kind, "null"]}
    return {"anyOf": [sub, {"type": "null"}]}


def _gemini(node: Any, depth: int) -> Any:
    if depth > _MAX_DEPTH:
        raise SchemaUnusable(f"the schema is nested deeper than {_MAX_DEPTH} levels")
    if not isinstance(node, dict):
        return node
    node = dict(node)
    if "const" in node:
        node.setdefault("enum", [node.pop("const")])
    if "oneOf" in node and "anyOf" not in node:
        node["anyOf"] = node.pop("oneOf")
    if "allOf" in node:
        node = _merge_all_of(node)
    kind = node.get("type")
    if isinstance(kind, list):
        kinds = [k for k in kind if k != "null"]
        if len(kinds) == 1:
            node["type"] = kinds[0]
            if "null" in kind:
                node["nullable"] = True
        else:
            node.pop("type")
            node["anyOf"] = [{"type": k} for k in kinds]
            if "null" in kind:
                node["nullable"] = True
    out: dict[str, Any] = {}
    for key, value in node.items():
        if key not in _GEMINI_KEYS:
            continue
        if key == "properties" and isinstance(value, dict):
            out[key] = {name: _gemini(sub, depth + 1) for name, sub in value.items()}
        elif key == "items":
            out[key] = _gemini(value, depth + 1) if isinstance(value, dict) else {}
        elif key == "anyOf" and isinstance(value, list):
            options = [
                _gemini(v, depth + 1) for v in value if not (isinstance(v, dict) and v == {"type": "null"})
            ]
            if len(options) < len(value):
                out["nullable"] = True
            if len(options) == 1 and isinstance(options[0], dict):
                out.update({k: v for k, v in options[0].items() if k not in out})
            elif options:
                out[key] = options
        elif key == "format":
            if value in _GEMINI_FORMATS:
                out[key] = value
        elif key == "enum":
            if isinstance(value, list) and value and all(isinstance(v, str) for v in value):
                out[key] = value
                out["type"] = "string"
        else:
            out[key] = value
    if out.get("type") == "array" and "items" not in out:
        out["items"] = {"type": "string"}
    if "required" in out:
        names = set(out.get("properties") or {})
        out["required"] = [r for r in out["required"] if isinstance(r, str) and r in names]
    return out


def _merge_all_of(node: dict[str, Any]) -> dict[str, Any]:
    """`allOf` of object schemas merged into one (properties and required combined);
    anything else in it is dropped, which only loosens the schema."""
    merged = {k: v for k, v in node.items() if k != "allOf"}
    for part in node.get("allOf") or []:
        if not isinstance(part, dict):
            continue
        for key, value in part.items():
            if key == "properties" and isinstance(value, dict):
                merged["properties"] = {**(merged.get("properties") or {}), **value}
            elif key == "required" and isinstance(value, list):
                merged["required"] = list(dict.fromkeys([*(merged.get("required") or []), *value]))
            else:
                merged.setdefault(key, value)
    return merged
