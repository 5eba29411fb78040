"""`Agent`: Wyckoff driven from Python (docs/SDK.md).

An `Agent` is a host of the `ChatController`, like headless `wyckoff run`, through the
same composition (session/headless.py): each `stream`/`run` builds the session for its
turn inside the running event loop, sends the prompt as an `rq.Turn`, and closes
everything loop-bound (SDK clients, MCP servers, language servers) when the turn ends.
What carries over between calls is the session id, so one `Agent` may be used from
several event loops in turn (`run_sync`, then `asyncio.run(agent.run(...))`) and each
call continues the same saved session.
"""

from __future__ import annotations

import asyncio
import inspect
import json
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from wyckoff_cli.core import events as ev
from wyckoff_cli.core.approval import ApprovalDecision
from wyckoff_cli.core.errors import ConfigError, UsageError

ApprovalHandler = Callable[[ev.ApprovalRequested], "ApprovalDecision | Awaitable[ApprovalDecision]"]


@dataclass(frozen=True)
class RunResult:
    """What one `Agent.run` ended with.

    `text`: the final answer; `data`: the parsed JSON answer when an `output_schema`
    was given (None otherwise, and when `reason` is `schema_failed`); `usage`: token
    totals; `cost_usd`: USD of the turn's model calls, sub-agents' included (None when
    unpriced); `files_changed`: paths the edit tools changed (relative to the worktree,
    with `worktree=`); `session_id`: the saved session (`Agent.resume` takes it);
    `reason`: `done.reason` (docs/EVENTS.md). With `Agent(worktree=NAME)`: `worktree`
    (NAME), `branch` (`wyckoff/NAME`) and `worktree_kept` (False when the turn left no
    changes and no commits, so the worktree and branch were removed, as the CLI does)."""

    text: str
    data: Any
    usage: dict[str, int]
    cost_usd: float | None
    files_changed: list[str]
    session_id: str | None
    reason: str
    events: list[ev.RuntimeEvent] = field(default_factory=list, repr=False)
    worktree: str | None = None
    branch: str | None = None
    worktree_kept: bool = False

    @property
    def ok(self) -> bool:
        """The turn completed (`completed` or `completed_by_tool`)."""
        return self.reason in ("completed", "completed_by_tool")


class Agent:
    """A coding agent on one workspace. Arguments (all optional):

    - `model`: a model id (`provider:model`) or alias; default from the config.
    - `workspace`: the project folder (default: the current one).
    - `permission_mode`: `default`, `plan`, `auto-edit`, `auto` or `yolo`.
    - `allow`, `deny`: permission rules, e.g. `"run_shell(pytest*)"`.
    - `tools`: None for every tool, or the names of the only tools offered.
    - `mcp_servers`: extra MCP servers, `{name: {"command": ..., "args": [...]}}` or
      `{name: {"url": ...}}` (the `.mcp.json` form).
    - `system_prompt_append`: text added after Wyckoff's system prompt.
    - `max_budget_usd`: the session's cost budget (the turn ends with `budget`).
    - `on_approval`: `request -> ApprovalDecision` (may be async) for calls that need
      approval; without it they are refused, as `wyckoff run` refuses them.
    - `worktree`: None, or NAME: every turn runs in the git worktree
      `.wyckoff/worktrees/NAME` of the workspace's repository, on the branch
      `wyckoff/NAME` (made from HEAD on the first turn, reused after).
    """

    def __init__(
        self,
        model: str | None = None,
        *,
        workspace: str | Path | None = None,
        permission_mode: str | None = None,
        allow: Sequence[str] = (),
        deny: Sequence[str] = (),
        tools: Sequence[str] | None = None,
        mcp_servers: Mapping[str, Mapping[str, Any]] | None = None,
        system_prompt_append: str | None = None,
        max_budget_usd: float | None = None,
        on_approval: ApprovalHandler | None = None,
        worktree: str | None = None,
    ) -> None:
        from wyckoff_cli.tools.permissions.policy import PERMISSION_MODES

        if permission_mode is not None and permission_mode not in PERMISSION_MODES:
            raise UsageError(
                f"unknown permission_mode {permission_mode!r}: use one of {', '.join(PERMISSION_MODES)}"
            )
        if max_budget_usd is not None and not max_budget_usd > 0:
            raise UsageError(f"max_budget_usd must be a positive number of dollars, got {max_budget_usd!r}")
        self.model = model
        self.workspace = Path(workspace) if workspace is not None else None
        self.permission_mode = permission_mode
        self.allow = list(allow)
        self.deny = list(deny)
        self.tools = list(tools) if tools is not None else None
        self.mcp_servers = {name: dict(spec) for name, spec in (mcp_servers or {}).items()}
        self.system_prompt_append = system_prompt_append or ""
        self.max_budget_usd = max_budget_usd
        if worktree is not None and (not isinstance(worktree, str) or not worktree.strip()):
            raise UsageError(f"worktree must be a name (letters, digits, '.', '_', '-'), got {worktree!r}")
        self.on_approval = on_approval
        self.worktree = worktree.strip() if worktree is not None else None
        self._session_id: str | None = None
        self._place: Any = None  # the running turn's worktree (session/worktree_run.py)
        self._kept: bool = False
        self._branch: str | None = None

    @property
    def session_id(self) -> str | None:
        """The session the next call continues (None before the first)."""
        return self._session_id

    def resume(self, session_id: str) -> Agent:
        """Continue session `session_id` (a unique prefix will do) from the next call."""
        if not session_id.strip():
            raise UsageError("resume: name the session (`wyckoff sessions list` lists them)")
        self._session_id = session_id.strip()
        return self

    # ------------------------------------------------------------------ turns

    async def stream(
        self, prompt: str, *, output_schema: Mapping[str, Any] | None = None
    ) -> AsyncIterator[ev.RuntimeEvent]:
        """The turn's events, the union `wyckoff run --output-format stream-json` prints
        (typed dataclasses of `wyckoff_cli.api.events`); the last is `TurnDone`."""
        async for event in self._events(prompt, output_schema, None):
            yield event

    async def run(self, prompt: str, *, output_schema: Mapping[str, Any] | None = None) -> RunResult:
        """Run one turn to its end; with `output_schema` (a JSON Schema) the answer is
        JSON valid against it (`data`), or `reason` is `schema_failed`."""
        from wyckoff_cli.session.run_summary import RunSummary

        summaries: list[RunSummary] = []
        events: list[ev.RuntimeEvent] = []
        done: ev.TurnDone | None = None
        async for event in self._events(prompt, output_schema, summaries.append):
            events.append(event)
            if isinstance(event, ev.TurnDone):
                done = event
        if done is None:  # never: every turn ends with a `done`
            raise RuntimeError("the turn ended without a done event")
        files = summaries[0].files if summaries else []
        return RunResult(
            done.text,
            done.data,
            dict(done.usage),
            done.cost_usd,
            list(files),
            self._session_id,
            done.reason,
            events,
            self.worktree,
            self._branch,
            self._kept,
        )

    def run_sync(self, prompt: str, *, output_schema: Mapping[str, Any] | None = None) -> RunResult:
        """`run` for scripts: its own event loop, closed at the end."""
        try:
            asyncio.get_running_loop()
        except RuntimeError:
            return asyncio.run(self.run(prompt, output_schema=output_schema))
        raise RuntimeError("run_sync was called inside a running event loop: use `await agent.run(...)`")

    # ------------------------------------------------------------------ composition

    async def _events(
        self,
        prompt: str,
        output_schema: Mapping[str, Any] | None,
        on_summary: Callable[[Any], None] | None,
    ) -> AsyncIterator[ev.RuntimeEvent]:
        from wyckoff_cli.session.output_schema import check_schema, schema_checked
        from wyckoff_cli.session.run_summary import RunSummary
        from wyckoff_cli.session.store import call_coster

        if not isinstance(prompt, str) or not prompt.strip():
            raise UsageError("the prompt is empty")
        schema = (
            check_schema(dict(output_schema)) if output_schema is not None else None
        )  # before any request
        chat = await self._open(prompt)
        try:
            self._session_id = chat.session_id
            registry = chat.session.registry
            summary = RunSummary(
                chat.controller.root,
                {t.name: t.kind for t in registry},
                call_coster(chat.controller.builder.config),
            )
            if on_summary is not None:
                on_summary(summary)
            turn = schema_checked(chat, schema, prompt) if schema is not None else chat.turn(prompt)
            async for event in turn:
                summary.record(event)
                if isinstance(event, ev.TurnDone) and event.cost_usd is None and summary.cost_usd is not None:
                    event = replace(event, cost_usd=summary.cost_usd)
                yield event
        finally:
            try:
                await chat.aclose("other")
            finally:
                self._leave_worktree()  # the CLI's end-of-session rule, after the session is closed

    def _enter_worktree(self, cwd: Path, prompt: str) -> Path:
        """The folder the turn's session is built in: `cwd`, or its place in the worktree."""
        from wyckoff_cli.session.worktree_run import enter_worktree

        if self.worktree is None:
            return cwd
        self._place = enter_worktree(cwd, self.worktree, title=" ".join(prompt.split())[:80])
        self._kept, self._branch = False, self._place.branch
        return Path(self._place.folder)

    def _leave_worktree(self) -> None:
        from wyckoff_cli.session.worktree_run import leave_worktree

        place, self._place = self._place, None
        if place is not None:
            self._kept = leave_worktree(place, self._session_id) is not None

    async def _open(self, prompt: str) -> Any:
        cwd = (self.workspace or Path.cwd()).expanduser().resolve()
        if not cwd.is_dir():
            raise UsageError(f"workspace {cwd} is not a folder")
        cwd = self._enter_worktree(cwd, prompt)
        try:
            return await self._open_in(cwd)
        except BaseException:
            self._leave_worktree()
            raise

    async def _open_in(self, cwd: Path) -> Any:
        from wyckoff_cli.session.builder import SessionBuilder, build_policy, open_workspace
        from wyckoff_cli.session.headless import HeadlessChat
        from wyckoff_cli.session.lsp import open_lsp
        from wyckoff_cli.tools.permissions.policy import invalid_rules

        builder = SessionBuilder(
            open_workspace(cwd),
            cwd=cwd,
            max_budget_usd=self.max_budget_usd,
            extra_allow=list(self.allow),
            system_prompt_append=self.system_prompt_append,
        )
        config = builder.config
        model = self.model or config.model
        mode = self.permission_mode or config.permission_mode
        provider = builder.provider(model)  # a missing key or an unknown model: before anything else
        build_policy(config, mode, self.allow)
        problems = invalid_rules(self.deny)
        if problems:
            raise ConfigError("deny: " + "; ".join(problems))
        extra = self._mcp_specs()
        loaded = builder.sessions().load(self._session_id) if self._session_id else None
        recorder = builder.open_recorder(provider.name, loaded)  # a locked session fails here
        builder.lsp = open_lsp(builder.workspace.root, config)
        chat = await HeadlessChat.open(
            builder,
            model=model,
            mode=mode,
            recorder=recorder,
            resumed=loaded is not None,
            approver=self._answer,
            extra_mcp=extra,
        )
        try:
            session = chat.session
            session.policy.deny += self.deny
            if self.tools is not None:
                self._offer_only(session.registry)
        except BaseException:
            await chat.aclose()  # the session file and its lock are released
            raise
        return chat

    def _offer_only(self, registry: Any) -> None:
        from wyckoff_cli.session.output_schema import ANSWER_TOOL

        unknown = [name for name in self.tools or () if name not in registry]
        if unknown:
            raise UsageError(
                f"tools: no tool named {', '.join(unknown)} (there are {', '.join(registry.names())})"
            )
        for name in registry.names():
            if name not in (self.tools or ()) and name != ANSWER_TOOL:
                registry.remove(name)

    def _mcp_specs(self) -> list[Any]:
        from dataclasses import replace as replace_spec

        from wyckoff_cli.tools.mcp.config import parse_project_json

        if not self.mcp_servers:
            return []
        specs = parse_project_json(json.dumps({"mcpServers": self.mcp_servers}), Path("<Agent mcp_servers>"))
        return [replace_spec(spec, scope="user") for spec in specs]  # chosen in code: no trust needed

    async def _answer(self, request: ev.ApprovalRequested) -> ApprovalDecision:
        from wyckoff_cli.session.headless import unattended

        if self.on_approval is None:
            return await unattended(request)
        answer = self.on_approval(request)
        if inspect.isawaitable(answer):
            answer = await answer
        if not isinstance(answer, ApprovalDecision):
            raise TypeError(f"on_approval must return an ApprovalDecision, not {type(answer).__name__}")
        return answer
