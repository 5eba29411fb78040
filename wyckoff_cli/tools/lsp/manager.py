"""The session's language servers: which serves a file, started lazily (as soon as
the session first meets a file of its language), restarted once after a crash, then
disabled with one notice; open documents re-synced from disk before every query (a
shell command may have changed them); all shut down at the end."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Literal, Protocol

from wyckoff_cli.tools.lsp.documents import LspError, path_uri, uri_path
from wyckoff_cli.tools.lsp.servers import ServerSpec, install_hint, server_for

if TYPE_CHECKING:  # pygls and lsprotocol load with the first server, not with the session
    from lsprotocol import types as lsp

    from wyckoff_cli.tools.lsp.client import LspClient

log = logging.getLogger(__name__)


class LspSettings(Protocol):
    """What `[lsp]` says (storage/lsp_config.py)."""

    @property
    def enabled(self) -> bool: ...
    @property
    def diagnostics_wait_ms(self) -> int: ...
    @property
    def startup_wait_ms(self) -> int: ...
    @property
    def request_timeout_ms(self) -> int: ...


START_MARGIN = 5.0  # seconds past `startup_wait` for the process itself to start
State = Literal["available", "starting", "running", "failed", "disabled", "not installed", "blocked"]


@dataclass(slots=True)
class ServerSlot:
    spec: ServerSpec
    client: LspClient | None = None
    starting: asyncio.Task[LspClient] | None = None
    restarts: int = 0
    disabled: bool = False
    failed: bool = False
    last_error: str = ""

    @property
    def state(self) -> State:
        if self.spec.command is None:
            return "not installed"
        if self.spec.blocked:
            return "blocked"
        if self.disabled:
            return "disabled"
        if self.client is not None and self.client.alive:
            return "running"
        if self.starting is not None and not self.starting.done():
            return "starting"
        return "failed" if self.failed else "available"


@dataclass(frozen=True, slots=True)
class ServerStatus:
    name: str
    languages: tuple[str, ...]
    state: str
    command: str | None
    files_open: int
    last_error: str

    def as_dict(self) -> dict[str, object]:
        return {
            "name": self.name,
            "languages": list(self.languages),
            "state": self.state,
            "command": self.command,
            "files_open": self.files_open,
            "last_error": self.last_error,
        }


@dataclass(frozen=True, slots=True)
class Snapshot:
    """A file's text and diagnostics before an edit."""

    text: str
    diagnostics: list[lsp.Diagnostic] = field(default_factory=list)


class LspManager:
    def __init__(self, root: Path, config: LspSettings, specs: list[ServerSpec]) -> None:
        self.root = root
        self.config = config
        self.slots = [ServerSlot(spec) for spec in specs]
        self.notices: list[str] = []  # for the person, taken by the tools (one per cause)
        self._noticed: set[str] = set()
        self.on_running: list[Callable[[], None]] = []  # called when a server first runs
        self._opening: set[asyncio.Task[None]] = set()

    # ------------------------------------------------------------------ settings

    @property
    def diagnostics_wait(self) -> float:
        return max(0, self.config.diagnostics_wait_ms) / 1000

    @property
    def startup_wait(self) -> float:
        return max(0, self.config.startup_wait_ms) / 1000

    @property
    def request_timeout(self) -> float:
        return max(0, self.config.request_timeout_ms) / 1000

    # ------------------------------------------------------------------ servers

    def slot_for(self, path: Path) -> ServerSlot | None:
        if not self.config.enabled:
            return None
        spec = server_for([s.spec for s in self.slots if not s.disabled], path)
        return next((s for s in self.slots if s.spec is spec), None)

    def running(self) -> list[ServerSlot]:
        return [s for s in self.slots if s.state == "running"]

    def status(self) -> list[ServerStatus]:
        return [
            ServerStatus(
                s.spec.name,
                s.spec.languages,
                s.state,
                s.spec.command,
                len(s.client.documents) if s.client is not None and s.client.alive else 0,
                s.last_error or s.spec.blocked,
            )
            for s in self.slots
        ]

    def _notice(self, key: str, text: str) -> None:
        if key not in self._noticed:
            self._noticed.add(key)
            self.notices.append(text)

    def take_notices(self) -> list[str]:
        taken, self.notices = self.notices, []
        return taken

    def meet(self, path: Path) -> ServerSlot | None:
        """The session met `path`: start its server now (in the background), or note
        once that none is installed for its language."""
        slot = self.slot_for(path)
        if slot is None:
            if self.config.enabled and path.suffix:
                hint = install_hint([s.spec for s in self.slots], path)
                if hint:
                    self._notice(
                        f"missing{path.suffix.lower()}",
                        f"No language server found for {path.suffix} files: install {hint} "
                        "for diagnostics after edits and the lsp_* tools.",
                    )
            return None
        if slot.client is None and slot.starting is None and not slot.failed:
            slot.starting = asyncio.create_task(self._start(slot))
        return slot

    def open_soon(self, path: Path) -> None:
        """The agent read `path`: start its server (in the background) and open the
        file there once it runs, so the server knows it before any edit or query."""
        if self.meet(path) is None:
            return
        task = asyncio.create_task(self._open(path))
        self._opening.add(task)
        task.add_done_callback(self._opening.discard)

    async def _open(self, path: Path) -> None:
        client = await self.client_for(path)
        if client is None:
            return
        with contextlib.suppress(OSError, UnicodeDecodeError):
            client.sync(path, path.read_text(encoding="utf-8"))

    async def _start(self, slot: ServerSlot) -> LspClient:
        from wyckoff_cli.tools.lsp.client import LspClient

        client = LspClient(slot.spec, self.root)
        try:
            await client.start(self.startup_wait)
        except LspError as exc:
            await client.kill()
            raise exc
        slot.client = client
        for callback in self.on_running:
            callback()
        return client

    async def client_for(self, path: Path) -> LspClient | None:
        """The running server of `path`, started (and waited for) when needed; None when
        no server serves it, or it failed to start (the reason is in `last_error`)."""
        slot = self.meet(path)
        if slot is None:
            return None
        if slot.client is not None and not slot.client.alive:
            await self._crashed(slot)
            if slot.disabled:
                return None
            slot = self.meet(path)
            if slot is None:
                return None
        if slot.client is None and slot.starting is not None:
            try:
                # the start's own `initialize` waits `startup_wait`: a margin for the spawn
                await asyncio.wait_for(asyncio.shield(slot.starting), self.startup_wait + START_MARGIN)
            except TimeoutError:
                slot.last_error = f"did not start within {self.startup_wait + START_MARGIN:g} s"
                return None
            except LspError as exc:
                slot.failed = True
                slot.starting = None
                slot.last_error = str(exc)
                self._notice(f"failed:{slot.spec.name}", f"Language server {slot.spec.name} failed: {exc}")
                return None
        return slot.client

    async def _crashed(self, slot: ServerSlot) -> None:
        """Restart a server that died, once; the second time, disable it for the session."""
        old = slot.client
        code = old.process.returncode if old is not None and old.process is not None else None
        slot.last_error = f"exited unexpectedly (code {code})"
        documents = list(old.documents.values()) if old is not None else []
        if old is not None:
            await old.kill()
        slot.client, slot.starting = None, None
        if slot.restarts >= 1:
            slot.disabled = True
            self._notice(
                f"disabled:{slot.spec.name}",
                f"Language server {slot.spec.name} crashed again and is disabled for this session.",
            )
            return
        slot.restarts += 1
        log.warning("language server %s %s; restarting it", slot.spec.name, slot.last_error)
        slot.starting = asyncio.create_task(self._start(slot))
        with contextlib.suppress(Exception):
            client = await asyncio.wait_for(asyncio.shield(slot.starting), self.startup_wait + START_MARGIN)
            for document in documents:  # reopen what the old one had open, from disk
                path = uri_path(document.uri)
                with contextlib.suppress(OSError, UnicodeDecodeError):
                    client.sync(path, path.read_text(encoding="utf-8"))

    async def query_client(self, path: Path) -> LspClient:
        """`client_for` for a tool: an `LspError` naming why there is none."""
        client = await self.client_for(path)
        if client is None:
            slot = self.slot_for(path)
            why = (
                slot.last_error
                if slot is not None
                else f"no language server serves {path.suffix or path.name} files"
            )
            raise LspError(f"no language server for {path.name}: {why}")
        await self.resync(client)
        return client

    async def resync(self, client: LspClient) -> None:
        """Send the disk text of every open document that changed (by a shell command)."""
        for document in list(client.documents.values()):
            path = uri_path(document.uri)
            try:
                text = path.read_text(encoding="utf-8")
            except (OSError, UnicodeDecodeError):
                continue
            if text != document.text:
                client.sync(path, text, save=True)

    # ------------------------------------------------------------------ edits

    async def before_edit(self, path: Path) -> Snapshot | None:
        """The file's text and current diagnostics (opened and waited for, bounded)."""
        client = await self.client_for(path)
        if client is None:
            return None
        try:
            text = path.read_text(encoding="utf-8")
        except FileNotFoundError:
            return Snapshot("")
        except (OSError, UnicodeDecodeError):
            return None
        await self.resync(client)
        uri = path_uri(path)
        seen = client.publications(uri)
        document = client.sync(path, text)
        got = client.published.get(uri)
        if client.pulls_diagnostics() or got is None or (got.version or 0) < document.version:
            found = await client.current_diagnostics(uri, seen, self.diagnostics_wait)
            return Snapshot(text, found or [])
        return Snapshot(text, list(got.diagnostics))

    async def after_edit(self, path: Path, before: Snapshot | None, shown: str) -> str:
        """What the edit's result gets: the diagnostics the change introduced ("" when
        none, or no server serves the file)."""
        if before is None:
            return ""
        client = await self.client_for(path)
        if client is None:
            return ""
        try:
            text = path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError):
            return ""
        uri = path_uri(path)
        seen = client.publications(uri)
        client.sync(path, text, save=True)
        found = await client.current_diagnostics(uri, seen, self.diagnostics_wait)
        if found is None:
            return (
                f"\n\n({client.spec.name} published no diagnostics for this change within "
                f"{self.diagnostics_wait * 1000:.0f} ms)"
            )
        from wyckoff_cli.tools.lsp.diagnostics import format_diagnostics, introduced, relevant

        fresh = relevant(introduced(relevant(before.diagnostics), before.text, found, text))
        if not fresh:
            return ""
        return f"\n\nDiagnostics this change introduced ({client.spec.name}):\n" + format_diagnostics(
            shown, fresh
        )

    # ------------------------------------------------------------------ end

    async def close(self) -> None:
        for task in list(self._opening):
            task.cancel()
        for slot in self.slots:
            if slot.starting is not None and not slot.starting.done():
                slot.starting.cancel()
                with contextlib.suppress(BaseException):
                    await slot.starting
            if slot.client is not None:
                await slot.client.stop()
                slot.client = None
