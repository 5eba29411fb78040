"""Compaction: keep a long conversation inside the model's context window.

When the estimated request (system prompt + tool schemas + history) exceeds the
threshold, `compact_history` (SPEC `compact_messages`):

1. splits the history into units that must stay together — a user message; an
   assistant message with the tool results answering it — and picks the *tail*: the
   newest units that fit `tail_tokens`, always at least the last one;
2. shrinks stale tool results in a copy of the *head* (everything before the tail;
   `shrink_stale_tool_results`: long results cut to head and tail with a pointer to
   the offloaded file) and renders it as a plain transcript;
3. asks the model once for a structured summary (goals, decisions, files and their
   state, done, open; at most ~500 words) — and, concurrently, once for durable
   memories to save (`flush_memories`, SPEC `flush_memory_before_compaction`);
4. replaces the head with one user message holding the summary (and one line naming
   the images the head held: they are not sent again), followed by the
   latest user request word for word (when it was not in the tail) and the tail;
5. archives the replaced messages (the originals) through the callback it is given,
   so they are not lost.

If the summary call fails, `drop_oldest_exchanges` removes whole exchanges from the
front instead (an exchange starts at a user message, so the history never starts with
a tool result or an assistant message), never the one holding the latest request.
"""

from __future__ import annotations

import asyncio
import json
import logging
import math
import re
from collections.abc import AsyncIterator, Callable, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from wyckoff_cli.context.memory import KINDS, AddResult, MemoryStore, Scope
from wyckoff_cli.context.prompt import load_prompt
from wyckoff_cli.context.tokens import estimate_text
from wyckoff_cli.core.messages import ImagePart, Message, TextPart, ToolCallPart, ToolSpec
from wyckoff_cli.core.usage import Usage
from wyckoff_cli.providers.base import ChatResponse, Chunk, LLMProvider

log = logging.getLogger(__name__)

ArchiveFn = Callable[[Sequence[Message], Sequence[Message]], Path | None]
"""Called as `archive(before, after)` with the history as it was and as it will be,
before the history is replaced; it saves the messages of `before` that are not (the
same objects) in `after` and returns where (`SessionRecorder.record_compaction`)."""
CountFn = Callable[[Sequence[Message]], int]

MIN_FREE_FRACTION = 0.15
SUMMARY_WORD_LIMIT = 500
SUMMARY_HARD_WORD_LIMIT = 700  # a longer answer is cut here
STALE_RESULT_CHARS = 2_000  # tool results longer than this are shrunk in the head copy
MAX_FLUSHED_MEMORIES = 5
SUMMARY_TAG = "conversation-summary"

_OFFLOADED = re.compile(r"was saved to (.+?)\. Read it in pages")


def compaction_threshold(
    context_window: int, max_output: int | None, reserve_tokens: int | None = None
) -> int:
    """Tokens a request may reach before compaction: the window less a reserve for
    the answer. The default reserve is the model's max output (at most half the
    window) and at least 15% of the window."""
    window = max(1, context_window)
    if reserve_tokens is None:
        output = min(max_output or 0, window // 2)
        reserve_tokens = max(output, math.ceil(window * MIN_FREE_FRACTION))
    return max(1, window - min(reserve_tokens, window - 1))


# ----------------------------------------------------------------------- structure


def split_units(messages: Sequence[Message]) -> list[tuple[int, int]]:
    """`[start, end)` ranges that must stay together: an assistant message and the
    tool messages after it form one unit; every other message is a unit of its own,
    except that stray tool messages join the unit before them."""
    units: list[tuple[int, int]] = []
    index = 0
    while index < len(messages):
        end = index + 1
        while end < len(messages) and messages[end].role == "tool":
            end += 1
        if messages[index].role == "tool" and units:
            start, _ = units.pop()
            units.append((start, end))
        else:
            units.append((index, end))
        index = end
    return units


def is_synthetic(message: Message) -> bool:
    return bool(message.meta.get("synthetic"))


def latest_user_request(messages: Sequence[Message]) -> int | None:
    """Index of the newest user message that the user wrote (not a loop-guard retry,
    a background note or a summary); else of the newest user message."""
    fallback: int | None = None
    for index in range(len(messages) - 1, -1, -1):
        message = messages[index]
        if message.role != "user":
            continue
        if not is_synthetic(message):
            return index
        if fallback is None:
            fallback = index
    return fallback


def select_tail(messages: Sequence[Message], budget: int, count: CountFn) -> int:
    """Where the verbatim tail starts: the newest whole units within `budget` tokens
    (always at least the last unit). Returns `len(messages)` for an empty history."""
    units = split_units(messages)
    if not units:
        return len(messages)
    start = units[-1][0]
    used = count(messages[units[-1][0] : units[-1][1]])
    for unit_start, unit_end in reversed(units[:-1]):
        cost = count(messages[unit_start:unit_end])
        if used + cost > budget:
            break
        used += cost
        start = unit_start
    return start


def exchange_starts(messages: Sequence[Message]) -> list[int]:
    """Indices where an exchange starts: every user message (index 0 too, whatever
    it is, so messages before the first user message belong to the first exchange)."""
    starts = [i for i, m in enumerate(messages) if m.role == "user" and i > 0]
    return [0, *starts] if messages else []


# --------------------------------------------------------------------- shrinking


def shrink_stale_tool_results(
    messages: Sequence[Message],
    *,
    keep_recent: int = 0,
    max_chars: int = STALE_RESULT_CHARS,
    archive_path: Path | None = None,
) -> list[Message]:
    """A copy of `messages` where every tool result longer than `max_chars`, except
    the newest `keep_recent`, is cut to its head and tail plus a pointer to the full
    text (the file it was offloaded to, else the archive). The input is not changed."""
    tool_indices = [i for i, m in enumerate(messages) if m.role == "tool"]
    recent = set(tool_indices[len(tool_indices) - keep_recent :]) if keep_recent > 0 else set()
    out = list(messages)
    for index in tool_indices:
        message = messages[index]
        text = message.text
        if index in recent or len(text) <= max_chars:
            continue
        out[index] = replace(message, parts=(TextPart(_shrink(text, max_chars, archive_path)),))
    return out


def _shrink(text: str, max_chars: int, archive_path: Path | None) -> str:
    offloaded = _OFFLOADED.search(text)
    if offloaded is not None:
        pointer = f"[Full result: {offloaded.group(1)}]"
    elif archive_path is not None:
        pointer = f"[Full result: in the archived messages, {archive_path}]"
    else:
        pointer = "[Full result no longer in context.]"
    head = text[: max_chars * 2 // 3]
    tail = text[-(max_chars // 3) :]
    omitted = len(text) - len(head) - len(tail)
    return f"{head}\n[… {omitted} characters omitted …]\n{tail}\n{pointer}"


# -------------------------------------------------------------------- transcript


def render_transcript(messages: Sequence[Message], *, max_tokens: int | None = None) -> str:
    """The messages as plain text for a summary or memory call (tool calls and
    results included, reasoning left out). Over `max_tokens`, the oldest messages
    are left out (an earlier summary at the front is kept)."""
    blocks = [_render(m) for m in messages]
    blocks = [b for b in blocks if b]
    if max_tokens is not None:
        costs = [estimate_text(b) for b in blocks]
        total = sum(costs)
        first = 1 if messages and is_summary(messages[0]) and len(blocks) > 1 else 0
        dropped = 0
        while total > max_tokens and len(blocks) > first + 1:
            total -= costs.pop(first)
            blocks.pop(first)
            dropped += 1
        if dropped:
            blocks.insert(first, f"[… {dropped} older messages left out …]")
    return "\n\n".join(blocks)


def image_note(images: Sequence[ImagePart]) -> str:
    """The one line that stands for images compaction takes out."""
    names = ", ".join(image.label for image in images)
    return f"[{'image' if len(images) == 1 else 'images'} {names}: attached here; not kept after compaction]"


def _render(message: Message) -> str:
    note = f"\n{image_note(message.images)}" if message.images else ""
    if message.role == "tool":
        label = "tool error" if message.is_error else "tool result"
        return f"[{label}: {message.tool_name or '?'}]\n{message.text}{note}"
    lines: list[str] = [note.strip()] if note else []
    for part in message.parts:
        if isinstance(part, TextPart):
            if part.text.strip():
                lines.append(part.text)
        elif isinstance(part, ToolCallPart):
            arguments = part.raw_arguments or json.dumps(part.arguments, ensure_ascii=False)
            if len(arguments) > 600:
                arguments = arguments[:600] + "…"
            lines.append(f"→ {part.name}({arguments})")
    if not lines:
        return ""
    return f"[{message.role}]\n" + "\n".join(lines)


def is_summary(message: Message) -> bool:
    return message.meta.get("synthetic") == "compaction"


# ------------------------------------------------------------------ model calls


class SummaryFailed(Exception):
    """The summary call failed or returned nothing usable."""


async def summarise(provider: LLMProvider, transcript: str, *, focus: str | None = None) -> str:
    """One model call: a structured summary of `transcript` (≤ ~500 words)."""
    request = f"<transcript>\n{transcript}\n</transcript>\n\nWrite the summary now."
    if focus:
        request += f"\nThe user asked to focus on: {focus}"
    try:
        response = await provider.chat([Message.user(request)], [], load_prompt("compact"))
    except asyncio.CancelledError:
        raise
    except Exception as exc:
        raise SummaryFailed(f"{type(exc).__name__}: {exc}") from exc
    text = response.text.strip()
    if not text:
        raise SummaryFailed("the model returned an empty summary")
    return cut_words(text, SUMMARY_HARD_WORD_LIMIT)


def cut_words(text: str, limit: int) -> str:
    """`text` up to its `limit`-th word (layout kept), with a mark when cut."""
    for number, match in enumerate(re.finditer(r"\S+", text), start=1):
        if number == limit:
            rest = text[match.end() :]
            return text if not rest.strip() else text[: match.end()] + " […]"
    return text


async def flush_memories(
    provider: LLMProvider,
    transcript: str,
    store: MemoryStore,
    *,
    project: Path | None,
    session_id: str | None = None,
) -> list[AddResult]:
    """One model call that extracts durable memories from `transcript` and saves them
    (near-duplicates are not added again). Never raises: a failure is logged."""
    try:
        response = await provider.chat(
            [Message.user(f"<transcript>\n{transcript}\n</transcript>")], [], load_prompt("memory_flush")
        )
        items = parse_memory_items(response.text)
        saved: list[AddResult] = []
        for item in items[:MAX_FLUSHED_MEMORIES]:
            if item.scope == "project" and project is None:
                continue
            saved.append(
                store.add(
                    item.text, kind=item.kind, scope=item.scope, project=project, source_session=session_id
                )
            )
        return saved
    except asyncio.CancelledError:
        raise
    except Exception as exc:
        log.warning("memory flush before compaction failed: %s", exc)
        return []


@dataclass(frozen=True, slots=True)
class MemoryDraft:
    text: str
    kind: str
    scope: Scope


def parse_memory_items(text: str) -> list[MemoryDraft]:
    """The JSON array of `{"text", "kind", "scope"}` in a model's answer (code fences
    and prose around it tolerated); invalid items are skipped."""
    start, end = text.find("["), text.rfind("]")
    if start < 0 or end <= start:
        return []
    try:
        data: Any = json.loads(text[start : end + 1])
    except json.JSONDecodeError:
        return []
    items: list[MemoryDraft] = []
    for raw in data if isinstance(data, list) else []:
        if not isinstance(raw, dict) or not isinstance(raw.get("text"), str) or not raw["text"].strip():
            continue
        kind = str(raw["kind"]) if raw.get("kind") in KINDS else "fact"
        scope: Scope = "user" if raw.get("scope") == "user" else "project"
        items.append(MemoryDraft(raw["text"].strip()[:1000], kind, scope))
    return items


# ---------------------------------------------------------------------- the plan


@dataclass
class CompactionResult:
    messages: list[Message]  # the new history
    method: str  # "summary" or "drop_oldest"
    replaced: list[Message]  # what was taken out (archived)
    archive_path: Path | None = None
    summary: str | None = None
    error: str | None = None  # why the summary failed, for drop_oldest
    memories: list[AddResult] = field(default_factory=list)
    usage: Usage = field(default_factory=Usage)  # of the summary and memory calls
    # each of those calls' (model that served it, usage, purpose): `compaction`, `memory_flush`
    calls: list[tuple[str, Usage, str]] = field(default_factory=list)


class _Metered:
    """A provider wrapper adding up the usage of `chat` calls (the summary and the
    memory flush are not runtime rounds, so no `usage` event reports them)."""

    def __init__(self, provider: LLMProvider) -> None:
        self.provider = provider
        self.usage = Usage()
        self.served = provider.name

    @property
    def name(self) -> str:
        return self.provider.name

    def chat_stream(
        self, messages: Sequence[Message], tools: Sequence[ToolSpec], system_prompt: str
    ) -> AsyncIterator[Chunk]:
        return self.provider.chat_stream(messages, tools, system_prompt)

    async def chat(
        self, messages: Sequence[Message], tools: Sequence[ToolSpec], system_prompt: str
    ) -> ChatResponse:
        response = await self.provider.chat(messages, tools, system_prompt)
        self.usage = self.usage + response.usage
        self.served = self.provider.name  # a routed provider names the model that answered
        return response


@dataclass(frozen=True, slots=True)
class CompactionSettings:
    tail_tokens: int  # budget of the verbatim tail
    transcript_tokens: int  # most a summary call's transcript may hold
    target_tokens: int  # what drop_oldest aims for (messages only)


async def compact_history(
    messages: Sequence[Message],
    *,
    provider: LLMProvider,
    count: CountFn,
    settings: CompactionSettings,
    flush_provider: LLMProvider | None = None,
    archive: ArchiveFn | None = None,
    memory: MemoryStore | None = None,
    project: Path | None = None,
    session_id: str | None = None,
    focus: str | None = None,
    force: bool = False,
) -> CompactionResult | None:
    """Compact `messages` (see the module docstring); None when there is nothing to
    take out. `force` (manual `/compact`) summarises all but the last unit when the
    whole history would fit in the tail."""
    if not messages:
        return None
    tail_start = select_tail(messages, settings.tail_tokens, count)
    if tail_start == 0 and force:
        units = split_units(messages)
        tail_start = units[-1][0] if len(units) > 1 else 0
    if tail_start == 0:
        return None
    request = latest_user_request(messages)
    keep_request = request is not None and request < tail_start
    head = list(messages[:tail_start])
    replaced = [m for i, m in enumerate(head) if not (keep_request and i == request)]
    if not replaced:  # only the latest request is older than the tail: nothing to gain
        return None
    shrunk = shrink_stale_tool_results(head)
    transcript = render_transcript(shrunk, max_tokens=settings.transcript_tokens)
    metered = _Metered(provider)
    provider = metered
    flush_metered = metered if flush_provider is None else _Metered(flush_provider)

    # The memory flush runs alongside the summary (the summary call is made first).
    flush = (
        asyncio.ensure_future(
            flush_memories(flush_metered, transcript, memory, project=project, session_id=session_id)
        )
        if memory is not None
        else None
    )
    try:
        summary = await summarise(provider, transcript, focus=focus)
        failure: SummaryFailed | None = None
    except SummaryFailed as exc:
        summary, failure = "", exc
    except BaseException:
        if flush is not None:
            flush.cancel()
        raise
    memories = await flush if flush is not None else []
    if failure is not None:
        log.warning("compaction summary failed, dropping the oldest exchanges: %s", failure)
        dropped = drop_oldest_exchanges(messages, settings.target_tokens, count)
        if dropped is None:
            return None
        dropped.archive_path = _archive(archive, messages, dropped.messages)
        dropped.error = str(failure)
        dropped.memories = memories
        dropped.usage, dropped.calls = _calls(metered, flush_metered)
        return dropped
    meta: dict[str, Any] = {"synthetic": "compaction", "replaced_messages": len(replaced)}
    text = _summary_text(summary, len(replaced), archived=archive is not None)
    dropped_images = [image for message in replaced for image in message.images]
    if dropped_images:
        text += "\n" + image_note(dropped_images)
        meta["replaced_images"] = [image.label for image in dropped_images]
    summary_message = Message.user(text, **meta)
    new = [summary_message]
    if keep_request and request is not None:
        new.append(messages[request])
    new.extend(messages[tail_start:])
    archive_path = _archive(archive, messages, new)
    if archive_path is not None:
        summary_message.meta["archive"] = str(archive_path)  # an app's transcript unfolds it
    usage, calls = _calls(metered, flush_metered)
    return CompactionResult(
        new, "summary", replaced, archive_path, summary, memories=memories, usage=usage, calls=calls
    )


def _calls(summary: _Metered, flush: _Metered) -> tuple[Usage, list[tuple[str, Usage, str]]]:
    """The total, and each provider's calls as (model, usage, purpose)."""
    calls = [(summary.served, summary.usage, "compaction")]
    if flush is not summary:
        calls.append((flush.served, flush.usage, "memory_flush"))
    calls = [call for call in calls if call[1].input_tokens or call[1].output_tokens]
    total = Usage()
    for _, usage, _ in calls:
        total = total + usage
    return summary.usage if flush is summary else total, calls


def _summary_text(summary: str, replaced: int, *, archived: bool) -> str:
    where = " The original messages are archived in the session's folder." if archived else ""
    return (
        f"<{SUMMARY_TAG}>\n"
        f"The conversation so far was compacted: {replaced} earlier messages were replaced by this "
        f"summary.{where} The messages after this one are verbatim; if the latest request is among "
        "them, the summary also covers the progress made on it. Continue the work from where it "
        "stopped without asking the user to repeat anything.\n\n"
        f"{summary}\n"
        f"</{SUMMARY_TAG}>"
    )


def drop_oldest_exchanges(
    messages: Sequence[Message], target_tokens: int, count: CountFn
) -> CompactionResult | None:
    """The fallback: drop whole exchanges from the front until the rest fits
    `target_tokens`, keeping the exchange of the latest user request and everything
    after it. If that is still too long, its older tool results are shrunk (all but
    the newest two). `replaced` holds the dropped messages and the unshrunk originals."""
    starts = exchange_starts(messages)
    request = latest_user_request(messages)
    limit = max((s for s in starts if request is None or s <= request), default=0)
    keep_from = 0
    for start in starts:
        if start > limit:
            break
        keep_from = start
        if count(messages[start:]) <= target_tokens:
            break
    kept = list(messages[keep_from:])
    replaced = list(messages[:keep_from])
    if count(kept) > target_tokens:
        shrunk = shrink_stale_tool_results(kept, keep_recent=2)
        replaced.extend(old for old, new in zip(kept, shrunk, strict=True) if old is not new)
        kept = shrunk
    if not replaced:
        return None
    return CompactionResult(kept, "drop_oldest", replaced)


def _archive(archive: ArchiveFn | None, before: Sequence[Message], after: Sequence[Message]) -> Path | None:
    if archive is None:
        return None
    try:
        return archive(before, after)
    except Exception as exc:  # an archive failure must not stop compaction
        log.warning("could not archive the compacted messages: %s", exc)
        return None
