"""The provider-neutral conversation model.

A conversation is a list of `Message`s. An assistant message keeps its parts (text,
thinking, tool calls) in the order the model produced them, so a vendor adapter can
replay them exactly. Everything here is plain data with lossless `to_dict`/`from_dict`
round trips; this module imports nothing else of ours.
"""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Literal

Role = Literal["user", "assistant", "tool"]


@dataclass(frozen=True, slots=True)
class TextPart:
    """Visible text. `signature` is vendor data that must go back with the text to the
    vendor named by `provider` (Gemini's `thoughtSignature` on a text part)."""

    text: str
    signature: str | None = None
    provider: str | None = None
    type: Literal["text"] = "text"


@dataclass(frozen=True, slots=True)
class ThinkingPart:
    """Reasoning the model showed. `signature` and `provider` let the same vendor
    verify a replayed block; another vendor's blocks are dropped on conversion."""

    text: str
    signature: str | None = None
    provider: str | None = None
    redacted_data: str | None = None
    # Opaque vendor data that round-trips unchanged (OpenRouter `reasoning_details`,
    # a Responses API reasoning item with its `encrypted_content`).
    extra: dict[str, Any] = field(default_factory=dict)
    type: Literal["thinking"] = "thinking"


@dataclass(frozen=True, slots=True)
class ToolCallPart:
    """One tool call. `arguments` is the parsed object; when the model sent text that
    is not a JSON object, `raw_arguments` keeps it and `arguments` is empty.
    `extra` carries vendor data that must round-trip (e.g. Gemini thought signatures)."""

    id: str
    name: str
    arguments: dict[str, Any]
    raw_arguments: str | None = None
    extra: dict[str, Any] = field(default_factory=dict)
    type: Literal["tool_call"] = "tool_call"


@dataclass(frozen=True, slots=True)
class ServerToolPart:
    """A tool the vendor ran on its side (web search, code execution, tool search):
    the block exactly as the vendor sent it (`data`), kept in the history and sent
    back unchanged to the same `provider`; other vendors skip it. `name` is the
    server tool (`web_search`, `code_execution`, ...), `call_id` links a call block to
    its result block, `kind` says which of the two (or `metadata` for data that is
    only kept, such as Gemini grounding metadata)."""

    provider: str
    name: str
    data: dict[str, Any]
    kind: Literal["call", "result", "metadata"] = "call"
    call_id: str | None = None
    type: Literal["server_tool"] = "server_tool"


@dataclass(frozen=True, slots=True)
class ImagePart:
    """An image in a user or tool message. The bytes are not kept here: they are stored
    once per session by their hash (`sha256`) at `path`, exactly as they are sent, and
    the chat log holds only this reference. `name` is what the person or tool called it
    (a file name, for chips and notes); `width`/`height` are pixels; `size` is bytes."""

    media_type: str
    width: int
    height: int
    sha256: str
    path: str
    size: int
    name: str = ""
    type: Literal["image"] = "image"

    def read_bytes(self) -> bytes:
        """The stored bytes (raises OSError when the session's image file is gone)."""
        with open(self.path, "rb") as file:
            return file.read()

    @property
    def label(self) -> str:
        """`screenshot.png 1280×720`: how chips, transcripts and notes name it."""
        return f"{self.name or self.sha256[:12]} {self.width}\u00d7{self.height}"


Part = TextPart | ThinkingPart | ToolCallPart | ServerToolPart | ImagePart


def new_message_id() -> str:
    return uuid.uuid4().hex[:16]


@dataclass(frozen=True, slots=True, weakref_slot=True)  # weak refs: context/tokens.py caches counts
class Message:
    """One message. Tool results are messages of role `tool` answering `tool_call_id`.

    `id` is stable for the message's life (saved with it, kept by `dataclasses.replace`)
    so rewinds and checkpoints can name it; it takes no part in equality."""

    role: Role
    parts: tuple[Part, ...] = ()
    tool_call_id: str | None = None
    tool_name: str | None = None
    is_error: bool = False
    meta: dict[str, Any] = field(default_factory=dict)
    id: str = field(default_factory=new_message_id, compare=False)

    @classmethod
    def user(cls, text: str, *, images: Sequence[ImagePart] = (), **meta: Any) -> Message:
        return cls("user", (TextPart(text), *images), meta=meta)

    @classmethod
    def assistant(cls, text: str) -> Message:
        return cls("assistant", (TextPart(text),) if text else ())

    @classmethod
    def tool_result(
        cls,
        call_id: str,
        name: str,
        content: str,
        *,
        is_error: bool = False,
        images: Sequence[ImagePart] = (),
        **meta: Any,
    ) -> Message:
        return cls(
            "tool",
            (TextPart(content), *images),
            tool_call_id=call_id,
            tool_name=name,
            is_error=is_error,
            meta=meta,
        )

    @property
    def text(self) -> str:
        return "".join(p.text for p in self.parts if isinstance(p, TextPart))

    @property
    def thinking(self) -> list[ThinkingPart]:
        return [p for p in self.parts if isinstance(p, ThinkingPart)]

    @property
    def tool_calls(self) -> list[ToolCallPart]:
        return [p for p in self.parts if isinstance(p, ToolCallPart)]

    @property
    def images(self) -> list[ImagePart]:
        return [p for p in self.parts if isinstance(p, ImagePart)]

    @property
    def server_tools(self) -> list[ServerToolPart]:
        return [p for p in self.parts if isinstance(p, ServerToolPart)]

    def to_dict(self) -> dict[str, Any]:
        data: dict[str, Any] = {
            "id": self.id,
            "role": self.role,
            "parts": [part_to_dict(p) for p in self.parts],
        }
        if self.tool_call_id is not None:
            data["tool_call_id"] = self.tool_call_id
        if self.tool_name is not None:
            data["tool_name"] = self.tool_name
        if self.is_error:
            data["is_error"] = True
        if self.meta:
            data["meta"] = dict(self.meta)
        return data

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Message:
        return cls(
            role=data["role"],
            parts=tuple(part_from_dict(p) for p in data.get("parts", ())),
            tool_call_id=data.get("tool_call_id"),
            tool_name=data.get("tool_name"),
            is_error=bool(data.get("is_error", False)),
            meta=dict(data.get("meta", {})),
            id=str(data.get("id") or new_message_id()),
        )


def with_images(message: str | Message, images: Sequence[ImagePart]) -> Message:
    """A user message (or text) with `images` appended to its parts."""
    base = Message.user(message) if isinstance(message, str) else message
    return replace(base, parts=(*base.parts, *images))


def part_to_dict(part: Part) -> dict[str, Any]:
    data: dict[str, Any]
    if isinstance(part, TextPart):
        data = {"type": "text", "text": part.text}
        if part.signature is not None:
            data["signature"] = part.signature
            data["provider"] = part.provider
        return data
    if isinstance(part, ThinkingPart):
        data = {"type": "thinking", "text": part.text}
        for key in ("signature", "provider", "redacted_data"):
            value = getattr(part, key)
            if value is not None:
                data[key] = value
        if part.extra:
            data["extra"] = dict(part.extra)
        return data
    if isinstance(part, ImagePart):
        data = {
            "type": "image",
            "media_type": part.media_type,
            "width": part.width,
            "height": part.height,
            "sha256": part.sha256,
            "path": part.path,
            "size": part.size,
        }
        if part.name:
            data["name"] = part.name
        return data
    if isinstance(part, ServerToolPart):
        data = {
            "type": "server_tool",
            "provider": part.provider,
            "name": part.name,
            "kind": part.kind,
            "data": dict(part.data),
        }
        if part.call_id is not None:
            data["call_id"] = part.call_id
        return data
    data = {"type": "tool_call", "id": part.id, "name": part.name, "arguments": part.arguments}
    if part.raw_arguments is not None:
        data["raw_arguments"] = part.raw_arguments
    if part.extra:
        data["extra"] = dict(part.extra)
    return data


def part_from_dict(data: dict[str, Any]) -> Part:
    kind = data.get("type")
    if kind == "text":
        return TextPart(data["text"], signature=data.get("signature"), provider=data.get("provider"))
    if kind == "thinking":
        return ThinkingPart(
            data.get("text", ""),
            signature=data.get("signature"),
            provider=data.get("provider"),
            redacted_data=data.get("redacted_data"),
            extra=dict(data.get("extra") or {}),
        )
    if kind == "image":
        return ImagePart(
            media_type=str(data["media_type"]),
            width=int(data["width"]),
            height=int(data["height"]),
            sha256=str(data["sha256"]),
            path=str(data["path"]),
            size=int(data.get("size", 0)),
            name=str(data.get("name", "")),
        )
    if kind == "server_tool":
        return ServerToolPart(
            provider=str(data["provider"]),
            name=str(data.get("name", "")),
            data=dict(data.get("data") or {}),
            kind=data.get("kind", "call"),
            call_id=data.get("call_id"),
        )
    if kind == "tool_call":
        return ToolCallPart(
            id=data["id"],
            name=data["name"],
            arguments=dict(data.get("arguments") or {}),
            raw_arguments=data.get("raw_arguments"),
            extra=dict(data.get("extra", {})),
        )
    raise ValueError(f"unknown message part type: {kind!r}")


@dataclass(frozen=True, slots=True)
class ToolSpec:
    """What a model is told about a tool: name, description and a JSON schema of the
    arguments (an object schema). Each vendor adapter translates it."""

    name: str
    description: str
    parameters: dict[str, Any]
    # The turn's answer format (session/output_schema.py): a vendor with structured output
    # sends `parameters` as the answer's JSON schema instead of offering this tool; the
    # others offer it as the tool the model must call to answer.
    answer: bool = False
