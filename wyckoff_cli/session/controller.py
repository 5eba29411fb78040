"""`ChatController`: one chat as any host drives it, without widgets.

It owns the session's parts (built by the `SessionBuilder`), the conversation, the
runtime and the recorder, and the figures the status bar shows. A host asks it for
things — run a turn, change the mode or the model, compact, start or resume a
session, a slash command — and gets events back; it never assigns into the runtime.
Every event of a turn is recorded and counted here before the host sees it.
"""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator, Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from wyckoff_cli.core import events as ev
from wyckoff_cli.core.conversation import Conversation
from wyckoff_cli.core.errors import ConfigError
from wyckoff_cli.core.messages import ImagePart, with_images
from wyckoff_cli.session import extensions
from wyckoff_cli.session.builder import Session, SessionBuilder
from wyckoff_cli.session.commands import SlashCommand
from wyckoff_cli.session.custom_commands import (
    CommandCatalog,
    ShellExpansion,
    runtime_for_model,
    shell_snippets,
    turn_rules,
)
from wyckoff_cli.session.custom_commands import TurnRequest as TurnRequest  # re-exported
from wyckoff_cli.session.extensions import INIT_PROMPT as INIT_PROMPT  # re-exported
from wyckoff_cli.session.models import check_model, model_id
from wyckoff_cli.session.modes import ModeNotes
from wyckoff_cli.session.status import PriceFn, StatusModel, agent_rows, totals_row
from wyckoff_cli.session.user_shell import ShellRun, UserShell, attach
from wyckoff_cli.storage.session_lock import SessionLocked
from wyckoff_cli.tools.permissions.policy import PERMISSION_MODES, next_permission_mode

if TYPE_CHECKING:
    from wyckoff_cli.runtime.hook_config import HookFile
    from wyckoff_cli.runtime.loop import AbortSignal
    from wyckoff_cli.storage.recorder import SessionRecorder
    from wyckoff_cli.storage.sessions import LoadedSession, SessionStore

log = logging.getLogger(__name__)


# (store, session id, "md" | "json") -> the exported text; the CLI's `sessions export`
Exporter = Callable[["SessionStore", str, str], str]


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
    ) -> None:
        """`price` and `context_window` replace the catalogue's figures (tests, custom
        hosts); `exporter` writes `/export` (the CLI's `sessions export`)."""
        self.builder = builder
        self.exporter = exporter
        self._price = price
        self._context_window = context_window
        config = builder.config
        self.model = model or config.model
        self.mode = mode or config.permission_mode
        self.loaded = loaded
        self.status = StatusModel(model=self.model, mode=self.mode, price=self.price)
        self.always_allowed: list[str] = []  # "always" answers of this app run, kept across sessions
        self.on_background: Callable[[], None] | None = None  # told when a background task starts or ends
        self._session: Session | None = None
        self._recorder: SessionRecorder | None = None
        self._empty = Conversation()
        self.mode_notes = ModeNotes()  # the mode the model was last told about
        self._commands: CommandCatalog | None = None
        self._approved_snippets: set[str] = set()  # `!`…`` commands approved this app run
        self.shell_runs: list[ShellRun] = []  # `!command` runs whose output goes with the next message
        self._hook_source: str | None = "resume" if loaded is not None else "startup"  # SessionStart due
        if loaded is not None:
            self._recorder = builder.open_recorder(self.model, loaded)
            self._restore_status(loaded)

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
        if self._recorder is None:
            self._recorder = self.builder.open_recorder(self.model)
        if self._session is None:
            self._session = self.builder.build(
                model=self.model, mode=self.mode, recorder=self._recorder, allow=self.always_allowed
            )
            self._session.runtime.background.add_listener(self._background_changed)
        return self._session

    @property
    def started(self) -> bool:
        return self._session is not None

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
        from wyckoff_cli.models.facts import resolve_model_facts

        if self._context_window is not None:
            return self._context_window(name)
        config = self.builder.config
        return resolve_model_facts(model_id(name, config), config.model_overrides).context_window

    def price(self, name: str, usage: ev.UsageReported) -> tuple[float, float] | None:
        """(cost, saved by the cache) of one call in USD; None when unpriced."""
        from wyckoff_cli.models.costs import cost_of
        from wyckoff_cli.models.facts import resolve_model_facts

        if self._price is not None:
            return self._price(name, usage)
        config = self.builder.config
        facts = resolve_model_facts(model_id(name, config), config.model_overrides)
        cost = cost_of(usage.usage, facts.prices)
        return None if cost is None else (cost.total, cost.saved)

    async def prepare(self) -> None:
        """Import the model's SDK (and its fallbacks') and the session's modules in a
        worker thread: the app starts it after its first paint, each turn awaits it."""
        from wyckoff_cli.session import warm

        config = self.builder.config
        await warm.ready(warm.modules_for([self.model, *config.fallbacks], config))

    def check_model(self, name: str) -> str | None:
        return check_model(name, self.builder.config)

    # ---------------------------------------------------------------- turns

    async def turn(
        self,
        text: str,
        abort: AbortSignal,
        required_tools: Sequence[str] = (),
        request: TurnRequest | None = None,
        attached: Sequence[ShellRun] = (),
        images: Sequence[ImagePart] = (),
    ) -> AsyncIterator[ev.RuntimeEvent]:
        """One turn; `request` when it comes from a command (its `!`…`` snippets run
        first, its rules hold for this turn only, its model answers this turn);
        `attached`: `!command` runs whose output goes before the text; `images`: the
        prompt's attachments (kept in `session.images`)."""
        await self.prepare()  # the imports run in a thread, never on the event loop
        session = self.session
        text = self.mode_notes.prefix(self.mode, text)  # a mode change is announced once
        if self._hook_source is not None:  # SessionStart hooks; their events come with the turn
            source, self._hook_source = self._hook_source, None
            await self.builder.user_hooks.session_start(source)
        runtime = session.runtime
        if request is not None:
            for event in extensions.request_notices(request):
                yield event
            if shell_snippets(text):  # the command's rules hold for its snippets too, as headless
                expansion = ShellExpansion.of(text, request, session, self.root, self._approved_snippets)
                with turn_rules(session.policy, request.allow):
                    async for event in expansion.events():
                        self._observe(event)
                        yield event
                if expansion.failed is not None:
                    yield ev.Notice("error", expansion.failed)
                    yield ev.TurnDone("", "stopped", 0)
                    return
                text = expansion.text
            if request.model and request.model != self.model:
                problem = self.check_model(request.model)
                if problem:
                    yield ev.Notice("error", f"/{request.command}: {problem}")
                    yield ev.TurnDone("", "error", 0)
                    return
                runtime = runtime_for_model(runtime, self.builder.provider(request.model))
        if self.builder.mcp is not None:
            text = await self.builder.mcp.prepare_message(text)  # @SERVER:URI attaches a resource
        message = attach(text, attached) if attached else text  # `!command` output goes with it
        if images:
            message = with_images(message, images)
        try:
            with turn_rules(session.policy, request.allow if request is not None else ()):
                async for event in runtime.run_stream(
                    session.conversation,
                    message,
                    system_prompt=session.system_prompt,
                    abort=abort,
                    required_tools=required_tools,
                ):
                    self._observe(event)
                    yield event
        finally:
            if session.recorder is not None:
                session.recorder.flush()

    async def shell(self, command: str, abort: AbortSignal) -> AsyncIterator[ev.RuntimeEvent]:
        """`!command`: run it as a `run_shell` call through the session's policy (never
        approved by having been typed); its output goes with the next message."""
        session = self.session
        runtime = session.runtime
        shell = UserShell(
            session.policy, session.registry, self.root, runtime.tool_env, lambda: runtime.results_dir
        )
        call_id = f"user-shell-{len(self.shell_runs) + 1}-{id(shell):x}"
        async for event in shell.run(command, call_id, "You typed this after `!`", abort):
            self._observe(event, record=False)  # it is saved with the message it goes with
            yield event
        if shell.failed is not None:
            yield ev.Notice("warning", shell.failed)
        elif shell.result is not None:
            self.shell_runs.append(shell.result)

    def take_shell_runs(self) -> list[ShellRun]:
        """The `!command` runs waiting for the next message, which takes them."""
        runs, self.shell_runs = self.shell_runs, []
        return runs

    def _observe(self, event: ev.RuntimeEvent, *, record: bool = True) -> None:
        if self._recorder is not None and record:
            self._recorder.record(event)
        self.status.observe(event)
        decided = event.inner if isinstance(event, ev.SubagentEvent) else event  # a sub-agent's too
        if isinstance(decided, ev.ApprovalDecided) and decided.decision == "always" and decided.rule:
            self._save_rule(decided.rule)

    def save_deny_rule(self, rule: str) -> None:
        """ "Always reject" (an ACP client's answer): deny calls like it from now on."""
        from wyckoff_cli.storage.permissions import save_rule

        if self._session is not None and rule not in self._session.policy.deny:
            self._session.policy.deny.append(rule)
        try:
            save_rule(rule, root=self.root, kind="deny")
        except OSError as exc:
            log.warning("cannot save the rule %s: %s", rule, exc)

    def _save_rule(self, rule: str) -> None:
        from wyckoff_cli.storage.permissions import save_rule
        from wyckoff_cli.storage.project_grants import allow_grant, keep_allow_trust

        if rule not in self.always_allowed:
            self.always_allowed.append(rule)
        try:
            before = allow_grant(self.root)
            save_rule(rule, root=self.root)
            keep_allow_trust(self.root, before)  # the user's own rule keeps a trusted list trusted
        except (OSError, ConfigError) as exc:  # the rule still holds for this run
            log.warning("cannot save the rule %s: %s", rule, exc)

    # ---------------------------------------------------------------- requests

    def set_mode(self, mode: str) -> ev.RuntimeEvent:
        if mode not in PERMISSION_MODES:
            return ev.Notice("error", f"Unknown mode {mode!r}: use one of {', '.join(PERMISSION_MODES)}")
        self.mode = mode
        if self._session is not None:
            self._session.policy.mode = mode
        changed = ev.ModeChanged(mode)
        self.status.observe(changed)
        return changed

    def approve_plan(self, mode: str) -> ev.RuntimeEvent:
        """The person approved an `exit_plan` call and picked `mode`: switch before the
        call runs (its result tells the model, so no note is needed)."""
        changed = self.set_mode(mode)
        if isinstance(changed, ev.ModeChanged):
            self.mode_notes.told = mode
        return changed

    def skip_to_fallback(self) -> str | None:
        """Esc while a model's retries wait: the next fallback takes over now (its name
        is returned); None when nothing waits so or no fallback follows (Esc interrupts)."""
        provider = self._session.runtime.provider if self._session is not None else None
        skip = getattr(provider, "skip_waiting", None)
        return skip() if callable(skip) else None

    def next_mode(self) -> ev.RuntimeEvent:
        return self.set_mode(next_permission_mode(self.mode))

    async def set_model(self, model: str) -> ev.RuntimeEvent:
        problem = self.check_model(model)
        if problem:
            return ev.Notice("error", problem)
        self.model = model
        await self._close_session()
        changed = ev.ModelChanged(model, self.context_window(model))
        self.status.observe(changed)
        return changed

    async def compact(self, focus: str | None = None) -> AsyncIterator[ev.RuntimeEvent]:
        if not len(self.conversation):
            yield ev.Notice("info", "Nothing to compact yet")
            return
        session = self.session
        try:
            event = await session.runtime.compact(session.conversation, session.system_prompt, focus)
        except Exception as exc:
            yield ev.Notice("error", f"Compaction failed: {getattr(exc, 'message', exc)}")
            return
        finally:
            for hook_event in self.builder.user_hooks.take_events():  # PreCompact hooks
                self._observe(hook_event)
                yield hook_event
        if event is None:
            yield ev.Notice("info", "Nothing to compact yet")
        side = session.runtime.side_usage()
        if side is not None:
            await session.runtime.announce(side)
        for produced in (event, side):
            if produced is not None:
                self._observe(produced)
                yield produced
        if self._recorder is not None:
            self._recorder.flush()

    async def new_session(self) -> ev.RuntimeEvent:
        await self._close_session(recorder=True, reason="clear")
        self._hook_source = "clear"
        self.shell_runs = []
        self.loaded = None
        self._empty = Conversation()
        self.mode_notes = ModeNotes()
        self.status.reset()
        return ev.SessionChanged(None)

    async def resume(self, session_id: str) -> ev.RuntimeEvent:
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
        self._hook_source = "resume"
        self.shell_runs = []  # `!command` output was for the session left
        self.loaded = loaded
        self._recorder = recorder
        self.mode_notes = ModeNotes()
        self.status.reset()
        self._restore_status(loaded)
        return ev.SessionChanged(loaded.id, resumed=True, messages=len(self.conversation))

    def _restore_status(self, loaded: LoadedSession) -> None:
        info = loaded.info
        self.status.restore(
            info.usage_by_model, context_tokens=info.context_tokens, agent_usage=info.agent_usage
        )

    async def _close_session(self, *, recorder: bool = False, reason: str = "exit") -> None:
        if recorder and self._session is not None and self._hook_source is None:
            await self.builder.user_hooks.session_end(reason)  # recorded in the session ending
            for event in self.builder.user_hooks.take_events():
                self._observe(event)
        if self._session is not None:
            await self._session.runtime.close()
            self._session = None
        if recorder and self._recorder is not None:
            self._recorder.close()
            self._recorder = None

    async def aclose(self) -> None:
        await self._close_session(recorder=True)
        await self.builder.user_hooks.aclose()

    # ---------------------------------------------------------------- commands

    @property
    def custom_commands(self) -> CommandCatalog:
        """The custom slash commands (read at first use)."""
        if self._commands is None:
            from wyckoff_cli.session.custom_commands import discover_commands

            self._commands = discover_commands(self.root)
        return self._commands

    @property
    def slash_commands(self) -> list[SlashCommand]:
        """What `/help` and completion list: the built-ins, then the custom commands."""
        return extensions.slash_commands(self.custom_commands, self.builder.config.commands.prefer)

    def expand(self, name: str, argument: str) -> TurnRequest | None:
        """A command that is a prompt for the model, as the turn to run; else None. A
        custom command with a built-in's name runs only when `commands.prefer` names it."""
        return extensions.expand(name, argument, self.custom_commands, self.builder.config.commands.prefer)

    def untrusted_allow_notice(self) -> str:
        """The notice for the project's allow rules when they are ignored ("" otherwise)."""
        from wyckoff_cli.storage.project_grants import untrusted_allow_notice

        try:
            return untrusted_allow_notice(self.root)
        except ConfigError as exc:
            return str(exc)

    def hooks_needing_trust(self) -> list[HookFile]:
        """The project's hook files not trusted yet (new or changed)."""
        return self.builder.user_hooks.hooks.needing_trust()

    def trust_hooks(self, files: list[HookFile], trusted: bool) -> ev.RuntimeEvent:
        """The user's answer to the trust question: record it, or leave them off."""
        return extensions.answer_trust(self.builder, files, trusted)

    async def command(self, name: str, argument: str) -> AsyncIterator[ev.RuntimeEvent]:
        """Run a slash command; what it shows or changes comes back as events."""
        if name == "model":
            if not argument:
                others = ", ".join(m for m in self.models if m != self.model) or "none configured"
                yield ev.Notice("info", f"Model: {self.model}. Others: {others}. /model ID switches.")
            else:
                changed = await self.set_model(argument)
                yield changed
                if isinstance(changed, ev.ModelChanged):
                    yield ev.Notice("info", f"Model switched to {argument}")
        elif name == "mode":
            if not argument:
                modes = ", ".join(PERMISSION_MODES)
                yield ev.Notice("info", f"Permission mode: {self.mode} (one of {modes}; Shift+Tab cycles)")
            else:
                changed = self.set_mode(argument)
                yield changed
                if isinstance(changed, ev.ModeChanged):
                    yield ev.Notice("info", f"Permission mode: {argument}")
        elif name == "compact":
            async for event in self.compact(argument or None):
                yield event
        elif name == "clear":
            yield await self.new_session()
            yield ev.Notice("info", "New session")
        elif name == "resume":
            changed = await self.resume(argument)
            yield changed
            if isinstance(changed, ev.SessionChanged):
                yield ev.Notice("info", f"Resumed session {changed.session_id}")
        elif name == "cost":
            yield self._cost()
        elif name == "memory":
            yield ev.CommandOutput("memory", text=self._memories(argument) or "No memories yet.")
        elif name == "permissions":
            yield self._permissions(argument)
        elif name == "export":
            yield self._export(argument)
        elif name == "mcp" and self.builder.mcp is not None:
            yield await self.builder.mcp.command(argument)
        elif name == "skills":
            yield extensions.skills_output(self.builder.skills)
        elif name == "hooks":
            yield extensions.hooks_output(self.builder, argument)
        else:
            yield ev.Notice("warning", f"/{name} is not a command here")

    def _cost(self) -> ev.RuntimeEvent:
        status = self.status
        if not status.per_model:
            return ev.Notice("info", "No model calls in this session yet")
        columns = [
            "model",
            "calls",
            "input",
            "output",
            "cache read",
            "cache write",
            "searches",
            "cost",
            "cache saved",
        ]
        rows = [totals_row(model, totals) for model, totals in status.per_model.items()]
        rows += agent_rows(status)  # sub-agents' share, already in the models' rows
        rows.append(
            [
                "total",
                "",
                f"{status.input_tokens:,}",
                f"{status.output_tokens:,}",
                f"{status.cache_read_tokens:,}",
                f"{status.cache_write_tokens:,}",
                f"{sum(t.web_searches for t in status.per_model.values()):,}",
                (f"${status.cost:.4f}" if status.all_priced else f"${status.cost:.4f} + unpriced")
                if status.any_priced
                else "unpriced",
                f"${status.saved:.4f}",
            ]
        )
        return ev.CommandOutput("cost", title="This session", columns=columns, rows=rows)

    def _memories(self, query: str) -> str:
        from wyckoff_cli.context.memory import MemoryStore
        from wyckoff_cli.storage.paths import memory_db_path

        with MemoryStore(memory_db_path()) as memories:
            if query:
                found = [scored.memory for scored in memories.search(query, project=self.root)]
            else:
                found = memories.list_memories(project=self.root)
        return "\n".join(f"#{m.id} [{m.scope}/{m.kind}] {m.text}" for m in found)

    def _permissions(self, argument: str) -> ev.RuntimeEvent:
        from wyckoff_cli.storage.permissions import list_rules, remove_rule

        verb, _, rule = argument.partition(" ")
        if verb == "trust":
            self._commands = None  # read again: their trust changed
            return extensions.trust_project_grants(self.root, self._session)
        if verb == "remove" and rule.strip():
            rule = rule.strip()
            removed = remove_rule(rule, root=self.root)
            if rule in self.always_allowed:
                self.always_allowed.remove(rule)
            if self._session is not None and rule in self._session.policy.session_allow:
                self._session.policy.session_allow.remove(rule)
            text = f"Removed {rule} from {len(removed)} list(s)" if removed else f"No saved rule {rule}"
            return ev.Notice("info", text)
        ignored = set(self.builder.workspace.ignored_allow())
        saved = "\n".join(
            f"{r.kind:<5} {r.rule}  ({r.scope}: {r.file})"
            + (
                " [not trusted: ignored]"
                if r.scope == "project" and r.kind == "allow" and r.rule in ignored
                else ""
            )
            for r in list_rules(self.root)
        )
        session = ", ".join(self._session.policy.session_allow) if self._session is not None else ""
        return ev.CommandOutput(
            "permissions",
            text=f"{saved or 'No saved rules.'}\nAllowed for this session: {session or 'none'}\n"
            "/permissions remove RULE removes a saved rule; /permissions trust trusts the project's "
            "allow rules and command files.",
        )

    def _export(self, argument: str) -> ev.RuntimeEvent:
        from wyckoff_cli.storage.atomic import write_atomic

        if self.id is None or self._recorder is None or self.exporter is None:
            return ev.Notice("warning", "Nothing to export yet")
        self._recorder.flush()
        # a relative FILE is in the project folder
        path = self.root / (Path(argument).expanduser() if argument else f"wyckoff-session-{self.id}.md")
        try:
            write_atomic(path, self.exporter(self.store, self.id, "json" if path.suffix == ".json" else "md"))
        except Exception as exc:
            return ev.Notice("error", f"Export failed: {getattr(exc, 'message', exc)}")
        return ev.Notice("info", f"Exported to {path}")
