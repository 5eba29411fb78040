"""Git as Wyckoff runs it for itself: a hardened command line and environment.

Wyckoff runs git outside the sandbox (to judge `git reset --hard`, for checkpoints).
A repository's own files can make git run programs: `core.fsmonitor`, hooks,
`core.pager`, `diff.external`, `core.sshCommand`, a `commondir` pointing at a
planted repository, alternates. Every such call goes through `hardened_git_argv` and
`hardened_git_env`:

- the system and global config are left out (`GIT_CONFIG_NOSYSTEM`,
  `GIT_CONFIG_GLOBAL=/dev/null`), and every inherited `GIT_*` variable is dropped
  (no `GIT_DIR`, `GIT_ALTERNATE_OBJECT_DIRECTORIES`, `GIT_EXTERNAL_DIFF`,
  `GIT_SSH_COMMAND`, `GIT_CONFIG_PARAMETERS` … from the environment);
- `-c` overrides, which win over the repository's config: no fsmonitor, hooks from
  `/dev/null`, no pager, no external diff or text conversion, no ssh command, no
  credential helper, no protocol but `file`;
- no optional locks (`GIT_OPTIONAL_LOCKS=0`: `git status` does not write the index),
  no prompts, no pager.

`untrusted_repository` says whether a folder belongs to a repository a sandboxed
command could have made or changed (config and filters included: `-c` cannot switch
off every filter driver): one nested inside the workspace, one in the temp folder,
anywhere but the workspace's own `.git` (read-only in the sandbox) or a repository
around the workspace. Wyckoff does not run git there. `git_args` names the git folder
and work tree explicitly, so git never discovers a repository on its own.
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Mapping, Sequence
from pathlib import Path

# `-c` settings given before every git sub-command Wyckoff runs.
HARDENING: tuple[tuple[str, str], ...] = (
    ("core.fsmonitor", "false"),
    ("core.hooksPath", os.devnull),
    ("core.pager", "cat"),
    ("core.sshCommand", "false"),
    ("core.askPass", ""),
    ("credential.helper", ""),
    ("diff.external", ""),
    ("protocol.allow", "never"),
    ("protocol.file.allow", "always"),
    ("submodule.recurse", "false"),
    ("status.submoduleSummary", "false"),
)
# Variables kept from the parent's environment; every other one is left out.
_PASSED_ON = ("PATH", "HOME", "TMPDIR", "LANG", "LC_ALL", "LC_CTYPE", "SYSTEMROOT", "USER", "LOGNAME")


def hardened_git_argv(git: str, *args: str) -> list[str]:
    """`git -c …hardening… ARGS`."""
    argv = [git]
    for key, value in HARDENING:
        argv += ["-c", f"{key}={value}"]
    return [*argv, *args]


def hardened_git_env(
    extra: Mapping[str, str] | None = None, base: Mapping[str, str] | None = None
) -> dict[str, str]:
    """The environment for a git command Wyckoff runs for itself: `base` (default:
    this process's) reduced to the everyday variables, the hardening, then `extra`
    (e.g. `GIT_DIR` for the checkpoint repository)."""
    source = os.environ if base is None else base
    env = {key: source[key] for key in _PASSED_ON if key in source}
    env.update(
        {
            "GIT_CONFIG_NOSYSTEM": "1",
            "GIT_CONFIG_GLOBAL": os.devnull,
            "GIT_ATTR_NOSYSTEM": "1",
            "GIT_OPTIONAL_LOCKS": "0",
            "GIT_TERMINAL_PROMPT": "0",
            "GIT_PAGER": "cat",
            "PAGER": "cat",
            "GIT_ALLOW_PROTOCOL": "file",
            "GIT_PROTOCOL_FROM_USER": "0",
            "GIT_NO_REPLACE_OBJECTS": "1",
        }
    )
    env.update(extra or {})
    return env


def repository_root(folder: Path) -> Path | None:
    """The nearest folder at or above `folder` holding a `.git` (folder or file)."""
    current = Path(os.path.realpath(folder))
    for candidate in (current, *current.parents):
        if os.path.lexists(candidate / ".git"):
            return candidate
    return None


def untrusted_repository(folder: Path, workspace: Path) -> bool:
    """Whether `folder` lies in a repository sandboxed commands could have written
    (see the module docstring); False for the workspace's own, one around it, or none."""
    root = repository_root(folder)
    if root is None:
        return False
    space = Path(os.path.realpath(workspace))
    if root == space:
        return False  # its `.git` is read-only inside the sandbox
    temp = Path(os.path.realpath(tempfile.gettempdir()))
    return root not in space.parents or root == temp or temp in root.parents


def git_args(git: str, root: Path, args: Sequence[str]) -> list[str]:
    """`git --git-dir ROOT/.git --work-tree ROOT -c … ARGS`: no discovery of another
    repository (a bare one named by the path, `core.worktree` …)."""
    return hardened_git_argv(git, f"--git-dir={root / '.git'}", f"--work-tree={root}", *args)
