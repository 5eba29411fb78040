"""A fast token estimator that counts everything a request sends.

`estimate_text` splits text the way OpenAI's `o200k_base` pre-tokeniser does (words
with one leading space or punctuation mark, camel-case pieces, digit triples,
punctuation runs with their trailing newlines, whitespace runs) and counts one token
per piece, plus extra tokens for long words and long punctuation runs. CJK text gets
a per-character weight (Han ≈ 0.7, kana ≈ 0.8, Hangul ≈ 1.4 tokens), because a run of
Chinese has no spaces to split it. The constants were fitted against `o200k_base`
counts of English prose, Python code and Chinese text; the test samples in
`tests/context/test_tokens.py` stay within 15% of the real tokenizer.

`TokenEstimator` counts a whole request: system prompt, tool schemas, every message
with its tool calls, tool results and kept reasoning, plus a few tokens of framing per
item. Messages are immutable, so their counts are cached, and counting a history is
incremental: the running totals of the last history counted are kept, so the next
request (the same messages plus a few) costs only the new messages and one identity
comparison of the prefix in C, never a recount (docs/PERFORMANCE.md has the
figures). Other vendors' tokenizers
differ (Claude's counts run 10-30% above o200k for English); `calibrate()` learns the
ratio between our estimate and the `input_tokens` a provider reported for the same
request, and `estimate_request()` applies it.
"""

from __future__ import annotations

import json
import math
import re
import weakref
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from wyckoff_cli.context.image_tokens import image_tokens
from wyckoff_cli.core.messages import ImagePart, Message, ServerToolPart, TextPart, ThinkingPart, ToolSpec

_HAN = "\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\u3000-\u303f\uff00-\uffef"
_KANA = "\u3040-\u30ff"
_HANGUL = "\uac00-\ud7af\u1100-\u11ff\u3130-\u318f"
_CJK = _HAN + _KANA + _HANGUL

# One alternative per o200k pre-token shape (Python's `re` has no \p{..}, so letters
# are `[^\W\d_]`). CJK runs come first and are weighed per character below.
_PIECES = re.compile(
    rf"""[{_CJK}]+
    |(?:[^\r\n\w{_CJK}]|_)?[A-Z]*[a-z]+(?:'[a-z]{{1,2}})?
    |(?:[^\r\n\w{_CJK}]|_)?[A-Z]+(?![a-z])
    |(?:[^\r\n\w{_CJK}]|_)?[^\W\d_{_CJK}\x00-\x7f][^\W\d_{_CJK}]*
    |\d{{1,3}}
    |\ ?(?:[^\s\w{_CJK}]|_)+[\r\n/]*
    |\s*[\r\n]+
    |\s+(?!\S)
    |\s+
    """,
    re.VERBOSE,
)
_CJK_RUN = re.compile(f"[{_CJK}]+")
_HAN_CHARS = re.compile(f"[{_HAN}]")
_KANA_CHARS = re.compile(f"[{_KANA}]")
_HANGUL_CHARS = re.compile(f"[{_HANGUL}]")

HAN_WEIGHT = 0.7
KANA_WEIGHT = 0.8
HANGUL_WEIGHT = 1.4
WORD_FREE_CHARS = 8  # an ASCII word up to this long is usually one token
WORD_CHARS_PER_EXTRA = 4.0  # ...beyond it, one more token per this many letters
NON_ASCII_LETTER_WEIGHT = 0.5  # accented Latin, Cyrillic, Greek: per letter after the first
PUNCT_FREE_CHARS = 1  # a punctuation run (without its leading space) this long is one token...
PUNCT_CHARS_PER_EXTRA = 1.5  # ...beyond it, one more token per this many characters
SYMBOL_WEIGHT = 1.0  # emoji and other non-ASCII symbols, per character
QUOTE = '"'  # o200k merges double quotes into the punctuation around them (JSON)

DEFAULT_IMAGE_VENDOR = "anthropic"  # whose rule counts images when the vendor is not known
MESSAGE_OVERHEAD = 4  # role markers and separators around each message
TOOL_CALL_OVERHEAD = 6
TOOL_SPEC_OVERHEAD = 8
SYSTEM_OVERHEAD = 4


def estimate_text(text: str) -> int:
    """Estimated `o200k_base` tokens of `text` (0 for an empty string)."""
    if not text:
        return 0
    pieces = _PIECES.findall(text)
    total = float(len(pieces))
    for piece in pieces:
        last = piece[-1]
        length = len(piece)
        if last.isascii():
            if last.isalpha():
                if length > WORD_FREE_CHARS:
                    total += (length - WORD_FREE_CHARS) / WORD_CHARS_PER_EXTRA
            elif not last.isspace() and not last.isdigit():
                core = len(piece.strip()) - piece.count(QUOTE)
                if core > PUNCT_FREE_CHARS:
                    total += (core - PUNCT_FREE_CHARS) / PUNCT_CHARS_PER_EXTRA
        elif last.isalpha() and not _CJK_RUN.match(last):
            total += (length - 1) * NON_ASCII_LETTER_WEIGHT
        elif not last.isalpha() and not last.isspace() and not _CJK_RUN.match(last):
            symbols = sum(1 for ch in piece if not ch.isascii())
            total += symbols * SYMBOL_WEIGHT - 1 + max(0, len(piece.strip()) - symbols - PUNCT_FREE_CHARS) / 2
    for run in _CJK_RUN.findall(text):
        total -= 1  # the run was counted as one piece above
        total += (
            len(_HAN_CHARS.findall(run)) * HAN_WEIGHT
            + len(_KANA_CHARS.findall(run)) * KANA_WEIGHT
            + len(_HANGUL_CHARS.findall(run)) * HANGUL_WEIGHT
        )
    return max(1, math.ceil(total))


def estimate_message(message: Message, vendor: str = DEFAULT_IMAGE_VENDOR) -> int:
    """Tokens of one message as sent: text, images (by `vendor`'s rule), kept
    reasoning, tool calls with their arguments, tool results, and the framing around them."""
    total = MESSAGE_OVERHEAD
    if message.tool_name:
        total += estimate_text(message.tool_name) + 2
    for part in message.parts:
        if isinstance(part, TextPart):
            total += estimate_text(part.text)
        elif isinstance(part, ThinkingPart):
            total += estimate_text(part.text)
            if part.redacted_data:
                total += len(part.redacted_data) // 4
        elif isinstance(part, ServerToolPart):
            total += TOOL_CALL_OVERHEAD + len(json.dumps(part.data, ensure_ascii=False)) // 4
        elif isinstance(part, ImagePart):
            total += image_tokens(vendor, part.width, part.height)
        else:
            arguments = part.raw_arguments
            if arguments is None:
                arguments = json.dumps(part.arguments, ensure_ascii=False)
            total += TOOL_CALL_OVERHEAD + estimate_text(part.name) + estimate_text(arguments)
    return total


def estimate_tool_spec(spec: ToolSpec) -> int:
    schema = json.dumps(spec.parameters, ensure_ascii=False, sort_keys=False)
    return (
        TOOL_SPEC_OVERHEAD
        + estimate_text(spec.name)
        + estimate_text(spec.description)
        + estimate_text(schema)
    )


@dataclass(frozen=True, slots=True)
class RequestEstimate:
    """Estimated tokens of one request, by component. `total` is calibrated (scaled
    by the learned ratio); `raw` is the plain estimate."""

    system: int
    tools: int
    messages: int
    ratio: float = 1.0

    @property
    def raw(self) -> int:
        return self.system + self.tools + self.messages

    @property
    def total(self) -> int:
        return math.ceil(self.raw * self.ratio)


class _Counted(weakref.ref[Message]):
    """A weak reference to a message that carries its token count."""

    __slots__ = ("count", "key")

    def __init__(self, message: Message, callback: Any, key: int, count: int) -> None:
        # `__new__` made the reference; `ref.__init__` would only check the arguments again.
        self.key = key
        self.count = count

    def __new__(cls, message: Message, callback: Any, key: int, count: int) -> _Counted:
        return super().__new__(cls, message, callback)


class _WeakCounts(dict[int, _Counted]):
    """id -> `_Counted`; an entry removes itself when its message is freed."""

    def __init__(self) -> None:
        super().__init__()
        self.drop = self._drop  # one bound method shared by every reference

    def _drop(self, ref: _Counted) -> None:
        if self.get(ref.key) is ref:
            del self[ref.key]


class TokenEstimator:
    """Counts whole requests with caching, and learns a calibration ratio.

    `calibrate(raw, actual)` is fed our raw estimate of a request and the provider's
    `input_tokens` for it; the ratio moves halfway towards `actual / raw` each time,
    clamped to [`min_ratio`, `max_ratio`]. Requests smaller than
    `min_calibration_tokens` are ignored: there a vendor's hidden framing (the tool-use
    preamble alone is a few hundred tokens) would swamp the ratio.
    """

    def __init__(
        self,
        *,
        min_ratio: float = 0.5,
        max_ratio: float = 2.0,
        min_calibration_tokens: int = 2_000,
        vendor: str = DEFAULT_IMAGE_VENDOR,
    ) -> None:
        self.ratio = 1.0
        self.vendor = vendor  # whose rule counts images (context/image_tokens.py)
        self.min_ratio = min_ratio
        self.max_ratio = max_ratio
        self.min_calibration_tokens = min_calibration_tokens
        # Per message: id -> a weak reference carrying the count. An entry is dropped
        # when its message is freed (so a reused id never finds it), and a hit is checked
        # against the reference: exact, without keeping messages alive or a size cap.
        self._messages: _WeakCounts = _WeakCounts()
        # The last sequence counted (strong references) and its running totals.
        self._prefix: list[Message] = []
        self._totals: list[int] = []
        self._specs: OrderedDict[int, tuple[ToolSpec, int]] = OrderedDict()
        self._last_text: tuple[str, int] = ("", 0)

    def text(self, text: str) -> int:
        """Tokens of a long, repeated text (the system prompt): the last one is cached."""
        if text is self._last_text[0] or text == self._last_text[0]:
            return self._last_text[1]
        count = estimate_text(text)
        self._last_text = (text, count)
        return count

    def message(self, message: Message) -> int:
        key = id(message)
        hit = self._messages.get(key)
        if hit is not None and hit() is message:
            return hit.count
        count = estimate_message(message)  # images by the default (Anthropic) rule...
        if self.vendor != DEFAULT_IMAGE_VENDOR:  # ...corrected to this vendor's
            for image in message.images:
                count += image_tokens(self.vendor, image.width, image.height)
                count -= image_tokens(DEFAULT_IMAGE_VENDOR, image.width, image.height)
        self._messages[key] = _Counted(message, self._messages.drop, key, count)
        return count

    def messages(self, messages: Sequence[Message]) -> int:
        """Tokens of `messages`. When they start with the sequence counted last (the
        usual case: the same history plus the newest messages), only the new ones are
        counted."""
        if not messages:
            return 0
        start = self._shared_prefix(messages)
        prefix, totals = self._prefix, self._totals
        del prefix[start:], totals[start:]
        running = totals[-1] if totals else 0
        for message in messages[start:]:
            running += self.message(message)
            prefix.append(message)
            totals.append(running)
        return running

    def _shared_prefix(self, messages: Sequence[Message]) -> int:
        """How many leading messages `messages` shares with the last sequence counted."""
        known = len(self._prefix)
        if not known:
            return 0
        if len(messages) >= known:
            head = messages[:known]
            head = head if isinstance(head, list) else list(head)
            # List equality checks identity first, in C (0.04 ms for 20,000 messages);
            # messages that are equal without being the same objects count the same.
            if head == self._prefix:
                if head[-1] is not self._prefix[-1]:
                    self._prefix = head  # new objects: keep them, so identity hits again
                return known
        shared = 0
        for mine, theirs in zip(self._prefix, messages, strict=False):
            if mine is not theirs:
                break
            shared += 1
        return shared

    def tool_spec(self, spec: ToolSpec) -> int:
        hit = self._specs.get(id(spec))
        if hit is not None and hit[0] is spec:
            return hit[1]
        count = estimate_tool_spec(spec)
        self._specs[id(spec)] = (spec, count)
        if len(self._specs) > 256:
            self._specs.popitem(last=False)
        return count

    def request(
        self, system_prompt: str, tools: Sequence[ToolSpec], messages: Sequence[Message]
    ) -> RequestEstimate:
        system = self.text(system_prompt) + SYSTEM_OVERHEAD if system_prompt else 0
        return RequestEstimate(
            system=system,
            tools=sum(self.tool_spec(spec) for spec in tools),
            messages=self.messages(messages),
            ratio=self.ratio,
        )

    def estimate_request(
        self, system_prompt: str, tools: Sequence[ToolSpec], messages: Sequence[Message]
    ) -> int:
        """Calibrated estimate of the request's input tokens."""
        return self.request(system_prompt, tools, messages).total

    def calibrate(self, raw_estimate: int, actual_input_tokens: int) -> None:
        if raw_estimate < self.min_calibration_tokens or actual_input_tokens <= 0:
            return
        observed = actual_input_tokens / raw_estimate
        ratio = (self.ratio + observed) / 2
        self.ratio = min(self.max_ratio, max(self.min_ratio, ratio))
