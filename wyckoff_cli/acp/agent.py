"""`WyckoffAgent`: the ACP agent side, over the same chat controller as the app.

Each ACP session is one Wyckoff session (its id is the session id, so `session/load`
finds it again) with its own `ChatController`. A prompt runs one turn; its events are
translated into `session/update` notifications; approvals become
`session/request_permission`; `session/cancel` aborts the turn, which still ends with
every tool call answered.
"""

from __future__ import annotations

import asyncio
import logging
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from acp import PROTOCOL_VERSION, RequestError, schema
from acp.helpers import update_agent_message_text

from wyckoff_cli import __version__
from wyckoff_cli.acp.choices import SessionChoices, read_choices, save_choices
from wyckoff_cli.acp.host_io import ClientFiles, ClientTerminal
from wyckoff_cli.acp.prompt import prompt_images, prompt_text
from wyckoff_cli.acp.server_asks import form_answer, form_call, form_options, is_form, sampling_title
from wyckoff_cli.acp.updates import UpdateTranslator, nested_id, replay, stop_reason
from wyckoff_cli.acp.usage import TurnUsage
from wyckoff_cli.core import events as ev
from wyckoff_cli.core.approval import ApprovalDecision
from wyckoff_cli.core.errors import ImageError
from wyckoff_cli.core.messages import ImagePart
from wyckoff_cli.session import requests as rq
from wyckoff_cli.session.builder import SessionBuilder, open_workspace
from wyckoff_cli.session.commands import ACP, BY_NAME, offered_by, split
from wyckoff_cli.session.controller import ChatController
from wyckoff_cli.session.info_requests import Exporter
from wyckoff_cli.session.managed_modes import allowed_modes
from wyckoff_cli.session.mcp import start_session_mcp
from wyckoff_cli.tools.mcp.names import wider_rules

log = logging.getLogger(__name__)

MODE_DESCRIPTIONS = {
    "default": "Ask before edits and commands",
    "plan": "Read and plan only; nothing is changed",
    "auto-edit": "Edit files without asking; ask before commands",
    "auto": "Edit files and run sandboxed commands without asking; ask before network, unsandboxed or outside",
    "yolo": "Run everything without asking (destructive commands still ask)",
}
PERMISSION_OPTIONS = [
    schema.PermissionOption(option_id="allow", name="Allow once", kind="allow_once"),
    schema.PermissionOption(option_id="always", name="Always allow", kind="allow_always"),
    schema.PermissionOption(option_id="deny", name="Reject", kind="reject_once"),
    schema.PermissionOption(option_id="never", name="Always reject", kind="reject_always"),
]


@dataclass
class AcpSession:
    controller: ChatController
    translator: UpdateTranslator
    turn: asyncio.Task[Any] | None = None
    pending: list[asyncio.Task[Any]] = field(default_factory=list)


class WyckoffAgent:
    """Implements the ACP `Agent` protocol (the package's `run_agent` drives it)."""

    def __init__(
        self, *, model: str | None = None, mode: str | None = None, exporter: Exporter | None = None
    ) -> None:
        """`exporter` writes `/export` (the CLI's `sessions export`)."""
        self.model = model
        self.mode = mode
        self.exporter = exporter
        self.client: Any = None
        self.capabilities: schema.ClientCapabilities | None = None
        self.sessions: dict[str, AcpSession] = {}

    def on_connect(self, conn: Any) -> None:
        self.client = conn

    async def aclose(self) -> None:
        """The client went away: end every session (stop its MCP servers, close its log)."""
        for state in list(self.sessions.values()):
            for task in list(state.pending):
                task.cancel()
            controller = state.controller
            mcp = getattr(controller.builder, "mcp", None)
            if mcp is not None:
                await mcp.aclose()
            await controller.aclose()
            if controller.builder.lsp is not None:
                await controller.builder.lsp.manager.close()  # its language servers too
        self.sessions.clear()

    # ------------------------------------------------------------------ set-up

    async def initialize(
        self,
        protocol_version: int,
        client_capabilities: schema.ClientCapabilities | None = None,
        client_info: schema.Implementation | None = None,
        **kwargs: Any,
    ) -> schema.InitializeResponse:
        self.capabilities = client_capabilities
        return schema.InitializeResponse(
            protocol_version=min(protocol_version, PROTOCOL_VERSION),
            agent_capabilities=schema.AgentCapabilities(
                load_session=True,
                prompt_capabilities=schema.PromptCapabilities(image=True, audio=False, embedded_context=True),
                mcp_capabilities=schema.McpCapabilities(http=True, sse=True),  # see docs/MCP.md
            ),
            agent_info=schema.Implementation(name="wyckoff", title="Wyckoff", version=__version__),
            auth_methods=auth_methods(),
        )

    async def authenticate(self, method_id: str, **kwargs: Any) -> schema.AuthenticateResponse:
        variables = dict(_auth_variables()).get(method_id)
        if variables is None:
            raise RequestError.invalid_params({"message": f"unknown authentication method {method_id!r}"})
        if not any(os.environ.get(v) for v in variables):
            raise RequestError.auth_required(
                {"message": f"set {' or '.join(variables)} in the environment Wyckoff is started with"}
            )
        return schema.AuthenticateResponse()

    def _controller(self, cwd: str, loaded: Any = None) -> ChatController:
        """A controller for `cwd`; a loaded session starts with the mode and model chosen
        for it over ACP before (acp/choices.py)."""
        folder = Path(cwd).expanduser().resolve()
        if not folder.is_dir():
            raise RequestError.invalid_params({"message": f"{folder} is not a folder"})
        builder = SessionBuilder(open_workspace(folder), cwd=folder)
        from wyckoff_cli.session.lsp import open_lsp

        builder.lsp = open_lsp(builder.workspace.root, builder.workspace.config)  # diagnostics after edits
        chosen = read_choices(loaded.directory) if loaded is not None else SessionChoices()
        controller = ChatController(
            builder,
            model=chosen.model or self.model,
            mode=chosen.mode or self.mode,
            loaded=loaded,
            exporter=self.exporter,
        )
        problem = controller.check_model(controller.model)
        if problem:
            raise RequestError.auth_required({"message": problem})
        return controller

    def _register(self, controller: ChatController) -> tuple[str, AcpSession]:
        """Give the session the client's files and terminal (when offered), build it —
        which creates the session folder, whose id is the ACP session id — and keep it."""
        builder = controller.builder
        fs = self.capabilities.fs if self.capabilities is not None else None
        files = (
            ClientFiles(self.client) if fs is not None and fs.read_text_file and fs.write_text_file else None
        )
        terminal = None
        if self.capabilities is not None and self.capabilities.terminal:
            terminal = ClientTerminal(self.client, self._on_terminal)
        builder.host_files, builder.host_terminal = files, terminal
        session = controller.session
        session_id = str(session.id)
        for io in (files, terminal):
            if io is not None:
                io.session_id = session_id
        state = AcpSession(controller, UpdateTranslator(controller.root, session.registry))
        self.sessions[session_id] = state
        return session_id, state

    async def _on_terminal(self, session_id: str, call_id: str, terminal_id: str) -> None:
        state = self.sessions.get(session_id)
        if state is not None:
            await self._send(session_id, state.translator.terminal(call_id, terminal_id))

    async def new_session(
        self, cwd: str, mcp_servers: list[Any] | None = None, **kwargs: Any
    ) -> schema.NewSessionResponse:
        controller = self._controller(cwd)
        await start_session_mcp(controller, mcp_servers)  # waited for: tools in the first request
        session_id, state = self._register(controller)
        self._later(state, self._send(session_id, available_commands()))
        return schema.NewSessionResponse(
            session_id=session_id, modes=modes(state.controller.mode), config_options=model_options(state)
        )

    async def load_session(
        self, cwd: str, session_id: str, mcp_servers: list[Any] | None = None, **kwargs: Any
    ) -> schema.LoadSessionResponse:
        builder = SessionBuilder(open_workspace(Path(cwd).expanduser().resolve()), cwd=Path(cwd))
        try:
            loaded = builder.sessions().load(session_id)
        except Exception as exc:
            raise RequestError.invalid_params({"message": getattr(exc, "message", str(exc))}) from None
        controller = self._controller(cwd, loaded)
        await start_session_mcp(controller, mcp_servers)
        loaded_id, state = self._register(controller)
        for update in replay(controller.conversation.messages, state.translator):
            await self._send(loaded_id, update)
        self._later(state, self._send(loaded_id, available_commands()))
        return schema.LoadSessionResponse(modes=modes(controller.mode), config_options=model_options(state))

    async def list_sessions(self, cwd: str | None = None, cursor: str | None = None, **kwargs: Any) -> Any:
        folder = Path(cwd or os.getcwd()).expanduser().resolve()
        store = SessionBuilder(open_workspace(folder), cwd=folder).sessions()
        rows = [
            schema.SessionInfo(
                session_id=info.id, cwd=info.project_root, title=info.title or None, updated_at=info.updated
            )
            for info in store.list(folder)
        ]
        return schema.ListSessionsResponse(sessions=rows)

    # ------------------------------------------------------------------ changes

    def _state(self, session_id: str) -> AcpSession:
        state = self.sessions.get(session_id)
        if state is None:
            raise RequestError.invalid_params({"message": f"no session {session_id!r} in this connection"})
        return state

    async def set_session_mode(
        self, mode_id: str, session_id: str, **kwargs: Any
    ) -> schema.SetSessionModeResponse:
        state = self._state(session_id)
        changed = state.controller.handle_now(rq.SetMode(mode_id))[0]
        if not isinstance(changed, ev.ModeChanged):
            raise RequestError.invalid_params({"message": getattr(changed, "message", "unknown mode")})
        await self._changed(session_id, state, changed)
        return schema.SetSessionModeResponse()

    async def set_config_option(
        self, config_id: str, session_id: str, value: str | bool, **kwargs: Any
    ) -> schema.SetSessionConfigOptionResponse:
        state = self._state(session_id)
        if config_id != "model" or not isinstance(value, str):
            raise RequestError.invalid_params({"message": f"unknown option {config_id!r}"})
        changed = [event async for event in state.controller.handle(rq.SetModel(value))][0]
        if not isinstance(changed, ev.ModelChanged):
            raise RequestError.invalid_params(
                {"message": getattr(changed, "message", "cannot use that model")}
            )
        self._keep_choices(state)  # the response carries the options: no update needed
        return schema.SetSessionConfigOptionResponse(config_options=model_options(state))

    async def cancel(self, session_id: str, **kwargs: Any) -> None:
        state = self.sessions.get(session_id)
        if state is not None:
            state.controller.handle_now(rq.Interrupt())

    # ------------------------------------------------------------------ turns

    async def prompt(self, prompt: list[Any], session_id: str, **kwargs: Any) -> schema.PromptResponse:
        """A turn, or a slash command of the table that ACP offers (its output and
        notices come back as the agent's message)."""
        state = self._state(session_id)
        text = prompt_text(prompt, state.controller.root).strip()
        images = self._prompt_images(prompt, state)
        mcp = state.controller.builder.mcp
        parsed = None
        if text.startswith("/mcp__") and mcp is not None:  # a server's prompt, as in the app
            name, _, line = text[1:].partition(" ")
            try:
                text = await mcp.render_prompt(name, line)
            except Exception as exc:  # an unknown prompt or a server error: said, nothing sent
                problem = getattr(exc, "message", None) or str(exc)
                await self._send(session_id, update_agent_message_text(problem))
                return schema.PromptResponse(stop_reason="end_turn")
        else:
            parsed = state.controller.parse(text)
        request = parsed or rq.Turn(text, images=tuple(images))
        if images and not isinstance(request, rq.Turn):
            message = "Images are sent with a prompt, not with a slash command: nothing was sent"
            raise RequestError.invalid_params({"message": message})
        parts = split(text)
        builtin = BY_NAME.get(parts[0].lower()) if parts is not None else None
        if isinstance(
            request, rq.Help | rq.Top | rq.Bottom | rq.Find | rq.Quit | rq.Background | rq.Agents
        ) or (builtin is not None and ACP not in builtin.hosts and not isinstance(request, rq.PromptCommand)):
            name = builtin.name if builtin is not None else text
            await self._send(session_id, update_agent_message_text(f"/{name} is not available here."))
            return schema.PromptResponse(stop_reason="end_turn")
        command = not isinstance(request, rq.Turn | rq.PromptCommand)
        done: ev.TurnDone | None = None
        used = TurnUsage(prompt_chars=len(text), context_tokens=state.controller.status.context_tokens)
        async for event in state.controller.handle(request):
            await self._forward(session_id, state, event, command=command)
            used.observe(event, state.controller.status.context_tokens)
            if isinstance(event, ev.TurnDone):
                done = event
        if command:
            return schema.PromptResponse(stop_reason="end_turn")
        return schema.PromptResponse(
            stop_reason=stop_reason(done.reason if done else "aborted", done.stop_reason if done else None),
            usage=used.response(done),
        )

    def _prompt_images(self, prompt: list[Any], state: AcpSession) -> list[ImagePart]:
        """The prompt's image blocks, stored; a bad one is an invalid-params error naming
        it (nothing is sent)."""
        if not any(getattr(block, "type", "") == "image" for block in prompt):
            return []  # the session is not built for a prompt without images
        store = state.controller.session.images
        if store is None:
            return []
        try:
            return prompt_images(prompt, store)
        except ImageError as exc:
            raise RequestError.invalid_params({"message": exc.message}) from None

    async def _forward(
        self, session_id: str, state: AcpSession, event: ev.RuntimeEvent, *, command: bool = False
    ) -> None:
        request = ev.approval_of(event)  # the agent's own, or a sub-agent's (wrapped)
        if request is not None:
            await self._ask(
                session_id, state, request, event if isinstance(event, ev.SubagentEvent) else None
            )
            return
        if isinstance(event, ev.ConfirmRequested):  # the command typed is the consent
            preview = f"**{event.title}**\n\n```\n{event.text}```\n"
            await self._send(session_id, update_agent_message_text(preview))
            event.respond(True)
            return
        if command and isinstance(event, ev.Notice) and event.level == "info":
            await self._send(session_id, update_agent_message_text(f"{event.message}\n"))
            return
        if isinstance(event, ev.ModeChanged | ev.ModelChanged):  # `/mode X`, `/model X`
            await self._changed(session_id, state, event)
        for update in state.translator.translate(event):
            await self._send(session_id, update)
        if isinstance(event, ev.UsageReported):
            status = state.controller.status
            cost = schema.Cost(amount=round(status.cost, 6), currency="USD") if status.all_priced else None
            await self._send(
                session_id,
                schema.UsageUpdate(
                    session_update="usage_update",
                    used=status.context_tokens,
                    size=state.controller.context_window(state.controller.model),  # the catalogue's
                    cost=cost,
                ),
            )

    async def _ask(
        self,
        session_id: str,
        state: AcpSession,
        request: ev.ApprovalRequested,
        wrapped: ev.SubagentEvent | None = None,
    ) -> None:
        """`session/request_permission` (for a sub-agent's call: its nested call id and
        a title naming the agent); the answer goes back through the request."""
        call = state.translator.permission_call(request)
        call.title = sampling_title(request) or call.title
        form = is_form(request)  # an MCP server's form: accept (the defaults), decline, cancel
        if form:
            call = form_call(call, request)
        if wrapped is not None:
            call.title = f"{wrapped.agent} agent: {call.title}"
            call.tool_call_id = nested_id(wrapped.parent_call_id, request.id)
        wider = wider_rules(request.name)  # an MCP tool: "always" for the tool, for its server
        options = (
            form_options(request) if form else PERMISSION_OPTIONS + (mcp_options(wider[1]) if wider else [])
        )
        try:
            response = await self.client.request_permission(
                session_id=session_id, tool_call=call, options=options
            )
        except Exception as exc:  # the client failed to answer: nothing runs
            log.warning("permission request failed: %s", exc)
            request.respond(ApprovalDecision.deny("The editor did not answer the permission request."))
            return
        outcome = response.outcome
        choice = (
            getattr(outcome, "option_id", None) if getattr(outcome, "outcome", "") == "selected" else None
        )
        if form:
            request.respond(form_answer(choice))
        elif choice == "allow":
            request.respond(ApprovalDecision.allow())
        elif choice == "always":
            request.respond(ApprovalDecision.always())
        elif choice in ("always_tool", "always_server") and wider:
            request.respond(ApprovalDecision.always(wider[0] if choice == "always_tool" else wider[1]))
        elif choice == "never":
            if request.rule:
                state.controller.handle_now(rq.RejectAlways(request.rule))
            request.respond(
                ApprovalDecision.deny("The user rejected this, and every call like it from now on.")
            )
        else:
            request.respond(ApprovalDecision.deny(None))

    async def _changed(
        self, session_id: str, state: AcpSession, event: ev.ModeChanged | ev.ModelChanged
    ) -> None:
        """The mode or model changed (by the client or a command): tell the client, and
        keep the choice for the next `session/load`."""
        self._keep_choices(state)
        if isinstance(event, ev.ModeChanged):
            update: Any = schema.CurrentModeUpdate(
                session_update="current_mode_update", current_mode_id=event.mode
            )
        else:
            update = schema.ConfigOptionUpdate(
                session_update="config_option_update", config_options=model_options(state)
            )
        await self._send(session_id, update)

    def _keep_choices(self, state: AcpSession) -> None:
        recorder = state.controller.session.recorder
        if recorder is not None:
            save_choices(recorder.directory, SessionChoices(state.controller.mode, state.controller.model))

    async def _send(self, session_id: str, update: Any) -> None:
        await self.client.session_update(session_id=session_id, update=update)

    def _later(self, state: AcpSession, work: Any) -> None:
        """Send after the current response (a client learns the session id from it)."""

        async def soon() -> None:
            await asyncio.sleep(0)
            await work

        task = asyncio.get_running_loop().create_task(soon())
        state.pending.append(task)
        task.add_done_callback(state.pending.remove)


# ---------------------------------------------------------------------- what we offer


def mcp_options(server_rule: str) -> list[schema.PermissionOption]:
    """The wider "always" choices for an MCP tool's call (`server_rule`: `mcp__SERVER__*`)."""
    server = server_rule.split("__")[1]
    return [
        schema.PermissionOption(option_id="always_tool", name="Always allow this tool", kind="allow_always"),
        schema.PermissionOption(
            option_id="always_server", name=f"Always allow every tool of {server}", kind="allow_always"
        ),
    ]


def _auth_variables() -> list[tuple[str, tuple[str, ...]]]:
    from wyckoff_cli.providers.credentials import KEY_VARIABLES

    return [(provider, tuple(variables)) for provider, variables in KEY_VARIABLES.items() if variables]


def auth_methods() -> list[schema.EnvVarAuthMethod | schema.TerminalAuthMethod | schema.AuthMethodAgent]:
    return [
        schema.EnvVarAuthMethod(
            type="env_var",
            id=provider,
            name=f"{provider} API key",
            description=f"Set {' or '.join(variables)} in the environment the editor starts Wyckoff with.",
            vars=[schema.AuthEnvVar(name=name) for name in variables],
        )
        for provider, variables in _auth_variables()
    ]


def modes(current: str) -> schema.SessionModeState:
    return schema.SessionModeState(
        current_mode_id=current,
        available_modes=[
            schema.SessionMode(id=mode, name=mode, description=MODE_DESCRIPTIONS.get(mode))
            for mode in allowed_modes()  # without yolo when a managed policy disables it
        ],
    )


def model_options(state: AcpSession) -> list[Any]:
    controller = state.controller
    names = list(dict.fromkeys([controller.model, *controller.models]))
    return [
        schema.SessionConfigOptionSelect(
            type="select",
            id="model",
            name="Model",
            category="model",
            current_value=controller.model,
            options=[schema.SessionConfigSelectOption(value=name, name=name) for name in names],
        )
    ]


def available_commands() -> schema.AvailableCommandsUpdate:
    commands = [
        schema.AvailableCommand(
            name=command.name,
            description=command.description,
            input=schema.AvailableCommandInput(root=schema.UnstructuredCommandInput(hint=command.argument))
            if command.argument
            else None,
        )
        for command in offered_by(ACP)
    ]
    return schema.AvailableCommandsUpdate(
        session_update="available_commands_update", available_commands=commands
    )
