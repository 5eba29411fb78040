"""The form of an MCP elicitation request, UI-free.

A server's `elicitation/create` (form mode) sends a flat JSON Schema object: each
property a string (with `format`), number, integer, boolean or enum (`enum`, or
`oneOf` of `{const, title}`, with optional `enumNames`), `required` names and
`default`s. `form_fields` reads it into `FormField`s a host renders; `check_answers`
turns what a person typed into the `content` the server receives, or says what is wrong
with each field. A property of another shape is shown as a string field.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

FieldKind = Literal["string", "number", "integer", "boolean", "enum"]
Answer = str | int | float | bool


@dataclass(frozen=True)
class FormField:
    name: str
    kind: FieldKind
    title: str
    description: str = ""
    required: bool = False
    default: Answer | None = None
    options: tuple[str, ...] = ()  # the values of an enum
    labels: tuple[str, ...] = ()  # what each option is shown as


def form_fields(schema: dict[str, Any]) -> list[FormField]:
    properties = schema.get("properties") if isinstance(schema, dict) else None
    if not isinstance(properties, dict):
        return []
    required = set(schema.get("required") or ())
    return [
        _field(name, spec if isinstance(spec, dict) else {}, name in required)
        for name, spec in properties.items()
    ]


def _field(name: str, spec: dict[str, Any], required: bool) -> FormField:
    title = str(spec.get("title") or name)
    description = str(spec.get("description") or "")
    default = spec.get("default")
    default = default if isinstance(default, str | int | float | bool) else None
    options, labels = _options(spec)
    if options:
        return FormField(name, "enum", title, description, required, default, options, labels)
    kind = spec.get("type")
    if kind in ("number", "integer", "boolean"):
        return FormField(name, kind, title, description, required, default)
    return FormField(name, "string", title, description, required, default)


def _options(spec: dict[str, Any]) -> tuple[tuple[str, ...], tuple[str, ...]]:
    values = spec.get("enum")
    if isinstance(values, list) and values:
        options = tuple(str(v) for v in values)
        names = spec.get("enumNames")
        labels = (
            tuple(str(n) for n in names)
            if isinstance(names, list) and len(names) == len(options)
            else options
        )
        return options, labels
    choices = spec.get("oneOf") or spec.get("anyOf")
    if isinstance(choices, list) and choices and all(isinstance(c, dict) and "const" in c for c in choices):
        return tuple(str(c["const"]) for c in choices), tuple(
            str(c.get("title") or c["const"]) for c in choices
        )
    return (), ()


def defaults(fields: list[FormField]) -> dict[str, Answer] | None:
    """The content of the form left as it is: the defaults, or None when a required
    field has none (then it cannot be accepted without typing)."""
    content: dict[str, Answer] = {}
    for item in fields:
        if item.default is not None:
            content[item.name] = item.default
        elif item.required:
            return None
    return content


def check_answers(fields: list[FormField], typed: dict[str, Any]) -> tuple[dict[str, Answer], dict[str, str]]:
    """`typed`: a field's name → its text (or a bool for a boolean). Returns the content
    to send and, per field, what is wrong with it (empty when the form is valid)."""
    content: dict[str, Answer] = {}
    problems: dict[str, str] = {}
    for item in fields:
        raw = typed.get(item.name)
        if isinstance(raw, bool):
            content[item.name] = raw
            continue
        text = "" if raw is None else str(raw).strip()
        if not text:
            if item.required:
                problems[item.name] = f"{item.title} is required"
            continue
        value, problem = _converted(item, text)
        if problem:
            problems[item.name] = problem
        elif value is not None:
            content[item.name] = value
    return content, problems


def _converted(item: FormField, text: str) -> tuple[Answer | None, str]:
    if item.kind == "integer":
        try:
            return int(text), ""
        except ValueError:
            return None, f"{item.title} must be a whole number"
    if item.kind == "number":
        try:
            return float(text), ""
        except ValueError:
            return None, f"{item.title} must be a number"
    if item.kind == "boolean":
        lowered = text.lower()
        if lowered in ("true", "yes", "y", "1"):
            return True, ""
        if lowered in ("false", "no", "n", "0"):
            return False, ""
        return None, f"{item.title} must be yes or no"
    if item.kind == "enum" and text not in item.options:
        return None, f"{item.title} must be one of {', '.join(item.options)}"
    return text, ""
