"""The provider protocol, the uniform stream chunks, and the one error tree.

A provider turns (system prompt, messages, tool specs) into a stream of chunks:
`TextChunk`, `ThinkingChunk`, `ToolCallChunk` (fragments, assembled by the runtime
per index), `ServerToolChunk` (a tool the vendor ran itself), `UsageChunk`, and last
a `StopChunk` saying why the model stopped. Wrappers add `RetryChunk` (the same model
is tried again) and `FallbackChunk` (the next model takes over); both mean "drop what
this call streamed so far". Every vendor failure is translated into a `ProviderError`
subclass (the error tree lives in `core/errors.py`) carrying `kind` and `retryable`, so
the runtime and the fallback logic never look at vendor exceptions. Providers never import tools, storage or the TUI.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol, runtime_checkable

from wyckoff_cli.core.messages import Message, ServerToolPart, ToolSpec
from wyckoff_cli.core.usage import Usage

# Why a model stopped, in one vocabulary for every vendor.
# `pause`: the vendor paused a long server-tool turn and expects it sent back to go on.
StopReason = Literal["end_turn", "tool_use", "max_tokens", "content_filter", "pause", "other"]


@dataclass(frozen=True, slots=True)
class TextChunk:
    """Answer text. `signature` is vendor data that belongs to the text block it ends
    (Gemini's `thoughtSignature` on a text part)."""

    text: str
    signature: str | None = None


@dataclass(frozen=True, slots=True)
class ThinkingChunk:
    """Reasoning text. A chunk with `signature`, `redacted_data` or `extra` closes the
    current thinking block; the next thinking text opens a new one. `extra` is opaque
    vendor data that must go back unchanged (encrypted reasoning)."""

    text: str = ""
    signature: str | None = None
    redacted_data: str | None = None
    extra: dict[str, Any] | None = None


@dataclass(frozen=True, slots=True)
class ToolCallChunk:
    """A fragment of tool call number `index` of this response. The first fragment of a
    call carries `id` and `name`; `arguments` fragments are concatenated. A vendor that
    delivers whole calls sends one chunk with the complete JSON."""

    index: int
    id: str | None = None
    name: str | None = None
    arguments: str = ""
    extra: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class UsageChunk:
    """One model call's token counts; `model` is the model that served it."""

    usage: Usage
    model: str = ""


@dataclass(frozen=True, slots=True)
class ServerToolChunk:
    """A tool the vendor ran on its side. `part` (kept in the history verbatim) is
    None for what is only shown (citations); `summary` is one line for people, e.g.
    `searched the web: QUERY`; `sources` are `{"url", "title"}` entries."""

    name: str
    summary: str
    part: ServerToolPart | None = None
    sources: tuple[dict[str, str], ...] = ()


@dataclass(frozen=True, slots=True)
class StopChunk:
    """The model's stop reason (`reason` in our vocabulary, `raw` as the vendor said
    it). Sent once, at the end of a stream that ended properly: a stream that closes
    without its end marker raises `ConnectionFailed` instead."""

    reason: StopReason
    raw: str = ""


@dataclass(frozen=True, slots=True)
class RetryChunk:
    """Sent by the retry wrapper when `model` failed with a retryable error and is
    asked again after `delay` seconds: everything streamed so far in this call is to
    be dropped. `attempt` is the attempt about to start, of `attempts`. `waited`: the
    seconds this call has waited so far for output (stalled attempts and waits between
    them, the coming `delay` not counted), of at most `limit` (None: no total bound);
    `fallback`: the model a fallback chain would go on to (the host can skip to it)."""

    model: str
    attempt: int
    attempts: int
    delay: float
    error: str
    waited: float = 0.0
    limit: float | None = None
    fallback: str | None = None


@dataclass(frozen=True, slots=True)
class FallbackChunk:
    """Sent by a fallback provider when `from_model` failed with a retryable error and
    `to_model` takes over: everything streamed so far in this call is to be dropped."""

    from_model: str
    to_model: str
    error: str


Chunk = (
    TextChunk
    | ThinkingChunk
    | ToolCallChunk
    | ServerToolChunk
    | UsageChunk
    | StopChunk
    | RetryChunk
    | FallbackChunk
)


@dataclass(frozen=True, slots=True)
class ChatResponse:
    """The text answer of a side call (a compaction summary, a memory flush): no tool
    calls are offered there, so only the text and the tokens matter. Full answers with
    tool calls are assembled by the runtime (`runtime/assembly.py`)."""

    text: str
    usage: Usage


@runtime_checkable
class LLMProvider(Protocol):
    """What the runtime needs from a model. `name` is the model id in use
    (`provider:model`); `context_window` feeds compaction thresholds."""

    @property
    def name(self) -> str: ...

    def chat_stream(
        self,
        messages: Sequence[Message],
        tools: Sequence[ToolSpec],
        system_prompt: str,
    ) -> AsyncIterator[Chunk]: ...

    async def chat(
        self,
        messages: Sequence[Message],
        tools: Sequence[ToolSpec],
        system_prompt: str,
    ) -> ChatResponse: ...


class StreamingProvider:
    """Base for providers whose whole answer is their collected stream: subclasses
    implement `name` and `chat_stream`; `chat` drains the stream."""

    @property
    def name(self) -> str:
        raise NotImplementedError

    def chat_stream(
        self, messages: Sequence[Message], tools: Sequence[ToolSpec], system_prompt: str
    ) -> AsyncIterator[Chunk]:
        raise NotImplementedError

    async def chat(
        self, messages: Sequence[Message], tools: Sequence[ToolSpec], system_prompt: str
    ) -> ChatResponse:
        return await collect_response(self.chat_stream(messages, tools, system_prompt))


class WrappingProvider(StreamingProvider):
    """Base for a provider that wraps another (the watchdog, retries): the name and any
    attribute it does not define are the wrapped provider's (e.g. `requests` of a
    scripted provider)."""

    inner: LLMProvider

    @property
    def name(self) -> str:
        return self.inner.name

    def __getattr__(self, attribute: str) -> Any:
        # Only called for attributes not found here.
        if attribute == "inner":
            raise AttributeError(attribute)
        return getattr(self.inner, attribute)


async def collect_response(stream: AsyncIterator[Chunk]) -> ChatResponse:
    """Drain a chunk stream into its text and usage (for `chat()` implementations).
    A fallback drops the text streamed before it, as the runtime does."""
    text: list[str] = []
    usage = Usage()
    async for chunk in stream:
        if isinstance(chunk, UsageChunk):
            usage = usage + chunk.usage
        elif isinstance(chunk, FallbackChunk | RetryChunk):
            text.clear()
        elif isinstance(chunk, TextChunk):
            text.append(chunk.text)
    return ChatResponse("".join(text), usage)
