"""The form of an MCP elicitation request, UI-free.

A server's `elicitation/create` (form mode) sends a flat JSON Schema object: each
property a string (with `format`), number, integer, boolean or enum (`enum`, or
`oneOf` of `{const, title}`, with optional `enumNames`) or a multiple choice (an
array whose `items` are such an enum, with `minItems`/`maxItems`), `required` names,
`default`s, and `minimum`/`maximum` for numbers. `form_fields` reads it into `FormField`s a host renders; `check_answers`
turns what a person typed into the `content` the server receives, or says what is wrong
with each field. A property of another shape is shown as a string field.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

FieldKind = Literal["string", "number", "integer", "boolean", "enum", "multi"]
Answer = str | int | float | bool | list[str]


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
    minimum: float | None = None  # numbers; for `multi`, the fewest and most choices
    maximum: float | None = None


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
    kind = spec.get("type")
    if kind == "array" and isinstance(spec.get("items"), dict):
        options, labels = _options(spec["items"])
        if options:
            chosen = [str(v) for v in default] if isinstance(default, list) else None
            low, high = _bound(spec.get("minItems")), _bound(spec.get("maxItems"))
            return FormField(name, "multi", title, description, required, chosen, options, labels, low, high)
    default = default if isinstance(default, str | int | float | bool) else None
    options, labels = _options(spec)
    if options:
        return FormField(name, "enum", title, description, required, default, options, labels)
    if kind in ("number", "integer"):
        low, high = _bound(spec.get("minimum")), _bound(spec.get("maximum"))
        return FormField(name, kind, title, description, required, default, minimum=low, maximum=high)
    if kind == "boolean":
        return FormField(name, kind, title, description, required, default)
    return FormField(name, "string", title, description, required, default)


def _bound(value: Any) -> float | None:
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else None


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
        if item.default is not None and item.default != []:
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
        if item.kind == "multi":
            chosen = [str(v) for v in raw] if isinstance(raw, list | tuple) else []
            problem = _choices_problem(item, chosen)
            if problem:
                problems[item.name] = problem
            elif chosen:
                content[item.name] = chosen
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


def _choices_problem(item: FormField, chosen: list[str]) -> str:
    unknown = [c for c in chosen if c not in item.options]
    if unknown:
        return f"{item.title}: not a choice: {', '.join(unknown)}"
    if not chosen:
        return f"{item.title} is required" if item.required else ""
    if item.minimum is not None and len(chosen) < item.minimum:
        return f"{item.title}: choose at least {item.minimum:g}"
    if item.maximum is not None and len(chosen) > item.maximum:
        return f"{item.title}: choose at most {item.maximum:g}"
    return ""


def _in_range(item: FormField, value: float) -> str:
    if item.minimum is not None and value < item.minimum:
        return f"{item.title} must be at least {item.minimum:g}"
    if item.maximum is not None and value > item.maximum:
        return f"{item.title} must be at most {item.maximum:g}"
    return ""


def _converted(item: FormField, text: str) -> tuple[Answer | None, str]:
    if item.kind in ("integer", "number"):
        try:
            value: float = int(text) if item.kind == "integer" else float(text)
        except ValueError:
            return None, f"{item.title} must be {'a whole number' if item.kind == 'integer' else 'a number'}"
        problem = _in_range(item, value)
        return (None, problem) if problem else (value, "")
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
