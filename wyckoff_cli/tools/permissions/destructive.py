"""The built-in list of destructive shell commands: these always ask, even in yolo
mode and even when an allow rule matches (a deny rule still refuses them).

It covers the effect, not the spelling: every check runs on the commands the parser
found (shellparse.py), so wrappers, quoting, `bash -c`, `eval`, `$(…)`, pipes into a
shell and `find -exec` are seen through.

- recursive deletion (`rm -r`, `find -delete`, `find -exec rm`, `rsync --delete`) of
  a path outside the workspace (the system temp folder excepted), of `/`, a system
  folder, the home folder or a folder above it, of the workspace itself (`.`, `*`),
  of a `.git` folder, or of a path only known when it runs (`$X`, `xargs`);
- `git clean -f` with `-d`/`-x` run at or above the home folder; `git reset --hard`
  while there are uncommitted changes; force pushes (`-f`, `--force`,
  `--force-with-lease`, `+refspec`, `--mirror`) and branch deletion on a protected
  branch;
- `shred`, making or wiping file systems (`mkfs*`, `mkswap`, `wipefs`), `dd of=/dev/…`
  and redirections onto disk devices;
- `chmod`/`chown`/`chgrp -R` on `/`, a system folder or the home folder;
- `kill` of every process (`kill -9 -1`), fork bombs, shutting down the machine;
- downloaded code piped into a shell (`curl … | sh`);
- inline interpreter code (`python -c`, `perl -e`, `node -e`, `ruby -e`) that deletes
  trees under home or `/`, or runs a destructive shell command.

Each check is linear in the command's length.
"""

from __future__ import annotations

import os
import re
import tempfile
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from wyckoff_cli.tools.permissions.shellparse import (
    ParsedCommand,
    SimpleCommand,
    Word,
    basename,
    find_start_paths,
    parse_command,
)

PROTECTED_BRANCHES = frozenset(
    {"main", "master", "trunk", "develop", "development", "production", "prod", "stable", "HEAD"}
)
_SYSTEM_TOP = frozenset(
    {
        "bin", "boot", "dev", "etc", "home", "lib", "lib32", "lib64", "libx32", "opt", "proc", "root",
        "run", "sbin", "srv", "sys", "usr", "var", "mnt", "media", "snap", "nix",
        "Users", "System", "Library", "Applications", "Volumes", "private",
    }
)  # fmt: skip
_HOME_WORDS = ("~", "$HOME", "${HOME}")
_DEVICE = re.compile(r"/dev/(?:sd|hd|vd|xvd|nvme|mmcblk|disk|md|dm-|loop|sr)")
_POWER = frozenset({"shutdown", "reboot", "halt", "poweroff"})
_DELETE_API = re.compile(
    r"rmtree|removedirs|os\.remove|os\.unlink|\.unlink\(|rmdir|rm_rf|rm_r\b|rimraf|rmSync|fs\.rm\b|"
    r"\.rm\(|File\.delete|FileUtils\.rm|unlink\s*\(|deleteRecursively|remove_tree|rmtree\("
)
_ROOTISH = re.compile(r"expanduser|Path\.home|homedir|Dir\.home|ENV\{HOME|ENV\[.HOME|\bHOME\b|getenv\(\s*['\"]HOME|['\"]~|['\"]/['\"]|"
                      r"['\"]/(?:etc|usr|bin|var|home|root|boot|lib)\b")  # fmt: skip
_QUOTED = re.compile(r"'([^'\n]{2,2000})'|\"([^\"\n]{2,2000})\"")
_SHELLISH = re.compile(r"^\s*(?:sudo\s+)?(?:rm|find|dd|mkfs\S*|shred|chmod|chown|git|kill|wipefs)\b")


def _default_dirty(_folder: Path) -> bool:
    return True


@dataclass(frozen=True)
class DangerContext:
    """Where a command runs: relative paths resolve against `cwd`; `dirty` says
    whether a repository folder has uncommitted changes (for `git reset --hard`)."""

    workspace: Path = field(default_factory=Path.cwd)
    cwd: Path | None = None
    home: Path = field(default_factory=Path.home)
    temp: Path = field(default_factory=lambda: Path(os.path.realpath(tempfile.gettempdir())))
    dirty: Callable[[Path], bool] = _default_dirty

    @property
    def here(self) -> Path:
        return self.cwd or self.workspace


def find_danger(command: str | ParsedCommand, context: DangerContext | None = None) -> str | None:
    """Why `command` is on the destructive list, or None."""
    parsed = parse_command(command) if isinstance(command, str) else command
    ctx = context or DangerContext()
    if parsed.fork_bomb:
        return "a fork bomb"
    if parsed.network_code:
        return "runs code downloaded from the network (piped into a shell)"
    for redirect in parsed.writes:
        if redirect.target.literal and _DEVICE.match(redirect.target.text):
            return "writes onto a disk device"
    for simple in parsed.commands:
        reason = command_danger(simple, ctx)
        if reason:
            return reason
    return None


def command_danger(command: SimpleCommand, ctx: DangerContext, depth: int = 0) -> str | None:
    """Why one (normalised) simple command is destructive, or None."""
    if not command.words or not command.words[0].literal:
        return None
    prog = basename(command.name)
    args = list(command.words[1:])
    texts = [w.text for w in args]
    if prog == "rm":
        return _rm_danger(command, args, ctx)
    if prog == "find":
        return _find_danger(command, ctx)
    if prog == "rsync" and any(t.startswith("--delete") or t in ("--remove-source-files",) for t in texts):
        targets = [w for w in args if not (w.literal and w.text.startswith("-"))]
        if targets:
            why = _tree_danger(targets[-1], ctx, whole_ok=False)
            if why:
                return f"`rsync --delete` into {why}"
        return None
    if prog == "git":
        return _git_danger(command, texts, ctx)
    if prog == "shred":
        return "`shred` destroys file contents beyond recovery"
    if prog.startswith("mkfs") or prog in ("mkswap", "wipefs"):
        return f"`{prog}` creates or wipes a file system"
    if prog == "dd" and any(_is_device_target(t) for t in texts):
        return "`dd` writes onto a device"
    if prog in ("chmod", "chown", "chgrp") and _recursive(texts):
        for word in args:
            if word.literal and word.text.startswith("-"):
                continue
            why = _tree_danger(word, ctx, whole_ok=True, system_only=True)
            if why:
                return f"recursive `{prog}` of {why}"
        return None
    if prog in ("kill", "pkill") and ("-1" in texts[texts.index("--") + 1 :] if "--" in texts else
                                      any(t == "-1" for t in texts[1:]) or texts[-1:] == ["-1"]):  # fmt: skip
        return "`kill` of every process"
    if prog == "killall5":
        return "`killall5` stops every process"
    if prog in _POWER or (prog == "systemctl" and any(a in _POWER for a in texts)):
        return "shuts down or restarts the machine"
    if prog in ("init", "telinit") and texts[:1] in (["0"], ["6"]):
        return "shuts down or restarts the machine"
    if command.inline_code is not None and depth < 2:
        return _code_danger(command.inline_code, ctx, depth)
    return None


# --------------------------------------------------------------------------- paths


def _short_flags(args: list[str]) -> str:
    return "".join(a[1:] for a in args if a.startswith("-") and not a.startswith("--"))


def _recursive(args: list[str]) -> bool:
    flags = _short_flags(args)
    return "r" in flags or "R" in flags or "--recursive" in args


def _resolve(word: Word, ctx: DangerContext) -> Path | None:
    """The absolute path a literal (or `$HOME…`) word names; None when unknown."""
    text = word.text
    for home in _HOME_WORDS:
        if text == home or text.startswith(home + "/"):
            text = str(ctx.home) + text[len(home) :]
            break
    else:
        if not word.literal:
            return None
    text = re.sub(r"/[^/]*[*?\[][^/]*$", "/.", text) if re.search(r"[*?\[]", text) else text
    if text in ("*", ".*") or re.fullmatch(r"[^/]*[*?\[][^/]*", text):
        text = "."
    path = Path(text)
    if not path.is_absolute():
        path = ctx.here / path
    return Path(os.path.normpath(path))


def _contains(folder: Path, path: Path) -> bool:
    return path == folder or folder in path.parents


def _tree_danger(word: Word, ctx: DangerContext, *, whole_ok: bool, system_only: bool = False) -> str | None:
    """Why deleting (or changing) the tree at `word` is destructive, or None.
    `whole_ok`: the workspace root itself counts as destructive."""
    path = _resolve(word, ctx)
    if path is None:
        return f"{word.text} (a path only known when it runs)"
    shown = word.text
    workspace = Path(os.path.normpath(ctx.workspace))
    home = Path(os.path.normpath(ctx.home))
    if path == Path("/") or (len(path.parts) == 2 and path.parts[1] in _SYSTEM_TOP):
        return f"{shown} (a system folder)"
    if _contains(path, home):
        return f"{shown} (the home folder)" if path == home else f"{shown} (above the home folder)"
    if system_only:
        return None
    if _contains(path, workspace):
        if path == workspace and not whole_ok:
            return None
        return f"{shown} (the whole workspace)" if path == workspace else f"{shown} (above the workspace)"
    if ".git" in path.parts and _contains(workspace, path):
        return f"{shown} (the repository's history)"
    if _contains(workspace, path):
        return None
    if _contains(ctx.temp, path) and path != ctx.temp:
        return None
    return f"{shown} (outside the workspace)"


def _rm_danger(command: SimpleCommand, args: list[Word], ctx: DangerContext) -> str | None:
    texts = [w.text for w in args if w.literal]
    if "--no-preserve-root" in texts:
        return "`rm --no-preserve-root`"
    if not _recursive([t for t in texts if t.startswith("-")]):
        return None
    if command.input_args:
        return "recursive `rm` of paths read from input"
    after_dashes = False
    for word in args:
        if word.literal and word.text == "--" and not after_dashes:
            after_dashes = True
            continue
        if not after_dashes and word.literal and word.text.startswith("-"):
            continue
        why = _tree_danger(word, ctx, whole_ok=True)
        if why:
            return f"recursive `rm` of {why}"
    return None


def _find_danger(command: SimpleCommand, ctx: DangerContext) -> str | None:
    texts = [w.text for w in command.words]
    deletes = "-delete" in texts or any(
        texts[i] in ("-exec", "-execdir", "-ok", "-okdir")
        and i + 1 < len(texts)
        and basename(texts[i + 1]) in ("rm", "shred", "unlink", "rmdir")
        for i in range(len(texts))
    )
    if not deletes:
        return None
    for start in find_start_paths(command):
        why = _tree_danger(start, ctx, whole_ok=False)
        if why:
            return f"`find` deleting in {why}"
    return None


def _git_danger(command: SimpleCommand, args: list[str], ctx: DangerContext) -> str | None:
    if not args:
        return None
    sub, rest = args[0], args[1:]
    folder = ctx.here
    if command.chdir is not None:
        resolved = _resolve(Word(command.chdir), ctx)
        folder = resolved or folder
    if sub == "push":
        return _push_danger(rest)
    if sub == "clean":
        flags = _short_flags(rest)
        forced = "f" in flags or "--force" in rest
        if forced and ("d" in flags or "x" in flags or "X" in flags):
            home = Path(os.path.normpath(ctx.home))
            if _contains(Path(os.path.normpath(folder)), home):
                return "`git clean` at or above the home folder"
        return None
    if sub == "reset" and "--hard" in rest and ctx.dirty(folder):
        return "`git reset --hard` with uncommitted changes (they would be lost)"
    return None


def _push_danger(push: list[str]) -> str | None:
    options = [a for a in push if a.startswith("-")]
    positional = [a for a in push if not a.startswith("-")]
    refspecs = positional[1:]
    forced = (
        any(
            a in ("--force", "--mirror", "--force-if-includes") or a.startswith("--force-with-lease")
            for a in options
        )  # fmt: skip
        or "f" in _short_flags(options)
        or any(r.startswith("+") for r in refspecs)
    )
    if forced:
        if "--mirror" in options or "--all" in options:
            return "git force push of every branch"
        return "git force push (rewrites the remote's history)"
    deleting = (
        "--delete" in options or "d" in _short_flags(options) or any(r.startswith(":") for r in refspecs)
    )
    if not deleting:
        return None
    if "--mirror" in options or "--all" in options:
        return "git branch deletion of every branch"
    for refspec in refspecs:
        target = refspec.split(":")[-1].removeprefix("refs/heads/")
        if target in PROTECTED_BRANCHES or target.startswith(("release/", "releases/", "release-")):
            return f"git branch deletion of the protected branch {target}"
    return None


def _is_device_target(arg: str) -> bool:
    if not arg.startswith("of=/dev/"):
        return False
    return arg not in ("of=/dev/null", "of=/dev/stdout", "of=/dev/stderr", "of=/dev/zero")


def _code_danger(code: str, ctx: DangerContext, depth: int) -> str | None:
    if _DELETE_API.search(code) and _ROOTISH.search(code):
        return "inline code deleting files under the home folder or /"
    for match in _QUOTED.finditer(code):
        text = match.group(1) or match.group(2) or ""
        if not _SHELLISH.match(text):
            continue
        for simple in parse_command(text).commands:
            why = command_danger(simple, ctx, depth + 1)
            if why:
                return f"inline code running a destructive command ({why})"
    return None
