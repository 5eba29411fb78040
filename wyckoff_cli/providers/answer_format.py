"""The answer format of a turn (`ToolSpec.answer`), as each vendor takes it.

A session whose answers must match a JSON schema (session/output_schema.py) offers a
tool spec flagged `answer`. Vendors with native structured output get that schema as
the response format on the turn's requests and do not see the spec as a tool:

- OpenAI Chat Completions: `response_format = {"type": "json_schema", "json_schema":
  {"name", "schema", "strict": false}}` (`strict` false: any JSON Schema, not only the
  strict subset);
- OpenAI Responses: `text.format = {"type": "json_schema", "name", "schema", "strict": false}`;
- Gemini: `generationConfig.responseMimeType = "application/json"` and
  `responseJsonSchema` (the JSON Schema form of `responseSchema`, which takes only an
  OpenAPI subset).

Anthropic has no native format that lets tools run first: it keeps the spec as a tool
and must call some tool (`tool_choice = {"type": "any"}`, or `auto` while extended
thinking is on, which refuses a forced choice), so the answer is that tool's call.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from wyckoff_cli.core.messages import ToolSpec


def split_answer(tools: Sequence[ToolSpec]) -> tuple[list[ToolSpec], ToolSpec | None]:
    """(the tools without the answer format, the answer format or None)."""
    answer = next((spec for spec in tools if spec.answer), None)
    return [spec for spec in tools if not spec.answer], answer


def openai_response_format(answer: ToolSpec) -> dict[str, Any]:
    return {
        "type": "json_schema",
        "json_schema": {"name": answer.name, "schema": answer.parameters, "strict": False},
    }


def responses_text_format(answer: ToolSpec) -> dict[str, Any]:
    return {"type": "json_schema", "name": answer.name, "schema": answer.parameters, "strict": False}


def gemini_generation_config(answer: ToolSpec) -> dict[str, Any]:
    return {"responseMimeType": "application/json", "responseJsonSchema": answer.parameters}
