"""Asked once per project file: may its `.mcp.json` start the commands it names?

`y` trusts the file (and starts its servers) · `n` / Esc leaves them stopped (`/mcp
trust` trusts later). Keys pressed in the first moment after it appears are ignored, so
typing ahead never trusts anything by accident.
"""

from __future__ import annotations

import time

from textual import events
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import Static

from wyckoff_cli.tui.literal import literal

GRACE_SECONDS = 0.3


class McpTrustScreen(ModalScreen[bool]):
    DEFAULT_CSS = """
    McpTrustScreen { align: center middle; }
    McpTrustScreen > Vertical {
        width: 90%; max-width: 120; height: auto; max-height: 90%;
        border: thick $warning; background: $surface; padding: 0 1;
    }
    McpTrustScreen #keys { margin: 1 0 0 0; text-style: bold; }
    """
    BINDINGS = [
        Binding("y", "answer(True)", "Trust", show=False),
        Binding("n,escape", "answer(False)", "Not now", show=False),
    ]

    def __init__(self, question: str) -> None:
        super().__init__()
        self.question = question
        self.opened = time.monotonic()
        self.attention = "the project's MCP servers wait for your trust (y / n)"  # a notification's text

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Static(literal(self.question), id="question")
            yield Static("y  trust it and start them    n / Esc  not now (/mcp trust later)", id="keys")

    async def on_key(self, event: events.Key) -> None:
        if time.monotonic() - self.opened < GRACE_SECONDS:
            event.stop()
            event.prevent_default()

    def action_answer(self, trusted: bool) -> None:
        self.dismiss(trusted)
