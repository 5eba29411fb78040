"""Where a destructive command's paths lie: the context a command runs in, resolving
its words to paths, and why deleting a tree or writing a file there is destructive.

Words are resolved the way the shell would: `~`, `~user` and `~+`, `$HOME`, `${HOME}` and
`"$HOME"`, variables assigned literally earlier in the same command (`F=~/.bashrc;
truncate -s 0 $F`), `..`, and the folder an earlier `cd` moved to. A word with any
other expansion is a path only known when it runs (None).
"""

from __future__ import annotations

import os
import pwd
import re
import tempfile
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from wyckoff_cli.tools.permissions.shellcommand import Word

SYSTEM_TOP = frozenset(
    {
        "bin", "boot", "dev", "etc", "home", "lib", "lib32", "lib64", "libx32", "opt", "proc", "root",
        "run", "sbin", "srv", "sys", "usr", "var", "mnt", "media", "snap", "nix",
        "Users", "System", "Library", "Applications", "Volumes", "private",
    }
)  # fmt: skip
# Files outside the workspace that writing to is harmless.
_HARMLESS_FILES = frozenset({"/dev/null", "/dev/stdout", "/dev/stderr", "/dev/tty", "/dev/zero", "/dev/full"})
_HARMLESS_FOLDERS = (Path("/dev/fd"), Path("/dev/shm"), Path("/proc/self/fd"), Path("/tmp"), Path("/var/tmp"))
_VARIABLE = re.compile(r"\$(?:\{([A-Za-z_][A-Za-z0-9_]*)\}|([A-Za-z_][A-Za-z0-9_]*))")


def _default_dirty(_folder: Path) -> bool:
    return True


@dataclass(frozen=True)
class DangerContext:
    """Where a command runs: relative paths resolve against `cwd` (unknown after a
    `cd` to a folder only known when it runs: `cwd_known` False); `dirty` says whether
    a repository folder has uncommitted changes (for `git reset --hard`); `variables`
    holds the values assigned in the command."""

    workspace: Path = field(default_factory=Path.cwd)
    cwd: Path | None = None
    home: Path = field(default_factory=Path.home)
    temp: Path = field(default_factory=lambda: Path(os.path.realpath(tempfile.gettempdir())))
    dirty: Callable[[Path], bool] = _default_dirty
    cwd_known: bool = True
    variables: Mapping[str, Word] = field(default_factory=dict)

    @property
    def here(self) -> Path:
        return self.cwd or self.workspace


def expand_word(word: Word, ctx: DangerContext, depth: int = 0) -> str | None:
    """The text of `word` after the expansions this module follows, or None."""
    text = word.text
    if not word.literal:
        text = text.replace('"', "")

        def value(match: re.Match[str]) -> str:
            name = match.group(1) or match.group(2)
            if name == "HOME":
                return str(ctx.home)
            found = ctx.variables.get(name)
            expanded = expand_word(found, ctx, depth + 1) if found is not None and depth < 3 else None
            return "\x00" if expanded is None else expanded

        text = _VARIABLE.sub(value, text)
        if "\x00" in text or "$" in text or "`" in text:
            return None
    if text == "~-" or text.startswith("~-/"):
        return None  # the previous folder: only known when it runs
    if text == "~+" or text.startswith("~+/"):
        return str(ctx.here) + text[2:] if ctx.cwd_known else None
    return _tilde(text, ctx)


def _tilde(text: str, ctx: DangerContext) -> str:
    if text == "~" or text.startswith("~/"):
        return str(ctx.home) + text[1:]
    if text.startswith("~"):
        user = text[1:].split("/", 1)[0]
        try:
            folder = pwd.getpwnam(user).pw_dir
        except (KeyError, ValueError):
            return text  # bash leaves an unknown ~user as it is
        return folder + text[1 + len(user) :]
    return text


def resolve_word(word: Word, ctx: DangerContext, *, keep_glob: bool = False) -> Path | None:
    """The absolute path a word names (a glob stands for its folder, unless
    `keep_glob`); None when unknown."""
    text = expand_word(word, ctx)
    if text is None:
        return None
    if not keep_glob:
        text = re.sub(r"/[^/]*[*?\[][^/]*$", "/.", text) if re.search(r"[*?\[]", text) else text
        if text in ("*", ".*") or re.fullmatch(r"[^/]*[*?\[][^/]*", text):
            text = "."
    path = Path(text)
    if not path.is_absolute():
        if not ctx.cwd_known:
            return None
        path = ctx.here / path
    return Path(os.path.normpath(path))


def contains(folder: Path, path: Path) -> bool:
    return path == folder or folder in path.parents


def _is_system(path: Path) -> bool:
    return path == Path("/") or (len(path.parts) >= 2 and path.parts[1] in SYSTEM_TOP)


def tree_danger(word: Word, ctx: DangerContext, *, whole_ok: bool, system_only: bool = False) -> str | None:
    """Why deleting (or changing) the tree at `word` is destructive, or None.
    `whole_ok`: the workspace root itself counts as destructive."""
    path = resolve_word(word, ctx)
    if path is None:
        return f"{word.text} (a path only known when it runs)"
    shown = word.text
    workspace = Path(os.path.normpath(ctx.workspace))
    home = Path(os.path.normpath(ctx.home))
    if path == Path("/") or (len(path.parts) == 2 and path.parts[1] in SYSTEM_TOP):
        return f"{shown} (a system folder)"
    if contains(path, home):
        return f"{shown} (the home folder)" if path == home else f"{shown} (above the home folder)"
    if system_only:
        return None
    if contains(path, workspace):
        if path == workspace and not whole_ok:
            return None
        return f"{shown} (the whole workspace)" if path == workspace else f"{shown} (above the workspace)"
    if ".git" in path.parts and contains(workspace, path):
        return f"{shown} (the repository's history)"
    if contains(workspace, path):
        return None
    if contains(home, path):
        return f"{shown} (in the home folder, outside the workspace)"
    if contains(ctx.temp, path) and path != ctx.temp:
        return None
    return f"{shown} (outside the workspace)"


def file_danger(word: Word, ctx: DangerContext, *, deletes: bool) -> str | None:
    """Why writing (or, with `deletes`, removing or moving away) the file at `word`
    is destructive, or None: the home folder or a folder above it, a hidden file or
    folder in the home folder (shell start-up files, keys, settings), a system file,
    or (deleting) the workspace itself or a folder above it. A path only known when
    it runs is not flagged here (the sandbox is the boundary for those)."""
    path = resolve_word(word, ctx, keep_glob=True)
    if path is None:
        return None
    shown = word.text
    workspace = Path(os.path.normpath(ctx.workspace))
    home = Path(os.path.normpath(ctx.home))
    if path.parent == home and re.search(r"[*?\[]", path.name):
        return f"{shown} (files in the home folder)"
    if path == Path("/") or (len(path.parts) == 2 and path.parts[1] in SYSTEM_TOP):
        return f"{shown} (a system folder)"
    if contains(path, home):
        return f"{shown} (the home folder)" if path == home else f"{shown} (above the home folder)"
    if contains(path, workspace):
        if not deletes:
            return None
        return f"{shown} (the whole workspace)" if path == workspace else f"{shown} (above the workspace)"
    if contains(workspace, path):
        return None
    if contains(home, path):
        hidden = any(part.startswith(".") for part in path.relative_to(home).parts)
        return (
            f"{shown} (a hidden file in the home folder: settings, keys or start-up files)"
            if hidden
            else None
        )
    if str(path) in _HARMLESS_FILES or any(contains(folder, path) for folder in _HARMLESS_FOLDERS):
        return None
    if contains(ctx.temp, path):
        return None
    if _is_system(path):
        return f"{shown} (a system file)"
    return None
