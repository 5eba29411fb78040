"""How the language servers read to a person: `/lsp`, `wyckoff lsp status` and the
status bar's `LSP` segment."""

from __future__ import annotations

from wyckoff_cli.tools.lsp.manager import LspManager, ServerStatus

ERROR_MARK = "!"


def status_lines(statuses: list[ServerStatus]) -> list[str]:
    """One line per server: name, languages, state, files open, command, last error."""
    lines = []
    for s in statuses:
        parts = [f"{s.name:<28} {' '.join(s.languages):<32} {s.state}"]
        if s.state == "running":
            parts.append(f"{s.files_open} file(s) open")
        if s.command:
            parts.append(s.command)
        if s.last_error:
            parts.append(f"last error: {s.last_error}")
        lines.append("  ".join(parts))
    return lines


def status_segment(manager: LspManager | None) -> str:
    """`LSP basedpyright` (running servers), `!` after one that failed; "" when none
    runs or failed."""
    if manager is None:
        return ""
    statuses = manager.status()
    running = [s.name for s in statuses if s.state == "running"]
    failed = [s for s in statuses if s.state in ("failed", "disabled")]
    if not running and not failed:
        return ""
    return " ".join(["LSP", *running, *([ERROR_MARK] if failed else [])])
