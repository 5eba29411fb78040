"""Project instructions: `AGENTS.md` (and `WYCKOFF.md`, and Claude Code's `CLAUDE.md`)
files, found and joined.

Discovery, in this order:
1. every folder from the repository root down to the working directory (root first),
   `AGENTS.md`, `WYCKOFF.md`, `CLAUDE.md`, `.claude/CLAUDE.md`, `CLAUDE.local.md` in each;
2. the user-level `AGENTS.md` then `WYCKOFF.md` in the config dir (passed in), then
   `CLAUDE.md` in Claude Code's user folder (`claude_home`, passed in when
   `[compat] claude_home` is on).

A Claude Code file's `@path` imports (context/claude_imports.py) follow it, each a
section of its own; a file is read once however often it is discovered or imported.

Each file becomes a section headed by its path (relative to the root for project
files), so the model can tell where a rule comes from. The joined text is capped
(32 KiB by default, counted in UTF-8 bytes); when cut, a note says how much was left
out and which files were dropped. Empty files are skipped. Reading is cheap and is
done again after each compaction, so edits to the files take effect then.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from pathlib import Path

from wyckoff_cli.context.claude_imports import resolve_imports

log = logging.getLogger(__name__)

INSTRUCTION_FILES = ("AGENTS.md", "WYCKOFF.md", "CLAUDE.md", ".claude/CLAUDE.md", "CLAUDE.local.md")
USER_FILES = ("AGENTS.md", "WYCKOFF.md")
CLAUDE_FILES = ("CLAUDE.md", "CLAUDE.local.md")  # the files whose `@path` imports are read
DEFAULT_CAP_BYTES = 32 * 1024


@dataclass(frozen=True, slots=True)
class InstructionFile:
    path: Path
    heading: str  # how the path is shown
    text: str


@dataclass(frozen=True, slots=True)
class ProjectInstructions:
    files: tuple[InstructionFile, ...]
    text: str  # the joined sections, capped ("" when there are none)
    truncated: bool = False
    omitted_bytes: int = 0

    @property
    def paths(self) -> list[Path]:
        return [f.path for f in self.files]


def discover_instruction_files(
    root: Path, cwd: Path, user_dir: Path | None = None, claude_home: Path | None = None
) -> list[Path]:
    """The instruction files that exist, in reading order."""
    root = root.resolve()
    cwd = cwd.resolve()
    folders = [root]
    if cwd != root and cwd.is_relative_to(root):
        current = root
        for part in cwd.relative_to(root).parts:
            current = current / part
            folders.append(current)
    candidates = [folder / name for folder in folders for name in INSTRUCTION_FILES]
    if user_dir is not None:
        candidates += [user_dir / name for name in USER_FILES]
    if claude_home is not None:
        candidates.append(claude_home / "CLAUDE.md")
    found: list[Path] = []
    seen: set[Path] = set()
    for path in candidates:
        if path.is_file():
            real = path.resolve()
            if real not in seen:  # a symlinked user file inside the repo, etc.
                seen.add(real)
                found.append(path)
    return found


def load_project_instructions(
    root: Path,
    cwd: Path | None = None,
    user_dir: Path | None = None,
    *,
    claude_home: Path | None = None,
    cap_bytes: int = DEFAULT_CAP_BYTES,
) -> ProjectInstructions:
    """Read and join the instruction files (see the module docstring)."""
    root = root.resolve()
    files: list[InstructionFile] = []
    discovered = discover_instruction_files(root, cwd or root, user_dir, claude_home)
    seen = {path.resolve() for path in discovered}  # read in their own place, never imported again
    roots = (root, Path.home().resolve(), *((claude_home.resolve(),) if claude_home else ()))
    for path in discovered:
        text = _read(path, cap_bytes)
        if text is None or not text.strip():
            continue
        heading = _heading(path, root)
        files.append(InstructionFile(path, heading, text.strip()))
        if path.name in CLAUDE_FILES:
            for imported in resolve_imports(
                path, text, roots=roots, seen=seen, read=lambda p: _read(p, cap_bytes)
            ):
                if imported.text:
                    shown = f"{_heading(imported.path, root)} (imported by {_heading(imported.by, root)})"
                    files.append(InstructionFile(imported.path, shown, imported.text))
    return _join(tuple(files), cap_bytes)


def _read(path: Path, cap_bytes: int) -> str | None:
    try:
        with path.open("rb") as handle:
            data = handle.read(cap_bytes + 1)
    except OSError as exc:
        log.warning("cannot read %s: %s", path, exc.strerror)
        return None
    return data.decode("utf-8", errors="replace")


def _heading(path: Path, root: Path) -> str:
    resolved = path.resolve() if not path.is_absolute() else path
    if resolved.is_relative_to(root):
        return resolved.relative_to(root).as_posix()
    home = Path.home()
    if resolved.is_relative_to(home):
        return "~/" + resolved.relative_to(home).as_posix()
    return resolved.as_posix()


def _join(files: tuple[InstructionFile, ...], cap_bytes: int) -> ProjectInstructions:
    if not files:
        return ProjectInstructions((), "")
    sections = [f"## {f.heading}\n\n{f.text}" for f in files]
    joined = "\n\n".join(sections)
    data = joined.encode("utf-8")
    if len(data) <= cap_bytes:
        return ProjectInstructions(files, joined)
    kept = data[:cap_bytes].decode("utf-8", errors="ignore")
    omitted = len(data) - len(kept.encode("utf-8"))
    dropped = [f.heading for f in files if f"## {f.heading}\n" not in kept]
    note = f"[Project instructions cut at {cap_bytes // 1024} KiB: {omitted} more bytes not shown"
    note += f" (not included: {', '.join(dropped)})]" if dropped else "]"
    return ProjectInstructions(files, kept.rstrip() + "\n\n" + note, truncated=True, omitted_bytes=omitted)
