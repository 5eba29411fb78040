"""One conversation as the app sees it: history, runtime, recorder. No widgets.

`ChatDeps` is everything the app needs from outside, built by the composition root
(`cli/chat_cmd.py`): how to build a runtime for a model, where sessions live, how to
price usage. `ChatSession` runs turns through the runtime and records every event.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field
from pathlib import Path

from wyckoff_cli.core import events as ev
from wyckoff_cli.core.messages import Message
from wyckoff_cli.runtime.approval import Approver
from wyckoff_cli.runtime.loop import AbortSignal, AgentRuntime
from wyckoff_cli.storage.recorder import SessionRecorder
from wyckoff_cli.storage.sessions import LoadedSession, SessionStore
from wyckoff_cli.tools.mcp.host import McpHost
from wyckoff_cli.tui.status import PriceFn

# (model, mode, approver, recorder) -> (runtime, the session's current system prompt)
RuntimeFactory = Callable[[str, str, Approver, SessionRecorder], tuple[AgentRuntime, Callable[[], str]]]


@dataclass
class ChatDeps:
    project_root: Path
    model: str
    mode: str
    store: SessionStore
    build_runtime: RuntimeFactory
    context_window: Callable[[str], int]
    price: PriceFn | None = None
    save_rule: Callable[[str], None] | None = None
    input_history_file: Path | None = None
    models: list[str] = field(default_factory=list)  # ids and aliases `/model` lists
    check_model: Callable[[str], str | None] = lambda _model: None  # error text, e.g. a missing key
    list_memories: Callable[[str], str] | None = None  # query -> readable list
    list_rules: Callable[[], str] | None = None
    remove_rule: Callable[[str], str] | None = None  # rule -> what happened
    export_session: Callable[[str, Path | None], Path] | None = None  # (session id, file) -> written file
    have_key: Callable[[str], bool] = lambda _provider: True
    save_key: Callable[[str, str], None] | None = None
    mcp: McpHost | None = None  # the session's MCP servers (tools/mcp/host.py)


class ChatSession:
    def __init__(self, deps: ChatDeps, approver: Approver, loaded: LoadedSession | None = None) -> None:
        self.deps = deps
        self.approver = approver
        self.model = deps.model
        self.mode = deps.mode
        self.history: list[Message] = list(loaded.history) if loaded else []
        self.loaded = loaded
        self._recorder: SessionRecorder | None = deps.store.reopen(loaded) if loaded else None
        self._runtime: AgentRuntime | None = None
        self._prompt: Callable[[], str] = lambda: ""

    @property
    def id(self) -> str | None:
        return self._recorder.id if self._recorder else None

    @property
    def recorder(self) -> SessionRecorder:
        if self._recorder is None:
            self._recorder = self.deps.store.create(self.deps.project_root, model=self.model)
        return self._recorder

    @property
    def runtime(self) -> AgentRuntime:
        if self._runtime is None:
            self._runtime, self._prompt = self.deps.build_runtime(
                self.model, self.mode, self.approver, self.recorder
            )
            if self.deps.mcp is not None:
                self.deps.mcp.attach(self._runtime.tools)
        return self._runtime

    @property
    def system_prompt(self) -> str:
        """Built once per runtime and stable across rounds (the prompt cache depends on it)."""
        _ = self.runtime
        return self._prompt()

    async def turn(
        self, text: str, abort: AbortSignal, required_tools: tuple[str, ...] = ()
    ) -> AsyncIterator[ev.RuntimeEvent]:
        recorder = self.recorder
        if self.deps.mcp is not None:
            text = await self.deps.mcp.prepare_message(text)  # @SERVER:URI attaches a resource
        try:
            async for event in self.runtime.run_stream(
                self.history,
                text,
                system_prompt=self.system_prompt,
                abort=abort,
                required_tools=required_tools,
            ):
                recorder.record(event)
                always = isinstance(event, ev.ApprovalDecided) and event.decision == "always"
                if always and event.rule and self.deps.save_rule is not None:  # type: ignore[union-attr]
                    self.deps.save_rule(event.rule)  # type: ignore[union-attr]
                yield event
        finally:
            recorder.flush()

    def set_mode(self, mode: str) -> None:
        self.mode = mode
        if self._runtime is not None:
            self._runtime.policy.mode = mode  # type: ignore[assignment]

    async def set_model(self, model: str) -> None:
        self.model = model
        await self._close_runtime()

    async def _close_runtime(self) -> None:
        if self._runtime is not None:
            await self._runtime.close()
            self._runtime = None

    async def close(self) -> None:
        await self._close_runtime()
        if self._recorder is not None:
            self._recorder.close()
