"""`/agents` (Ctrl+B): a live list of this project's background sessions and their sub-agents.

Waiting sessions first, then running ones, then the ended, newest first. Each row: id, state, worktree, elapsed, cost, and what it does now (the tool running,
the call it waits for, else its title); a session's sub-agents follow it, indented.
Refreshed once a second from the registry. Enter attaches to the selected session,
`n` starts a new background session (a prompt line opens), `x` stops the selected one,
`m` opens its merge preview (`wyckoff worktree diff NAME`), Esc closes.
"""

from __future__ import annotations

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import DataTable, Input, Static

from wyckoff_cli.storage.running import RunningRegistry, RunningSession, git_place
from wyckoff_cli.tui.background import BackgroundSettings, start_background, stop_session, worktree_diff
from wyckoff_cli.tui.literal import literal

REFRESH_SECONDS = 1.0
FIRST = {"waiting": 0, "running": 1}  # what needs the user first, then what runs, then the rest
HINT = "Enter attach · n new background session · x stop · m merge preview · Esc close"


def doing(entry: RunningSession) -> str:
    if entry.state == "waiting":
        return f"waits for {entry.waiting_for}"
    if entry.current_tool and entry.state == "running":
        return f"running {entry.current_tool}"
    return entry.title


def rows_of(entries: list[RunningSession]) -> list[tuple[str, list[str]]]:
    """(row key, cells) for each session, then each of its sub-agents."""
    rows: list[tuple[str, list[str]]] = []
    for e in entries:
        elapsed = f"{e.elapsed_s():.0f}s"
        rows.append((e.id, [e.id, e.state, e.worktree or "-", elapsed, f"${e.cost_usd:.4f}", doing(e)]))
        for agent in e.agents:
            tool = agent.get("tool")
            what = f"running {tool}" if tool and agent.get("state") == "running" else ""
            cells = [f"  └ {agent.get('agent', '?')}", str(agent.get("state", "")), "", "", "", what]
            rows.append((f"{e.id}/{agent.get('id')}", cells))
    return rows


class AgentsScreen(ModalScreen[RunningSession | None]):
    """Dismissed with the session to attach to, or None."""

    DEFAULT_CSS = """
    AgentsScreen { align: center middle; }
    AgentsScreen > Vertical {
        width: 95%; max-width: 150; height: 80%;
        border: thick $accent; background: $surface; padding: 0 1;
    }
    AgentsScreen #agents-title { text-style: bold; }
    AgentsScreen #agents-hint, AgentsScreen #agents-note { color: $text-muted; }
    AgentsScreen DataTable { height: 1fr; }
    AgentsScreen #agents-new { display: none; }
    """
    BINDINGS = [
        Binding("escape", "close", "Close", show=False),
        Binding("enter", "attach", "Attach", show=False),
        Binding("n", "new", "New", show=False),
        Binding("x", "stop", "Stop", show=False),
        Binding("m", "merge", "Merge preview", show=False),
    ]

    def __init__(self, settings: BackgroundSettings, registry: RunningRegistry | None = None) -> None:
        super().__init__()
        self.settings = settings
        self.registry = registry if registry is not None else RunningRegistry()
        self.project = git_place(settings.root).project
        self.entries: dict[str, RunningSession] = {}

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Static(literal(f"Sessions of {self.project}"), id="agents-title")
            yield DataTable(id="agents-table", cursor_type="row", zebra_stripes=True)
            yield Input(placeholder="the new background session's prompt; Enter starts it", id="agents-new")
            yield Static("", id="agents-note")
            yield Static(HINT, id="agents-hint")

    def on_mount(self) -> None:
        table = self.query_one(DataTable)
        table.add_columns("ID", "STATE", "WORKTREE", "ELAPSED", "COST", "NOW")
        self.refresh_rows()
        self.set_interval(REFRESH_SECONDS, self.refresh_rows)
        table.focus()

    def refresh_rows(self) -> None:
        entries = sorted(self.registry.entries(self.project), key=lambda e: FIRST.get(e.state, 2))
        self.entries = {e.id: e for e in entries}
        table = self.query_one(DataTable)
        selected = self.selected_key()
        table.clear()
        for key, cells in rows_of(entries):
            table.add_row(*(literal(c) for c in cells), key=key)
        if not entries:
            self.note("No background sessions yet: `n` starts one.")
        keys = [key for key, _ in rows_of(entries)]
        if selected in keys:
            table.move_cursor(row=keys.index(selected))

    def selected_key(self) -> str | None:
        table = self.query_one(DataTable)
        if not table.row_count:
            return None
        key = table.coordinate_to_cell_key(table.cursor_coordinate).row_key.value
        return str(key) if key is not None else None

    def selected(self) -> RunningSession | None:
        key = self.selected_key()
        return self.entries.get(key.split("/", 1)[0]) if key else None

    def note(self, text: str) -> None:
        self.query_one("#agents-note", Static).update(literal(text))

    # ---------------------------------------------------------------- keys

    def action_close(self) -> None:
        new = self.query_one("#agents-new", Input)
        if new.display:
            new.display = False
            self.query_one(DataTable).focus()
            return
        self.dismiss(None)

    def action_attach(self) -> None:
        entry = self.selected()
        if entry is None:
            return
        if entry.state not in ("running", "waiting"):
            self.note(f"{entry.id} is {entry.state}: nothing to attach to")
            return
        self.dismiss(entry)

    def on_data_table_row_selected(self, event: DataTable.RowSelected) -> None:
        self.action_attach()  # the table takes Enter itself

    def action_new(self) -> None:
        new = self.query_one("#agents-new", Input)
        new.display = True
        new.focus()

    def on_input_submitted(self, event: Input.Submitted) -> None:
        prompt = event.value.strip()
        event.input.value = ""
        event.input.display = False
        self.query_one(DataTable).focus()
        if not prompt:
            return
        self.note("Starting a background session …")

        async def start() -> None:
            _, message = await start_background(prompt, self.settings)
            self.note(message)
            self.refresh_rows()

        self.run_worker(start(), group="agents")

    def action_stop(self) -> None:
        entry = self.selected()
        if entry is None:
            return

        async def stop() -> None:
            self.note(await stop_session(entry))

        self.run_worker(stop(), group="agents")

    def action_merge(self) -> None:
        entry = self.selected()
        if entry is None:
            return

        async def preview() -> None:
            ok, text = await worktree_diff(entry)
            if not ok:
                self.note(text)
                return
            from wyckoff_cli.tui.screens.rewind import DiffScreen

            self.app.push_screen(DiffScreen(text, f"Merge preview of {entry.worktree} ({entry.branch})"))

        self.run_worker(preview(), group="agents")
