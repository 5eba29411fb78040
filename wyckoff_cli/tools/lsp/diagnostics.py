"""What an edit's result says about the server's diagnostics: only those the change
introduced, errors first then warnings, 1-based lines, at most `MAX_SHOWN` lines."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable

from lsprotocol import types as lsp

MAX_SHOWN = 20
_SEVERITY = {
    lsp.DiagnosticSeverity.Error: "error",
    lsp.DiagnosticSeverity.Warning: "warning",
    lsp.DiagnosticSeverity.Information: "info",
    lsp.DiagnosticSeverity.Hint: "hint",
}


def severity_name(diagnostic: lsp.Diagnostic) -> str:
    return _SEVERITY.get(diagnostic.severity or lsp.DiagnosticSeverity.Error, "error")


def _rank(diagnostic: lsp.Diagnostic) -> int:
    return int(diagnostic.severity or lsp.DiagnosticSeverity.Error)


def _identity(diagnostic: lsp.Diagnostic, line_text: str) -> tuple[str, str, str, str]:
    """What makes two diagnostics "the same" across an edit: not the line number
    (lines above may have moved), but the message, code, severity and line's text."""
    return (severity_name(diagnostic), str(diagnostic.code or ""), diagnostic.message, line_text.strip())


def introduced(
    before: Iterable[lsp.Diagnostic], before_text: str, after: Iterable[lsp.Diagnostic], after_text: str
) -> list[lsp.Diagnostic]:
    """The diagnostics of `after` that were not there before the edit."""
    old_lines, new_lines = before_text.splitlines(), after_text.splitlines()
    remaining = Counter(_identity(d, _line(old_lines, d)) for d in before)
    fresh: list[lsp.Diagnostic] = []
    for diagnostic in after:
        key = _identity(diagnostic, _line(new_lines, diagnostic))
        if remaining[key] > 0:
            remaining[key] -= 1
        else:
            fresh.append(diagnostic)
    return fresh


def _line(lines: list[str], diagnostic: lsp.Diagnostic) -> str:
    number = diagnostic.range.start.line
    return lines[number] if 0 <= number < len(lines) else ""


def relevant(diagnostics: Iterable[lsp.Diagnostic]) -> list[lsp.Diagnostic]:
    """Errors then warnings (information and hints are left out), by position."""
    kept = [d for d in diagnostics if _rank(d) <= int(lsp.DiagnosticSeverity.Warning)]
    return sorted(kept, key=lambda d: (_rank(d), d.range.start.line, d.range.start.character))


def format_diagnostics(shown_path: str, diagnostics: list[lsp.Diagnostic], limit: int = MAX_SHOWN) -> str:
    lines = [format_one(shown_path, d) for d in diagnostics[:limit]]
    if len(diagnostics) > limit:
        lines.append(f"… and {len(diagnostics) - limit} more")
    return "\n".join(lines)


def format_one(shown_path: str, diagnostic: lsp.Diagnostic) -> str:
    start = diagnostic.range.start
    code = f" [{diagnostic.code}]" if diagnostic.code not in (None, "") else ""
    message = " ".join(diagnostic.message.split())
    return (
        f"{shown_path}:{start.line + 1}:{start.character + 1}: {severity_name(diagnostic)}: {message}{code}"
    )
