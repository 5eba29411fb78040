"""The answer format (`ToolSpec.answer`) in each adapter's request: native structured
output where the vendor has it, a tool that must be called where it does not; a request
without one is unchanged (providers/answer_format.py)."""

from __future__ import annotations

from typing import Any

import pytest

from wyckoff_cli.core.messages import Message, ToolSpec
from wyckoff_cli.providers.anthropic import AnthropicProvider
from wyckoff_cli.providers.gemini import GeminiProvider
from wyckoff_cli.providers.openai_compat import OpenAICompatProvider
from wyckoff_cli.providers.openai_responses import OpenAIResponsesProvider
from wyckoff_cli.providers.spec import ModelSpec

SCHEMA: dict[str, Any] = {"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]}
READ = ToolSpec("read_file", "Read a file", {"type": "object", "properties": {"path": {"type": "string"}}})
ANSWER = ToolSpec("final_answer", "The answer", SCHEMA, answer=True)
MESSAGES = [Message.user("count")]


def request(provider: Any, tools: list[ToolSpec]) -> dict[str, Any]:
    built: dict[str, Any] = provider.build_request(MESSAGES, tools, "system")
    return built


def test_openai_chat_gets_response_format_and_no_answer_tool() -> None:
    provider = OpenAICompatProvider(ModelSpec("openai", "gpt-4.1"), api_key="k")
    body = request(provider, [READ, ANSWER])
    assert body["response_format"] == {
        "type": "json_schema",
        "json_schema": {"name": "final_answer", "schema": SCHEMA, "strict": False},
    }
    assert [t["function"]["name"] for t in body["tools"]] == ["read_file"]
    assert "response_format" not in request(provider, [READ])


def test_openai_chat_with_only_the_answer_offers_no_tools() -> None:
    body = request(OpenAICompatProvider(ModelSpec("openai", "gpt-4.1"), api_key="k"), [ANSWER])
    assert (
        "tools" not in body and "tool_choice" not in body and body["response_format"]["type"] == "json_schema"
    )


def test_responses_gets_text_format() -> None:
    provider = OpenAIResponsesProvider(ModelSpec("openai-responses", "gpt-5"), api_key="k")
    body = request(provider, [READ, ANSWER])
    assert body["text"] == {
        "format": {"type": "json_schema", "name": "final_answer", "schema": SCHEMA, "strict": False}
    }
    assert [t["name"] for t in body["tools"]] == ["read_file"]
    assert "text" not in request(provider, [READ])


def test_gemini_gets_a_json_response_schema() -> None:
    provider = GeminiProvider(ModelSpec("gemini", "gemini-2.5-pro"), api_key="k")
    body = request(provider, [READ, ANSWER])["body"]
    assert body["generationConfig"]["responseMimeType"] == "application/json"
    assert body["generationConfig"]["responseJsonSchema"] == SCHEMA
    assert [d["name"] for d in body["tools"][0]["functionDeclarations"]] == ["read_file"]
    assert "responseJsonSchema" not in request(provider, [READ])["body"].get("generationConfig", {})


@pytest.mark.parametrize(("thinking", "choice"), [(None, "any"), ("budget", "auto")])
def test_anthropic_must_call_a_tool_unless_thinking(thinking: str | None, choice: str) -> None:
    provider = AnthropicProvider(ModelSpec("anthropic", "claude-sonnet-4-5", thinking=thinking), api_key="k")
    body = request(provider, [READ, ANSWER])
    assert body["tool_choice"] == {"type": choice}
    assert [t["name"] for t in body["tools"]] == ["read_file", "final_answer"]
    assert "tool_choice" not in request(provider, [READ])
