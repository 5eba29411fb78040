"""Ctrl+G: edit a text in the person's own editor, then take it back.

`edit_text` writes the text to a private temporary file (mode 0600, a suffix that
gives the editor its syntax: `.md` for a message, the file's own for file content),
runs `$VISUAL`, else `$EDITOR` (split like a shell would: `code --wait` works), else
`nano` or `vi` when installed, waits, reads the file back and deletes it. An editor
that fails or leaves the file empty keeps the original text; the result says why.
`edit_in_app` hands the terminal to the editor for that time (`App.suspend()`).
"""

from __future__ import annotations

import contextlib
import os
import shlex
import shutil
import signal
import subprocess
import tempfile
import threading
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from textual.app import App, SuspendNotSupported

FALLBACKS = ("nano", "vi")
Runner = Callable[[list[str]], int]  # runs the editor command, returns its exit status


@dataclass(frozen=True)
class EditResult:
    text: str | None  # the edited text, or None: keep what was there
    message: str  # what to tell the person


def editor_command(env: Mapping[str, str]) -> tuple[list[str] | None, str]:
    """(the editor's command line, or None and why there is none)."""
    for name in ("VISUAL", "EDITOR"):
        value = env.get(name, "").strip()
        if not value:
            continue
        try:
            argv = shlex.split(value)
        except ValueError as exc:
            return None, f"${name} is not a valid command line ({exc})"
        if not argv:
            continue
        if shutil.which(argv[0], path=env.get("PATH")) is None:
            return None, f"${name} names `{argv[0]}`, which is not installed or not on PATH"
        return argv, ""
    for fallback in FALLBACKS:
        found = shutil.which(fallback, path=env.get("PATH"))
        if found is not None:
            return [found], ""
    return None, "No editor: set $VISUAL or $EDITOR (for example `export EDITOR=nano`)"


def suffix_for(path: object, default: str = ".md") -> str:
    """The edited file's own suffix (syntax in the editor), else `default`."""
    suffix = Path(path).suffix if isinstance(path, str) and path else ""
    return suffix if suffix and len(suffix) <= 10 and suffix[1:].isalnum() else default


@contextlib.contextmanager
def _sigint_left_to_the_editor() -> Iterator[None]:
    """While the terminal is the editor's, Ctrl+C is a signal to the whole process
    group: it is the editor's to handle, not a KeyboardInterrupt that ends the app.
    (A handler, not SIG_IGN: the editor starts with the default again.)"""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = signal.signal(signal.SIGINT, lambda _signum, _frame: None)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)


def _run(argv: list[str]) -> int:
    with _sigint_left_to_the_editor():
        return subprocess.run(argv, check=False).returncode


def edit_text(
    text: str, *, suffix: str = ".md", env: Mapping[str, str] | None = None, run: Runner = _run
) -> EditResult:
    """Edit `text` in the person's editor; `run` runs the command (the terminal's)."""
    argv, problem = editor_command(os.environ if env is None else env)
    if argv is None:
        return EditResult(None, f"{problem} — kept your text.")
    name = Path(argv[0]).name
    fd, name_of_file = tempfile.mkstemp(prefix="wyckoff-", suffix=suffix)  # 0600
    path = Path(name_of_file)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as file:
            file.write(text)
        try:
            status = run([*argv, str(path)])
        except OSError as exc:
            return EditResult(None, f"Could not start {name}: {exc.strerror or exc} — kept your text.")
        if status < 0:
            stopped_by = signal.Signals(-status).name if -status in signal.valid_signals() else -status
            return EditResult(None, f"{name} was stopped by {stopped_by} — kept your text.")
        if status != 0:
            return EditResult(None, f"{name} exited with status {status} — kept your text.")
        edited = path.read_text(encoding="utf-8", errors="replace")
    finally:
        path.unlink(missing_ok=True)
    if not edited.strip():
        return EditResult(None, "The file was left empty — kept your text.")
    if not text.endswith("\n"):
        edited = edited.rstrip("\n")  # the newline an editor adds at the end
    if edited == text:
        return EditResult(text, f"No change in {name}.")
    return EditResult(edited, f"Edited in {name}.")


def edit_in_app(app: App[Any], text: str, *, suffix: str = ".md") -> EditResult:
    """`edit_text` with the terminal handed over: the app is suspended meanwhile (and
    redrawn after). Headless (tests) there is no terminal to hand over: the editor
    runs without it."""
    if app.is_headless:
        return edit_text(text, suffix=suffix)
    try:
        with app.suspend():
            return edit_text(text, suffix=suffix)
    except SuspendNotSupported:
        return EditResult(None, "This terminal cannot be handed to an editor — kept your text.")
