"""Schema-checked answers: a turn whose final answer must be JSON valid against a schema.

Reusable by any host (`wyckoff run --output-schema`, the Python API's `output_schema`,
and hosts built on them such as review or batch):

- `load_schema(path)` / `check_schema(schema)`: the schema, checked as JSON Schema
  2020-12 with `jsonschema` before any request; a file that is not JSON or not a valid
  schema is a `UsageError` (exit 2) naming the file and the problem.
- `answer_tool(schema)`: the session's answer format, a `Tool` flagged `answer`. Vendors
  with native structured output get its schema as the answer's format on each request of
  the turn — OpenAI Chat `response_format` (json_schema), the Responses API
  `text.format`, Gemini `responseMimeType` + `responseJsonSchema` — and do not see it as
  a tool; Anthropic gets it as the tool `final_answer` and must call a tool (`tool_choice`
  `any`), so tools still work before the answer, which is that call's arguments (a call
  that succeeds ends the turn, `completed_by_tool`). A schema whose top level is not an
  object is wrapped as `{"answer": ...}` for the vendors (they need an object) and
  unwrapped here.
- `schema_checked(chat, schema, prompt, ...)`: the turn's events; its `done` is held back
  and its answer checked (`parse_answer`). Valid: the `done` goes out with `data` (the
  parsed JSON). Invalid: the validator's message goes back to the model as a new turn,
  at most `MAX_CORRECTIONS` (2) times; then `done.reason` is `schema_failed` (headless
  exit 1). The last `done` carries the usage, cost and rounds of every turn it took.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Sequence
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from wyckoff_cli.core import events as ev
from wyckoff_cli.core.errors import UsageError
from wyckoff_cli.session import requests as rq
from wyckoff_cli.tools.base import Tool, ToolContext

if TYPE_CHECKING:
    from wyckoff_cli.session.custom_commands import TurnRequest
    from wyckoff_cli.session.headless import HeadlessChat

ANSWER_TOOL = "final_answer"
MAX_CORRECTIONS = 2
WRAPPED = "answer"  # the property a non-object schema is wrapped in
_ANSWERED = ("completed", "completed_by_tool")


def check_schema(schema: Any, source: str = "the output schema") -> dict[str, Any]:
    """`schema` when it is a valid JSON Schema 2020-12 object; else a `UsageError`."""
    from jsonschema import Draft202012Validator
    from jsonschema.exceptions import SchemaError

    if not isinstance(schema, dict):
        raise UsageError(f"{source} must be a JSON object (a JSON Schema), not {type(schema).__name__}")
    try:
        Draft202012Validator.check_schema(schema)
    except SchemaError as exc:
        where = "/".join(str(p) for p in exc.absolute_path) or "(top level)"
        raise UsageError(f"{source} is not a valid JSON Schema (2020-12) at {where}: {exc.message}") from None
    return schema


def load_schema(path: Path) -> dict[str, Any]:
    """The schema file `path`, read and checked (`UsageError` naming the file)."""
    try:
        text = path.expanduser().read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        reason = getattr(exc, "strerror", None) or str(exc)
        raise UsageError(f"cannot read the output schema {path}: {reason}") from None
    try:
        schema = json.loads(text)
    except ValueError as exc:
        raise UsageError(f"the output schema {path} is not JSON: {exc}") from None
    return check_schema(schema, f"the output schema {path}")


def wraps(schema: dict[str, Any]) -> bool:
    """Whether the vendors get `schema` wrapped in an object (its top level is not one)."""
    return schema.get("type") != "object"


def vendor_schema(schema: dict[str, Any]) -> dict[str, Any]:
    """What the vendors are sent: `schema` without `$schema`, wrapped when needed."""
    bare = {key: value for key, value in schema.items() if key != "$schema"}
    if not wraps(schema):
        return bare
    return {"type": "object", "properties": {WRAPPED: bare}, "required": [WRAPPED]}


def answer_tool(schema: dict[str, Any]) -> Tool:
    """The answer format of a session whose answers must satisfy `schema`."""

    async def run(args: dict[str, Any], _context: ToolContext) -> str:
        return json.dumps(args, ensure_ascii=False)

    return Tool(
        ANSWER_TOOL,
        "Give your final answer by calling this tool, once you have done the work; its arguments "
        "are the answer, which must match this schema. Do not answer in plain text.",
        vendor_schema(schema),
        run,
        completes_run=True,
        concurrency_safe=True,
        answer=True,
    )


def parse_answer(text: str, schema: dict[str, Any]) -> tuple[Any, str | None]:
    """(the parsed answer, None) when `text` is JSON valid against `schema`; else
    (None, what is wrong), worded for the model."""
    from jsonschema import Draft202012Validator

    stripped = _without_fence(text.strip())
    try:
        data = json.loads(stripped)
    except ValueError as exc:
        return None, f"the answer is not JSON ({exc}); answer with JSON only"
    if wraps(schema) and isinstance(data, dict) and set(data) == {WRAPPED}:
        data = data[WRAPPED]
    errors = sorted(Draft202012Validator(schema).iter_errors(data), key=lambda e: list(e.absolute_path))
    if not errors:
        return data, None
    lines = []
    for error in errors[:5]:
        where = "/".join(str(p) for p in error.absolute_path) or "(top level)"
        lines.append(f"at {where}: {error.message}")
    return None, "the answer does not match the schema: " + "; ".join(lines)


def correction(problem: str) -> str:
    """What is sent back to the model after an invalid answer."""
    return (
        f"Your final answer was not accepted: {problem}. Answer again with JSON valid against the "
        f"schema (by calling {ANSWER_TOOL} where it is offered), and nothing else."
    )


def add_answer_tool(chat: HeadlessChat, schema: dict[str, Any]) -> None:
    registry = chat.session.registry
    registry.remove(ANSWER_TOOL)
    registry.add(answer_tool(schema))


async def schema_checked(
    chat: HeadlessChat,
    schema: dict[str, Any],
    prompt: str,
    command: TurnRequest | None = None,
    images: Sequence[Path] = (),
) -> AsyncIterator[ev.RuntimeEvent]:
    """The turn of `prompt` and its corrections, as one stream ending with one `done`."""
    add_answer_tool(chat, schema)
    turns: list[ev.TurnDone] = []
    events = chat.turn(prompt, command=command, images=images)
    while True:
        done: ev.TurnDone | None = None
        async for event in events:
            if isinstance(event, ev.TurnDone):
                done = event
            else:
                yield event
        if done is None:
            return
        turns.append(done)
        if done.reason not in _ANSWERED:
            yield _total(done, turns)
            return
        data, problem = parse_answer(done.text, schema)
        if problem is None:
            yield replace(_total(done, turns), data=data)
            return
        if len(turns) > MAX_CORRECTIONS:
            yield ev.Notice(
                "error", f"The answer is still not valid after {MAX_CORRECTIONS} corrections: {problem}"
            )
            yield replace(_total(done, turns), reason="schema_failed")
            return
        yield ev.Notice(
            "warning", f"Invalid answer, sent back ({len(turns)} of {MAX_CORRECTIONS}): {problem}"
        )
        events = chat.send(rq.Turn(correction(problem)))


def _total(last: ev.TurnDone, turns: list[ev.TurnDone]) -> ev.TurnDone:
    if len(turns) == 1:
        return last
    usage: dict[str, int] = {}
    for done in turns:
        for key, value in done.usage.items():
            usage[key] = usage.get(key, 0) + value
    costs = [done.cost_usd for done in turns if done.cost_usd is not None]
    return replace(
        last, usage=usage, rounds=sum(d.rounds for d in turns), cost_usd=sum(costs) if costs else None
    )


def _without_fence(text: str) -> str:
    """A JSON answer wrapped in a Markdown code fence, unwrapped (models do that)."""
    if text.startswith("```") and text.endswith("```"):
        body = text[3:-3]
        first, _, rest = body.partition("\n")
        return rest if first.strip().isalpha() or not first.strip() else body
    return text
