"""One running language server, spoken to over stdio JSON-RPC through pygls's
`LanguageClient` with `lsprotocol` types (docs/LSP.md says why pygls over multilspy).

The process runs in its own process group, so shutting it down (shutdown request,
exit notification, then SIGTERM and SIGKILL to the group after a grace period) takes
its children too. Its stderr goes to the log, capped. Documents are kept in sync with
full-text changes; `publishDiagnostics` notifications are stored per document with a
counter, so a caller can wait for the first publication after its own change.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import signal
from collections.abc import Awaitable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

from lsprotocol import types as lsp
from pygls.lsp.client import LanguageClient

from wyckoff_cli.tools.lsp.documents import LspError, path_uri, uri_path
from wyckoff_cli.tools.lsp.servers import ServerSpec

__all__ = ["LspClient", "LspError", "OpenDocument", "Published", "path_uri", "uri_path"]

log = logging.getLogger(__name__)

STDERR_CAP = 64 * 1024  # bytes of a server's stderr written to the log, per process
PUSH_SETTLE = 0.3  # seconds a pushed diagnostics set must stand before it counts as the result
SHUTDOWN_GRACE = 2.0  # seconds between the exit notification and SIGTERM, then SIGKILL
T = TypeVar("T")
# notifications servers send that we have no use for (not logged as unknown)
QUIET_NOTIFICATIONS = (
    "$/progress",
    "telemetry/event",
    "experimental/serverStatus",
    "$/typescriptVersion",
    "pyright/beginProgress",
    "pyright/reportProgress",
    "pyright/endProgress",
)


@dataclass(slots=True)
class OpenDocument:
    uri: str
    version: int
    text: str


@dataclass(slots=True)
class Published:
    diagnostics: list[lsp.Diagnostic] = field(default_factory=list)
    version: int | None = None
    count: int = 0  # how many publications arrived for this document


class LspClient:
    """One server process and the documents it has open."""

    def __init__(self, spec: ServerSpec, root: Path) -> None:
        self.spec = spec
        self.root = root
        self.client = LanguageClient("wyckoff", "1")
        self.documents: dict[str, OpenDocument] = {}
        self.published: dict[str, Published] = {}
        self.capabilities: lsp.ServerCapabilities | None = None
        self.registered: set[str] = set()  # methods the server registered dynamically
        self._changed = asyncio.Condition()
        self._stderr_task: asyncio.Task[None] | None = None
        self._exited = asyncio.Event()
        self.process: asyncio.subprocess.Process | None = None
        self._register_handlers()
        self.client.report_server_error = self._on_protocol_error  # type: ignore[method-assign]

    def _register_handlers(self) -> None:
        """pygls wants plain functions taking the params (no bound methods)."""
        name = self.spec.name
        feature = self.client.feature

        async def diagnostics(params: lsp.PublishDiagnosticsParams) -> None:
            await self._on_diagnostics(params)

        def log_message(params: lsp.LogMessageParams) -> None:
            log.debug("%s: %s", name, params.message)

        def configuration(params: lsp.ConfigurationParams) -> list[Any]:
            return [None for _ in params.items]

        feature(lsp.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS)(diagnostics)
        feature(lsp.WINDOW_LOG_MESSAGE)(log_message)
        feature(lsp.WINDOW_SHOW_MESSAGE)(log_message)
        feature(lsp.WORKSPACE_CONFIGURATION)(configuration)

        def register(params: lsp.RegistrationParams) -> None:
            self.registered.update(r.method for r in params.registrations)

        feature(lsp.CLIENT_REGISTER_CAPABILITY)(register)
        for method in (
            lsp.WINDOW_WORK_DONE_PROGRESS_CREATE,
            *QUIET_NOTIFICATIONS,
        ):

            def acknowledge(params: Any) -> None:
                return None

            feature(method)(acknowledge)

    # ------------------------------------------------------------------ lifecycle

    @property
    def alive(self) -> bool:
        return self.process is not None and self.process.returncode is None

    async def start(self, timeout: float) -> None:
        """Start the process and initialise it with the workspace root."""
        assert self.spec.command is not None
        env = {**os.environ, **self.spec.env}
        try:
            await self.client.start_io(
                self.spec.command, *self.spec.args, cwd=str(self.root), env=env, start_new_session=True
            )
        except OSError as exc:
            raise LspError(f"{self.spec.name} would not start: {exc.strerror or exc}") from None
        self.process = self.client._server
        if self.process is not None and self.process.stderr is not None:
            self._stderr_task = asyncio.create_task(self._drain_stderr(self.process.stderr))
        params = lsp.InitializeParams(
            process_id=os.getpid(),
            root_uri=self.root.resolve().as_uri(),
            workspace_folders=[lsp.WorkspaceFolder(self.root.resolve().as_uri(), self.root.name or "root")],
            initialization_options=dict(self.spec.initialization_options) or None,
            capabilities=_client_capabilities(),
        )
        result = await self.call(self.client.initialize_async(params), timeout, "initialize")
        self.capabilities = result.capabilities
        self.client.initialized(lsp.InitializedParams())

    async def stop(self, grace: float = SHUTDOWN_GRACE) -> None:
        """shutdown, exit, then the process group is killed if it lingers."""
        if self.alive:
            with contextlib.suppress(Exception):
                await asyncio.wait_for(self.client.shutdown_async(None), grace)
            with contextlib.suppress(Exception):
                self.client.exit(None)
        await self.kill(grace)

    async def kill(self, grace: float = 0.0) -> None:
        process = self.process
        if process is not None and process.returncode is None:
            for sig in (signal.SIGTERM, signal.SIGKILL):
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(process.wait(), grace)
                    break
                with contextlib.suppress(ProcessLookupError, PermissionError):
                    os.killpg(process.pid, sig)
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(process.wait(), 5.0)
        if process is not None:  # the group's children, even once the leader is gone
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(process.pid, signal.SIGKILL)
        with contextlib.suppress(Exception):
            await asyncio.wait_for(self.client.stop(), 5.0)  # type: ignore[no-untyped-call]
        if self._stderr_task is not None:
            self._stderr_task.cancel()

    async def _drain_stderr(self, stream: asyncio.StreamReader) -> None:
        logged = 0
        while line := await stream.readline():
            if logged < STDERR_CAP:
                text = line[: STDERR_CAP - logged].decode("utf-8", "replace").rstrip()
                log.info("%s stderr: %s", self.spec.name, text)
                logged += len(line)
                if logged >= STDERR_CAP:
                    log.info("%s stderr: (the rest is not logged: %d bytes cap)", self.spec.name, STDERR_CAP)

    def _on_protocol_error(self, error: Exception, source: Any) -> None:
        log.warning("%s sent something unreadable: %s", self.spec.name, error)

    # ------------------------------------------------------------------ requests

    async def call(self, request: Awaitable[T], timeout: float, what: str) -> T:
        """Await a request's answer, as an `LspError` on a timeout, death or error."""
        if not self.alive:
            raise LspError(f"{self.spec.name} is not running")
        try:
            return await asyncio.wait_for(request, timeout)
        except TimeoutError:
            raise LspError(f"{self.spec.name} did not answer {what} within {timeout:g} s") from None
        except asyncio.CancelledError:
            raise
        except Exception as exc:
            state = "died" if not self.alive else "failed"
            raise LspError(f"{self.spec.name} {state} during {what}: {exc}") from None

    # ------------------------------------------------------------------ documents

    def sync(self, path: Path, text: str, *, save: bool = False) -> OpenDocument:
        """Open `path` with `text`, or send the new text when it changed."""
        uri = path_uri(path)
        document = self.documents.get(uri)
        if document is None:
            document = self.documents[uri] = OpenDocument(uri, 1, text)
            self.client.text_document_did_open(
                lsp.DidOpenTextDocumentParams(lsp.TextDocumentItem(uri, self.spec.language_id(path), 1, text))
            )
        elif document.text != text:
            document.version += 1
            document.text = text
            self.client.text_document_did_change(
                lsp.DidChangeTextDocumentParams(
                    lsp.VersionedTextDocumentIdentifier(document.version, uri),
                    [lsp.TextDocumentContentChangeWholeDocument(text)],
                )
            )
        else:
            return document
        if save:
            self.client.text_document_did_save(
                lsp.DidSaveTextDocumentParams(lsp.TextDocumentIdentifier(uri), text)
            )
        return document

    def pulls_diagnostics(self) -> bool:
        """Whether the server answers `textDocument/diagnostic` (LSP 3.17 pull): the
        diagnostics of the current text, rather than guessing when pushes settle."""
        static = self.capabilities is not None and self.capabilities.diagnostic_provider is not None
        return static or lsp.TEXT_DOCUMENT_DIAGNOSTIC in self.registered

    async def pull_diagnostics(self, uri: str, timeout: float) -> list[lsp.Diagnostic] | None:
        """The diagnostics of `uri` now (None: the server gave no full report in time)."""
        params = lsp.DocumentDiagnosticParams(lsp.TextDocumentIdentifier(uri))
        try:
            report = await self.call(
                self.client.text_document_diagnostic_async(params), timeout, "diagnostic"
            )
        except LspError as exc:
            log.info("%s", exc)
            return None
        items = getattr(report, "items", None)
        if items is None:
            return None
        got = self.published.setdefault(uri, Published())
        got.diagnostics, got.version = (
            list(items),
            self.documents[uri].version if uri in self.documents else None,
        )
        return list(items)

    async def current_diagnostics(self, uri: str, seen: int, timeout: float) -> list[lsp.Diagnostic] | None:
        """The diagnostics of the open document's current version: pulled when the
        server can, else the first push for that version (None: none in time)."""
        if self.pulls_diagnostics():
            return await self.pull_diagnostics(uri, timeout)
        document = self.documents[uri]
        if not await self.wait_published(uri, seen, document.version, timeout):
            return None
        # some servers push twice for one version (pyright: an empty set while it checks,
        # then the result): take the last push once none follows within PUSH_SETTLE
        while await self._another_publication(uri, self.published[uri].count, PUSH_SETTLE):
            pass
        if self.pulls_diagnostics():  # it registered pull diagnostics meanwhile: ask for the truth
            return await self.pull_diagnostics(uri, timeout)
        return list(self.published[uri].diagnostics)

    async def _another_publication(self, uri: str, count: int, timeout: float) -> bool:
        async with self._changed:
            try:
                await asyncio.wait_for(
                    self._changed.wait_for(lambda: self.published[uri].count > count), timeout
                )
            except TimeoutError:
                return False
        return True

    def publications(self, uri: str) -> int:
        return self.published.get(uri, Published()).count

    async def wait_published(self, uri: str, after: int, version: int, timeout: float) -> bool:
        """Wait for a publication of `uri` for `version` or later (a server that sends
        no versions: any publication past count `after`); False when `timeout` passes."""

        def arrived() -> bool:
            got = self.published.get(uri)
            if got is None:
                return False
            if got.version is not None:  # versions only grow: this one came after our change
                return got.version >= version
            return got.count > after

        async with self._changed:
            try:
                await asyncio.wait_for(self._changed.wait_for(arrived), timeout)
            except TimeoutError:
                return False
        return True

    async def _on_diagnostics(self, params: lsp.PublishDiagnosticsParams) -> None:
        got = self.published.setdefault(_same_uri(params.uri), Published())
        got.diagnostics = list(params.diagnostics)
        got.version = params.version
        got.count += 1
        async with self._changed:
            self._changed.notify_all()


def _same_uri(uri: str) -> str:
    """A server's spelling of a URI in ours (percent-encoding may differ)."""
    with contextlib.suppress(Exception):
        return path_uri(uri_path(uri))
    return uri


def _client_capabilities() -> lsp.ClientCapabilities:
    return lsp.ClientCapabilities(
        general=lsp.GeneralClientCapabilities(position_encodings=[lsp.PositionEncodingKind.Utf16]),
        text_document=lsp.TextDocumentClientCapabilities(
            synchronization=lsp.TextDocumentSyncClientCapabilities(did_save=True),
            publish_diagnostics=lsp.PublishDiagnosticsClientCapabilities(version_support=True),
            diagnostic=lsp.DiagnosticClientCapabilities(
                dynamic_registration=False, related_document_support=False
            ),
            definition=lsp.DefinitionClientCapabilities(link_support=False),
            references=lsp.ReferenceClientCapabilities(),
            hover=lsp.HoverClientCapabilities(
                content_format=[lsp.MarkupKind.PlainText, lsp.MarkupKind.Markdown]
            ),
            document_symbol=lsp.DocumentSymbolClientCapabilities(hierarchical_document_symbol_support=True),
            rename=lsp.RenameClientCapabilities(prepare_support=False),
        ),
        workspace=lsp.WorkspaceClientCapabilities(
            workspace_edit=lsp.WorkspaceEditClientCapabilities(document_changes=True),
            symbol=lsp.WorkspaceSymbolClientCapabilities(),
            configuration=True,
            workspace_folders=True,
        ),
    )
