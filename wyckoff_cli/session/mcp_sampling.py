"""The model that answers MCP servers' sampling requests: the session's.

`ModelSampler` runs a request (tools/mcp/server_asks.py) on the runtime's provider — the
session's model, with its fallbacks — or, when one of the request's `modelPreferences`
hints names another model of the session (`[fallbacks]`), on that one (hints are
honoured loosely: a case-insensitive part of the model id). `systemPrompt` is the
call's system prompt; `maxTokens` is passed on as an instruction in it (providers take
their output limit from the model's configuration), and a reply that used more says
`maxTokens` as its stop reason. Only the request's own messages are sent: Wyckoff
gives no context of the session (`includeContext` is treated as `none`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from wyckoff_cli.core.messages import Message
from wyckoff_cli.providers.base import LLMProvider
from wyckoff_cli.tools.mcp.server_asks import SampledReply, SamplingRequest, pick_model


class ModelSampler:
    def __init__(
        self,
        current: Callable[[], LLMProvider],
        models: Sequence[str],
        provider_for: Callable[[str], LLMProvider],
    ) -> None:
        """`current`: the runtime's provider (the first of `models`); `provider_for`
        builds another model of the session, when a hint names it."""
        self.current = current
        self.models = list(models)
        self.provider_for = provider_for

    async def __call__(self, request: SamplingRequest) -> SampledReply:
        chosen = pick_model(request.model_hints, self.models) if self.models else ""
        provider = (
            self.current() if not self.models or chosen == self.models[0] else self.provider_for(chosen)
        )
        messages = [
            Message.user(text) if role == "user" else Message.assistant(text)
            for role, text in request.messages
        ]
        system = request.system_prompt
        if request.max_tokens > 0:
            system = f"{system}\n\nAnswer in at most {request.max_tokens} tokens.".strip()
        response = await provider.chat(messages, [], system)
        over = request.max_tokens > 0 and response.usage.output_tokens > request.max_tokens
        return SampledReply(response.text, provider.name, response.usage, "maxTokens" if over else "endTurn")
