"""Per-vendor JSON Schema cleaning: what each vendor rejects, and schemas nothing fixes."""

from __future__ import annotations

from typing import Any

import pytest

from wyckoff_cli.core.tool_schema import SchemaUnusable, clean_schema, usable_for

REFS: dict[str, Any] = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "type": "object",
    "$defs": {"Point": {"type": "object", "properties": {"x": {"type": "number"}}, "required": ["x"]}},
    "properties": {
        "where": {"$ref": "#/$defs/Point", "description": "a point"},
        "label": {"anyOf": [{"type": "string"}, {"type": "null"}], "default": None},
        "mode": {"const": "fast"},
        "tags": {"type": ["array", "null"], "items": {"type": "string", "format": "hostname"}},
        "size": {"type": "integer", "enum": [1, 2, 3]},
        "extra": {"type": "object", "additionalProperties": {"type": "string"}, "examples": [{}]},
    },
    "required": ["where", "ghost"],
    "additionalProperties": False,
}


def test_anthropic_keeps_json_schema_but_drops_meta_keys() -> None:
    out = clean_schema(REFS, "anthropic")
    assert "$schema" not in out and out["$defs"] == REFS["$defs"]
    assert out["properties"]["where"] == {"$ref": "#/$defs/Point", "description": "a point"}


def test_openai_inlines_references() -> None:
    out = clean_schema(REFS, "openai")
    assert "$defs" not in out and "$schema" not in out
    assert out["properties"]["where"]["properties"] == {"x": {"type": "number"}}
    assert out["properties"]["where"]["description"] == "a point"
    assert out["additionalProperties"] is False


def test_gemini_subset() -> None:
    out = clean_schema(REFS, "gemini")
    props = out["properties"]
    assert props["where"] == {
        "type": "object",
        "properties": {"x": {"type": "number"}},
        "required": ["x"],
        "description": "a point",
    }
    assert props["label"] == {"type": "string", "nullable": True}
    assert props["mode"] == {"enum": ["fast"], "type": "string"}
    assert props["tags"] == {"type": "array", "nullable": True, "items": {"type": "string"}}
    assert props["size"] == {"type": "integer"}  # Gemini enums are strings only
    assert props["extra"] == {"type": "object"}
    assert "additionalProperties" not in out
    assert out["required"] == ["where"]  # a required name without a property is dropped


def test_openai_strict_requires_everything_and_closes_objects() -> None:
    out = clean_schema(
        {
            "type": "object",
            "properties": {"a": {"type": "string"}, "b": {"type": "integer"}},
            "required": ["a"],
        },
        "openai-strict",
    )
    assert out["required"] == ["a", "b"]
    assert out["additionalProperties"] is False
    assert out["properties"]["b"] == {"type": ["integer", "null"]}


def test_cleaning_is_idempotent_and_leaves_the_input_alone() -> None:
    import copy

    original = copy.deepcopy(REFS)
    for vendor in ("anthropic", "openai", "openai-strict", "gemini"):
        once = clean_schema(REFS, vendor)
        assert clean_schema(once, vendor) == once
    assert original == REFS


def test_missing_type_with_properties_becomes_an_object() -> None:
    assert clean_schema({"properties": {}}, "gemini") == {"properties": {}, "type": "object"}
    assert clean_schema({}, "openai") == {"type": "object", "properties": {}}


@pytest.mark.parametrize(
    ("schema", "vendor", "reason"),
    [
        ("not a dict", "anthropic", "not a JSON object"),
        ({"type": "string"}, "openai", "not 'object'"),
        ({"type": "array", "items": {}}, "gemini", "not 'object'"),
        (
            {"type": "object", "properties": {"n": {"$ref": "#/$defs/Missing"}}},
            "openai",
            "cannot be resolved",
        ),
        (
            {"type": "object", "properties": {"n": {"$ref": "#/$defs/Missing"}}},
            "anthropic",
            "cannot be resolved",
        ),
        (
            {"type": "object", "properties": {"n": {"$ref": "http://evil.example/x.json"}}},
            "gemini",
            "cannot be resolved",
        ),
        (
            {
                "type": "object",
                "$defs": {"Node": {"type": "object", "properties": {"next": {"$ref": "#/$defs/Node"}}}},
                "properties": {"root": {"$ref": "#/$defs/Node"}},
            },
            "gemini",
            "recursive",
        ),
        ({"type": "object", "anyOf": [{"required": ["a"]}, {"required": ["b"]}]}, "anthropic", "anyOf"),
        ({"type": "object", "oneOf": [{}]}, "openai", "oneOf"),
    ],
)
def test_unusable_schemas(schema: Any, vendor: str, reason: str) -> None:
    with pytest.raises(SchemaUnusable, match=reason):
        clean_schema(schema, vendor)


def test_recursion_is_fine_for_anthropic_but_not_elsewhere() -> None:
    recursive = {
        "type": "object",
        "$defs": {"Node": {"type": "object", "properties": {"next": {"$ref": "#/$defs/Node"}}}},
        "properties": {"root": {"$ref": "#/$defs/Node"}},
    }
    assert usable_for(recursive, ("anthropic",)) is None
    assert (
        usable_for(recursive, ("anthropic", "gemini")) == "gemini: the reference '#/$defs/Node' is recursive"
    )


def test_too_deep() -> None:
    schema: dict[str, Any] = {"type": "object", "properties": {}}
    node = schema
    for _ in range(40):
        child: dict[str, Any] = {"type": "object", "properties": {}}
        node["properties"]["x"] = child
        node = child
    with pytest.raises(SchemaUnusable, match="deeper"):
        clean_schema(schema, "gemini")
