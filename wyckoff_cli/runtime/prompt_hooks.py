"""Hooks of type `prompt`: a model decides, with a JSON answer.

As in Claude Code: `{"type": "prompt", "prompt": "… $ARGUMENTS …", "timeout": 30}`. The
event's JSON replaces `$ARGUMENTS` (or is appended when the prompt does not name it);
the model answers `{"ok": true}` or `{"ok": false, "reason": "…"}` (Claude Code's older
`{"decision": "approve" | "block", "reason": "…"}` is read too). `ok: false` blocks as
a command's `decision: "block"` does: a tool call is refused with the reason, a Stop
makes the turn go on with it, a prompt is not sent. An answer that is not such JSON, a
model error and a timeout are non-blocking errors.

The model is the session's (`Judge`, set by the session builder); no tools are
offered, so the decision is one side call.
"""

from __future__ import annotations

import asyncio
import json
import re
from collections.abc import Awaitable, Callable
from typing import Any

from wyckoff_cli.core.messages import Message
from wyckoff_cli.providers.base import LLMProvider
from wyckoff_cli.runtime.hook_config import HookSpec
from wyckoff_cli.runtime.http_hooks import HookAnswer

Judge = Callable[[str, str], Awaitable[str]]  # (system prompt, user text) → the model's text

JUDGE_SYSTEM = (
    "You check one event of a coding assistant against the rule you are given. Answer with one "
    'JSON object and nothing else: {"ok": true} when the event is acceptable, or '
    '{"ok": false, "reason": "…"} saying briefly why not and what to do instead.'
)
_OBJECT = re.compile(r"\{.*\}", re.DOTALL)


def judge_text(prompt: str, payload: dict[str, Any]) -> str:
    event = json.dumps(payload, ensure_ascii=False, indent=2)
    if "$ARGUMENTS" in prompt:
        return prompt.replace("$ARGUMENTS", event)
    return f"{prompt}\n\nThe event:\n{event}"


def read_verdict(text: str) -> dict[str, Any] | str:
    """The command-hook JSON the model's answer stands for, or what is wrong with it."""
    match = _OBJECT.search(text)
    if match is None:
        return f"the model did not answer with JSON: {' '.join(text.split())[:120]!r}"
    try:
        answer = json.loads(match.group(0))
    except ValueError:
        return f"the model's answer is not valid JSON: {' '.join(match.group(0).split())[:120]!r}"
    if not isinstance(answer, dict):
        return "the model's answer is not a JSON object"
    reason = str(answer.get("reason") or "").strip()
    if answer.get("ok") is True or answer.get("decision") == "approve":
        return {}
    if answer.get("ok") is False or answer.get("decision") == "block":
        return {"decision": "block", "reason": reason or "a prompt hook refused it"}
    return 'the model\'s answer has neither "ok" nor "decision"'


async def run_prompt_hook(spec: HookSpec, payload: dict[str, Any], judge: Judge | None) -> HookAnswer:
    if judge is None:
        return HookAnswer(None, "", f"{spec.kind} hooks need a model; none is configured for this session")
    try:
        text = await asyncio.wait_for(judge(JUDGE_SYSTEM, judge_text(spec.command, payload)), spec.timeout)
    except TimeoutError:
        return HookAnswer(None, "", "", timed_out=True)
    except Exception as exc:  # a provider failure must not break the turn
        return HookAnswer(None, "", f"the model could not decide: {exc}")
    verdict = read_verdict(text)
    if isinstance(verdict, str):
        return HookAnswer(None, "", verdict)
    return HookAnswer(0, json.dumps(verdict), "")


def provider_judge(provider: LLMProvider) -> Judge:
    """A judge asking `provider` once, with no tools."""

    async def judge(system: str, text: str) -> str:
        response = await provider.chat([Message.user(text)], [], system)
        return response.text

    return judge
