"""The private channel between a background session and the apps that attach to it.

A Unix socket (`storage/running.py` `socket_path`, in a 0700 folder, mode 0600)
carrying JSON lines. The server, in the background session, sends:

- `{"kind": "welcome", "role": "control" | "view", "entry": {...}, "pending": [event, ...]}`
  once, after the client's hello: its role and the approvals waiting now;
- `{"kind": "event", "event": {...}}` for every runtime event, as `RuntimeEvent.to_dict()`
  writes it (the chat log's form; `core.events.event_from_dict` rebuilds it);
- `{"kind": "state", "entry": {...}}` when the registry entry changes (waiting, done);
- `{"kind": "refused", "message": ...}` before it closes a connection it does not accept.

A client sends `{"kind": "hello", "want": "control" | "view"}` first, then requests:
`approve` (`id`, `decision`), `turn` (`text`), `interrupt`, `stop`. Only one client
holds `control` (answers approvals, sends turns); a later one is view-only and told so.
Every connection's peer uid is checked (SO_PEERCRED): another user's process is refused.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import os
import socket
import struct
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from wyckoff_cli.core import events as ev
from wyckoff_cli.core.approval import ApprovalDecision

log = logging.getLogger(__name__)

LINE_LIMIT = 64 * 1024 * 1024  # a tool result may be large; a line is one message
CONTROL_REQUESTS = frozenset({"approve", "turn"})  # only the controlling app sends these
REQUESTS = CONTROL_REQUESTS | {"interrupt", "stop"}


class ChannelError(Exception):
    """The channel cannot be opened or a message is malformed; `message` says why."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


# --------------------------------------------------------------------------- codec


def encode(message: dict[str, Any]) -> bytes:
    return (json.dumps(message, ensure_ascii=False, default=str) + "\n").encode("utf-8")


def decode(line: bytes) -> dict[str, Any]:
    try:
        data = json.loads(line.decode("utf-8"))
    except (UnicodeDecodeError, ValueError) as exc:
        raise ChannelError(f"a malformed message on the channel: {exc}") from None
    if not isinstance(data, dict) or not isinstance(data.get("kind"), str):
        raise ChannelError("a message on the channel has no kind")
    return data


def event_message(event: ev.RuntimeEvent) -> dict[str, Any]:
    return {"kind": "event", "event": event.to_dict()}


def event_of(message: dict[str, Any]) -> ev.RuntimeEvent:
    try:
        return ev.event_from_dict(dict(message["event"]))
    except (KeyError, TypeError, ValueError) as exc:
        raise ChannelError(f"a malformed event on the channel: {exc}") from None


def decision_to_dict(decision: ApprovalDecision) -> dict[str, Any]:
    return {
        "kind": decision.kind,
        "args": decision.args,
        "feedback": decision.feedback,
        "rule": decision.rule,
    }


def decision_of(data: Any) -> ApprovalDecision:
    if not isinstance(data, dict) or data.get("kind") not in ("allow", "always", "edit", "deny"):
        raise ChannelError(f"not an approval decision: {data!r}")
    args = data.get("args")
    if data["kind"] == "edit" and not isinstance(args, dict):
        raise ChannelError("an `edit` decision needs its arguments")
    return ApprovalDecision(data["kind"], args=args, feedback=data.get("feedback"), rule=data.get("rule"))


# --------------------------------------------------------------------------- who is calling


@dataclass(frozen=True, slots=True)
class PeerCredentials:
    pid: int
    uid: int
    gid: int


def peer_credentials(sock: socket.socket) -> PeerCredentials:
    """The connecting process's pid, uid and gid, from the kernel (SO_PEERCRED)."""
    size = struct.calcsize("3i")
    pid, uid, gid = struct.unpack("3i", sock.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, size))
    return PeerCredentials(pid, uid, gid)


def refusal(peer: PeerCredentials | None, own_uid: int) -> str | None:
    """Why a peer is refused (None: it is this user's process)."""
    if peer is None:
        return "the peer's credentials cannot be read"
    if peer.uid != own_uid:
        return f"uid {peer.uid} is not this session's user (uid {own_uid})"
    return None


# --------------------------------------------------------------------------- the server


RequestHandler = Callable[[dict[str, Any], bool], Awaitable[None]]  # (request, from the controller)


class _Client:
    def __init__(self, writer: asyncio.StreamWriter, role: str) -> None:
        self.writer = writer
        self.role = role

    def send(self, message: dict[str, Any]) -> None:
        if not self.writer.is_closing():
            self.writer.write(encode(message))


class ChannelServer:
    """Serves one background session's socket. `welcome()` gives what a new client
    is told (the registry entry, the pending approvals); `on_request` handles each
    request (`approve` and `turn` only from the controlling client)."""

    def __init__(
        self,
        path: Path,
        on_request: RequestHandler,
        welcome: Callable[[], dict[str, Any]],
        *,
        credentials: Callable[[socket.socket], PeerCredentials | None] = peer_credentials,
        own_uid: int | None = None,
    ) -> None:
        self.path = path
        self.on_request = on_request
        self.welcome = welcome
        self.credentials = credentials
        self.own_uid = os.getuid() if own_uid is None else own_uid
        self.clients: list[_Client] = []
        self._server: asyncio.AbstractServer | None = None

    @property
    def controller(self) -> _Client | None:
        return next((c for c in self.clients if c.role == "control"), None)

    async def start(self) -> None:
        with contextlib.suppress(FileNotFoundError):
            self.path.unlink()  # a stale socket of a crashed process of this id
        old = os.umask(0o177)  # the socket is created 0600: no moment where it is wider
        try:
            self._server = await asyncio.start_unix_server(self._serve, path=str(self.path), limit=LINE_LIMIT)
        finally:
            os.umask(old)
        os.chmod(self.path, 0o600)

    async def close(self) -> None:
        for client in list(self.clients):
            client.writer.close()
        if self._server is not None:
            self._server.close()
            with contextlib.suppress(Exception):
                await asyncio.wait_for(self._server.wait_closed(), 2)
        with contextlib.suppress(FileNotFoundError):
            self.path.unlink()

    def broadcast(self, message: dict[str, Any]) -> None:
        for client in list(self.clients):
            client.send(message)

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        sock = writer.get_extra_info("socket")
        try:
            peer = self.credentials(sock) if sock is not None else None
        except OSError:
            peer = None
        why = refusal(peer, self.own_uid)
        if why is not None:
            log.warning("background channel %s: refused a connection: %s", self.path, why)
            writer.write(encode({"kind": "refused", "message": f"refused: {why}"}))
            await _close(writer)
            return
        client: _Client | None = None
        try:
            hello = decode(await reader.readline())
            want = hello.get("want", "view")
            role = "control" if want == "control" and self.controller is None else "view"
            client = _Client(writer, role)
            client.send({"kind": "welcome", "role": role, **self.welcome()})
            self.clients.append(client)
            await writer.drain()
            while line := await reader.readline():
                request = decode(line)
                if request["kind"] not in REQUESTS:
                    client.send({"kind": "error", "message": f"unknown request {request['kind']!r}"})
                    continue
                controlling = client.role == "control"
                if request["kind"] in CONTROL_REQUESTS and not controlling:
                    client.send({"kind": "error", "message": "this app is view-only: another app answers"})
                    continue
                await self.on_request(request, controlling)
                await writer.drain()
        except (ChannelError, ConnectionError, asyncio.IncompleteReadError, ValueError) as exc:
            log.info("background channel %s: a client left: %s", self.path, exc)
        finally:
            if client in self.clients:
                self.clients.remove(client)
            await _close(writer)


async def _close(writer: asyncio.StreamWriter) -> None:
    writer.close()
    with contextlib.suppress(Exception):
        await writer.wait_closed()


# --------------------------------------------------------------------------- the client


class ChannelClient:
    """One app's connection to a background session."""

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter, welcome: dict[str, Any]):
        self.reader = reader
        self.writer = writer
        self.welcome = welcome

    @property
    def role(self) -> str:
        return str(self.welcome.get("role", "view"))

    @classmethod
    async def connect(cls, path: Path, want: str = "control") -> ChannelClient:
        """Connect and say hello; `ChannelError` when nobody listens or it refuses."""
        try:
            reader, writer = await asyncio.open_unix_connection(str(path), limit=LINE_LIMIT)
        except OSError as exc:
            raise ChannelError(f"cannot reach the session at {path}: {exc.strerror or exc}") from None
        writer.write(encode({"kind": "hello", "want": want}))
        try:
            await writer.drain()
            first = await reader.readline()
        except ConnectionError as exc:
            raise ChannelError(f"the session closed the connection: {exc}") from None
        if not first:
            raise ChannelError("the session closed the connection")
        welcome = decode(first)
        if welcome["kind"] == "refused":
            writer.close()
            raise ChannelError(str(welcome.get("message", "refused")))
        if welcome["kind"] != "welcome":
            raise ChannelError(f"expected a welcome, got {welcome['kind']!r}")
        return cls(reader, writer, welcome)

    async def send(self, message: dict[str, Any]) -> None:
        self.writer.write(encode(message))
        await self.writer.drain()

    async def messages(self) -> AsyncIterator[dict[str, Any]]:
        """What the session sends, until it closes the connection."""
        while line := await self.reader.readline():
            yield decode(line)

    async def close(self) -> None:
        await _close(self.writer)
