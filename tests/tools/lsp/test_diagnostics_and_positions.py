"""Which diagnostics an edit introduced and how they read; positions in and out."""

from __future__ import annotations

import pytest
from lsprotocol import types as lsp

from wyckoff_cli.core.errors import ToolError
from wyckoff_cli.tools.lsp.diagnostics import format_diagnostics, introduced, relevant
from wyckoff_cli.tools.lsp.positions import character_column, position_of, utf16_column
from wyckoff_cli.tools.lsp.rename import apply_text_edits


def _diag(
    line: int, message: str, severity: lsp.DiagnosticSeverity = lsp.DiagnosticSeverity.Error
) -> lsp.Diagnostic:
    return lsp.Diagnostic(lsp.Range(lsp.Position(line, 0), lsp.Position(line, 1)), message, severity=severity)


def test_only_new_diagnostics_count_even_when_lines_moved() -> None:
    before_text = "a = b\nc = d\n"
    after_text = "import os\na = b\nc = d\ne: int = 'x'\n"
    before = [_diag(0, "b is not defined"), _diag(1, "d is not defined")]
    after = [_diag(1, "b is not defined"), _diag(2, "d is not defined"), _diag(3, "str is not int")]
    assert [d.message for d in introduced(before, before_text, after, after_text)] == ["str is not int"]


def test_a_repeated_diagnostic_on_a_new_line_is_new() -> None:
    before = [_diag(0, "b is not defined")]
    after = [_diag(0, "b is not defined"), _diag(1, "b is not defined")]
    fresh = introduced(before, "a = b\n", after, "a = b\nc = b\n")
    assert [d.range.start.line for d in fresh] == [1]


def test_errors_come_first_then_warnings_and_hints_are_left_out() -> None:
    found = relevant(
        [
            _diag(1, "unused", lsp.DiagnosticSeverity.Warning),
            _diag(5, "hint", lsp.DiagnosticSeverity.Hint),
            _diag(9, "bad type"),
            _diag(2, "info", lsp.DiagnosticSeverity.Information),
            _diag(3, "worse"),
        ]
    )
    assert [d.message for d in found] == ["worse", "bad type", "unused"]


def test_at_most_twenty_lines_then_a_count_with_one_based_lines() -> None:
    text = format_diagnostics("m.py", [_diag(i, f"problem {i}") for i in range(25)])
    lines = text.splitlines()
    assert len(lines) == 21
    assert lines[0] == "m.py:1:1: error: problem 0"
    assert lines[-1] == "… and 5 more"


def test_multiline_messages_stay_on_one_line() -> None:
    diagnostic = _diag(0, 'Type "int" is not assignable\n  "int" is not "str"')
    diagnostic.code = "reportAssignmentType"
    assert format_diagnostics("m.py", [diagnostic]) == (
        'm.py:1:1: error: Type "int" is not assignable "int" is not "str" [reportAssignmentType]'
    )


def test_utf16_columns_round_trip() -> None:
    line = "s = '😀' + name"
    column = line.index("name")
    units = utf16_column(line, column)
    assert units == column + 1  # the emoji is two UTF-16 units
    assert character_column(line, units) == column


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        ({"line": 2, "column": 5}, lsp.Position(1, 4)),
        ({"line": 2, "symbol": "name"}, lsp.Position(1, 11)),
        ({"line": 1, "symbol": "f"}, lsp.Position(0, 4)),  # the word, not the f inside `def`
    ],
)
def test_positions(args: dict[str, object], expected: lsp.Position) -> None:
    text = "def f(name):\n    return name\n"
    assert position_of(args, text, "m.py") == expected


def test_text_edits_apply_from_the_end_in_utf16() -> None:
    text = "x = '😀'; old\nold()\n"
    edits = [
        lsp.TextEdit(lsp.Range(lsp.Position(0, 10), lsp.Position(0, 13)), "new"),
        lsp.TextEdit(lsp.Range(lsp.Position(1, 0), lsp.Position(1, 3)), "new"),
    ]
    assert apply_text_edits(text, edits) == "x = '😀'; new\nnew()\n"


def test_a_position_past_the_end_is_refused() -> None:
    with pytest.raises(ToolError, match="line 3 is outside m.py"):
        position_of({"line": 3, "column": 1}, "a\nb\n", "m.py")
