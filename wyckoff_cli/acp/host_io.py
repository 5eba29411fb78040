"""Files and terminals through the ACP client, when it offers them.

The editor then sees (and keeps) unsaved buffers, and shows each shell command in a
live terminal. Wyckoff's own checks still apply: the tools resolve and check paths
first, and the policy asked before any of this runs.
"""

from __future__ import annotations

import asyncio
import shutil
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from wyckoff_cli.core.errors import ToolError
from wyckoff_cli.tools.client_io import TerminalResult

OUTPUT_LIMIT = 1_000_000  # bytes of terminal output the client keeps


class ClientFiles:
    """`fs/read_text_file` and `fs/write_text_file` of one session."""

    def __init__(self, client: Any, session_id: str = "") -> None:
        self.client = client
        self.session_id = session_id  # set once the session exists

    async def read_text(self, path: Path) -> str | None:
        try:
            response = await self.client.read_text_file(session_id=self.session_id, path=str(path))
        except Exception as exc:
            if not path.exists():
                return None
            raise ToolError(f"the editor could not read {path}: {exc}") from None
        return str(response.content)

    async def write_text(self, path: Path, text: str) -> None:
        try:
            await self.client.write_text_file(session_id=self.session_id, path=str(path), content=text)
        except Exception as exc:
            raise ToolError(f"the editor could not write {path}: {exc}") from None


class ClientTerminal:
    """`terminal/create` and friends: a command runs in the editor's terminal, which is
    shown as the tool call's output (`on_terminal` tells the client which one)."""

    def __init__(
        self,
        client: Any,
        on_terminal: Callable[[str, str, str], Awaitable[None]],
        session_id: str = "",
    ) -> None:
        self.client = client
        self.on_terminal = on_terminal  # (session id, call id, terminal id)
        self.session_id = session_id  # set once the session exists

    async def run(self, call_id: str, command: str, cwd: Path, timeout: float) -> TerminalResult:
        shell = shutil.which("bash") or "/bin/sh"
        created = await self.client.create_terminal(
            session_id=self.session_id,
            command=shell,
            args=["-c", command],
            cwd=str(cwd),
            output_byte_limit=OUTPUT_LIMIT,
        )
        terminal_id = str(created.terminal_id)
        await self.on_terminal(self.session_id, call_id, terminal_id)
        timed_out = False
        try:
            try:
                exited = await asyncio.wait_for(
                    self.client.wait_for_terminal_exit(session_id=self.session_id, terminal_id=terminal_id),
                    timeout,
                )
            except TimeoutError:
                timed_out = True
                await self.client.kill_terminal(session_id=self.session_id, terminal_id=terminal_id)
                exited = None
            output = await self.client.terminal_output(session_id=self.session_id, terminal_id=terminal_id)
        except asyncio.CancelledError:
            await asyncio.shield(self._kill(terminal_id))
            raise
        finally:
            await asyncio.shield(self._release(terminal_id))
        code = getattr(exited, "exit_code", None) if exited is not None else None
        return TerminalResult(str(output.output), code, timed_out, bool(output.truncated))

    async def _kill(self, terminal_id: str) -> None:
        try:
            await self.client.kill_terminal(session_id=self.session_id, terminal_id=terminal_id)
        except Exception:  # the client may have closed it already
            return

    async def _release(self, terminal_id: str) -> None:
        try:
            await self.client.release_terminal(session_id=self.session_id, terminal_id=terminal_id)
        except Exception:
            return
