"""Images reach each vendor in its own shape, through the real SDKs and the fake server:
a prompt attachment in the user message, a tool's image beside its result."""

from __future__ import annotations

import base64
import json
from pathlib import Path
from typing import Any

import pytest

from tests.images_support import png_bytes
from tests.providers.conftest import call, make_provider
from wyckoff_cli.core.errors import BadRequest
from wyckoff_cli.core.messages import ImagePart, Message, ToolCallPart
from wyckoff_cli.storage.images import ImageStore
from wyckoff_cli.testing.fake_server import FakeServer


def conversation(tmp_path: Path) -> tuple[list[Message], ImagePart, ImagePart]:
    store = ImageStore(tmp_path / "images")
    attached = store.add(png_bytes(64, 48), "screenshot.png")
    read = store.add(png_bytes(32, 32, mode="L"), "diagram.png")
    call_part = ToolCallPart("call_1", "read_file", {"path": "diagram.png"})
    messages = [
        Message.user("What is wrong here?", images=[attached]),
        Message("assistant", (call_part,)),
        Message.tool_result("call_1", "read_file", "[image diagram.png]", images=[read]),
    ]
    return messages, attached, read


def b64(part: ImagePart) -> str:
    return base64.b64encode(Path(part.path).read_bytes()).decode()


async def sent(server: FakeServer, vendor: str, messages: list[Message]) -> dict[str, Any]:
    server.script({"text": "I see it."})
    await call(make_provider(server, vendor), messages)
    (request,) = server.requests
    body: dict[str, Any] = request.body
    return body


async def test_anthropic_image_blocks_in_the_prompt_and_inside_the_tool_result(
    server: FakeServer, tmp_path: Path
) -> None:
    messages, attached, read = conversation(tmp_path)
    body = await sent(server, "anthropic", messages)
    first, _assistant, results = body["messages"]
    assert first["content"][0]["text"] == "What is wrong here?"
    first["content"][1].pop("cache_control", None)  # a cache breakpoint may sit on it
    assert first["content"][1] == {
        "type": "image",
        "source": {"type": "base64", "media_type": "image/png", "data": b64(attached)},
    }
    (result,) = results["content"]
    assert result["type"] == "tool_result"
    assert result["content"][0] == {"type": "text", "text": "[image diagram.png]"}
    assert result["content"][1]["source"] == {"type": "base64", "media_type": "image/png", "data": b64(read)}


async def test_openai_chat_image_url_and_the_tool_image_in_a_user_message_after_the_results(
    server: FakeServer, tmp_path: Path
) -> None:
    messages, attached, read = conversation(tmp_path)
    body = await sent(server, "openai", messages)
    roles = [m["role"] for m in body["messages"]]
    assert roles == ["system", "user", "assistant", "tool", "user"]
    user = body["messages"][1]["content"]
    assert user[0] == {"type": "text", "text": "What is wrong here?"}
    assert user[1] == {"type": "image_url", "image_url": {"url": f"data:image/png;base64,{b64(attached)}"}}
    assert body["messages"][3]["content"] == "[image diagram.png]"  # tool messages hold text only
    follow = body["messages"][4]["content"]
    assert follow[0] == {"type": "text", "text": "[images returned by read_file]"}
    assert follow[1]["image_url"]["url"] == f"data:image/png;base64,{b64(read)}"


async def test_responses_input_image(server: FakeServer, tmp_path: Path) -> None:
    messages, attached, read = conversation(tmp_path)
    body = await sent(server, "openai-responses", messages)
    items = body["input"]
    assert items[0] == {
        "role": "user",
        "content": [
            {"type": "input_text", "text": "What is wrong here?"},
            {"type": "input_image", "image_url": f"data:image/png;base64,{b64(attached)}"},
        ],
    }
    output = next(i for i in items if i.get("type") == "function_call_output")
    assert output["output"] == "[image diagram.png]"
    assert items[-1]["content"][1] == {
        "type": "input_image",
        "image_url": f"data:image/png;base64,{b64(read)}",
    }


async def test_gemini_inline_data(server: FakeServer, tmp_path: Path) -> None:
    messages, attached, read = conversation(tmp_path)
    body = await sent(server, "gemini", messages)
    first, _model, results = body["contents"]

    def blob(part: dict[str, Any]) -> tuple[str, str]:
        data = part.get("inlineData") or part["inline_data"]  # protobuf JSON: either spelling
        return data.get("mimeType") or data.get("mime_type"), data["data"]

    assert first["parts"][0] == {"text": "What is wrong here?"}
    assert blob(first["parts"][1]) == ("image/png", b64(attached))
    assert "functionResponse" in results["parts"][0] or "function_response" in results["parts"][0]
    assert blob(results["parts"][1]) == ("image/png", b64(read))


@pytest.mark.parametrize("vendor", ["anthropic", "openai", "openai-responses", "gemini"])
async def test_no_base64_in_the_saved_message_and_a_lost_image_is_a_clear_error(
    server: FakeServer, tmp_path: Path, vendor: str
) -> None:
    messages, attached, _read = conversation(tmp_path)
    saved = json.dumps([m.to_dict() for m in messages])
    assert b64(attached) not in saved and attached.path in saved
    assert [Message.from_dict(m.to_dict()) for m in messages] == messages
    Path(attached.path).unlink()
    with pytest.raises(BadRequest, match=r"image screenshot\.png: its stored copy .* cannot be read"):
        await call(make_provider(server, vendor), messages)
    assert server.requests == []  # nothing was sent
