"""The approval policy: pure decisions on whether a call runs, asks or is refused.

Inputs are the tool, its arguments, the permission mode and the allow/deny rules;
output is a `Verdict`. What rules match is the tool's permission subject
(`Tool.subject`, subject.py). Nothing here prompts anyone; the only I/O is resolving
paths and, for `git reset --hard`, asking git whether there are uncommitted changes.
The runtime awaits `decide()`, which runs the decision in a worker thread for long
commands, so the event loop never waits on it.

The order of the checks, first match deciding:

1. a command too long to follow → ask, in every mode (plan: deny);
2. a deny rule matching the call (any command of a compound command, any path,
   through every tool of the same family) → deny;
3. a file tool writing inside `.git/` → deny;
4. plan mode and a tool that edits files or runs commands → deny, telling the model;
4b. while a deny rule for the shell tool exists: a command that runs code the rules
   cannot see (interpreter inline code, a script file, `source`, a Makefile, a git
   alias, a program by path, a changed PATH, words only known when it runs after a
   denied program's name, arguments from input) could match it → ask, in every mode,
   saying why (rules.deny_could_apply, opaque.py);
5. a path outside the workspace, including a shell redirection onto one and a
   hard-linked file (more than one name: the others may lie outside) → ask, naming
   the paths (in every mode; "always" saves nothing for these);
6. a command on the built-in destructive list (destructive.py, destructive_files.py)
   → ask (even in yolo, even over an allow rule; "always" saves nothing);
7. escalations (writing a file that grants permissions or runs code later, `sudo`,
   running outside the sandbox or with the network) → ask in every mode, no rule
   allows them, "always" saves nothing;
8. a command the grammar could not follow, or whose name is only known when it runs
   (`$(echo rm) -rf x`, `$CMD`, `{rm,-rf,x}`) → ask, in every mode (it could be
   anything, the destructive list included);
8b. with the sandbox off, a shell script, sourced file or program by path whose
   content no check can see (`sh s.sh`, `. s.sh`, `./s.sh`) → ask, even in yolo and
   over a rule without a pattern; only a rule naming it allows it;
9. a tool that needs no approval (reads, the todo list) → allow;
10. an allow rule (from config, `--allow`, or "always" this session) → allow;
11. the mode: yolo allows everything, auto-edit and auto allow file edits → allow;
12. sandbox auto-allow (`auto` mode or `[shell] auto_allow`): a command that runs in
    the sandbox without the network → allow (everything above still asks first);
13. otherwise ask, offering the narrowest sensible rule for "always".

Modes: `default` (reads free; edits and commands ask), `plan` (read-only), `auto-edit`
(edits inside the workspace free, commands ask), `auto` (auto-edit, and sandboxed
commands free), `yolo` (everything inside the workspace free). Rules are described in rules.py and docs/TOOLS.md.
"""

from __future__ import annotations

import asyncio
import os
import subprocess
import tempfile
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from wyckoff_cli.tools.base import Tool, ToolContext
from wyckoff_cli.tools.paths import hard_link_count, is_within, relative_to_root, resolve_path
from wyckoff_cli.tools.permissions.destructive import DangerContext, find_danger, unseen_script
from wyckoff_cli.tools.permissions.git_env import (
    git_args,
    hardened_git_env,
    repository_root,
    untrusted_repository,
)
from wyckoff_cli.tools.permissions.protected import protected_reason
from wyckoff_cli.tools.permissions.rules import (
    ALIASES,
    FILE_FAMILIES,
    Rule,
    RuleError,
    allowing_rule,
    deny_could_apply,
    denying_rule,
    parse_rule,
    path_matches,
    suggest_rule,
)
from wyckoff_cli.tools.permissions.sandbox import sandbox_auto_allows, sandbox_refusal
from wyckoff_cli.tools.permissions.subject import Subject
from wyckoff_cli.tools.permissions.workspace import is_git_internal, outside_paths

PermissionMode = Literal["default", "plan", "auto-edit", "auto", "yolo"]
PERMISSION_MODES: tuple[PermissionMode, ...] = ("default", "plan", "auto-edit", "auto", "yolo")
THREAD_ABOVE_CHARS = 2_000  # commands longer than this are decided in a worker thread

MODE_SUMMARIES: dict[str, str] = {
    "default": "reads run freely; file edits and commands ask first",
    "plan": "read-only: file edits and commands are refused",
    "auto-edit": "reads and file edits inside the workspace run freely; commands ask first",
    "auto": "like auto-edit, and commands that stay inside the sandbox run freely (sandbox auto-allow)",
    "yolo": "everything inside the workspace runs freely; outside paths and destructive commands ask",
}

_KIND_WORDS = {"edit": "changing files", "execute": "running commands", "external": "calling MCP tools"}


def next_permission_mode(mode: str) -> PermissionMode:
    """The mode after `mode` in the Shift+Tab cycle."""
    index = PERMISSION_MODES.index(mode) if mode in PERMISSION_MODES else -1
    return PERMISSION_MODES[(index + 1) % len(PERMISSION_MODES)]


def invalid_rules(rules: list[str]) -> list[str]:
    """Error messages for the rules in `rules` that do not parse."""
    problems: list[str] = []
    for text in rules:
        try:
            parse_rule(text)
        except RuleError as exc:
            problems.append(str(exc))
    return problems


def unknown_tool_rules(rules: Iterable[str], known: Iterable[str]) -> list[str]:
    """The rules in `rules` naming a tool that is not in `known` (nor a Claude Code
    alias, nor an MCP tool `mcp__SERVER__TOOL`, whose servers start later)."""
    names = set(known)
    found: list[str] = []
    for text in rules:
        try:
            rule = parse_rule(text)
        except RuleError:
            continue
        if rule.tool and rule.tool not in names and not rule.tool.startswith("mcp__"):
            found.append(rule.text)
    return found


def known_tool_hint(known: Iterable[str]) -> str:
    return ", ".join(sorted(set(known))) + "; Claude Code names: " + ", ".join(sorted(ALIASES))


@dataclass(frozen=True, slots=True)
class Verdict:
    action: Literal["allow", "ask", "deny"]
    reason: str = ""
    rule: str | None = None  # the rule "always" would save, when asking
    outside_paths: tuple[Path, ...] = ()  # paths outside the workspace the call touches


def _parsed(texts: list[str]) -> list[Rule]:
    rules: list[Rule] = []
    for text in texts:
        try:
            rules.append(parse_rule(text))
        except RuleError:
            continue  # reported when the configuration is loaded (see invalid_rules)
    return rules


def git_worktree_dirty(folder: Path) -> bool:
    """Whether the repository at `folder` has uncommitted changes to tracked files
    (True when git cannot tell: failing closed). git runs hardened (git_env.py): a
    planted fsmonitor, hook or pager in the repository's config does not run."""
    root = repository_root(folder)
    if root is None:
        return True
    try:
        done = subprocess.run(
            git_args("git", root, ["status", "--porcelain", "--untracked-files=no"]),
            capture_output=True,
            timeout=5,
            check=False,
            env=hardened_git_env(),
            stdin=subprocess.DEVNULL,
        )
    except (OSError, subprocess.SubprocessError):
        return True
    return done.returncode != 0 or bool(done.stdout.strip())


def _no_roots() -> tuple[Path, ...]:
    return ()


@dataclass
class ApprovalPolicy:
    """Decides per call. `allow`/`deny` hold rules (`TOOL` or `TOOL(PATTERN)`); deny
    always wins. `session_allow` collects the rules "always" granted this session.
    `protected_roots` are folders whose files are never written without a person
    (the composition root passes the user config folder; it is outside the workspace,
    so writing there asks anyway); `worktree_dirty` answers for `git reset --hard`."""

    mode: PermissionMode = "default"
    allow: list[str] = field(default_factory=list)
    deny: list[str] = field(default_factory=list)
    ask: list[str] = field(default_factory=list)  # Claude Code's `permissions.ask`: asked in every mode
    yolo_disabled: str | None = None  # why yolo decides as default does (a managed policy), or None
    extra_roots: list[Path] = field(default_factory=list)  # more workspace roots (`additionalDirectories`)
    session_allow: list[str] = field(default_factory=list)
    protected_roots: Callable[[], tuple[Path, ...]] = _no_roots
    worktree_dirty: Callable[[Path], bool] = git_worktree_dirty

    async def decide(self, tool: Tool, args: dict[str, Any], ctx: ToolContext) -> Verdict:
        """`evaluate`, in a worker thread for commands (parsing, and asking git about
        `git reset --hard`) and for large calls, so the event loop never waits on it."""
        if tool.kind == "execute" or _size(args) > THREAD_ABOVE_CHARS:
            return await asyncio.to_thread(self.evaluate, tool, args, ctx)
        return self.evaluate(tool, args, ctx)

    def evaluate(self, tool: Tool, args: dict[str, Any], ctx: ToolContext) -> Verdict:
        subject = tool.subject(args, ctx.workspace)
        parsed = subject.command
        if parsed is not None and parsed.too_long:
            if self.mode == "plan":
                return self._plan(tool)
            return Verdict(
                "ask",
                f"the command is too long to check against the rules ({parsed.problem}): "
                "always asked about, in every mode",
            )
        denied = denying_rule(_parsed(self.deny), tool, subject)
        if denied is not None:
            return Verdict(
                "deny",
                f"{tool.name} is refused by the deny rule {denied.text} in the user's permissions. "
                "Do not retry it; find another way or ask the user.",
            )
        required = sandbox_refusal(tool.extra.get("shell"), args) if tool.kind == "execute" else None
        if required is not None:
            return Verdict("deny", required)
        if tool.kind == "edit" and subject.kind == "path":
            inside_git = next((p for p in subject.paths if is_git_internal(Path(p.absolute))), None)
            if inside_git is not None:
                return Verdict(
                    "deny",
                    f"{inside_git.relative or inside_git.absolute} is inside .git/: file tools never write "
                    "git internals. Use git itself through run_shell.",
                )
        if self.mode == "plan" and tool.kind in _KIND_WORDS:
            return self._plan(tool)
        could = deny_could_apply(_parsed(self.deny), tool, subject)
        if could is not None:
            return Verdict("ask", could)
        outside = outside_paths(tool, args, ctx) + self._outside_writes(subject, ctx)
        if outside:
            names = ", ".join(str(p) + _hard_link_note(p) for p in outside)
            return Verdict(
                "ask", f"{tool.name} would use a path outside the workspace: {names}", None, outside
            )
        if parsed is not None:
            danger = find_danger(parsed, self._danger_context(subject, ctx))
            if danger:
                return Verdict("ask", f"destructive command ({danger}): always asked about, in every mode")
        escalation = self._escalation(tool, subject, ctx)
        if escalation:
            return Verdict("ask", f"{escalation}: always asked about, in every mode")
        if parsed is not None and not parsed.complete:
            return Verdict("ask", f"the command could not be followed ({parsed.problem}), so no rule can vouch "
                           "for it: always asked about")  # fmt: skip
        if parsed is not None:
            dynamic = next((c for c in parsed.commands if not c.literal_name), None)
            if dynamic is not None:
                why = dynamic.opaque or f"the program `{dynamic.name}` is only known when it runs"
                return Verdict("ask", f"{why}, so no rule can vouch for it: always asked about")
        asked = denying_rule(_parsed(self.ask), tool, subject) if self.ask else None
        if asked is not None:  # no rule, mode or "always" answers it
            return Verdict("ask", f"the ask rule {asked.text} asks before this call, in every mode")
        script = self._unseen_script(tool, args, subject, ctx)
        if script is not None:
            return script
        if not tool.requires_approval:
            return Verdict("allow")
        allowed = allowing_rule(_parsed([*self.allow, *self.session_allow]), tool, subject)
        if allowed is not None:
            return Verdict("allow", f"allowed by rule {allowed.text}")
        if self.mode == "yolo" and not self.yolo_disabled:
            return Verdict("allow", "allowed by yolo mode")
        if self.mode in ("auto-edit", "auto") and tool.kind == "edit":
            return Verdict("allow", f"allowed by {self.mode} mode")
        contained = (
            sandbox_auto_allows(tool.extra.get("shell"), args, "default" if self.yolo_disabled else self.mode)
            if tool.kind == "execute" and ctx.host_terminal is None  # an editor's terminal is no sandbox
            else None
        )
        if contained:
            return Verdict("allow", contained)
        what = _KIND_WORDS.get(tool.kind, f"using {tool.name}")
        if self.mode == "yolo":  # disabled by a managed policy: the default mode's answer, saying so
            return Verdict(
                "ask", f"{self.yolo_disabled}; default mode asks before {what}", suggest_rule(tool, subject)
            )
        return Verdict("ask", f"{self.mode} mode asks before {what}", suggest_rule(tool, subject))

    def _unseen_script(
        self, tool: Tool, args: dict[str, Any], subject: Subject, ctx: ToolContext
    ) -> Verdict | None:
        """With the sandbox off, a script no check can see (`sh s.sh`, `./s.sh`) is
        allowed only by a rule naming it, never by yolo or a rule without a pattern."""
        parsed = subject.command
        if parsed is None or _runs_sandboxed(tool, args):
            return None
        script = unseen_script(parsed)
        if script is None:
            return None
        named = [r for r in _parsed([*self.allow, *self.session_allow]) if r.pattern is not None]
        allowed = allowing_rule(named, tool, subject)
        if allowed is not None:
            return Verdict("allow", f"allowed by rule {allowed.text}")
        return Verdict(
            "ask",
            f"the command runs {script}, whose content no check can see, with the sandbox off: asked "
            "about even in yolo, unless a rule names it",
            suggest_rule(tool, subject),
        )

    def _plan(self, tool: Tool) -> Verdict:
        return Verdict(
            "deny",
            f"{tool.name} is not available: the session is in plan mode, which is read-only "
            f"(no {_KIND_WORDS.get(tool.kind, 'changes')}). Read and search to work out the plan, then "
            "present it; the user switches modes when they want it carried out.",
        )

    # ------------------------------------------------------------------ the checks

    def _redirect_targets(self, subject: Subject, ctx: ToolContext) -> list[tuple[str, Path | None]]:
        """(as written, resolved) for each output redirection; None when not literal."""
        parsed = subject.command
        if parsed is None:
            return []
        base = Path(subject.cwd) if subject.cwd else ctx.workspace
        found: list[tuple[str, Path | None]] = []
        for redirect in parsed.writes:
            word = redirect.target
            if not word.literal:
                found.append((word.text, None))
                continue
            try:
                found.append((word.text, resolve_path(base, word.text)))
            except Exception:  # a bad path: the shell reports it
                found.append((word.text, None))
        return found

    def _outside_writes(self, subject: Subject, ctx: ToolContext) -> tuple[Path, ...]:
        root = Path(os.path.realpath(ctx.workspace))
        temp = Path(os.path.realpath(tempfile.gettempdir()))
        home = Path(os.path.realpath(Path.home()))  # never exempt as temp, even when under it
        out: list[Path] = []
        extra = [Path(os.path.realpath(r)) for r in ctx.extra_roots]
        for _, path in self._redirect_targets(subject, ctx):
            if path is None or is_within(path, root) or any(is_within(path, r) for r in extra):
                continue
            if is_within(path, temp) and path != temp and not is_within(path, home):
                continue
            if path not in out:
                out.append(path)
        return tuple(out)

    def _escalation(self, tool: Tool, subject: Subject, ctx: ToolContext) -> str | None:
        if subject.escalations:
            return subject.escalations[0]
        roots = self.protected_roots()
        if subject.kind == "path" and subject.writes():
            for ref in subject.paths:
                reason = _protected_anywhere(Path(ref.absolute), ctx, roots)
                if reason:
                    return f"{tool.name} would write {reason}"
        parsed = subject.command
        if parsed is None:
            return None
        for shown, path in self._redirect_targets(subject, ctx):
            if path is None:
                return f"the command writes to {shown}, a path only known when it runs"
            reason = _protected_anywhere(path, ctx, roots)
            if reason:
                return f"the command writes {reason}"
        base = Path(subject.cwd) if subject.cwd else ctx.workspace
        for command in parsed.commands:
            if command.elevated:
                return f"`{command.text}` runs with sudo/doas"
            if _writes_git_config(command.argv):
                return f"`{command.text}` changes git's configuration, which can run code later"
            if command.name in _READERS:
                continue
            for word in command.words[1:]:
                if (
                    not word.literal
                    or word.text.startswith("-")
                    or "/" not in word.text
                    and "." not in word.text
                ):
                    continue
                try:
                    path = resolve_path(base, word.text)
                except Exception:
                    continue
                reason = _protected_anywhere(path, ctx, roots)
                if reason:
                    return f"`{command.name}` names {reason}"
        return None

    def _danger_context(self, subject: Subject, ctx: ToolContext) -> DangerContext:
        cwd = Path(subject.cwd) if subject.cwd else None
        workspace = Path(os.path.realpath(ctx.workspace))

        def dirty(folder: Path) -> bool:  # git is not run where a command could have planted config
            return untrusted_repository(folder, workspace) or self.worktree_dirty(folder)

        return DangerContext(workspace=workspace, cwd=cwd, dirty=dirty)

    # ------------------------------------------------------------------ helpers

    def saveable_rule(self, tool: Tool, args: dict[str, Any], ctx: ToolContext) -> str | None:
        """The rule "always" would save for this call, or None when the call must be
        asked about every time."""
        verdict = ApprovalPolicy(mode="default").evaluate(tool, args, ctx)
        if verdict.action == "ask":
            return verdict.rule
        return suggest_rule(tool, tool.subject(args, ctx.workspace)) if verdict.action == "allow" else None

    def read_denied(self, path: Path, workspace: Path) -> bool:
        """Whether a deny rule refuses reading `path` (walking tools leave it out)."""
        rules = [r for r in _parsed(self.deny) if r.pattern is not None]
        if not rules:
            return False
        relative = relative_to_root(path, workspace)
        for rule in rules:
            if rule.pattern is None or not _is_reader_rule(rule):
                continue
            if path_matches(rule.pattern, relative, str(path)):
                return True
        return False

    def remember(self, rule: str) -> None:
        """Allow `rule` for the rest of the session (after "always")."""
        try:
            text = parse_rule(rule).text
        except RuleError:
            return
        if text not in self.session_allow:
            self.session_allow.append(text)


# Programs that only read the files they name (a protected file named by them is fine).
_READERS = frozenset(
    {"cat", "head", "tail", "less", "more", "grep", "rg", "ls", "stat", "wc", "diff", "file", "git",
     "bat", "jq", "sha256sum", "md5sum", "cmp", "tree", "find", "test", "["}
)  # fmt: skip


def _is_reader_rule(rule: Rule) -> bool:
    return rule.family == "read" or FILE_FAMILIES.get(rule.tool) == "read"


_GIT_CONFIG_READS = frozenset({"--get", "--get-all", "--get-regexp", "--get-urlmatch", "--list", "-l",
                               "--show-origin", "--show-scope", "get", "list"})  # fmt: skip


def _writes_git_config(argv: tuple[str, ...]) -> bool:
    """`git config KEY VALUE` (and `set`, `--add`, `--unset`, `--edit` …) writes a
    config file; `--get`, `--list` and a lone KEY only read."""
    if len(argv) < 2 or argv[0] != "git" or argv[1] != "config":
        return False
    rest = [a for a in argv[2:] if a not in ("--global", "--local", "--system", "--worktree")]
    if any(a in _GIT_CONFIG_READS for a in rest):
        return False
    operands = [a for a in rest if not a.startswith("-")]
    return len(operands) >= 2 or any(a.startswith(("--unset", "--add", "--replace", "--edit", "-e", "--rename",
                                                      "--remove")) or a in ("set", "unset") for a in rest)  # fmt: skip


def _runs_sandboxed(tool: Tool, args: dict[str, Any]) -> bool:
    """Whether this shell call runs in the sandbox (the tool's `extra["shell"]` settings;
    a tool without them, or `unsandboxed: true`, runs outside)."""
    shell = tool.extra.get("shell")
    return bool(getattr(shell, "sandboxed", False)) and not args.get("unsandboxed")


def _hard_link_note(path: Path) -> str:
    links = hard_link_count(path)
    return f" (a hard link: the file has {links} names, the others may lie outside)" if links else ""


def _size(args: dict[str, Any]) -> int:
    return sum(len(v) for v in args.values() if isinstance(v, str))


def preview_rule(tool: Tool, args: dict[str, Any], ctx: ToolContext) -> str | None:
    """For previews: the rule "always" would save (None when there is none). Previews
    are built on the event loop, so long commands get none here: the approval request
    carries the rule the policy worked out in its thread."""
    if tool.kind == "execute" and _size(args) > THREAD_ABOVE_CHARS:
        return None
    try:
        return ApprovalPolicy().saveable_rule(tool, args, ctx)
    except Exception:  # a preview never fails because of a rule
        return None


def _protected_anywhere(path: Path, ctx: ToolContext, roots: tuple[Path, ...]) -> str | None:
    """`protected_reason` for the workspace and each extra root (`additionalDirectories`
    are workspaces too: their `.git`, `.claude/` … are as protected)."""
    for root in (ctx.workspace, *ctx.extra_roots):
        reason = protected_reason(path, root, roots)
        if reason:
            return reason
    return None
