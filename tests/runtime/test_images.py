"""Images in a turn: a text-only model is refused before any request, a vendor's
refusal of images becomes the same clear error, and read_file hands a vision model
the image itself (through the real SDKs and the fake server)."""

from __future__ import annotations

import base64
import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.images_support import png_bytes, write
from tests.providers.conftest import make_provider
from tests.runtime.support import collect, of_type
from wyckoff_cli.core import events as ev
from wyckoff_cli.core.messages import Message
from wyckoff_cli.runtime.image_support import ImageSupport
from wyckoff_cli.runtime.loop import AgentRuntime
from wyckoff_cli.session.images import image_support
from wyckoff_cli.storage.config import Config
from wyckoff_cli.storage.images import ImageStore
from wyckoff_cli.testing.fake_server import FakeServer
from wyckoff_cli.tools.files import read_file
from wyckoff_cli.tools.registry import ToolRegistry


@pytest.fixture
def server() -> Iterator[FakeServer]:
    with FakeServer() as fake:
        yield fake


def runtime_for(
    server: FakeServer, vendor: str, model: str, tmp_path: Path, **kwargs: object
) -> AgentRuntime:
    return AgentRuntime(
        make_provider(server, vendor, model=model),
        ToolRegistry([read_file]),
        workspace=tmp_path,
        results_dir=tmp_path / ".results",
        **kwargs,  # type: ignore[arg-type]
    )


def with_image(tmp_path: Path) -> Message:
    part = ImageStore(tmp_path / "images").add(png_bytes(40, 30), "shot.png")
    return Message.user("look", images=[part])


async def test_a_text_only_model_is_refused_before_any_request(server: FakeServer, tmp_path: Path) -> None:
    config = Config(model="anthropic:claude-sonnet-4-5", fallbacks=["openai:o3-mini"])
    runtime = runtime_for(server, "openai", "o3-mini", tmp_path, image_support=image_support(config))
    events, history = await collect(runtime, with_image(tmp_path))
    (failed,) = of_type(events, ev.TurnFailed)
    assert failed.kind == "images_not_supported"
    assert failed.message == (
        "openai:o3-mini takes no images (by the model catalogue), so nothing was sent. "
        "Models configured here that take images: anthropic:claude-sonnet-4-5 (switch with /model or --model)."
    )
    assert server.requests == []
    assert history[0].images  # nothing lost: the message with its image stays


async def test_no_configured_model_takes_images(server: FakeServer, tmp_path: Path) -> None:
    config = Config(model="openai:o3-mini")
    runtime = runtime_for(server, "openai", "o3-mini", tmp_path, image_support=image_support(config))
    events, _ = await collect(runtime, with_image(tmp_path))
    assert "No configured model takes images" in of_type(events, ev.TurnFailed)[0].message
    assert server.requests == []


async def test_an_unknown_model_is_tried_and_its_refusal_is_the_same_error(
    server: FakeServer, tmp_path: Path
) -> None:
    support = ImageSupport(lambda name: None, ("anthropic:claude-sonnet-4-5",))
    server.script({"status": 400, "error_message": "This model does not support image input."})
    runtime = runtime_for(server, "openai", "local-llm", tmp_path, image_support=support)
    events, _ = await collect(runtime, with_image(tmp_path))
    (failed,) = of_type(events, ev.TurnFailed)
    assert failed.kind == "images_not_supported"
    assert failed.message.startswith("openai:local-llm refused the images (")
    assert "does not support image input" in failed.message
    assert "anthropic:claude-sonnet-4-5" in failed.message
    assert len(server.requests) == 1


async def test_other_bad_requests_stay_what_they_are(server: FakeServer, tmp_path: Path) -> None:
    support = ImageSupport(lambda name: None)
    server.script({"status": 400, "error_message": "max_tokens is too large"})
    runtime = runtime_for(server, "openai", "local-llm", tmp_path, image_support=support)
    events, _ = await collect(runtime, with_image(tmp_path))
    assert of_type(events, ev.TurnFailed)[0].kind == "bad_request"


async def test_read_file_on_an_image_gives_a_vision_model_the_image(
    server: FakeServer, tmp_path: Path
) -> None:
    data = png_bytes(120, 80)
    write(tmp_path / "ui" / "shot.png", data)
    store = ImageStore(tmp_path / "session-images")
    server.script(
        {"tool_calls": [{"name": "read_file", "args": {"path": "ui/shot.png"}}]},
        {"text": "A blue box."},
    )
    runtime = runtime_for(server, "anthropic", "claude-sonnet-4-5", tmp_path, images=store)
    events, history = await collect(runtime, "what is in ui/shot.png?")
    assert of_type(events, ev.TurnDone)[0].text == "A blue box."
    (tool,) = [m for m in history if m.role == "tool"]
    assert tool.text == "[image ui/shot.png: image/png, 120\u00d780, " + f"{len(data):,} bytes, attached]"
    assert (
        tool.images[0].read_bytes() == data
        and Path(tool.images[0].path).parent == tmp_path / "session-images"
    )
    second = server.requests[1].body
    (result,) = [b for m in second["messages"] for b in m["content"] if b.get("type") == "tool_result"]
    assert result["content"][1]["source"]["data"] == base64.b64encode(data).decode()
    assert base64.b64encode(data).decode() not in json.dumps(tool.to_dict())


async def test_read_file_on_an_image_without_a_vision_model(server: FakeServer, tmp_path: Path) -> None:
    write(tmp_path / "shot.png", png_bytes(10, 10))
    write(tmp_path / "broken.png", b"\x89PNG\r\n\x1a\n truncated")
    server.script(
        {"tool_calls": [{"name": "read_file", "args": {"path": "shot.png"}}]},
        {"tool_calls": [{"name": "read_file", "args": {"path": "broken.png"}}]},
        {"text": "ok"},
    )
    store = ImageStore(tmp_path / "session-images")
    runtime = runtime_for(server, "anthropic", "claude-sonnet-4-5", tmp_path)
    events, history = await collect(runtime, "look")
    tools = [m for m in history if m.role == "tool"]
    assert (
        tools[0].is_error
        and "is a binary file (an image" in tools[0].text
        and "takes no images" in tools[0].text
    )
    assert not tools[0].images
    runtime.images = store
    server.script({"tool_calls": [{"name": "read_file", "args": {"path": "broken.png"}}]}, {"text": "ok"})
    events, history = await collect(runtime, "again")
    (broken,) = [m for m in history if m.role == "tool"]
    assert broken.is_error and broken.text.startswith("broken.png: the image is corrupt or truncated")
