"""First-run setup: which key each provider needs, and a place to paste one.

A pasted key is stored in the credentials file (mode 0600 in the config folder),
never in config.toml and never logged. Environment variables still win.
"""

from __future__ import annotations

from collections.abc import Callable

from rich.table import Table
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.screen import Screen
from textual.widgets import Input, OptionList, Static
from textual.widgets.option_list import Option

from wyckoff_cli.core.provider_table import setup_entries

# (name, variable, label) of each provider that takes a pasted key: from the provider table
PROVIDERS = tuple((e.name, e.setup_variable, e.setup_label or e.name) for e in setup_entries())


class SetupScreen(Screen[str | None]):
    """Dismisses with the provider whose key was saved, or None when skipped."""

    DEFAULT_CSS = """
    SetupScreen { align: center middle; }
    SetupScreen > Vertical { width: 90%; max-width: 110; height: auto; border: thick $accent;
                             background: $surface; padding: 1 2; }
    SetupScreen OptionList { height: auto; margin: 1 0; }
    SetupScreen Input { display: none; }
    SetupScreen.-typing Input { display: block; }
    SetupScreen #error { color: $text-error; }
    """
    BINDINGS = [Binding("escape", "skip", "Skip", show=False)]

    def __init__(
        self, reason: str, have_key: Callable[[str], bool], save_key: Callable[[str, str], None]
    ) -> None:
        super().__init__()
        self.reason = reason
        self.have_key = have_key
        self.save_key = save_key
        self.provider: str | None = None

    def compose(self) -> ComposeResult:
        table = Table(show_edge=False, box=None, padding=(0, 2))
        for column in ("provider", "environment variable", "status"):
            table.add_column(column)
        for name, variable, _ in PROVIDERS:
            table.add_row(name, variable, "set" if self.have_key(name) else "missing")
        with Vertical():
            yield Static(f"[b]Set up a model[/b]\n\n{self.reason}\n")
            yield Static(table)
            yield Static(
                "\nExport the variable before starting Wyckoff, set `api_key_env` for an alias in "
                "config.toml (OpenAI-compatible endpoints), or paste a key here: it is stored in the "
                "credentials file with mode 0600, never in config.toml."
            )
            yield OptionList(*[Option(f"Paste a key for {label}", id=name) for name, _, label in PROVIDERS])
            yield Input(password=True, placeholder="Paste the key and press Enter (Esc skips)")
            yield Static("", id="error")

    def on_mount(self) -> None:
        self.query_one(OptionList).focus()

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        self.provider = event.option.id
        self.add_class("-typing")
        self.query_one(Input).focus()

    def on_input_submitted(self, event: Input.Submitted) -> None:
        key = event.value.strip()
        if not key or any(ch.isspace() for ch in key):
            self.query_one("#error", Static).update(
                "That does not look like a key (empty or contains spaces)."
            )
            return
        assert self.provider is not None
        self.save_key(self.provider, key)
        event.input.value = ""
        self.dismiss(self.provider)

    def action_skip(self) -> None:
        self.dismiss(None)
