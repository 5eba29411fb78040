"""The host side of a background session: its registry entry, its socket, its approvals.

`wyckoff run --background` runs the turn in a detached process whose host is a
`BackgroundHost`. Every event goes to `publish` (to the attached apps, and into the
registry entry: running, waiting, the current tool, the cost). Approvals are answered
by `approve`, the run's approver: the call waits (`waiting`, `waiting_for` naming it)
until the controlling app answers; it is never denied for want of a person and never
skipped. After the turn, the session takes further turns from the controlling app while
one is attached; `stop` (a request, or SIGTERM) aborts the turn and ends it cleanly.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable
from typing import Any

from wyckoff_cli.core import events as ev
from wyckoff_cli.core.approval import ApprovalDecision
from wyckoff_cli.session.channel import ChannelServer, decision_of, event_message
from wyckoff_cli.storage.running import RunningRegistry, RunningSession, now_iso
from wyckoff_cli.storage.session_info import shorten

log = logging.getLogger(__name__)


def waiting_text(request: ev.ApprovalRequested, agent: str | None = None) -> str:
    """`run_shell: pytest -q` (`reviewer · edit_file: app.py` for a sub-agent's)."""
    args = request.args
    subject = args.get("command") or args.get("path") or args.get("file_path") or args.get("url") or ""
    text = f"{request.name}: {shorten(str(subject), 60)}" if subject else request.name
    return f"{agent} · {text}" if agent else text


class BackgroundHost:
    def __init__(
        self,
        registry: RunningRegistry,
        entry: RunningSession,
        server_path: Any,
        *,
        cost: Callable[[], float] = lambda: 0.0,
        title: Callable[[], str] = lambda: "",
    ) -> None:
        self.registry = registry
        self.entry = entry
        self.cost = cost
        self.title = title
        self.server = ChannelServer(server_path, self._request, self._welcome)
        self.pending: dict[str, tuple[ev.RuntimeEvent, asyncio.Future[ApprovalDecision]]] = {}
        self.early: dict[str, ApprovalDecision] = {}  # answers that came before `approve` asked
        self.turns: asyncio.Queue[str] = asyncio.Queue()
        self.on_abort: Callable[[], None] | None = None  # stops the running turn (the controller's)
        self.stopping = False
        self._changed = asyncio.Event()  # a client came or went, a turn was asked for, a stop

    # ---------------------------------------------------------------- life

    async def start(self) -> None:
        await self.server.start()
        self._write(state="running")

    async def close(self, state: str) -> None:
        """Write the final state (`done`, `failed`, `stopped`) and close the socket."""
        for _, future in self.pending.values():
            future.cancel()
        self.pending.clear()
        self._write(state=state, ended=now_iso(), waiting_for=None, current_tool=None)
        self.server.broadcast({"kind": "state", "entry": self.entry.to_dict()})
        await self.server.close()

    def stop(self) -> None:
        """End cleanly: the turn is aborted (its history stays valid), no new one starts."""
        self.stopping = True
        self._abort_turn()
        self._changed.set()

    def _abort_turn(self) -> None:
        if self.on_abort is not None:
            self.on_abort()

    # ---------------------------------------------------------------- events

    def publish(self, event: ev.RuntimeEvent) -> None:
        self.server.broadcast(event_message(event))
        inner = event.inner if isinstance(event, ev.SubagentEvent) else event
        if isinstance(event, ev.ToolStarted):
            self._write(current_tool=event.name)
        elif isinstance(event, ev.ToolSucceeded | ev.ToolFailed):
            self._write(current_tool=None)
        elif isinstance(inner, ev.UsageReported):
            self._write(cost_usd=round(self.cost(), 6), title=self.title() or self.entry.title)
        elif isinstance(event, ev.SubagentEvent):
            self._note_agent(event)
        elif isinstance(event, ev.TurnDone):
            self._write(state="done", current_tool=None, cost_usd=round(self.cost(), 6))
            self.server.broadcast({"kind": "state", "entry": self.entry.to_dict()})

    def _note_agent(self, event: ev.SubagentEvent) -> None:
        inner = event.inner
        agents = [a for a in self.entry.agents if a.get("id") != event.agent_id]
        state = "done" if isinstance(inner, ev.TurnDone) else "running"
        tool = inner.name if isinstance(inner, ev.ToolStarted) else None
        if isinstance(inner, ev.ToolStarted | ev.TurnDone) or not any(
            a.get("id") == event.agent_id for a in self.entry.agents
        ):
            agents.append({"id": event.agent_id, "agent": event.agent, "state": state, "tool": tool})
            self._write(agents=agents)

    # ---------------------------------------------------------------- approvals

    async def approve(self, request: ev.ApprovalRequested) -> ApprovalDecision:
        """The run's approver: wait for the controlling app's answer, however long."""
        future: asyncio.Future[ApprovalDecision] = asyncio.get_running_loop().create_future()
        if request.id in self.early:  # answered from the broadcast before we got here
            future.set_result(self.early.pop(request.id))
        self.pending[request.id] = (request, future)
        self._write(state="waiting", waiting_for=waiting_text(request))
        self.server.broadcast({"kind": "state", "entry": self.entry.to_dict()})
        try:
            return await future
        finally:
            self.pending.pop(request.id, None)
            if not self.pending and not self.stopping:
                self._write(state="running", waiting_for=None)
                self.server.broadcast({"kind": "state", "entry": self.entry.to_dict()})

    # ---------------------------------------------------------------- further turns

    async def next_turn(self) -> str | None:
        """The next prompt the controlling app sends, or None when the session should
        end: it is stopping, or no app controls it (nobody can send one)."""
        while True:
            if self.stopping:
                return None
            with contextlib.suppress(asyncio.QueueEmpty):
                return self.turns.get_nowait()
            if self.server.controller is None:
                return None
            self._changed.clear()
            waiter = asyncio.ensure_future(self._changed.wait())
            try:
                await asyncio.wait({waiter}, timeout=1.0)  # also notices a client that left
            finally:
                waiter.cancel()

    # ---------------------------------------------------------------- the channel

    def _welcome(self) -> dict[str, Any]:
        pending = [event_message(event)["event"] for event, _ in self.pending.values()]
        self._changed.set()
        return {"entry": self.entry.to_dict(), "pending": pending}

    async def _request(self, request: dict[str, Any], controlling: bool) -> None:
        kind = request["kind"]
        if kind == "approve":
            call_id = str(request.get("id"))
            entry = self.pending.get(call_id)
            if entry is None:  # the event went out before the approver took the call
                self.early[call_id] = decision_of(request.get("decision"))
            elif not entry[1].done():
                entry[1].set_result(decision_of(request.get("decision")))
        elif kind == "turn":
            text = str(request.get("text", "")).strip()
            if text:
                self.turns.put_nowait(text)
                self.server.broadcast({"kind": "user", "text": text})
                self._changed.set()
        elif kind == "interrupt":
            self._abort_turn()
        elif kind == "stop":
            self.stop()

    def _write(self, **changes: Any) -> None:
        try:
            self.entry = self.registry.update(self.entry, **changes)
        except OSError as exc:  # the registry is a view: never break the turn for it
            log.warning("cannot write the background registry: %s", exc)
