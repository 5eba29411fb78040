"""Elicitation forms read from a requested schema, and typed answers checked against it."""

from __future__ import annotations

from typing import Any

import pytest

from wyckoff_cli.tools.mcp.forms import check_answers, defaults, form_fields

SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "name": {"type": "string", "title": "Name"},
        "count": {"type": "integer", "title": "Count", "minimum": 1, "maximum": 10, "default": 3},
        "ratio": {"type": "number", "title": "Ratio", "maximum": 1},
        "ok": {"type": "boolean", "title": "OK", "default": True},
        "pet": {"type": "string", "title": "Pet", "enum": ["p1", "p2"], "enumNames": ["Cat", "Dog"]},
        "hero": {"type": "string", "title": "Hero", "oneOf": [{"const": "h1", "title": "Superman"}]},
        "fish": {
            "type": "array",
            "title": "Fish",
            "minItems": 1,
            "maxItems": 2,
            "items": {"anyOf": [{"const": "f1", "title": "Tuna"}, {"const": "f2"}, {"const": "f3"}]},
            "default": ["f1"],
        },
        "odd": {"type": "object", "title": "Odd"},
    },
    "required": ["name", "pet"],
}


def test_fields_are_read_from_the_schema() -> None:
    fields = {f.name: f for f in form_fields(SCHEMA)}
    assert [(f.name, f.kind, f.required) for f in fields.values()] == [
        ("name", "string", True),
        ("count", "integer", False),
        ("ratio", "number", False),
        ("ok", "boolean", False),
        ("pet", "enum", True),
        ("hero", "enum", False),
        ("fish", "multi", False),
        ("odd", "string", False),  # another shape is typed as text
    ]
    assert fields["pet"].labels == ("Cat", "Dog") and fields["hero"].labels == ("Superman",)
    assert fields["fish"].options == ("f1", "f2", "f3") and fields["fish"].labels == ("Tuna", "f2", "f3")
    assert (fields["count"].minimum, fields["count"].maximum, fields["count"].default) == (1, 10, 3)


@pytest.mark.parametrize(
    ("typed", "problems"),
    [
        ({}, {"name": "Name is required", "pet": "Pet is required"}),
        ({"name": " ", "pet": "p1"}, {"name": "Name is required"}),
        ({"name": "a", "pet": "p3"}, {"pet": "Pet must be one of p1, p2"}),
        ({"name": "a", "pet": "Cat"}, {"pet": "Pet must be one of p1, p2"}),  # the label is not the value
        ({"name": "a", "pet": "p1", "count": "0"}, {"count": "Count must be at least 1"}),
        ({"name": "a", "pet": "p1", "count": "11"}, {"count": "Count must be at most 10"}),
        ({"name": "a", "pet": "p1", "count": "2.5"}, {"count": "Count must be a whole number"}),
        ({"name": "a", "pet": "p1", "ratio": "1.5"}, {"ratio": "Ratio must be at most 1"}),
        ({"name": "a", "pet": "p1", "ratio": "half"}, {"ratio": "Ratio must be a number"}),
        ({"name": "a", "pet": "p1", "fish": ["f1", "f2", "f3"]}, {"fish": "Fish: choose at most 2"}),
        ({"name": "a", "pet": "p1", "fish": ["f9"]}, {"fish": "Fish: not a choice: f9"}),
    ],
)
def test_what_is_wrong_is_said_per_field(typed: dict[str, Any], problems: dict[str, str]) -> None:
    assert check_answers(form_fields(SCHEMA), typed)[1] == problems


def test_valid_answers_become_typed_content() -> None:
    typed = {
        "name": "Ada",
        "pet": "p2",
        "count": "4",
        "ratio": "0.5",
        "ok": False,
        "fish": ["f1", "f3"],
        "odd": "",
    }
    content, problems = check_answers(form_fields(SCHEMA), typed)
    assert problems == {}
    assert content == {
        "name": "Ada",
        "pet": "p2",
        "count": 4,
        "ratio": 0.5,
        "ok": False,
        "fish": ["f1", "f3"],
    }


def test_defaults_fill_a_form_only_when_every_required_field_has_one() -> None:
    assert defaults(form_fields(SCHEMA)) is None
    relaxed = {**SCHEMA, "required": []}
    assert defaults(form_fields(relaxed)) == {"count": 3, "ok": True, "fish": ["f1"]}
    assert form_fields({"type": "object"}) == [] and defaults([]) == {}
