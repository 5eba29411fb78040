"""First-run setup: which key each provider needs, and a place to paste one.

A pasted key is stored in the credentials file (mode 0600 in the config folder),
never in config.toml and never logged. Environment variables still win. The chat
opens only once the model asked for can be used; Esc (or Ctrl+C) quits instead of
opening a chat whose every message would fail, and the terminal then says how to
set the key.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from rich.table import Table
from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.screen import Screen
from textual.widgets import Input, OptionList, Static
from textual.widgets.option_list import Option

from wyckoff_cli.core.provider_table import ProviderEntry, setup_entries
from wyckoff_cli.tui.literal import literal, visible

LIST_KEYS = "↑↓ choose a provider · Enter paste its key · Esc quit"
PASTE_KEYS = "Paste the key, then Enter saves it · Esc goes back to the list"


@dataclass(frozen=True, slots=True)
class SetupNeeds:
    """What the setup screen is for and how it acts (the controller's side)."""

    model: str  # the model asked for, as typed
    provider: str | None  # the provider whose key it needs (None: not a key problem)
    problem: str  # why the model cannot be used now
    have_key: Callable[[str], bool]
    save_key: Callable[[str, str], Path]  # stores the key, returns the file it went to
    recheck: Callable[[], str | None]  # the problem left after saving, or None


def quit_hint(needs: SetupNeeds) -> str:
    """What the terminal shows when the user leaves the setup screen without a key."""
    entry = next((e for e in setup_entries() if e.name == needs.provider), None)
    lines = [f"Wyckoff did not start: {needs.problem}."]
    if entry is not None:
        lines.append(
            f"  export {entry.setup_variable}=…  and start it again (or paste the key on the setup screen),"
        )
    lines.append(
        "  or pick another model: `wyckoff chat --model PROVIDER:MODEL` (`wyckoff model list` lists them)."
    )
    return "\n".join(lines)


class SetupScreen(Screen[str | None]):
    """Dismisses with the provider whose key was saved, once the model can be used,
    or with None when the user quits (the app then exits and prints `quit_hint`)."""

    DEFAULT_CSS = """
    SetupScreen { align: center middle; }
    SetupScreen > Vertical { width: 90%; max-width: 110; height: auto; border: thick $accent;
                             background: $surface; padding: 1 2; }
    SetupScreen OptionList { height: auto; margin: 1 0 0 0; }
    SetupScreen #keys { color: $text-muted; margin: 0 0 1 0; }
    SetupScreen Input { display: none; }
    SetupScreen.-typing Input { display: block; }
    SetupScreen #message { height: auto; }
    SetupScreen #message.-error { color: $text-error; }
    SetupScreen #message.-saved { color: $text-success; }
    """
    BINDINGS = [
        Binding("escape", "back", "Back / quit", show=False),
        Binding("ctrl+c", "ctrl_c", "Clear / quit", show=False, priority=True),
        Binding("ctrl+q,ctrl+d", "quit_setup", "Quit", show=False, priority=True),
    ]

    def __init__(self, needs: SetupNeeds) -> None:
        super().__init__()
        self.needs = needs
        self.provider: str | None = None
        self.saved_to: Path | None = None

    def _entries(self) -> list[ProviderEntry]:
        """The provider the model needs first, then the others."""
        entries = list(setup_entries())
        entries.sort(key=lambda e: e.name != self.needs.provider)
        return entries

    def _label(self, entry: ProviderEntry) -> str:
        label = f"Paste a key for {entry.setup_label}"
        if entry.name == self.needs.provider:
            label += f" — needed for {self.needs.model}"
        return label  # shown with literal(): a model name is never markup

    def _table(self) -> Table:
        table = Table(show_edge=False, box=None, padding=(0, 2))
        for column in ("provider", "environment variable", "status"):
            table.add_column(column)
        for entry in self._entries():
            status = "set" if self.needs.have_key(entry.name) else "missing"
            others = [v for v in entry.key_variables if v != entry.setup_variable]
            table.add_row(entry.name, " or ".join([entry.setup_variable, *others]), status)
        return table

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Static(Text.assemble(("Set up a model", "bold"), "\n\n", visible(self.needs.problem), "\n"))
            yield Static(self._table(), id="providers")
            yield Static(
                "\nExport the variable before starting Wyckoff, set `api_key_env` for an alias in "
                "config.toml (OpenAI-compatible endpoints), or paste a key here: it is stored in the "
                "credentials file with mode 0600, never in config.toml."
            )
            yield OptionList(*[Option(literal(self._label(e)), id=e.name) for e in self._entries()])
            yield Static(LIST_KEYS, id="keys")
            yield Input(password=True, placeholder="the API key")
            yield Static("", id="message")

    def on_mount(self) -> None:
        self.query_one(OptionList).focus()

    def _say(self, text: str, kind: str) -> None:
        message = self.query_one("#message", Static)
        message.set_classes(f"-{kind}")
        message.update(literal(text))

    def _show_list(self) -> None:
        self.provider = None
        self.remove_class("-typing")
        self.query_one(Input).value = ""
        self.query_one("#keys", Static).update(LIST_KEYS)
        self.query_one(OptionList).focus()

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        self.provider = event.option.id
        self.add_class("-typing")
        self.query_one("#keys", Static).update(PASTE_KEYS)
        self.query_one(Input).focus()

    def on_input_submitted(self, event: Input.Submitted) -> None:
        key = event.value.strip()
        if not key or any(ch.isspace() for ch in key):
            self._say("That does not look like a key (empty or contains spaces).", "error")
            return
        assert self.provider is not None
        provider = self.provider
        self.saved_to = self.needs.save_key(provider, key)
        problem = self.needs.recheck()
        if problem is None:
            self.dismiss(provider)
            return
        self._show_list()
        self.query_one("#providers", Static).update(self._table())
        self._say(
            f"Saved the {provider} key to {self.saved_to} (mode 0600). "
            f"{self.needs.model} still cannot start: {problem}",
            "saved",
        )

    def action_back(self) -> None:
        if self.provider is not None:
            self._show_list()
        else:
            self.action_quit_setup()

    def action_ctrl_c(self) -> None:
        field = self.query_one(Input)
        if self.provider is not None and field.value:
            field.value = ""
        else:
            self.action_quit_setup()

    def action_quit_setup(self) -> None:
        self.dismiss(None)
