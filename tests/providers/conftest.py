"""Fixtures for provider tests: a loopback fake vendor server and providers aimed at it.

Every provider test talks to the real SDKs over real HTTP on 127.0.0.1; nothing
reaches the internet (the suite-wide fixture also clears keys and proxies).
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator, Sequence
from pathlib import Path
from typing import Any

import pytest

from wyckoff_cli.core.messages import Message, Part, ToolSpec
from wyckoff_cli.core.usage import Usage
from wyckoff_cli.providers.base import Chunk, FallbackChunk, LLMProvider, RetryChunk, UsageChunk
from wyckoff_cli.providers.factory import build_provider
from wyckoff_cli.providers.registry import vendor_of
from wyckoff_cli.providers.retry import RetryPolicy
from wyckoff_cli.providers.spec import ModelSpec
from wyckoff_cli.runtime.assembly import ResponseAssembler
from wyckoff_cli.testing.fake_server import FakeServer

# Copies of the recorded vendor streams from the wire reference (protocol data).
WIRE = Path(__file__).resolve().parent / "wire"
VENDORS = ("anthropic", "openai", "gemini")
MODELS = {
    "anthropic": "claude-sonnet-4-5",
    "openai": "gpt-test",
    "gemini": "gemini-2.5-pro",
    "openai-responses": "gpt-5-test",
}
TEST_KEY = "test-key-0123456789"

READ_FILE = ToolSpec(
    "read_file",
    "Read a text file of the workspace.",
    {
        "type": "object",
        "properties": {"path": {"type": "string"}, "limit": {"type": "integer"}},
        "required": ["path"],
    },
)
LIST_DIR = ToolSpec(
    "list_dir",
    "List a folder.",
    {"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]},
)
TOOLS = (READ_FILE, LIST_DIR)


def wire_file(name: str) -> str:
    return str(WIRE / name)


@pytest.fixture
def server() -> Iterator[FakeServer]:
    with FakeServer() as fake:
        yield fake


def make_provider(
    server: FakeServer,
    vendor: str,
    *,
    watchdog: bool = False,
    model: str | None = None,
    retry: RetryPolicy | None = None,
    **spec: Any,
) -> LLMProvider:
    model_spec = ModelSpec(
        vendor, model or MODELS[vendor], base_url=server.url_for(vendor), api_key=TEST_KEY, **spec
    )
    return build_provider(model_spec, watchdog=watchdog, retry=retry)


async def drain(stream: AsyncIterator[Chunk]) -> list[Chunk]:
    return [chunk async for chunk in stream]


async def call(
    provider: LLMProvider,
    messages: Sequence[Message] = (Message.user("hi"),),
    tools: Sequence[ToolSpec] = TOOLS,
    system: str = "You are a test.",
) -> tuple[list[Part], Usage, list[Chunk]]:
    """One streamed call: the assembled parts, the summed usage and the raw chunks."""
    chunks = await drain(provider.chat_stream(messages, tools, system))
    vendor = vendor_of(provider.name)
    assembler = ResponseAssembler(provider=vendor)
    usage = Usage()
    for chunk in chunks:
        if isinstance(chunk, UsageChunk):
            usage = usage + chunk.usage
        elif isinstance(chunk, FallbackChunk):
            assembler = ResponseAssembler(provider=chunk.to_model.split(":", 1)[0])
        elif isinstance(chunk, RetryChunk):
            assembler = ResponseAssembler(provider=vendor)
        else:
            assembler.add(chunk)
    return assembler.parts(), usage, chunks
