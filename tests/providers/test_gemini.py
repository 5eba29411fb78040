"""Gemini adapter: thought parts, function calls, thought-signature round trip, usage."""

from __future__ import annotations

import base64

from tests.providers.conftest import READ_FILE, call, make_provider, wire_file
from wyckoff_cli.core.messages import Message, TextPart, ThinkingPart, ToolCallPart
from wyckoff_cli.core.usage import Usage
from wyckoff_cli.providers.gemini import GeminiProvider, convert_messages
from wyckoff_cli.providers.spec import ModelSpec
from wyckoff_cli.testing.fake_server import FakeServer


async def test_reference_stream(server: FakeServer) -> None:
    server.script({"sse_file": wire_file("gemini_stream.sse")})
    parts, usage, _ = await call(make_provider(server, "gemini"))
    thought, text, tool = parts
    assert thought == ThinkingPart("**Planning** I need to read the file first.", provider="gemini")
    assert text == TextPart("I'll read the file.")
    assert isinstance(tool, ToolCallPart)
    assert (tool.name, tool.arguments) == ("read_file", {"path": "src/main.py", "limit": 40})
    assert tool.id.startswith("call_")  # minted: the API gives none
    assert tool.extra == {"gemini_thought_signature": "Q2lZQnc0Yk9SL2c9"}
    # the last usage_metadata: thoughts count as output and as reasoning
    assert usage == Usage(2100, 55, 2048, 0, 30)
    assert server.requests[0].path == "/v1beta/models/gemini-2.5-pro:streamGenerateContent?alt=sse"
    assert server.requests[0].headers["x-goog-api-key"] == "test-key-0123456789"


async def test_request_has_declarations_system_and_thinking_config(server: FakeServer) -> None:
    server.script({"text": "ok"})
    provider = make_provider(
        server, "gemini", thinking="budget", thinking_budget=512, max_tokens=900, temperature=0.1
    )
    await call(provider, system="Be brief.")
    body = server.bodies[0]
    assert body["systemInstruction"]["parts"] == [{"text": "Be brief."}]
    declaration = body["tools"][0]["functionDeclarations"][0]
    assert declaration["name"] == "read_file"
    assert declaration["description"] == READ_FILE.description
    schema = declaration.get("parametersJsonSchema", declaration.get("parameters_json_schema"))
    assert schema == READ_FILE.parameters
    config = body["generationConfig"]
    thinking = config["thinkingConfig"]
    assert thinking.get("includeThoughts", thinking.get("include_thoughts")) is True
    assert thinking.get("thinkingBudget", thinking.get("thinking_budget")) == 512
    assert config.get("maxOutputTokens", config.get("max_output_tokens")) == 900


async def test_parallel_calls_and_signature_round_trip(server: FakeServer) -> None:
    signature = base64.b64encode(b"\x00\x01opaque-signature").decode()
    server.script(
        {
            "thinking": "Plan: read and list.",
            "tool_calls": [
                {"name": "read_file", "args": {"path": "a.py"}},
                {"name": "list_dir", "args": {"path": "."}},
            ],
            "signature": signature,
        },
        {"text": "Both done."},
    )
    provider = make_provider(server, "gemini")
    parts, _, _ = await call(provider, [Message.user("look")])
    calls = [p for p in parts if isinstance(p, ToolCallPart)]
    assert [c.name for c in calls] == ["read_file", "list_dir"]
    assert calls[0].extra["gemini_thought_signature"] == signature
    assert len({c.id for c in calls}) == 2
    history = [
        Message.user("look"),
        Message("assistant", tuple(parts)),
        Message.tool_result(calls[0].id, "read_file", "print(1)"),
        Message.tool_result(calls[1].id, "list_dir", "boom", is_error=True),
    ]
    parts, _, _ = await call(provider, history)
    assert parts == [TextPart("Both done.")]
    contents = server.bodies[1]["contents"]
    assert [c["role"] for c in contents] == ["user", "model", "user"]
    model_parts = contents[1]["parts"]
    assert model_parts[0]["thought"] is True
    assert model_parts[1]["functionCall"] == {"name": "read_file", "args": {"path": "a.py"}}
    assert model_parts[1]["thoughtSignature"] == signature  # sent back unchanged
    assert "thoughtSignature" not in model_parts[2]  # Gemini 2.x: no placeholder
    assert contents[2]["parts"] == [
        {"functionResponse": {"name": "read_file", "response": {"output": "print(1)"}}},
        {"functionResponse": {"name": "list_dir", "response": {"error": "boom"}}},
    ]


def test_history_from_another_vendor() -> None:
    history = [
        Message.user("go"),
        Message(
            "assistant",
            (
                ThinkingPart("claude's", signature="sig", provider="anthropic"),
                TextPart("calling"),
                ToolCallPart("toolu_1", "read_file", {"path": "a"}),
            ),
        ),
        Message.tool_result("toolu_1", "read_file", "content"),
        Message.user("and now?", synthetic="loop_guard"),
    ]
    contents = convert_messages(history, placeholder_signatures=True)
    assert contents[1] == {
        "role": "model",
        "parts": [
            {"text": "calling"},
            {
                "functionCall": {"name": "read_file", "args": {"path": "a"}},
                "thoughtSignature": base64.b64encode(b"skip_thought_signature_validator").decode(),
            },
        ],
    }
    assert contents[2]["parts"][1] == {"text": "and now?"}


def test_gemini_3_gets_placeholder_signatures_and_effort_levels() -> None:
    provider = GeminiProvider(
        ModelSpec("gemini", "gemini-3-pro-preview", reasoning_effort="high"), api_key="k"
    )
    request = provider.build_request(
        [
            Message.user("x"),
            Message("assistant", (ToolCallPart("c", "f", {}),)),
            Message.tool_result("c", "f", "r"),
        ],
        [],
        "",
    )
    body = request["body"]
    placeholder = base64.b64encode(b"skip_thought_signature_validator").decode()
    assert body["contents"][1]["parts"][0]["thoughtSignature"] == placeholder
    assert body["generationConfig"]["thinkingConfig"] == {"includeThoughts": True, "thinkingLevel": "HIGH"}
    assert "secret" not in repr(GeminiProvider(ModelSpec("gemini", "m"), api_key="secret-key"))
