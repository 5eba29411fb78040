"""Newline-delimited JSON-RPC on stdin/stdout, with every malformed line answered.

The `agent-client-protocol` package's own line reader hands any JSON value to the
connection, which expects an object: a batch (a JSON array) killed the receive loop
with a traceback, a `null` line read as the end of the stream, and an unparsable line
was dropped unanswered. This transport (the package's `Transport` seam) passes on only
request, notification and response objects, and answers the rest as JSON-RPC 2.0 says:

- not JSON → one error `-32700 Parse error`, id null;
- an empty array, or a value that is not an object or array → one `-32600 Invalid
  Request`, id null;
- a non-empty array (a batch; ACP has none) → an array with one `-32600` error per
  element, naming that element's id (null when it has none usable); notifications in it
  get no answer, as the spec says, and an all-notification batch gets nothing;
- an object that is neither request, notification nor response (no `method` and no
  `id`, a `method` that is not a string, an `id` that is not a string, number or null)
  → `-32600` with its id where usable.

The connection stays up in every case.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
from typing import Any

log = logging.getLogger(__name__)

PARSE_ERROR = -32700
INVALID_REQUEST = -32600


def error_response(request_id: Any, code: int, message: str) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": request_id, "error": {"code": code, "message": message}}


def _usable_id(value: Any) -> bool:
    return value is None or (isinstance(value, str | int | float) and not isinstance(value, bool))


def problem_of(message: dict[str, Any]) -> str | None:
    """Why `message` is not a request, notification or response (None when it is one)."""
    if "id" in message and not _usable_id(message["id"]):
        return "the id must be a string, a number or null"
    if "method" in message:
        return None if isinstance(message["method"], str) else "the method must be a string"
    if "id" not in message:
        return "neither a request (no method) nor a response (no id)"
    return None


def answers_for(value: Any) -> dict[str, Any] | list[dict[str, Any]] | None:
    """The answer to a parsed line that the connection must not see (None: pass it on,
    or, for a batch of notifications only, nothing to answer)."""
    if isinstance(value, dict):
        problem = problem_of(value)
        if problem is None:
            return None
        request_id = value.get("id") if _usable_id(value.get("id")) else None
        return error_response(request_id, INVALID_REQUEST, f"Invalid Request: {problem}")
    if isinstance(value, list):
        if not value:
            return error_response(None, INVALID_REQUEST, "Invalid Request: an empty batch")
        answers = []
        for item in value:
            if isinstance(item, dict) and "method" in item and "id" not in item:
                continue  # a notification: never answered
            request_id = item.get("id") if isinstance(item, dict) and _usable_id(item.get("id")) else None
            answers.append(
                error_response(request_id, INVALID_REQUEST, "Invalid Request: batches are not supported")
            )
        return answers or None
    return error_response(None, INVALID_REQUEST, "Invalid Request: a JSON-RPC message must be an object")


class JsonRpcLines:
    """The ACP connection's transport over a byte reader and writer."""

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self._reader = reader
        self._writer = writer
        self._lock = asyncio.Lock()

    async def send(self, message: dict[str, Any]) -> None:
        await self._write(message)

    async def receive(self) -> dict[str, Any] | None:
        while True:
            line = await self._read_line()
            if not line:
                return None  # end of the stream
            line = line.strip()
            if not line:
                continue
            try:
                value = json.loads(line)
            except (ValueError, RecursionError):
                log.warning("ACP: a line that is not JSON was answered with a parse error")
                await self._write(error_response(None, PARSE_ERROR, "Parse error"))
                continue
            answer = answers_for(value)
            if answer is None and isinstance(value, dict):
                return value
            log.warning("ACP: an invalid JSON-RPC line was answered with an error")
            if answer is not None:
                await self._write(answer)

    async def close(self) -> None:
        self._writer.close()
        with contextlib.suppress(Exception):
            await self._writer.wait_closed()

    async def _write(self, payload: dict[str, Any] | list[dict[str, Any]]) -> None:
        data = (json.dumps(payload, separators=(",", ":"), ensure_ascii=False) + "\n").encode("utf-8")
        async with self._lock:
            self._writer.write(data)
            await self._writer.drain()

    async def _read_line(self) -> bytes:
        chunks: list[bytes] = []
        try:
            while True:
                try:
                    chunks.append(await self._reader.readuntil(b"\n"))
                    return b"".join(chunks)
                except asyncio.LimitOverrunError as exc:  # a longer line: read it in pieces
                    chunks.append(await self._reader.readexactly(exc.consumed))
        except asyncio.IncompleteReadError as exc:
            chunks.append(exc.partial)
            return b"".join(chunks)
