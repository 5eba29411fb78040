"""ACP `image` prompt blocks reach the model as images (the agent process, the real
Anthropic SDK and the fake server); a bad block, or images with a slash command, is an
invalid-params error."""

from __future__ import annotations

import base64
from pathlib import Path

import acp
import pytest
from acp import schema
from acp.helpers import image_block, text_block

from tests.acp.test_acp import Editor, wyckoff_acp
from tests.images_support import png_bytes
from wyckoff_cli.testing.fake_server import FakeServer


@pytest.mark.slow
async def test_an_image_block_reaches_the_model_and_a_bad_one_is_refused(workspace: Path) -> None:
    data = base64.b64encode(png_bytes(48, 24)).decode()
    with FakeServer() as server:
        server.script({"text": "A blue strip."})
        editor = Editor()
        async with wyckoff_acp(editor, server, workspace) as conn:
            init = await conn.initialize(protocol_version=acp.PROTOCOL_VERSION)
            assert init.agent_capabilities is not None
            assert init.agent_capabilities.prompt_capabilities is not None
            assert init.agent_capabilities.prompt_capabilities.image is True
            new = await conn.new_session(cwd=str(workspace), mcp_servers=[])
            prompt = [text_block("what is this?"), image_block(data, "image/png")]
            done = await conn.prompt(session_id=new.session_id, prompt=prompt)
            assert done.stop_reason == "end_turn"
            (request,) = server.requests
            content = request.body["messages"][0]["content"]
            assert content[0]["text"] == "what is this?"
            assert content[1]["type"] == "image"
            assert content[1]["source"] == {"type": "base64", "media_type": "image/png", "data": data}

            bad = [text_block("and this?"), image_block(base64.b64encode(b"junk").decode(), "image/png")]
            with pytest.raises(acp.RequestError) as caught:
                await conn.prompt(session_id=new.session_id, prompt=bad)
            assert "image-2: not an image Wyckoff can read" in str(caught.value.data)
            assert len(server.requests) == 1  # nothing sent
            assert not editor.of(schema.AgentMessageChunk)[1:]  # no second answer

            command = [text_block("/cost"), image_block(data, "image/png")]
            with pytest.raises(acp.RequestError) as caught:
                await conn.prompt(session_id=new.session_id, prompt=command)
            assert "Images are sent with a prompt, not with a slash command" in str(caught.value.data)
            assert len(server.requests) == 1  # nothing sent


@pytest.mark.slow
async def test_session_load_replays_the_images_sent_with_a_message(workspace: Path) -> None:
    data = base64.b64encode(png_bytes(48, 24)).decode()
    with FakeServer() as server:
        server.script({"text": "A blue strip."})
        editor = Editor()
        async with wyckoff_acp(editor, server, workspace) as conn:
            await conn.initialize(protocol_version=acp.PROTOCOL_VERSION)
            new = await conn.new_session(cwd=str(workspace), mcp_servers=[])
            prompt = [text_block("what is this?"), image_block(data, "image/png")]
            assert (await conn.prompt(session_id=new.session_id, prompt=prompt)).stop_reason == "end_turn"
        replayed = Editor()
        async with wyckoff_acp(replayed, server, workspace) as conn:
            await conn.initialize(protocol_version=acp.PROTOCOL_VERSION)
            await conn.load_session(cwd=str(workspace), session_id=new.session_id, mcp_servers=[])
    user = [u.content for u in replayed.of(schema.UserMessageChunk)]
    assert [type(c).__name__ for c in user] == ["TextContentBlock", "ImageContentBlock"]
    assert user[0].text == "what is this?"
    assert user[1].data == data and user[1].mime_type == "image/png"  # the bytes sent, as sent
