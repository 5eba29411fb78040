"""Completion for the prompt: `/commands`, `/model IDS` and `@paths` (fuzzy,
gitignore-aware), plus MCP resources (`@SERVER:URI`) and prompts (`/mcp__SERVER__PROMPT`)."""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from pathlib import Path

from wyckoff_cli.session.commands import COMMANDS, SlashCommand
from wyckoff_cli.tools.mcp.host import McpHost

MAX_FILES = 20_000
MAX_SHOWN = 12
REFRESH_SECONDS = 30.0


def fuzzy_score(query: str, candidate: str) -> int | None:
    """Higher is better; None when `query` is not a subsequence of `candidate`.
    Rewards contiguous runs, matches at word/path starts and a matching file name."""
    if not query:
        return 0
    query, lowered = query.lower(), candidate.lower()
    score, position, run = 0, 0, 0
    for char in query:
        found = lowered.find(char, position)
        if found < 0:
            return None
        run = run + 1 if found == position else 0
        score += 1 + 3 * run
        if found == 0 or lowered[found - 1] in "/_-. ":
            score += 5
        position = found + 1
    name = lowered.rsplit("/", 1)[-1]
    if query in name:
        score += 20
    return score - len(candidate) // 10


class Completions:
    def __init__(
        self,
        root: Path,
        commands: Callable[[], Sequence[SlashCommand]] | None = None,
        mcp: McpHost | None = None,
    ) -> None:
        self.root = root
        self.commands = commands or (lambda: COMMANDS)  # built-ins and custom commands
        self.mcp = mcp  # adds `@SERVER:URI` resources and `/mcp__SERVER__PROMPT` commands
        self._files: list[str] = []
        self._loaded_at = 0.0

    def __call__(self, word: str) -> list[tuple[str, str]]:
        if word.startswith("@"):
            found = [(f"@{path} ", f"@{path}") for path in self.match_files(word[1:])]
            if self.mcp is not None:
                resources = self.mcp.resources(word[1:])
                found = [(f"{r.mention} ", f"{r.mention}  {r.name}") for r in resources[:MAX_SHOWN]] + found
            return found[:MAX_SHOWN]
        if word.startswith("/"):
            typed = word[1:].lower()
            commands = self.commands()
            matching = sorted(
                (c for c in commands if c.name.lower().startswith(typed)),
                key=lambda c: c.name.lower() != typed,
            )
            width = max((len(c.usage) for c in commands), default=0)
            # a command taking no argument completes without a space: Enter runs it at once
            shown = [
                (f"/{c.name}" + (" " if c.argument else ""), f"{c.usage:<{width}}  {c.description}")
                for c in matching
            ]
            if self.mcp is not None and word.startswith("/mcp"):
                shown += [
                    (f"/{p.command} ", f"/{p.command} {p.hint}  {p.description}")
                    for p in self.mcp.prompt_commands()
                    if p.command.startswith(word[1:])
                ]
            return shown
        return []

    def match_files(self, query: str) -> list[str]:
        scored = [(s, path) for path in self.files() if (s := fuzzy_score(query, path)) is not None]
        scored.sort(key=lambda item: (-item[0], item[1]))
        return [path for _, path in scored[:MAX_SHOWN]]

    def files(self) -> list[str]:
        if not self._files or time.monotonic() - self._loaded_at > REFRESH_SECONDS:
            self._files = list_files(self.root)
            self._loaded_at = time.monotonic()
        return self._files


def list_files(root: Path) -> list[str]:
    from wyckoff_cli.tools.ignore import IgnoreMatcher

    files: list[str] = []
    for entry in IgnoreMatcher.for_root(root).walk(""):
        if entry.ignored or entry.is_dir:
            continue
        files.append(entry.rel)
        if len(files) >= MAX_FILES:
            break
    return sorted(files)
