"""A session's summary (`session.json`) and the names of its files.

Kept apart from the store (`sessions.py`) so that the recorder, which the store
creates, can use it without importing the store back.
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from wyckoff_cli.core.messages import Message
from wyckoff_cli.core.shown import shown_user_text
from wyckoff_cli.core.usage import Usage
from wyckoff_cli.storage.atomic import write_atomic
from wyckoff_cli.storage.chatlog import FORMAT_VERSION

SUMMARY_FORMAT = "wyckoff.session"
SUMMARY_FILE = "session.json"
CHAT_FILE = "chat.jsonl"
SCRATCHPAD_FILE = "scratchpad.jsonl"
RESULTS_DIR = "tool-results"
ARCHIVE_DIR = "archive"
TITLE_CHARS = 200


CallCost = Callable[[str, Usage], "float | None"]
"""The USD cost of one model call (model id, usage), or None when its price is unknown."""


def shorten(text: str, limit: int) -> str:
    """One line, at most `limit` characters (an ellipsis marks a cut)."""
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: max(0, limit - 1)].rstrip() + "…"


def parse_time(text: str) -> datetime | None:
    try:
        value = datetime.fromisoformat(text)
    except (TypeError, ValueError):
        return None
    return value if value.tzinfo else value.replace(tzinfo=UTC)


@dataclass
class SessionInfo:
    """What `session.json` holds: enough to list a session without reading its logs."""

    id: str
    project_root: str
    project_key: str
    created: str
    updated: str
    model: str
    title: str = ""  # the first user message, on one line, shortened
    turns: int = 0  # user messages typed by a person (not loop-guard or background notes)
    messages: int = 0  # messages ever written to the chat log
    compactions: int = 0
    usage: Usage = Usage()
    usage_by_model: dict[str, Usage] = field(default_factory=dict)
    cost_usd: float = 0.0  # the summed cost of the calls that could be priced
    uncosted_calls: int = 0  # calls whose price was unknown (or recorded without prices)
    last_reason: str | None = None  # the last turn's `done` reason; None while unknown
    context_tokens: int = 0  # the last main-agent call's prompt plus answer (the context bar)
    agent_usage: dict[str, dict[str, Usage]] = field(default_factory=dict)  # agent → model → usage
    chat_bytes: int = 0  # the chat log's size when this summary was written
    directory: Path = Path()

    @property
    def tokens(self) -> int:
        return self.usage.input_tokens + self.usage.output_tokens

    @property
    def started(self) -> datetime | None:
        return parse_time(self.created)

    def add_message(self, message: dict[str, Any]) -> None:
        self.messages += 1
        if message.get("role") != "user" or (message.get("meta") or {}).get("synthetic"):
            return
        self.turns += 1
        if not self.title:  # what the person saw of it (core/shown.py), not what was sent
            self.title = shorten(shown_user_text(Message.from_dict(message)), TITLE_CHARS)

    def add_usage(self, model: str, usage: Usage, cost: float | None, agent: str | None = None) -> None:
        """Count one call in the session's totals; a sub-agent's (`agent`) also in its
        agent's, a main-agent call sets the context the next call starts from."""
        self.usage = self.usage + usage
        self.usage_by_model[model] = self.usage_by_model.get(model, Usage()) + usage
        if agent is None:
            self.context_tokens = usage.input_tokens + usage.output_tokens
        else:
            by_model = self.agent_usage.setdefault(agent, {})
            by_model[model] = by_model.get(model, Usage()) + usage
        if cost is None:
            self.uncosted_calls += 1
        else:
            self.cost_usd += cost

    def to_dict(self) -> dict[str, Any]:
        return {
            "format": SUMMARY_FORMAT,
            "version": FORMAT_VERSION,
            "id": self.id,
            "project_root": self.project_root,
            "project_key": self.project_key,
            "created": self.created,
            "updated": self.updated,
            "model": self.model,
            "title": self.title,
            "turns": self.turns,
            "messages": self.messages,
            "compactions": self.compactions,
            "usage": self.usage.to_dict(),
            "usage_by_model": {k: v.to_dict() for k, v in self.usage_by_model.items()},
            "cost_usd": round(self.cost_usd, 6),
            "uncosted_calls": self.uncosted_calls,
            "last_reason": self.last_reason,
            "context_tokens": self.context_tokens,
            "agent_usage": {
                agent: {model: usage.to_dict() for model, usage in by_model.items()}
                for agent, by_model in self.agent_usage.items()
            },
            "chat_bytes": self.chat_bytes,
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any], directory: Path) -> SessionInfo:
        return cls(
            id=str(data["id"]),
            project_root=str(data.get("project_root", "")),
            project_key=str(data.get("project_key", directory.parent.name)),
            created=str(data.get("created", "")),
            updated=str(data.get("updated", data.get("created", ""))),
            model=str(data.get("model", "")),
            title=str(data.get("title", "")),
            turns=int(data.get("turns", 0)),
            messages=int(data.get("messages", 0)),
            compactions=int(data.get("compactions", 0)),
            usage=Usage.from_dict(data.get("usage") or {}),
            usage_by_model={k: Usage.from_dict(v) for k, v in (data.get("usage_by_model") or {}).items()},
            cost_usd=float(data.get("cost_usd", 0.0)),
            uncosted_calls=int(data.get("uncosted_calls", 0)),
            last_reason=data.get("last_reason"),
            context_tokens=int(data.get("context_tokens", 0)),
            agent_usage={
                str(agent): {str(m): Usage.from_dict(u) for m, u in by_model.items() if isinstance(u, dict)}
                for agent, by_model in (data.get("agent_usage") or {}).items()
                if isinstance(by_model, dict)
            },
            chat_bytes=int(data.get("chat_bytes", 0)),
            directory=directory,
        )

    def save(self) -> None:
        """Rewrite `session.json` atomically, recording the chat log's current size."""
        with contextlib.suppress(OSError):
            self.chat_bytes = (self.directory / CHAT_FILE).stat().st_size
        write_atomic(self.directory / SUMMARY_FILE, json.dumps(self.to_dict(), ensure_ascii=False, indent=1))
