"""One connection to one MCP server, through the official `mcp` SDK.

A `ServerConnection` runs in its own task: it opens the transport (stdio child, streamable
HTTP or SSE), initialises the session, lists tools, resources and prompts, reports
itself ready and then holds the session open until `close()`. Every context manager is
entered and left in that task, as anyio requires. Calls from other tasks go through the
open `ClientSession`.

- stdio children get the scrubbed environment the host passes plus the server's own
  `env`; their stderr goes to a private temporary file whose tail is quoted when the
  server fails. The SDK starts them in a new process group; on close, what is left of
  that group is killed — the group of the process this connection started, checked
  by pid, parent and start time (leader.py), its pid file kept in Wyckoff's cache
  folder, where sandboxed commands cannot write.
- `notifications/tools/list_changed` (and the resource and prompt variants) re-list and
  call `on_change`; log messages and progress go to the tool calls in flight (shown on the
  running tool's widget) or to the log file.
- A call that exceeds `tool_timeout` raises `ToolError`; the SDK sends
  `notifications/cancelled`, as it does when the caller is cancelled (Esc).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import shutil
import signal
import tempfile
import warnings
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any, Literal

from wyckoff_cli.core.errors import ToolError
from wyckoff_cli.tools.mcp.config import ServerSpec
from wyckoff_cli.tools.mcp.leader import ServerLeader, pid_folder, read_leader
from wyckoff_cli.tools.mcp.sdk_import import sdk_ready
from wyckoff_cli.tools.mcp.server_asks import Sampler, answer_elicitation, answer_sampling

if TYPE_CHECKING:
    from wyckoff_cli.tools.base import ToolContext

log = logging.getLogger(__name__)

State = Literal["disabled", "needs_trust", "connecting", "connected", "failed", "changed", "closed"]
_STDERR_TAIL = 1500


@dataclass
class ServerListing:
    tools: list[Any] = field(default_factory=list)  # mcp.types.Tool
    resources: list[Any] = field(default_factory=list)  # mcp.types.Resource
    prompts: list[Any] = field(default_factory=list)  # mcp.types.Prompt


def failure_reason(exc: BaseException) -> str:
    """A one-line reason from an exception, looking inside exception groups."""
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        inner = [e for e in exc.exceptions if not isinstance(e, asyncio.CancelledError)]
        exc = inner[0] if inner else exc.exceptions[0]
    if isinstance(exc, TimeoutError):
        return "timed out"
    if isinstance(exc, FileNotFoundError):
        return f"command not found: {exc.filename or exc}"
    text = str(exc).strip() or type(exc).__name__
    name = type(exc).__name__
    if name == "MCPError" and text == "Connection closed":
        return "the server closed the connection (it exited or crashed)"
    if name == "ConnectError":
        return f"cannot connect: {text}"
    return text if name in text or name in ("MCPError", "LoginRequired") else f"{name}: {text}"


class ServerConnection:
    def __init__(
        self,
        spec: ServerSpec,
        *,
        root: Path,
        env: Mapping[str, str],
        on_change: Callable[[ServerConnection, str], None] = lambda _c, _what: None,
        auth: Any = None,
    ) -> None:
        self.spec = spec
        self.root = root
        self.env = dict(env)
        self.on_change = on_change
        self.auth = auth
        self.state: State = "connecting"
        self.reason = ""
        self.listing = ServerListing()
        self.instructions: str | None = None
        self.transport: str = spec.transport  # the one that connected (`http` may fall back to `sse`)
        self.fallback_reason = ""  # why streamable HTTP failed, when SSE was tried after it
        self._session: Any = None
        self._task: asyncio.Task[None] | None = None
        self._ready = asyncio.Event()
        self._stop = asyncio.Event()
        self._stderr: IO[str] | None = None
        self._emitters: dict[int, Callable[[str], None]] = {}
        self._refreshing: set[asyncio.Task[None]] = set()
        self._pidfile: Path | None = None  # in Wyckoff's cache folder, out of the sandbox's reach
        self._leader: ServerLeader | None = None
        self._deadline: Any = None  # the start-up cancel scope, while starting
        self.sampler: Sampler | None = None  # the session's model, for `sampling/createMessage`
        self._calls: dict[int, ToolContext] = {}  # the tool calls in flight: who is asked about requests

    # ----------------------------------------------------------------- lifecycle

    def start(self) -> None:
        if self._task is None:
            self._task = asyncio.create_task(self._run(), name=f"mcp:{self.spec.name}")

    async def wait_ready(self, timeout: float | None = None) -> bool:
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self._ready.wait(), timeout)
        return self._ready.is_set()

    async def close(self) -> None:
        self._stop.set()
        task = self._task
        if task is not None and not task.done():
            try:
                await asyncio.wait_for(asyncio.shield(task), 8)
            except (TimeoutError, asyncio.CancelledError):
                task.cancel()
                with contextlib.suppress(BaseException):
                    await task
        for pending in list(self._refreshing):
            pending.cancel()
        if self.state not in ("failed", "changed"):
            self.state = "closed"
        if self._stderr is not None:
            self._stderr.close()
            self._stderr = None

    async def _run(self) -> None:
        """Connect and stay connected until closed. An `http` server is tried over
        streamable HTTP first, then, if that fails before connecting, over the older
        SSE transport (as the SDK recommends); `transport` says which one connected."""
        try:
            try:
                await self._connect(self.spec.transport)
            except Exception as first:
                if self.spec.transport != "http" or self._stop.is_set() or self.state != "connecting":
                    raise
                log.info("MCP server %s: streamable HTTP failed (%s); trying SSE", self.spec.name, first)
                self.fallback_reason = failure_reason(first)
                await self._connect("sse")
        except BaseException as exc:  # reported, never raised into the host
            if isinstance(exc, asyncio.CancelledError) and self._stop.is_set():
                return
            if self._stop.is_set() and self.state == "connected":
                return
            if self.state != "failed":
                reason = failure_reason(exc)
                if self.fallback_reason:
                    reason = f"streamable HTTP: {self.fallback_reason}; SSE: {reason}"
                self._fail(reason)
            if isinstance(exc, asyncio.CancelledError):
                raise
        finally:
            self._session = None
            self._ready.set()
            await self._kill_group()

    def _note_leader(self) -> None:
        """Remember the server's process (pid and start time) once it answered, when it
        is our own child: the group killed at the end is that one, nothing the pid
        file says later."""
        if self._pidfile is not None and self._leader is None:
            self._leader = read_leader(self._pidfile)

    async def _connect(self, transport: str) -> None:
        await sdk_ready()  # imported in a thread: ~1 s that would hold the event loop
        from mcp.client.session import ClientSession
        from mcp.types import Implementation

        from wyckoff_cli import __version__

        async with contextlib.AsyncExitStack() as stack:
            read, write = await stack.enter_async_context(self._transport(transport))
            session = await stack.enter_async_context(
                ClientSession(
                    read,
                    write,
                    logging_callback=self._on_log,
                    list_roots_callback=self._list_roots,
                    sampling_callback=self._on_sampling,
                    elicitation_callback=self._on_elicitation,
                    message_handler=self._on_message,
                    client_info=Implementation(name="wyckoff", version=__version__),
                )
            )
            import anyio

            with anyio.move_on_after(self.spec.startup_timeout) as deadline:
                self._deadline = deadline
                result = await session.initialize()
                self.instructions = getattr(result, "instructions", None)
                self.listing = await self._list_all(session)
            self._deadline = None
            if deadline.cancelled_caught:
                self._fail(f"did not start within {self.spec.startup_timeout:g} s")
                return  # leaving the stack stops the server
            self._session = session
            self._note_leader()
            self.transport = transport
            self.state = "connected"
            self._ready.set()
            self.on_change(self, "connected")
            await self._stop.wait()

    async def _kill_group(self) -> None:
        """SIGTERM, then SIGKILL, whatever is left of the server's process group: only
        the group of the process this connection started (see `ServerLeader`)."""
        pidfile, self._pidfile = self._pidfile, None
        if pidfile is None:
            return
        leader, self._leader = self._leader or read_leader(pidfile), None
        shutil.rmtree(pidfile.parent, ignore_errors=True)
        if leader is None or not leader.still_ours():
            return
        pgid = leader.pid
        for sig in (signal.SIGTERM, signal.SIGKILL):
            try:
                os.killpg(pgid, sig)
            except (ProcessLookupError, PermissionError):
                return
            for _ in range(20):
                await asyncio.sleep(0.05)
                try:
                    os.killpg(pgid, 0)
                except (ProcessLookupError, PermissionError):
                    return

    def _lost(self) -> None:
        """The connection died after start-up (the server crashed or exited): report it
        once and let the task wind the transport down."""
        if self.state == "connected":
            self._session = None
            self._fail("the server closed the connection (it exited or crashed)")
            self._stop.set()

    def _fail(self, reason: str) -> None:
        """Report the failure once, with the stderr tail; waiters are released at once."""
        self.state = "failed"
        tail = self.stderr_tail()
        self.reason = reason + (f"\nstderr:\n{tail}" if tail else "")
        log.info("MCP server %s failed: %s", self.spec.name, self.reason)
        self._ready.set()
        self.on_change(self, "failed")

    def _transport(self, transport: str) -> contextlib.AbstractAsyncContextManager[Any]:
        spec = self.spec
        if transport == "stdio":
            from mcp.client.stdio import StdioServerParameters, stdio_client

            self._stderr = tempfile.TemporaryFile("a+", encoding="utf-8", errors="replace")  # noqa: SIM115
            cwd = Path(spec.cwd).expanduser() if spec.cwd else self.root
            if not cwd.is_absolute():
                cwd = self.root / cwd
            env = {**self.env, **spec.env}
            command, args = spec.command or "", list(spec.args)
            found = shutil.which(command, path=env.get("PATH") or os.defpath)
            if found is None:
                raise FileNotFoundError(2, "command not found", command)
            folder = pid_folder() if os.name == "posix" else None
            if folder is not None:
                # The server leads its own process group (the SDK starts it so) and
                # `exec` keeps the pid: it is recorded so the whole group can be
                # killed after the server exits, children included.
                self._pidfile = Path(tempfile.mkdtemp(prefix="server-", dir=folder)) / "pid"
                command, args = (
                    "/bin/sh",
                    ["-c", 'echo $$ > "$0" && exec "$@"', str(self._pidfile), found, *args],
                )
            params = StdioServerParameters(command=command, args=args, env=env, cwd=cwd)
            return stdio_client(params, errlog=self._stderr)
        if transport == "sse":
            from mcp.client.sse import sse_client

            return sse_client(spec.url or "", headers=dict(spec.headers), auth=self.auth)
        return _http_transport(spec.url or "", dict(spec.headers), self.auth)

    def extend_startup(self, seconds: float) -> None:
        """Give the start-up `seconds` more from now (a person is signing in)."""
        if self._deadline is not None:
            import anyio

            self._deadline.deadline = anyio.current_time() + seconds

    def stderr_tail(self) -> str:
        if self._stderr is None:
            return ""
        try:
            self._stderr.flush()
            self._stderr.seek(0)
            text = self._stderr.read()
        except (OSError, ValueError):
            return ""
        return text[-_STDERR_TAIL:].strip()

    # ----------------------------------------------------------------- listing

    async def _list_all(self, session: Any) -> ServerListing:
        caps = session.server_capabilities
        listing = ServerListing()
        if caps is None or caps.tools is not None:
            listing.tools = await _paged(session.list_tools, "tools")
        if caps is not None and caps.resources is not None:
            with contextlib.suppress(Exception):
                listing.resources = await _paged(session.list_resources, "resources")
        if caps is not None and caps.prompts is not None:
            with contextlib.suppress(Exception):
                listing.prompts = await _paged(session.list_prompts, "prompts")
        return listing

    async def _on_message(self, message: Any) -> None:
        from mcp import types

        kinds: dict[type, str] = {
            types.ToolListChangedNotification: "tools",
            types.ResourceListChangedNotification: "resources",
            types.PromptListChangedNotification: "prompts",
        }
        what = kinds.get(type(message))
        if what is not None and self._session is not None:
            task = asyncio.create_task(self._refresh(what))
            self._refreshing.add(task)
            task.add_done_callback(self._refreshing.discard)

    async def _refresh(self, what: str) -> None:
        session = self._session
        if session is None:
            return
        try:
            if what == "tools":
                self.listing.tools = await _paged(session.list_tools, "tools")
            elif what == "resources":
                self.listing.resources = await _paged(session.list_resources, "resources")
            else:
                self.listing.prompts = await _paged(session.list_prompts, "prompts")
        except Exception as exc:
            log.info("MCP server %s: re-listing %s failed: %s", self.spec.name, what, exc)
            return
        self.on_change(self, what)

    async def _list_roots(self, context: Any) -> Any:
        """`roots/list`: the workspace the session works in (a server that works on
        files should stay inside it)."""
        from mcp import types
        from pydantic import FileUrl

        root = self.root.resolve()
        return types.ListRootsResult(roots=[types.Root(uri=FileUrl(root.as_uri()), name=root.name)])

    async def set_root(self, root: Path) -> None:
        """The session's workspace changed: answer `roots/list` with `root` from now on
        and tell a connected server (`notifications/roots/list_changed`)."""
        if root.resolve() == self.root.resolve():
            return
        self.root = root
        session = self._session
        if session is not None:
            with (
                contextlib.suppress(Exception),
                warnings.catch_warnings(),
            ):  # a server gone is reported elsewhere
                warnings.simplefilter("ignore")  # the SDK: roots are deprecated by a later spec
                await session.send_roots_list_changed()

    def _asker(self) -> ToolContext | None:
        """The context of the latest tool call of this server still running: the
        requests it makes are asked about there (None: no call, no one to ask)."""
        return next(reversed(self._calls.values()), None) if self._calls else None

    async def _on_sampling(self, context: Any, params: Any) -> Any:
        return await answer_sampling(self.spec.name, params, self._asker(), self.sampler)

    async def _on_elicitation(self, context: Any, params: Any) -> Any:
        return await answer_elicitation(self.spec.name, params, self._asker(), self.spec.elicitation)

    async def _on_log(self, params: Any) -> None:
        data = params.data
        text = data if isinstance(data, str) else repr(data)
        line = f"[{params.level}] {text}"
        if self._emitters:
            for emit in list(self._emitters.values()):
                emit(line + "\n")
        else:
            log.info("MCP server %s: %s", self.spec.name, line)

    # ----------------------------------------------------------------- use

    def _require(self) -> Any:
        if self._session is None:
            raise ToolError(
                f"the MCP server {self.spec.name} is not connected ({self.state}{': ' + self.reason if self.reason else ''})"
            )
        return self._session

    async def call_tool(
        self,
        tool: str,
        arguments: dict[str, Any],
        emit: Callable[[str], None],
        ctx: ToolContext | None = None,
    ) -> Any:
        """Call `tool`; `ctx` (the running call's) is where the server's sampling and
        elicitation requests during the call are asked about."""
        from mcp.shared.exceptions import MCPError
        from mcp.types import CONNECTION_CLOSED, REQUEST_TIMEOUT

        session = self._require()

        async def progress(value: float, total: float | None, message: str | None) -> None:
            amount = f"{value:g}/{total:g}" if total else f"{value:g}"
            emit(f"{message + ' ' if message else ''}({amount})\n")

        key = id(emit)
        self._emitters[key] = emit
        if ctx is not None:
            self._calls[key] = ctx
        try:
            return await session.call_tool(
                tool, arguments, read_timeout_seconds=self.spec.tool_timeout, progress_callback=progress
            )
        except MCPError as exc:
            if exc.code == CONNECTION_CLOSED:
                self._lost()
                raise ToolError(
                    f"{tool} on {self.spec.name}: the server closed the connection; "
                    f"its tools are withdrawn (the user can restart it with /mcp restart {self.spec.name})"
                ) from None
            if exc.code == REQUEST_TIMEOUT:
                raise ToolError(
                    f"{tool} on {self.spec.name} did not finish within {self.spec.tool_timeout:g} s "
                    "(tool_timeout); the call was cancelled on the server"
                ) from None
            raise ToolError(f"{tool} on {self.spec.name}: {exc.message}") from None
        except (ConnectionError, OSError) as exc:
            raise ToolError(f"{tool} on {self.spec.name}: the connection failed ({exc})") from None
        finally:
            self._emitters.pop(key, None)
            self._calls.pop(key, None)

    async def read_resource(self, uri: str) -> Any:
        from mcp.shared.exceptions import MCPError

        try:
            return await asyncio.wait_for(self._require().read_resource(uri), self.spec.tool_timeout)
        except MCPError as exc:
            raise ToolError(f"{self.spec.name}: cannot read {uri}: {exc.message}") from None

    async def get_prompt(self, name: str, arguments: dict[str, str]) -> Any:
        from mcp.shared.exceptions import MCPError

        try:
            return await asyncio.wait_for(self._require().get_prompt(name, arguments), self.spec.tool_timeout)
        except MCPError as exc:
            raise ToolError(f"{self.spec.name}: prompt {name}: {exc.message}") from None


async def _paged(method: Callable[..., Any], attribute: str) -> list[Any]:
    from mcp.types import PaginatedRequestParams

    items: list[Any] = []
    cursor: str | None = None
    for _ in range(100):
        result = await method(params=PaginatedRequestParams(cursor=cursor) if cursor else None)
        items.extend(getattr(result, attribute))
        cursor = result.next_cursor
        if not cursor:
            break
    return items


@contextlib.asynccontextmanager
async def _http_transport(url: str, headers: dict[str, str], auth: Any) -> Any:
    import httpx2
    from mcp.client.streamable_http import streamable_http_client

    timeout = httpx2.Timeout(30.0, read=300.0)
    async with (
        httpx2.AsyncClient(headers=headers, auth=auth, timeout=timeout) as client,
        streamable_http_client(url, http_client=client) as streams,
    ):
        yield streams
