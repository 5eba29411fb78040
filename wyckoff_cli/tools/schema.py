"""A small JSON-Schema validator for tool arguments.

Covers what tool schemas use: type (incl. lists of types), properties, required,
additionalProperties, enum, items, minimum/maximum, minLength, minItems. Error
messages name the argument path so the model can correct its call.
"""

from __future__ import annotations

from typing import Any

_TYPES: dict[str, tuple[type, ...]] = {
    "object": (dict,),
    "array": (list,),
    "string": (str,),
    "integer": (int,),
    "number": (int, float),
    "boolean": (bool,),
    "null": (type(None),),
}


def validate(value: Any, schema: dict[str, Any], path: str = "arguments") -> list[str]:
    """Return a list of problems (empty when `value` satisfies `schema`)."""
    problems: list[str] = []
    expected = schema.get("type")
    if expected is not None:
        names = expected if isinstance(expected, list) else [expected]
        if not any(_is_type(value, name) for name in names):
            return [f"{path} must be {' or '.join(names)}, got {_describe(value)}"]
    if "enum" in schema and value not in schema["enum"]:
        choices = ", ".join(repr(c) for c in schema["enum"])
        problems.append(f"{path} must be one of {choices}, got {value!r}")
    if isinstance(value, dict):
        props: dict[str, Any] = schema.get("properties", {})
        for key in schema.get("required", []):
            if key not in value:
                problems.append(f"{path}.{key} is required")
        for key, item in value.items():
            if key in props:
                problems.extend(validate(item, props[key], f"{path}.{key}"))
            elif schema.get("additionalProperties") is False:
                allowed = ", ".join(sorted(props)) or "none"
                problems.append(f"{path}.{key} is not a known argument (known: {allowed})")
    if isinstance(value, list):
        if "minItems" in schema and len(value) < schema["minItems"]:
            problems.append(f"{path} needs at least {schema['minItems']} item(s)")
        if "items" in schema:
            for index, item in enumerate(value):
                problems.extend(validate(item, schema["items"], f"{path}[{index}]"))
    if isinstance(value, str) and "minLength" in schema and len(value) < schema["minLength"]:
        problems.append(f"{path} must not be empty")
    if _is_type(value, "number"):
        if "minimum" in schema and value < schema["minimum"]:
            problems.append(f"{path} must be >= {schema['minimum']}, got {value}")
        if "maximum" in schema and value > schema["maximum"]:
            problems.append(f"{path} must be <= {schema['maximum']}, got {value}")
    return problems


def _is_type(value: Any, name: str) -> bool:
    if isinstance(value, bool) and name in ("integer", "number"):
        return False
    if name == "integer" and isinstance(value, float):
        return value.is_integer()
    return isinstance(value, _TYPES.get(name, (object,)))


def _describe(value: Any) -> str:
    if value is None:
        return "null"
    kind = {dict: "object", list: "array", str: "string", bool: "boolean"}.get(type(value))
    return kind or type(value).__name__
