"""`ChatController`: one chat as any host drives it, without widgets.

It owns the session's parts (built by the `SessionBuilder`), the conversation, the
runtime and the recorder, and the figures the status bar shows. A host sends it
requests (session/requests.py) — a turn, an interrupt, a mode or model change, a
slash command parsed by `parse(text)` — and `handle(request)` answers each with
events in one `match` (`handle_now` for the ones that need no await); a host never
assigns into the runtime or edits the conversation. Every event of a turn is
recorded and counted here before the host sees it.
"""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator, Callable
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, assert_never

from wyckoff_cli.core import events as ev
from wyckoff_cli.core.abort import AbortSignal
from wyckoff_cli.core.conversation import Conversation
from wyckoff_cli.session import checkpoint_requests as checkpoints
from wyckoff_cli.session import extensions, warm
from wyckoff_cli.session import requests as rq
from wyckoff_cli.session.builder import Session, SessionBuilder
from wyckoff_cli.session.checkpoint_requests import RewindPoint
from wyckoff_cli.session.claude_settings import default_mode
from wyckoff_cli.session.commands import BY_NAME, SlashCommand, parse
from wyckoff_cli.session.compact_request import compaction_events
from wyckoff_cli.session.custom_commands import (
    CommandCatalog,
)
from wyckoff_cli.session.custom_commands import TurnRequest as TurnRequest  # re-exported
from wyckoff_cli.session.extensions import INIT_PROMPT as INIT_PROMPT  # re-exported
from wyckoff_cli.session.info_requests import (
    Exporter,
    cost_output,
    events_of,
    export_output,
    memories_output,
    permissions_output,
    save_rule_quietly,
    untrusted_allow_notice,
)
from wyckoff_cli.session.lsp import lsp_output
from wyckoff_cli.session.managed_modes import allowed_modes, mode_refusal, next_allowed_mode, start_mode
from wyckoff_cli.session.models import call_price, check_model, context_window_of, skip_to_fallback
from wyckoff_cli.session.modes import ModeNotes
from wyckoff_cli.session.plugin_requests import plugins_output
from wyckoff_cli.session.review import review_request_events
from wyckoff_cli.session.shell import auto_allow_line, registry_shell, sandbox_auto_allow, shell_of
from wyckoff_cli.session.status import PriceFn, StatusModel
from wyckoff_cli.session.telemetry import SessionTelemetry
from wyckoff_cli.session.turn import turn_events
from wyckoff_cli.session.user_shell import ShellRun, UserShell
from wyckoff_cli.session.worktree_requests import worktree_output
from wyckoff_cli.storage.session_lock import SessionLocked
from wyckoff_cli.tools.permissions.policy import PERMISSION_MODES

if TYPE_CHECKING:
    from wyckoff_cli.runtime.checkpoints.rewind import CheckpointCommands
    from wyckoff_cli.runtime.hook_config import HookFile
    from wyckoff_cli.storage.recorder import SessionRecorder
    from wyckoff_cli.storage.sessions import LoadedSession, SessionStore

log = logging.getLogger(__name__)


class ChatController:
    def __init__(
        self,
        builder: SessionBuilder,
        *,
        model: str | None = None,
        mode: str | None = None,
        loaded: LoadedSession | None = None,
        exporter: Exporter | None = None,
        price: PriceFn | None = None,
        context_window: Callable[[str], int] | None = None,
        recorder: SessionRecorder | None = None,
        unrecorded: bool = False,
    ) -> None:
        """`price` and `context_window` replace the catalogue's figures (tests, custom
        hosts); `exporter` writes `/export` (the CLI's `sessions export`). `recorder`: a
        session the host opened already (a fork); `unrecorded`: save nothing (`--no-session`)."""
        self.builder = builder
        self.exporter = exporter
        self._price = price
        self._context_window = context_window
        config = builder.config
        self.model = model or config.model
        self.mode, self.mode_notice = start_mode(mode or default_mode(builder) or config.permission_mode)
        self.loaded = loaded
        self.status = StatusModel(model=self.model, mode=self.mode, price=self.price)
        self.always_allowed: list[str] = []  # "always" answers of this app run, kept across sessions
        self.on_background: Callable[[], None] | None = None  # told when a background task starts or ends
        self._session: Session | None = None
        self._first_provider = warm.FirstProvider()  # the session's provider, made ahead by prepare()
        self._recorder: SessionRecorder | None = recorder
        self.unrecorded = unrecorded
        self._empty = Conversation()
        self.mode_notes = ModeNotes()  # the mode the model was last told about
        self._commands: CommandCatalog | None = None
        self.approved_snippets: set[str] = set()  # `!`…`` commands approved this app run
        self.shell_runs: list[ShellRun] = []  # `!command` runs whose output goes with the next message
        self.hook_source: str | None = "resume" if loaded is not None else "startup"  # SessionStart due
        self._abort: AbortSignal | None = None  # the running turn's or `!command`'s (`Interrupt`)
        self.interrupted = False  # the last turn or `!command` was stopped by an `Interrupt`
        self.telemetry = SessionTelemetry.for_config(config, self.price)  # OpenTelemetry export (issue 33)
        if loaded is not None:
            self._recorder = builder.open_recorder(self.model, loaded)
            self.status.restore_session(loaded.info)

    # ---------------------------------------------------------------- what there is

    @property
    def root(self) -> Path:
        return self.builder.workspace.root

    @property
    def store(self) -> SessionStore:
        return self.builder.sessions()

    @property
    def id(self) -> str | None:
        return self._recorder.id if self._recorder is not None else None

    @property
    def conversation(self) -> Conversation:
        return self._recorder.conversation if self._recorder is not None else self._empty

    @property
    def session(self) -> Session:
        """The session's parts, built at first use (the session folder too)."""
        if self._recorder is None and not self.unrecorded:
            self._recorder = self.builder.open_recorder(self.model)
        if self._session is None:
            self._session = self.builder.build(
                model=self.model,
                mode=self.mode,
                recorder=self._recorder,
                allow=self.always_allowed,
                provider=self._first_provider.take(self.model, self.builder.config),  # made by prepare()
            )
            self._session.runtime.background.add_listener(self._background_changed)
            if self._recorder is None:  # an unrecorded session's conversation is its own
                self._empty = self._session.conversation
            self.status.auto_allow = sandbox_auto_allow(registry_shell(self._session.registry), self.mode)
        return self._session

    @property
    def system_prompt(self) -> str:
        return self.session.system_prompt

    @property
    def models(self) -> list[str]:
        """The ids and aliases `/model` offers."""
        config = self.builder.config
        return list(dict.fromkeys([config.model, *config.fallbacks, *config.models]))

    @property
    def input_history_file(self) -> Path:
        from wyckoff_cli.storage import paths
        from wyckoff_cli.storage.sessions import project_key

        return paths.data_dir() / "input-history" / f"{project_key(self.root)}.jsonl"

    def background_running(self) -> int:
        return len(self._session.runtime.background.running()) if self._session is not None else 0

    def _background_changed(self, _task: object) -> None:
        self.status.background_running = self.background_running()
        if self.on_background is not None:
            self.on_background()

    # ---------------------------------------------------------------- model facts

    def context_window(self, name: str) -> int:
        if self._context_window is not None:
            return self._context_window(name)
        return context_window_of(name, self.builder.config)

    def price(self, name: str, usage: ev.UsageReported) -> tuple[float, float] | None:
        """(cost, saved by the cache) of one call in USD; None when unpriced."""
        if self._price is not None:
            return self._price(name, usage)
        return call_price(name, usage, self.builder.config)

    async def prepare(self) -> None:
        """Import the model's SDK (and its fallbacks') and the session's modules in a
        worker thread, then, while no session is built, build and warm up its provider
        there (session/warm.py): the app starts it after its first paint, each turn awaits it."""
        config = self.builder.config
        await warm.ready(warm.modules_for([self.model, *config.fallbacks], config))
        if self._session is None:
            await self._first_provider.ready(self.model, config, self.builder.provider)

    def check_model(self, name: str) -> str | None:
        return check_model(name, self.builder.config)

    # ---------------------------------------------------------------- turns

    async def _shell(self, command: str, abort: AbortSignal) -> AsyncIterator[ev.RuntimeEvent]:
        """`!command`: run it as a `run_shell` call through the session's policy (never
        approved by having been typed); its output goes with the next message."""
        shell = UserShell.of(self.session, self.root)
        call_id = f"user-shell-{len(self.shell_runs) + 1}-{id(shell):x}"
        async for event in shell.run(command, call_id, "You typed this after `!`", abort):
            self.observe(event, record=False)  # it is saved with the message it goes with
            yield event
        if shell.failed is not None:
            yield ev.Notice("warning", shell.failed)
        elif shell.result is not None:
            self.shell_runs.append(shell.result)

    def take_shell_runs(self) -> list[ShellRun]:
        """The `!command` runs waiting for the next message, which takes them."""
        runs, self.shell_runs = self.shell_runs, []
        return runs

    def observe(self, event: ev.RuntimeEvent, *, record: bool = True) -> None:
        if self._recorder is not None and record:
            self._recorder.record(event)
        self.status.observe(event)
        self.telemetry.observe(event, self.id)
        decided = event.inner if isinstance(event, ev.SubagentEvent) else event  # a sub-agent's too
        if isinstance(decided, ev.ApprovalDecided) and decided.decision == "always" and decided.rule:
            self._save_rule(decided.rule)

    def _save_deny_rule(self, rule: str) -> None:
        """ "Always reject" (an ACP client's answer): deny calls like it from now on."""
        if self._session is not None and rule not in self._session.policy.deny:
            self._session.policy.deny.append(rule)
        save_rule_quietly(rule, self.root, "deny")

    def _save_rule(self, rule: str) -> None:
        if rule not in self.always_allowed:
            self.always_allowed.append(rule)
        save_rule_quietly(rule, self.root, "allow")  # the rule holds for this run even if not saved

    # ---------------------------------------------------------------- requests

    def _set_mode(self, mode: str) -> ev.RuntimeEvent:
        if mode not in PERMISSION_MODES:
            return ev.Notice("error", f"Unknown mode {mode!r}: use one of {', '.join(PERMISSION_MODES)}")
        if refusal := mode_refusal(mode):
            return ev.Notice("error", refusal)
        self.mode = mode
        if self._session is not None:
            self._session.policy.mode = mode
            self.status.auto_allow = sandbox_auto_allow(registry_shell(self._session.registry), mode)
        changed = ev.ModeChanged(mode)
        self.status.observe(changed)
        return changed

    def _approve_plan(self, mode: str) -> ev.RuntimeEvent:
        """The person approved an `exit_plan` call and picked `mode`: switch before the
        call runs (its result tells the model, so no note is needed)."""
        changed = self._set_mode(mode)
        if isinstance(changed, ev.ModeChanged):
            self.mode_notes.told = mode
        return changed

    def skip_to_fallback(self) -> str | None:
        """Esc while a model's retries wait: the next fallback's name, now (models.py)."""
        return skip_to_fallback(self._session)

    async def _set_model(self, model: str) -> ev.RuntimeEvent:
        problem = self.check_model(model)
        if problem:
            return ev.Notice("error", problem)
        self.model = model
        await self._close_session()
        changed = ev.ModelChanged(model, self.context_window(model))
        self.status.observe(changed)
        return changed

    async def _compact(self, focus: str | None = None) -> AsyncIterator[ev.RuntimeEvent]:
        if not len(self.conversation):
            yield ev.Notice("info", "Nothing to compact yet")
            return
        async for event in compaction_events(self.session, self.builder.user_hooks, focus):
            self.observe(event)
            yield event
        if self._recorder is not None:
            self._recorder.flush()

    async def _new_session(self) -> ev.RuntimeEvent:
        await self._close_session(recorder=True, reason="clear")
        self.hook_source = "clear"
        self.shell_runs = []
        self.loaded = None
        self._empty = Conversation()
        self.mode_notes = ModeNotes()
        self.status.reset()
        return ev.SessionChanged(None)

    async def _switch_session(self, session_id: str) -> ev.RuntimeEvent:
        try:
            loaded = self.store.load(session_id)
        except Exception as exc:
            return ev.Notice("error", getattr(exc, "message", str(exc)))
        if loaded.id == self.id:
            return ev.Notice("info", f"Session {loaded.id} is the one open")
        try:  # the lock is taken before the current session is closed: a failure loses nothing
            recorder = self.builder.open_recorder(self.model, loaded)
        except SessionLocked as exc:  # another process writes it (storage/session_lock.py)
            return ev.Notice("error", exc.message)
        await self._close_session(recorder=True, reason="other")
        self.hook_source = "resume"
        self.shell_runs = []  # `!command` output was for the session left
        self.loaded = loaded
        self._recorder = recorder
        self.mode_notes = ModeNotes()
        self.status.reset()
        self.status.restore_session(loaded.info)
        return ev.SessionChanged(loaded.id, resumed=True, messages=len(self.conversation))

    async def _close_session(self, *, recorder: bool = False, reason: str = "exit") -> None:
        if recorder and self._session is not None and self.hook_source is None:
            await self.builder.user_hooks.session_end(reason)  # recorded in the session ending
            for event in self.builder.user_hooks.take_events():
                self.observe(event)
        if self._session is not None:
            await self._session.runtime.close()
            self._session = None
        if recorder and self._recorder is not None:
            self._recorder.close()
            self._recorder = None

    async def aclose(self, reason: str = "exit") -> None:
        await self._close_session(recorder=True, reason=reason)
        await self.builder.user_hooks.aclose()
        self.telemetry.close()

    # ---------------------------------------------------------------- commands

    @property
    def custom_commands(self) -> CommandCatalog:
        """The custom slash commands (read at first use)."""
        if self._commands is None:
            from wyckoff_cli.session.custom_commands import discover_commands

            self._commands = discover_commands(self.root, trust_settings=self.builder.trust_project_hooks)
        return self._commands

    @property
    def slash_commands(self) -> list[SlashCommand]:
        """What `/help` and completion list: the built-ins, then the custom commands."""
        return extensions.slash_commands(self.custom_commands, self.builder.config.commands.prefer)

    def parse(self, text: str) -> rq.Request | None:
        """Slash-command text as a request (session/commands.py); None when it names no
        command. A custom command with a built-in's name wins only in `commands.prefer`."""
        prefer = self.builder.config.commands.prefer
        custom = {c.name for c in self.custom_commands.commands if c.name not in BY_NAME or c.name in prefer}
        return parse(text, custom)

    def expand(self, name: str, argument: str) -> TurnRequest | None:
        """A command that is a prompt for the model, as the turn to run; else None. A
        custom command with a built-in's name runs only when `commands.prefer` names it."""
        return extensions.expand(name, argument, self.custom_commands, self.builder.config.commands.prefer)

    def untrusted_allow_notice(self) -> str:
        """The notice for the project's allow rules when they are ignored ("" otherwise)."""
        return untrusted_allow_notice(self.root)

    def hooks_needing_trust(self) -> list[HookFile]:
        """The project's hook files not trusted yet (new or changed)."""
        return self.builder.user_hooks.hooks.needing_trust()

    def _trust_hooks(self, files: list[HookFile], trusted: bool) -> ev.RuntimeEvent:
        """The user's answer to the trust question: record it, or leave them off."""
        return extensions.answer_trust(self.builder, files, trusted)

    # ---------------------------------------------------------------- requests

    @property
    def running(self) -> bool:
        """A turn or `!command` runs (an `Interrupt` would stop it)."""
        return self._abort is not None and not self._abort.aborted

    def handle_now(self, request: rq.ImmediateRequest) -> list[ev.RuntimeEvent]:
        """The requests that need no await (keys, dialogs' answers), answered at once."""
        match request:
            case rq.Interrupt():
                if self._abort is not None:
                    self._abort.abort()
                return []
            case rq.DropShellOutput():
                dropped = self.shell_runs.pop() if self.shell_runs else None
                return (
                    [ev.Notice("info", f"The output of `{dropped.command}` will not be sent")]
                    if dropped
                    else []
                )
            case rq.SetMode(mode=mode):
                if mode is None:
                    modes = ", ".join(allowed_modes())
                    return [
                        ev.Notice("info", f"Permission mode: {self.mode} (one of {modes}; Shift+Tab cycles)")
                    ]
                changed = self._set_mode(mode)
                ok = isinstance(changed, ev.ModeChanged)
                return [changed, ev.Notice("info", f"Permission mode: {mode}")] if ok else [changed]
            case rq.CycleMode():
                return [self._set_mode(next_allowed_mode(self.mode))]
            case rq.ApprovePlan(mode=mode):
                return [self._approve_plan(mode)]
            case rq.TrustHooks(files=files, trusted=trusted):
                return [self._trust_hooks(list(files), trusted)]
            case rq.RejectAlways(rule=rule):
                self._save_deny_rule(rule)
                return []
            case rq.Invalid(message=message):
                return [ev.Notice("warning", message)]
            case _:
                assert_never(request)

    async def handle(self, request: rq.SessionRequest) -> AsyncIterator[ev.RuntimeEvent]:
        """Answer one request with events: the one place a host's requests arrive."""
        match request:
            case (
                rq.Interrupt()
                | rq.DropShellOutput()
                | rq.SetMode()
                | rq.CycleMode()
                | rq.ApprovePlan()
                | rq.TrustHooks()
                | rq.RejectAlways()
                | rq.Invalid()
            ):
                events: AsyncIterator[ev.RuntimeEvent] = events_of(self.handle_now(request))
            case rq.Turn():
                events = self._run_turn(request)
            case rq.PromptCommand(name=name, argument=argument):
                events = self._prompt_command(name, argument)
            case rq.Shell(command=command):
                events = self._abortable(lambda abort: self._shell(command, abort))
            case rq.SetModel(model=model):
                events = self._switch_model(model)
            case rq.Compact(focus=focus):
                events = self._compact(focus)
            case rq.Clear():
                events = events_of([await self._new_session(), ev.Notice("info", "New session")])
            case rq.Resume(session_id=session_id):
                events = self._resume(session_id)
            case rq.Export(path=path):
                events = events_of([self._export(path)])
            case rq.Rewind(turn=turn, choice=choice):
                back = partial(
                    checkpoints.rewind, conversation=self.conversation, turn=turn or 1, choice=choice
                )
                events = checkpoints.when_available("rewind", self.checkpoint_commands(), back)
            case rq.Undo():
                events = checkpoints.when_available("undo", self.checkpoint_commands(), checkpoints.undo)
            case rq.Redo():
                events = checkpoints.when_available("redo", self.checkpoint_commands(), checkpoints.redo)
            case rq.Diff():
                events = checkpoints.when_available("diff", self.checkpoint_commands(), checkpoints.diff)
            case rq.Review(kind=kind, ref=ref):
                events = self._abortable(lambda abort: review_request_events(self, kind, ref, abort))
            case rq.Cost():
                events = events_of([cost_output(self.status)])
            case rq.Memory(query=query):
                events = events_of([memories_output(self.root, query)])
            case rq.Permissions(trust=True):
                self._commands = None  # read again: their trust changed
                events = events_of([extensions.trust_project_grants(self.root, self._session)])
            case rq.Permissions(remove=remove):
                policy = self._session.policy if self._session is not None else None
                ignored = self.builder.workspace.ignored_allow()
                auto = auto_allow_line(shell_of(self._session, self.builder), self.mode)
                answer = permissions_output(self.root, remove, self.always_allowed, policy, ignored, auto)
                events = events_of([answer])
            case rq.Mcp(argument=argument):
                events = events_of([await self._mcp(argument)])
            case rq.Lsp():
                events = events_of([lsp_output(self.builder.lsp)])
            case rq.Skills():
                events = events_of([extensions.skills_output(self.builder.skills)])
            case rq.Hooks(argument=argument):
                events = events_of([extensions.hooks_output(self.builder, argument)])
            case rq.Plugins(argument=argument):
                self._commands = None  # a plugin's commands come and go with it
                events = events_of([plugins_output(self.root, argument)])
            case rq.Worktree(argument=argument):
                events = events_of([await worktree_output(self.root, argument)])
            case _:
                assert_never(request)
        async for event in events:
            yield event
        if self._recorder is not None:  # what the request changed is on disk before it answers
            self._recorder.flush()

    async def _abortable(
        self, run: Callable[[AbortSignal], AsyncIterator[ev.RuntimeEvent]]
    ) -> AsyncIterator[ev.RuntimeEvent]:
        """A turn or `!command` that an `Interrupt` stops."""
        self._abort = abort = AbortSignal()
        try:
            async for event in run(abort):
                yield event
        finally:
            self.interrupted = abort.aborted
            if self._abort is abort:
                self._abort = None

    def _run_turn(self, t: rq.Turn) -> AsyncIterator[ev.RuntimeEvent]:
        rest = (t.required_tools, t.command, t.attached, t.images, t.shown)
        return self._abortable(lambda a: turn_events(self, t.text, a, *rest))

    async def _prompt_command(self, name: str, argument: str) -> AsyncIterator[ev.RuntimeEvent]:
        expanded = self.expand(name, argument)
        if expanded is None:
            yield ev.Notice("warning", f"Unknown command /{name} — /help lists them")
            return
        turn = rq.Turn(expanded.text, expanded.required_tools, expanded, tuple(self.take_shell_runs()))
        async for event in self._run_turn(turn):
            yield event

    async def _switch_model(self, model: str | None) -> AsyncIterator[ev.RuntimeEvent]:
        if not model:
            others = ", ".join(m for m in self.models if m != self.model) or "none configured"
            yield ev.Notice("info", f"Model: {self.model}. Others: {others}. /model ID switches.")
            return
        changed = await self._set_model(model)
        yield changed
        if isinstance(changed, ev.ModelChanged):
            yield ev.Notice("info", f"Model switched to {model}")

    async def _resume(self, session_id: str) -> AsyncIterator[ev.RuntimeEvent]:
        if not session_id:
            yield ev.Notice("warning", "/resume ID: name the session (`wyckoff sessions list` lists them)")
            return
        changed = await self._switch_session(session_id)
        yield changed
        if isinstance(changed, ev.SessionChanged):
            yield ev.Notice("info", f"Resumed session {changed.session_id}")

    def _export(self, path: str) -> ev.RuntimeEvent:
        return export_output(self.root, path, self.id, self._recorder, lambda: self.store, self.exporter)

    async def _mcp(self, argument: str) -> ev.RuntimeEvent:
        if self.builder.mcp is None:
            return ev.Notice("info", "No MCP servers in this session")
        return await self.builder.mcp.command(argument)

    def checkpoint_commands(self) -> CheckpointCommands | str:
        """The session's /rewind, /undo, /redo and /diff, or why there are none."""
        if self._session is None and self.loaded is None:
            return "nothing has run in this session yet"
        return self.session.checkpoints or "checkpoints are off"

    async def rewind_points(self) -> list[RewindPoint] | ev.Notice:
        """What the app's rewind picker lists (newest first), or why it cannot."""
        return await checkpoints.points_or_notice(self.checkpoint_commands(), self.conversation)
